//! The query table (static query encoder) on a real bundle built with the real model: written
//! beside the bundle, reproducible, close to the model where it matters (the nearest
//! sections), used by approximate searches, and refused when damaged or foreign.

#[path = "../../indexer/tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

use common::{build_dir, model, write};
use lantern_engine::{Bundle, Engine, Error, Filter, Mode, QueryTable};

struct Built {
    _dir: tempfile::TempDir,
    bundle: PathBuf,
    table: PathBuf,
}

fn docs(d: &std::path::Path) {
    write(d, "install.md", "# Installation\n\nDownload the installer and run `widgetctl setup` to configure the machine.\n\n## Upgrading\n\nRun `widgetctl upgrade --channel stable` to move to the newest release. Upgrades keep your settings.\n");
    write(d, "cache.md", "# Build cache\n\n## Incremental builds\n\nUnchanged pages are never processed again: results are stored between runs in the cache file.\n\n## Clearing the cache\n\nDelete `.widget-cache` to start from scratch. The next build is slower.\n");
    write(d, "errors.md", "# Error reference\n\n## E042\n\nThe configuration file could not be parsed. The error message names the line.\n\n## Timeouts\n\nRequests that exceed thirty seconds are cancelled and retried twice.\n");
    write(d, "themes.md", "# Themes\n\nA theme sets colors and fonts. Dark mode follows the operating system preference.\n\n## Custom themes\n\nCopy the default theme folder and change its palette of colors.\n");
}

fn built() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("docs");
        docs(&d);
        let bundle = dir.path().join("s.lantern");
        let report = build_dir(&d, &bundle, Some(dir.path().join("cache"))).unwrap();
        let fit = report.query_table.expect("a query table was fitted");
        assert!(fit.texts >= 20, "{fit:?}");
        let table = lantern_indexer::query_table_path(&bundle);
        Built {
            _dir: dir,
            bundle,
            table,
        }
    })
}

fn engine_with_table() -> Engine {
    let b = built();
    let mut e = Engine::new(Bundle::from_bytes(&std::fs::read(&b.bundle).unwrap()).unwrap());
    let t = QueryTable::from_bytes(&std::fs::read(&b.table).unwrap()).unwrap();
    e.set_query_table(t).unwrap();
    e
}

fn top_vector_url(e: &Engine, v: &[f32]) -> String {
    let r = e.search(".", Some(v), Mode::Vector, 3);
    r.hits.first().map(|h| h.url.clone()).unwrap_or_default()
}

#[test]
fn the_table_finds_the_sections_the_model_finds() {
    let e = engine_with_table();
    let mut agree = 0;
    let queries = [
        "upgrade to the newest release",
        "delete the cache and start from scratch",
        "dark mode colors and fonts",
        "configuration file could not be parsed",
        "requests cancelled after thirty seconds",
        "install and configure the machine",
    ];
    for q in queries {
        let table = e
            .table_vector(q)
            .expect("the query's words are index terms");
        assert_eq!(table.len(), 384);
        let norm: f32 = table.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-3, "unit length: {norm}");
        let model_v = model().embedder.embed(q).unwrap();
        let cos: f32 = table.iter().zip(&model_v).map(|(a, b)| a * b).sum();
        assert!(cos > 0.4, "{q}: cosine with the model's vector {cos}");
        if top_vector_url(&e, &table) == top_vector_url(&e, &model_v) {
            agree += 1;
        }
    }
    assert!(
        agree >= 5,
        "the table's nearest section is the model's for {agree} of 6"
    );
}

#[test]
fn the_tables_cosines_are_put_on_the_models_scale() {
    // Fusion and "no good match" read cosines as the model gives them: the build calibrates
    // the table on its site's texts, and the table's search reports every cosine through it.
    let e = engine_with_table();
    let b = built();
    let t = QueryTable::from_bytes(&std::fs::read(&b.table).unwrap()).unwrap();
    assert!(t.is_calibrated(), "{:?}", t.calibration());
    for q in [
        "upgrade to the newest release",
        "delete the cache and start from scratch",
        "requests cancelled after thirty seconds",
    ] {
        let raw = e.best_cosines(&e.table_vector(q).unwrap(), 1)[0];
        let r = e
            .search_table(q, Mode::Vector, 5, &Filter::default())
            .unwrap();
        let reported = r.best_cosine.unwrap();
        assert!(r.approximate && (reported - t.calibrated(raw)).abs() < 1e-6);
        assert_ne!(reported, raw, "{q}");
        assert_eq!(r.hits[0].vector.unwrap().score, reported);
    }
}

