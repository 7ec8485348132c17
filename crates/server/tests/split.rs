//! The split bundle (meta file plus content-addressed shards) on a real build with the real
//! model: searched shard by shard, as a browser does, it answers exactly as the whole bundle,
//! while reading only part of it; a rebuild keeps unchanged shards and removes stale ones;
//! damaged or foreign shards are refused.

#[path = "../../indexer/tests/common/mod.rs"]
mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{build_dir, write};
use lantern_engine::{Bundle, Engine, Error, Filter, Mode, Results};
use lantern_server::Searcher;

const TOPICS: [&str; 12] = [
    "installation",
    "configuration",
    "caching",
    "themes",
    "plugins",
    "deployment",
    "authentication",
    "logging",
    "testing",
    "migration",
    "performance",
    "localization",
];
const VERBS: [&str; 10] = [
    "configure",
    "install",
    "render",
    "export",
    "import",
    "validate",
    "schedule",
    "compress",
    "encrypt",
    "publish",
];

/// Sixty pages with a varied vocabulary (identifiers of their own), enough for several term
/// and text blocks.
fn docs(d: &Path) {
    for p in 0..60 {
        let topic = TOPICS[p % TOPICS.len()];
        let mut md = format!("# The {topic} guide, part {p}\n\n");
        for s in 0..4 {
            let verb = VERBS[(p + s) % VERBS.len()];
            md.push_str(&format!("## Section {s} on {topic}\n\n"));
            for i in 0..6 {
                md.push_str(&format!(
                    "To {verb} the {topic} layer call `widget_{p}_{s}_{i}` with option zq{p:02}x{s}{i}. \
                     The {topic} step {verb}s every record of batch{}. ",
                    p * 31 + s * 7 + i
                ));
            }
            md.push_str("\n\n");
        }
        write(d, &format!("{topic}/part{p}.md"), md);
    }
}

struct Built {
    dir: tempfile::TempDir,
    bundle: PathBuf,
}

fn built() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("docs");
        docs(&d);
        let bundle = dir.path().join("s.lantern");
        build_dir(&d, &bundle, Some(dir.path().join("cache"))).unwrap();
        Built { dir, bundle }
    })
}

fn split_dir(bundle: &Path) -> PathBuf {
    lantern_indexer::split_dir(bundle)
}

/// Searches a bundle that starts with only its meta part, loading from `dir` what each round
/// names; returns the results and the shards read.
fn search_split(
    dir: &Path,
    text: &str,
    vector: Option<&[f32]>,
    mode: Mode,
    filter: &Filter,
) -> (Results, Vec<String>) {
    let meta = std::fs::read(dir.join(lantern_engine::SPLIT_META)).unwrap();
    let mut e = Engine::new(Bundle::from_bytes(&meta).unwrap());
    let mut read = Vec::new();
    for _ in 0..8 {
        let r = e.search_filtered(text, vector, mode, 10, filter).unwrap();
        if r.missing.is_empty() {
            return (r, read);
        }
        for name in r.missing {
            e.add_shard(&name, &std::fs::read(dir.join(&name)).unwrap())
                .unwrap();
            read.push(name);
        }
    }
    panic!("{text:?}: still missing shards after 8 rounds");
}

fn summary(r: &Results) -> Vec<(String, String, u32)> {
    r.hits
        .iter()
        .map(|h| (h.url.clone(), h.excerpt.clone(), (h.score * 1e4) as u32))
        .collect()
}

#[test]
fn a_split_bundle_answers_as_the_whole_one_reading_only_part_of_it() {
    let b = built();
    let whole = Searcher::open(&b.bundle, Some(&common::model().model)).unwrap();
    let dir = split_dir(&b.bundle);
    let total = whole.engine().bundle().shard_files().len();
    assert!(total > 8, "{total} shards: the corpus should need several");
    let queries = [
        ("configure caching", Mode::Keyword),
        ("\"with option zq07x12\"", Mode::Keyword),
        ("zq41x23", Mode::Keyword),
        ("exprt records", Mode::Keyword), // a typo
        ("how do I export the logging layer", Mode::Hybrid),
        ("deploymen", Mode::Keyword), // being typed
        ("schedule perfor", Mode::Hybrid),
    ];
    for (q, mode) in queries {
        let expected = whole.search(q, mode, 10).unwrap();
        assert!(!expected.hits.is_empty(), "{q:?} finds something");
        let vector = whole.embed(q).unwrap().filter(|_| mode != Mode::Keyword);
        let (got, read) = search_split(&dir, q, vector.as_deref(), mode, &Filter::default());
        assert_eq!(
            summary(&got),
            summary(&expected),
            "{q:?}: same hits as the whole bundle"
        );
        assert_eq!(got.no_good_match, expected.no_good_match, "{q:?}");
        assert!(
            read.len() < total / 2,
            "{q:?} read {} of {total} shards: {read:?}",
            read.len()
        );
        if mode == Mode::Keyword {
            assert!(
                !read.iter().any(|n| n.starts_with("vectors-")),
                "{q:?}: keyword search needs no vectors"
            );
        }
    }
}