#[test]
fn approximate_search_is_hybrid_and_says_so() {
    let e = engine_with_table();
    let r = e
        .search_table(
            "how do I move to the newest release",
            Mode::Hybrid,
            5,
            &Filter::default(),
        )
        .unwrap();
    assert_eq!(r.mode, Mode::Hybrid);
    assert!(r.approximate);
    assert!(!r.no_good_match);
    assert_eq!(r.hits[0].url, "/install.html#upgrading");
    assert!(r.hits.iter().any(|h| h.vector.is_some()));
    // No word the docs use: no vector, keyword-only (and nothing found).
    let r = e
        .search_table("zzqx wubble", Mode::Hybrid, 5, &Filter::default())
        .unwrap();
    assert_eq!(r.mode, Mode::Keyword);
    assert!(!r.approximate);
    assert!(r.hits.is_empty() && r.no_good_match);
    // The model's search is never marked approximate.
    let v = model().embedder.embed("newest release").unwrap();
    assert!(
        !e.search("newest release", Some(&v), Mode::Hybrid, 5)
            .approximate
    );
}

#[test]
fn rebuilding_reproduces_the_table_from_the_cache() {
    let b = built();
    let first = std::fs::read(&b.table).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("docs");
    docs(&d);
    let out = dir.path().join("again.lantern");
    // Same docs, same cache file contents: the same bytes.
    std::fs::copy(b.bundle.with_file_name("cache"), dir.path().join("cache")).unwrap();
    let report = build_dir(&d, &out, Some(dir.path().join("cache"))).unwrap();
    assert_eq!(report.embedded, 0, "every chunk came from the cache");
    let again = std::fs::read(lantern_indexer::query_table_path(&out)).unwrap();
    assert_eq!(first, again);
}

#[test]
fn a_damaged_or_foreign_table_is_refused() {
    let b = built();
    let bytes = std::fs::read(&b.table).unwrap();
    let message = |b: &[u8]| match QueryTable::from_bytes(b) {
        Err(e @ Error::QueryTable(_)) => e.to_string(),
        other => panic!("expected a query table error, got {other:?}"),
    };
    assert!(message(&bytes[..bytes.len() - 7]).contains("truncated"));
    let mut flipped = bytes.clone();
    let n = flipped.len();
    flipped[n / 2] ^= 0x40;
    assert!(message(&flipped).contains("checksum mismatch"));
    assert!(message(b"PK\x03\x04 not a table at all").contains("not a Lantern query table"));
    assert!(message(&[]).contains("not a Lantern query table"));
    // A bundle is not a table either.
    assert!(message(&std::fs::read(&b.bundle).unwrap()).contains("bad magic"));
    // A bundle built from other docs has other terms: the table does not fit it.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("docs");
    write(&d, "other.md", "# Other\n\nCompletely different words about gardening and soil.\n\n## Watering\n\nWater the plants every morning before the sun is high.\n");
    let out = dir.path().join("o.lantern");
    build_dir(&d, &out, None).unwrap();
    let mut other = Engine::new(Bundle::from_bytes(&std::fs::read(&out).unwrap()).unwrap());
    let err = other
        .set_query_table(QueryTable::from_bytes(&bytes).unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("another bundle"), "{err}");
    assert!(!other.has_query_table());
}