/// The same docs built with their vectors in eight partitions, of which a query reads three.
fn partitioned() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("docs");
        docs(&d);
        let bundle = dir.path().join("p.lantern");
        let m = common::model();
        let config = lantern_indexer::Config {
            vector_partitions: 8,
            vector_probe: 3,
            ..Default::default()
        };
        lantern_indexer::build(
            &lantern_indexer::BuildOptions {
                docs: d,
                out: bundle.clone(),
                config,
                cache: Some(built().dir.path().join("cache")),
                progress: false,
                whole_file: true,
                part: None,
                cache_from: Vec::new(),
            },
            &m.model,
            &m.embedder,
        )
        .unwrap();
        Built { dir, bundle }
    })
}

#[test]
fn partitioned_vectors_answer_as_the_whole_bundle_reading_the_nearest_partitions() {
    let b = partitioned();
    let whole = Searcher::open(&b.bundle, Some(&common::model().model)).unwrap();
    let files = whole.engine().bundle().shard_files();
    let parts = files.iter().filter(|n| n.starts_with("vectors-")).count();
    assert!(parts >= 6, "{parts} partitions");
    assert!(files.iter().any(|n| n.starts_with("centroids-")));
    let dir = split_dir(&b.bundle);
    for q in [
        "how do I export the logging layer",
        "encrypting records during migration",
        "schedule perfor",
    ] {
        let expected = whole.search(q, Mode::Hybrid, 10).unwrap();
        let vector = whole.embed(q).unwrap();
        let (got, read) =
            search_split(&dir, q, vector.as_deref(), Mode::Hybrid, &Filter::default());
        assert_eq!(
            summary(&got),
            summary(&expected),
            "{q:?}: same hits as the whole bundle"
        );
        let partitions_read = read.iter().filter(|n| n.starts_with("vectors-")).count();
        assert_eq!(partitions_read, 3, "{q:?} read {read:?}");
        assert!(read.iter().any(|n| n.starts_with("centroids-")));
    }
    // The partitions find what an exact scan finds, for queries the model embeds.
    let bundle = whole.engine().bundle();
    let mut found = 0;
    let mut asked = 0;
    for q in [
        "installation guide",
        "compress the caching layer",
        "publish themes",
    ] {
        let v = whole.embed(q).unwrap().unwrap();
        let exact = bundle.vectors().search_exact(&v, 10);
        let got = bundle.vectors().search(&v, 10);
        found += got.iter().filter(|h| exact.contains(h)).count();
        asked += exact.len();
    }
    assert!(found * 10 >= asked * 8, "recall {found}/{asked}");
}

#[test]
fn the_cli_reads_a_split_folder_and_explains_what_a_query_reads() {
    let b = built();
    let dir = split_dir(&b.bundle);
    let whole = Searcher::open(&b.bundle, None).unwrap();
    let split = Searcher::open(&dir, None).unwrap();
    let meta = Searcher::open(&dir.join(lantern_engine::SPLIT_META), None).unwrap();
    for s in [&split, &meta] {
        assert!(s.engine().bundle().is_complete());
        let q = "validate the themes";
        assert_eq!(
            summary(&s.search(q, Mode::Keyword, 10).unwrap()),
            summary(&whole.search(q, Mode::Keyword, 10).unwrap())
        );
    }
    let read = whole
        .shards_read("zq41x23", Mode::Keyword, 10, &Filter::default())
        .unwrap();
    assert_eq!(read[0].0, lantern_engine::SPLIT_META);
    assert!(
        read.iter().any(|(n, _)| n.starts_with("terms-")),
        "{read:?}"
    );
    assert!(read.iter().any(|(n, _)| n.starts_with("text-")), "{read:?}");
    let on_disk: HashMap<String, u64> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    for (name, bytes) in &read {
        assert_eq!(
            on_disk.get(name),
            Some(&(*bytes as u64)),
            "{name} as on disk"
        );
    }
}

#[test]
fn a_published_sites_bundle_is_opened_by_its_name_from_the_split_form() {
    // `lantern build SITE` publishes only `search.lantern.d/`; readers keep naming the bundle.
    let b = built();
    let site = tempfile::tempdir().unwrap();
    copy_dir(&split_dir(&b.bundle), &site.path().join("search.lantern.d"));
    let named = site.path().join("search.lantern");
    let opened = Searcher::open(&named, None).unwrap();
    let whole = Searcher::open(&b.bundle, None).unwrap();
    assert_eq!(
        opened.engine().bundle().to_bytes().unwrap(),
        whole.engine().bundle().to_bytes().unwrap()
    );
    // Neither form there: the error names the file asked for.
    let err = format!(
        "{:#}",
        Searcher::open(&site.path().join("other.lantern"), None)
            .err()
            .expect("refused")
    );
    assert!(err.contains("other.lantern"), "{err}");
}