#[test]
fn the_searcher_uses_the_table_beside_the_bundle() {
    use lantern_server::{QueryEncoder, Searcher};
    let b = built();
    let mut s = Searcher::open(&b.bundle, Some(&common::model().model)).unwrap();
    assert_eq!(s.encoder(), QueryEncoder::Model);
    let model_v = s.embed("newest release").unwrap().unwrap();
    s.set_encoder(QueryEncoder::Table).unwrap();
    let table_v = s.embed("newest release").unwrap().unwrap();
    assert_ne!(model_v, table_v);
    // Without the file beside it, asking for the table is a clear error.
    let dir = tempfile::tempdir().unwrap();
    let lone = dir.path().join("lone.lantern");
    std::fs::copy(&b.bundle, &lone).unwrap();
    let mut s = Searcher::open(&lone, Some(&common::model().model)).unwrap();
    let err = s.set_encoder(QueryEncoder::Table).unwrap_err();
    assert!(err.to_string().contains("no query table"), "{err}");
    // A damaged one: the bundle still opens (keyword and model search work); asking for the
    // table says what is wrong with it.
    let bytes = std::fs::read(&b.table).unwrap();
    std::fs::write(
        lantern_indexer::query_table_path(&lone),
        &bytes[..bytes.len() / 2],
    )
    .unwrap();
    let mut s = Searcher::open(&lone, Some(&common::model().model)).unwrap();
    assert!(!s
        .search("newest release", Mode::Keyword, 3)
        .unwrap()
        .hits
        .is_empty());
    let err = s.set_encoder(QueryEncoder::Table).unwrap_err();
    assert!(err.to_string().contains("truncated"), "{err}");
}

#[test]
fn query_vectors_from_another_encoder_replace_the_model_and_are_checked() {
    use lantern_server::Searcher;
    let b = built();
    let dir = tempfile::tempdir().unwrap();
    let mut s = Searcher::open(&b.bundle, Some(&common::model().model)).unwrap();
    let model_v = s.embed("dark mode colors").unwrap().unwrap();
    // The model's vector of another question, given for this one: what is given is used.
    let other = s
        .embed("requests cancelled after thirty seconds")
        .unwrap()
        .unwrap();
    let given = dir.path().join("given.json");
    std::fs::write(
        &given,
        serde_json::json!({ "dark mode colors": other }).to_string(),
    )
    .unwrap();
    s.use_query_vectors(&given).unwrap();
    let v = s.embed("dark mode colors").unwrap().unwrap();
    assert_eq!(v, other);
    assert_ne!(v, model_v);
    let err = s.embed("a question nobody gave").unwrap_err();
    assert!(err.to_string().contains("no query vector"), "{err}");
    // Wrong dimensions and a file that is not vectors are refused when read.
    std::fs::write(&given, r#"{"dark mode colors": [0.5, 0.5]}"#).unwrap();
    let err = s.use_query_vectors(&given).unwrap_err();
    assert!(format!("{err:#}").contains("has 2 values"), "{err:#}");
    std::fs::write(&given, b"\xff\x00 not json").unwrap();
    assert!(s.use_query_vectors(&given).is_err());
}

#[test]
fn rank_zero_writes_no_table_and_removes_an_old_one() {
    let b = built();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("docs");
    docs(&d);
    let out = dir.path().join("s.lantern");
    let table = lantern_indexer::query_table_path(&out);
    std::fs::copy(&b.table, &table).unwrap();
    std::fs::write(dir.path().join("s.lantern.query.br"), b"old").unwrap();
    let m = model();
    let config: lantern_indexer::Config = toml::from_str("query_table_rank = 0").unwrap();
    let report = lantern_indexer::build(
        &lantern_indexer::BuildOptions {
            docs: d,
            out: out.clone(),
            config,
            cache: None,
            progress: false,
            whole_file: true,
            part: None,
            cache_from: Vec::new(),
        },
        &m.model,
        &m.embedder,
    )
    .unwrap();
    assert!(report.query_table.is_none());
    assert!(out.exists());
    assert!(
        !table.exists(),
        "the old table would not fit the new bundle"
    );
    assert!(!dir.path().join("s.lantern.query.br").exists());
    let bad: lantern_indexer::Config = toml::from_str("query_table_rank = 1000").unwrap();
    assert!(bad.validate().is_err());
}