#[test]
fn damaged_foreign_and_unknown_shards_are_refused() {
    let b = built();
    let dir = split_dir(&b.bundle);
    let meta = std::fs::read(dir.join(lantern_engine::SPLIT_META)).unwrap();
    let mut bundle = Bundle::from_bytes(&meta).unwrap();
    let files = bundle.shard_files();
    let name = &files[0];
    let bytes = std::fs::read(dir.join(name)).unwrap();
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    for bad in [&flipped[..], &bytes[..bytes.len() - 3], &[][..]] {
        let err = bundle.add_shard(name, bad).unwrap_err();
        assert!(matches!(err, Error::Shard(_)), "{err}");
        assert!(err.to_string().contains(name.as_str()), "{err}");
    }
    // Another shard's bytes under this name, and a name the meta does not list.
    let other = &files[1];
    let other_bytes = std::fs::read(dir.join(other)).unwrap();
    assert!(bundle.add_shard(name, &other_bytes).is_err());
    assert!(bundle
        .add_shard("terms-00000000deadbeef-0.bin", &bytes)
        .is_err());
    assert!(bundle.add_shard("../s.lantern", &bytes).is_err());
    // A meta that is truncated or not a bundle at all.
    assert!(Bundle::from_bytes(&meta[..meta.len() - 1]).is_err());
    assert!(Bundle::from_bytes(&bytes).is_err());
    // After all that, the real shard still loads.
    bundle.add_shard(name, &bytes).unwrap();
}

#[test]
fn shards_that_are_not_plain_files_in_the_folder_are_not_read() {
    let b = built();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s.lantern.d");
    copy_dir(&split_dir(&b.bundle), &dir);
    let name = Bundle::from_bytes(&std::fs::read(dir.join(lantern_engine::SPLIT_META)).unwrap())
        .unwrap()
        .shard_files()
        .remove(0);
    let shard = dir.join(&name);
    let real = std::fs::read(&shard).unwrap();
    assert!(Searcher::open(&dir, None).is_ok());
    // A link to the same bytes outside the folder.
    let outside = tmp.path().join("outside.bin");
    std::fs::write(&outside, &real).unwrap();
    std::fs::remove_file(&shard).unwrap();
    std::os::unix::fs::symlink(&outside, &shard).unwrap();
    let err = format!("{:#}", Searcher::open(&dir, None).err().expect("refused"));
    assert!(err.contains(&name), "{err}");
    // A 3 GB sparse file: refused from its size, not read.
    std::fs::remove_file(&shard).unwrap();
    std::fs::File::create(&shard)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let t = std::time::Instant::now();
    let err = format!("{:#}", Searcher::open(&dir, None).err().expect("refused"));
    assert!(err.contains("at most"), "{err}");
    assert!(t.elapsed().as_secs() < 5);
}

#[test]
fn a_rebuild_keeps_unchanged_groups_of_shards_and_removes_stale_ones() {
    let b = built();
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    copy_dir(&b.dir.path().join("docs"), &docs);
    let out = dir.path().join("r.lantern");
    let cache = dir.path().join("cache");
    build_dir(&docs, &out, Some(cache.clone())).unwrap();
    let split = split_dir(&out);
    let names = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let before = names(&split);
    let text_before: Vec<String> = Bundle::from_bytes(&std::fs::read(&out).unwrap())
        .unwrap()
        .shard_files()
        .into_iter()
        .filter(|n| n.starts_with("text-"))
        .collect();
    // One page changes at the end of the vocabulary and the chunk order.
    let last = docs.join("themes/part51.md"); // the last path, so the last chunks
    let mut md = std::fs::read_to_string(&last).unwrap();
    md.push_str("\n\n## Zymurgy\n\nA zymurgical appendix.\n");
    std::fs::write(&last, md).unwrap();
    build_dir(&docs, &out, Some(cache)).unwrap();
    let after = names(&split);
    let bundle = Bundle::from_bytes(&std::fs::read(&out).unwrap()).unwrap();
    let mut listed: Vec<String> = bundle.shard_files();
    listed.push(lantern_engine::SPLIT_META.to_string());
    listed.sort();
    assert_eq!(after, listed, "only the new build's files remain");
    // Shards are named by group (one hash per 16 in the meta): the text groups before the
    // edited page keep every name, the edited page's group changes.
    assert!(text_before.len() > 16, "{} text blocks", text_before.len());
    let first_group = &text_before[..16];
    assert!(
        first_group.iter().all(|n| after.contains(n)),
        "the text group before the edit keeps its names"
    );
    assert!(!after.contains(text_before.last().unwrap()));
    assert!(
        after.iter().any(|n| !before.contains(n)),
        "some shards changed"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}
