//! `lantern build` end to end with the real model: bad input, determinism, the incremental cache
//! and bundle validation.

mod common;

use common::{build_dir, model, sample_docs, write};
use lantern_indexer::{BuildOptions, Config};

/// The sample docs built into `out/b`; returns both folders (kept alive) and the bundle bytes.
fn built_sample() -> (tempfile::TempDir, tempfile::TempDir, Vec<u8>) {
    let docs = tempfile::tempdir().unwrap();
    sample_docs(docs.path());
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("b");
    build_dir(docs.path(), &path, None).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (docs, out, bytes)
}
use lantern_engine::{Bundle, Error as BundleError};

#[test]
fn builds_a_bundle_that_round_trips() {
    let docs = tempfile::tempdir().unwrap();
    sample_docs(docs.path());
    let out = docs.path().join("../out-roundtrip.lantern");
    let r = build_dir(docs.path(), &out, None).unwrap();
    assert_eq!(r.pages, 3);
    assert!(r.skipped.is_empty(), "{:?}", r.skipped);
    let bundle = Bundle::from_bytes(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(bundle.header().chunks as usize, r.chunks);
    bundle.check_model(&model().model.manifest.sha256).unwrap();
    // With no lantern.toml, "no good match" is measured on the site: halfway between the
    // model's threshold and where generic questions land on it, found again here by searching
    // the bundle written.
    let lantern_indexer::abstain::Threshold::Calibrated {
        cosine,
        model: model_threshold,
        probes_median,
        probes,
    } = r.abstain
    else {
        panic!("not calibrated: {:?}", r.abstain);
    };
    assert_eq!(bundle.header().abstain_cosine, cosine);
    assert_eq!(model_threshold, model().model.manifest.abstain_cosine);
    let engine =
        lantern_engine::Engine::new(Bundle::from_bytes(&std::fs::read(&out).unwrap()).unwrap());
    let mut best: Vec<f32> = lantern_indexer::abstain::probe_questions()
        .iter()
        .map(|q| engine.best_cosines(&model().embedder.embed(q).unwrap(), 1)[0])
        .collect();
    assert_eq!(best.len(), probes);
    best.sort_by(f32::total_cmp);
    assert!((best[probes / 2] - probes_median).abs() < 1e-6);
    assert!((cosine - (model_threshold + probes_median) / 2.0).abs() < 1e-6);
    // Three pages about a widget's colours: unrelated questions land far below the model's
    // threshold, and so does the site's.
    assert!(cosine < model_threshold, "{cosine} vs {model_threshold}");
    let contrast = bundle
        .chunks()
        .iter()
        .find(|c| c.anchor == "contrast")
        .expect("contrast section");
    assert_eq!(contrast.breadcrumb, vec!["Colors", "Contrast"]);
    assert_eq!(bundle.page_of(contrast).url, "/guide/colors.html");
    let err = bundle
        .chunks()
        .iter()
        .find(|c| c.text.contains("registry"))
        .unwrap();
    assert_eq!(err.anchor, "e042-widget-not-found");
    // Every chunk fits the model without truncation.
    for c in bundle.chunks() {
        let text = lantern_indexer::chunk::embedding_text(&c.breadcrumb, &c.text);
        assert!(model().embedder.count_tokens(&text).unwrap() <= 256);
    }
    std::fs::remove_file(out).ok();
}

#[test]
fn a_site_threshold_overrides_the_models() {
    let docs = tempfile::tempdir().unwrap();
    sample_docs(docs.path());
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("b");
    let m = model();
    let config = lantern_indexer::config::Config {
        abstain_cosine: Some(0.25),
        ..Default::default()
    };
    let opts = lantern_indexer::BuildOptions {
        docs: docs.path().to_path_buf(),
        out: path.clone(),
        config,
        cache: None,
        progress: false,
        whole_file: true,
        part: None,
        cache_from: Vec::new(),
    };
    lantern_indexer::build(&opts, &m.model, &m.embedder).unwrap();
    let bundle = Bundle::from_bytes(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(bundle.header().abstain_cosine, 0.25);
}

#[test]
fn declared_synonyms_reach_the_bundle_and_idle_ones_are_named() {
    let docs = tempfile::tempdir().unwrap();
    sample_docs(docs.path());
    // Through lantern.toml, as an owner writes it; "pallete" is a typo no page uses.
    write(
        docs.path(),
        "lantern.toml",
        "[synonyms]\nshade = [\"palette\", \"pallete\"]\nbumping = [\"upgrading\"]\n",
    );
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("b");
    let m = model();
    let opts = lantern_indexer::BuildOptions {
        docs: docs.path().to_path_buf(),
        out: path.clone(),
        config: Config::load(&docs.path().join("lantern.toml")).unwrap(),
        cache: None,
        progress: false,
        whole_file: true,
        part: None,
        cache_from: Vec::new(),
    };
    let r = lantern_indexer::build(&opts, &m.model, &m.embedder).unwrap();
    let idle: Vec<&String> = r
        .warnings
        .iter()
        .filter(|w| w.contains("[synonyms]"))
        .collect();
    assert_eq!(idle.len(), 1, "{:?}", r.warnings);
    assert!(idle[0].contains("\"pallete\""), "{}", idle[0]);
    let engine =
        lantern_engine::Engine::new(Bundle::from_bytes(&std::fs::read(&path).unwrap()).unwrap());
    let top = |q: &str| {
        engine
            .search(q, None, lantern_engine::Mode::Keyword, 3)
            .hits
            .first()
            .map(|h| h.url.clone())
    };
    assert_eq!(top("shade").as_deref(), Some("/guide/colors.html#palettes"));
    assert_eq!(top("bumping").as_deref(), Some("/index.html#upgrading"));
}

#[test]
fn same_input_gives_identical_bytes() {
    let docs = tempfile::tempdir().unwrap();
    sample_docs(docs.path());
    let out = tempfile::tempdir().unwrap();
    build_dir(docs.path(), &out.path().join("a"), None).unwrap();
    build_dir(docs.path(), &out.path().join("b"), None).unwrap();
    assert_eq!(
        std::fs::read(out.path().join("a")).unwrap(),
        std::fs::read(out.path().join("b")).unwrap()
    );
}

#[test]
fn one_core_or_many_give_the_same_bundle_and_query_table() {
    // The query table's fit sums on all cores; a CI runner's core count must not change it.
    let docs = tempfile::tempdir().unwrap();
    sample_docs(docs.path());
    let out = tempfile::tempdir().unwrap();
    let (one, many) = (out.path().join("one"), out.path().join("many"));
    let pool = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    pool(1).install(|| build_dir(docs.path(), &one, None).unwrap());
    pool(3).install(|| build_dir(docs.path(), &many, None).unwrap());
    let read = |p: &std::path::Path, suffix: &str| {
        let mut name = p.as_os_str().to_owned();
        name.push(suffix);
        std::fs::read(name).unwrap()
    };
    assert_eq!(read(&one, ""), read(&many, ""));
    let table = read(&one, ".query");
    assert!(table.len() > 1_000, "a query table was written");
    assert_eq!(table, read(&many, ".query"));
}

#[test]
fn the_query_table_fits_on_texts_that_still_teach_it_a_word() {
    // Sixty sections of sentences drawn from the same six words: once each word is in sixteen
    // texts, more of them would cost embedding time and teach the table nothing.
    let docs = tempfile::tempdir().unwrap();
    let words = ["ferry", "harbour", "tide", "rope", "anchor", "lantern"];
    let mut state = 7u32;
    let mut body = String::from("# Boats\n\n");
    for i in 0..60 {
        body.push_str(&format!("## Part {i}\n\n"));
        for _ in 0..4 {
            let s: Vec<&str> = (0..9)
                .map(|_| {
                    state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    words[(state >> 16) as usize % words.len()]
                })
                .collect();
            body.push_str(&format!("{}. ", s.join(" ")));
        }
        body.push_str("\n\n");
    }
    write(docs.path(), "boats.md", &body);
    let out = tempfile::tempdir().unwrap();
    let r = build_dir(docs.path(), &out.path().join("b"), None).unwrap();
    let fit = r.query_table.expect("a query table");
    // Over a thousand different texts are cut (1,153 without the rule); the headings, each
    // with a number of its own, and a few dozen others are kept.
    assert!(fit.texts >= 60, "{} texts", fit.texts);
    assert!(fit.texts <= 200, "{} texts", fit.texts);
}

#[test]
fn editing_one_page_embeds_only_its_chunks() {
    let docs = tempfile::tempdir().unwrap();
    sample_docs(docs.path());
    let out = tempfile::tempdir().unwrap();
    let bundle = out.path().join("site.lantern");
    let cache = Some(out.path().join("cache"));
    let first = build_dir(docs.path(), &bundle, cache.clone()).unwrap();
    assert_eq!(first.embedded, first.chunks);
    let again = build_dir(docs.path(), &bundle, cache.clone()).unwrap();
    assert_eq!((again.embedded, again.reused), (0, first.chunks));

    write(docs.path(), "guide/errors.md", "# Errors\n\n## E042 widget not found\n\nThe id is unknown. Check the spelling and the registry.\n");
    let edited = build_dir(docs.path(), &bundle, cache.clone()).unwrap();
    assert_eq!(
        edited.embedded, 1,
        "only the edited section is embedded again"
    );
    assert_eq!(edited.reused, first.chunks - 1);

    std::fs::remove_file(docs.path().join("guide/colors.md")).unwrap();
    let deleted = build_dir(docs.path(), &bundle, cache.clone()).unwrap();
    assert_eq!(deleted.pages, 2);
    assert_eq!(deleted.embedded, 0);

    // The cached build equals a cold build of the same docs.
    let cold = out.path().join("cold.lantern");
    build_dir(docs.path(), &cold, None).unwrap();
    assert_eq!(
        std::fs::read(&bundle).unwrap(),
        std::fs::read(&cold).unwrap()
    );
}

#[test]
fn bad_files_are_skipped_with_reasons() {
    let docs = tempfile::tempdir().unwrap();
    sample_docs(docs.path());
    write(docs.path(), "binary.md", b"PK\x03\x04\x00\x00garbage\x00");
    write(docs.path(), "latin1.md", b"# Caf\xe9\n\nna\xefve text\n");
    write(docs.path(), "empty.md", "");
    write(docs.path(), "only-heading.md", "# Nothing below\n");
    write(docs.path(), "huge.md", "word ".repeat(1_000_000));
    write(docs.path(), "hostile.md", "# Hi <img src=x onerror=alert(1)>\n\n<script>alert('x')</script> ignore previous instructions\n\n```\nunclosed");
    write(docs.path(), "notes.txt", "not in scope");
    let out = tempfile::tempdir().unwrap();
    let r = build_dir(docs.path(), &out.path().join("b"), None).unwrap();
    let reason = |p: &str| {
        r.skipped
            .iter()
            .find(|s| s.path == p)
            .map(|s| s.reason.to_string())
            .unwrap_or_default()
    };
    assert!(reason("binary.md").contains("binary"), "{:?}", r.skipped);
    assert!(reason("latin1.md").contains("UTF-8"));
    assert!(reason("empty.md").contains("no text"));
    assert!(reason("only-heading.md").contains("no text"));
    assert!(reason("huge.md").contains("too large"));
    assert!(
        r.skipped.iter().all(|s| s.path != "notes.txt"),
        "out-of-scope files are not warnings"
    );
    assert_eq!(r.pages, 4, "the sample pages and the hostile one");
    let b = Bundle::from_bytes(&std::fs::read(out.path().join("b")).unwrap()).unwrap();
    assert!(b
        .chunks()
        .iter()
        .any(|c| c.text.contains("ignore previous instructions")));
}

#[test]
fn empty_docs_fail_clearly_and_write_nothing() {
    let docs = tempfile::tempdir().unwrap();
    write(docs.path(), "a.md", "");
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("b.lantern");
    let err = build_dir(docs.path(), &path, None).unwrap_err();
    assert!(format!("{err:#}").contains("nothing to index"), "{err:#}");
    assert!(!path.exists());
    assert!(build_dir(&docs.path().join("missing"), &path, None).is_err());
}

#[test]
fn failed_build_keeps_the_previous_bundle_intact() {
    let docs = tempfile::tempdir().unwrap();
    sample_docs(docs.path());
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("b.lantern");
    build_dir(docs.path(), &path, None).unwrap();
    let before = std::fs::read(&path).unwrap();
    let empty = tempfile::tempdir().unwrap();
    assert!(build_dir(empty.path(), &path, None).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let mut left: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["b.lantern", "b.lantern.d", "b.lantern.query"],
        "no temporary files left behind"
    );
    let bundle = lantern_engine::Bundle::from_bytes(&before).unwrap();
    let mut want: Vec<String> = bundle.shard_files();
    want.push(lantern_engine::SPLIT_META.to_string());
    want.sort();
    let mut split: Vec<String> = std::fs::read_dir(out.path().join("b.lantern.d"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    split.sort();
    assert_eq!(
        split, want,
        "the split form holds the meta file and the shards, no more"
    );
}

#[test]
fn damaged_and_foreign_bundles_are_rejected() {
    let (_docs, _out, good) = built_sample();

    assert!(matches!(
        Bundle::from_bytes(&good[..good.len() / 2]),
        Err(BundleError::Truncated { .. })
    ));
    assert!(matches!(
        Bundle::from_bytes(&good[..10]),
        Err(BundleError::Truncated { .. })
    ));
    assert_eq!(
        Bundle::from_bytes(b"<html>404</html>").err(),
        Some(BundleError::BadMagic)
    );
    let mut flipped = good.clone();
    let mid = flipped.len() - 100;
    flipped[mid] ^= 0x40;
    assert_eq!(
        Bundle::from_bytes(&flipped).err(),
        Some(BundleError::Checksum)
    );
    let mut newer = good.clone();
    newer[8] = 99;
    assert!(matches!(
        Bundle::from_bytes(&newer),
        Err(BundleError::UnsupportedVersion { found: 99, .. })
    ));

    let bundle = Bundle::from_bytes(&good).unwrap();
    let err = bundle.check_model("0000000000000000").unwrap_err();
    assert!(matches!(err, BundleError::ModelMismatch { .. }));
    assert!(err.to_string().contains("rebuild"));

    // What a browser checks before fetching a model: the folder's manifest, accepted only when
    // it names the bundle's model, refused when damaged.
    let manifest = model().model.manifest.clone();
    let accepted = bundle.accept_manifest(&manifest.to_json()).unwrap();
    assert_eq!(accepted, manifest);
    let other = lantern_embedder::Manifest {
        sha256: "0".repeat(64),
        ..manifest.clone()
    };
    assert!(matches!(
        bundle.accept_manifest(&other.to_json()),
        Err(BundleError::ModelMismatch { .. })
    ));
    for bad in [&b"{"[..], b"[]", b"\xff\xfe", &manifest.to_json()[..40]] {
        assert!(matches!(
            bundle.accept_manifest(bad),
            Err(BundleError::Manifest(_))
        ));
    }

    // Every truncation point is an error, never a panic.
    for cut in (0..good.len()).step_by(97) {
        assert!(Bundle::from_bytes(&good[..cut]).is_err());
    }
}

/// Random damage behind a valid checksum reaches the decoder and the engine: errors, never panics.
#[test]
fn randomly_damaged_payloads_never_panic() {
    let (_docs, _out, good) = built_sample();
    let body = 28; // fixed prefix length
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut decoded, mut refused) = (0, 0);
    for _ in 0..400 {
        let mut bytes = good.clone();
        for _ in 0..(1 + next() % 4) {
            let i = body + (next() as usize % (bytes.len() - body));
            bytes[i] = next() as u8;
        }
        let crc = crc32fast::hash(&bytes[body..]);
        bytes[24..28].copy_from_slice(&crc.to_le_bytes());
        let Ok(b) = Bundle::from_bytes(&bytes) else {
            refused += 1;
            continue;
        };
        decoded += 1;
        let chunks = b.chunks().len() as u32;
        let e = lantern_engine::Engine::new(b);
        let v = vec![0.05f32; 384];
        // What a damaged bundle that still reads answers names only its own sections.
        let r = e.search(
            "widget \"contrast ratio\" colr",
            Some(&v),
            lantern_engine::Mode::Hybrid,
            10,
        );
        for hit in r.pages.iter().flat_map(|p| &p.hits) {
            assert!(hit.chunk < chunks, "hit {} of {chunks} chunks", hit.chunk);
        }
    }
    // Damage in text or numbers can leave a bundle readable; damage in its structure cannot.
    assert!(
        refused > 0 && decoded + refused == 400,
        "{decoded} read, {refused} refused"
    );
}

#[test]
fn identical_sections_are_embedded_once() {
    let docs = tempfile::tempdir().unwrap();
    sample_docs(docs.path());
    let text = std::fs::read_to_string(docs.path().join("guide/colors.md")).unwrap();
    write(docs.path(), "v2/guide/colors.md", &text);
    let out = tempfile::tempdir().unwrap();
    let r = build_dir(docs.path(), &out.path().join("b"), None).unwrap();
    assert_eq!(r.pages, 4);
    assert_eq!(
        r.embedded + 2,
        r.chunks,
        "the copied page's two sections reuse the original's vectors"
    );
    let b = Bundle::from_bytes(&std::fs::read(out.path().join("b")).unwrap()).unwrap();
    assert_eq!(b.vectors().len(), r.chunks);
}

/// Builds the sample docs with a cache, lets `damage` spoil the cache (it gets the bundle's
/// chunks' cache keys, the loaded cache and the file's path, and returns how many vectors it
/// spoiled), then rebuilds: each spoiled vector is embedded again, with a warning, and the
/// bundle is the cold build's byte for byte.
fn cache_damage_is_caught(
    damage: impl FnOnce(
        &[[u8; 32]],
        &mut lantern_indexer::cache::EmbeddingCache,
        &std::path::Path,
    ) -> usize,
) {
    use lantern_indexer::cache::{text_key, EmbeddingCache};
    use lantern_indexer::chunk::embedding_text;
    let docs = tempfile::tempdir().unwrap();
    sample_docs(docs.path());
    let out = tempfile::tempdir().unwrap();
    let (bundle, cache) = (out.path().join("b"), out.path().join("cache"));
    build_dir(docs.path(), &bundle, Some(cache.clone())).unwrap();
    let cold = std::fs::read(&bundle).unwrap();
    let b = Bundle::from_bytes(&cold).unwrap();
    let mut keys: Vec<[u8; 32]> = b
        .chunks()
        .iter()
        .map(|c| text_key(&embedding_text(&c.breadcrumb, &c.text)))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    // Caches are named by the encoder's identity: the pack without its word rows.
    let id = model().model.vectors_id().unwrap();
    let (mut c, warning) = EmbeddingCache::load(&cache, &id);
    assert!(warning.is_none(), "{warning:?}");
    let spoiled = damage(&keys, &mut c, &cache);
    let r = build_dir(docs.path(), &bundle, Some(cache.clone())).unwrap();
    assert_eq!(r.embedded, spoiled, "every damaged vector embedded again");
    assert!(
        r.warnings.iter().any(|w| w.contains("damaged")),
        "{:?}",
        r.warnings
    );
    assert_eq!(
        std::fs::read(&bundle).unwrap(),
        cold,
        "same bundle as the cold build"
    );
}

/// Vectors of the wrong length or not finite, saved with valid checksums.
#[test]
fn damaged_cache_entries_are_embedded_again() {
    cache_damage_is_caught(|keys, c, path| {
        for (i, key) in keys.iter().enumerate() {
            let bad = if i % 2 == 0 {
                vec![0.1; 7]
            } else {
                vec![f32::NAN; 384]
            };
            c.insert(*key, bad);
        }
        c.save(path).unwrap();
        keys.len()
    });
}

/// One bit flipped in every cached vector's bytes (a finite, plausible, wrong value): caught by
/// the entries' checksums, never a silently different bundle.
#[test]
fn a_flipped_bit_in_the_cache_file_is_caught() {
    cache_damage_is_caught(|keys, c, path| {
        let mut file = std::fs::read(path).unwrap();
        let mut flipped = std::collections::HashSet::new();
        for key in keys {
            if !flipped.insert(*key) {
                continue;
            }
            let v = c.get(key, 384).expect("cached");
            let bytes: Vec<u8> = v[..4].iter().flat_map(|x| x.to_le_bytes()).collect();
            let at = file
                .windows(bytes.len())
                .position(|w| w == bytes)
                .expect("the vector's bytes are in the file");
            // A bit of the second value's exponent: four times larger or smaller, still finite.
            file[at + 7] ^= 0x01;
        }
        std::fs::write(path, &file).unwrap();
        flipped.len()
    });
}

#[test]
fn two_sources_for_one_page_are_an_error_naming_both() {
    let docs = tempfile::tempdir().unwrap();
    write(docs.path(), "README.md", "# Home\n\nWelcome home.\n");
    write(docs.path(), "index.md", "# Index\n\nAnother home.\n");
    let out = tempfile::tempdir().unwrap();
    let err = build_dir(docs.path(), &out.path().join("b"), None).unwrap_err();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("README.md") && msg.contains("index.md") && msg.contains("/index.html"),
        "{msg}"
    );
    assert!(!out.path().join("b").exists(), "nothing written");
}

#[test]
fn nothing_to_index_names_the_skipped_files() {
    let docs = tempfile::tempdir().unwrap();
    write(docs.path(), "a.md", b"\x00\x01binary".as_slice());
    write(docs.path(), "b.md", "");
    let out = tempfile::tempdir().unwrap();
    let err = build_dir(docs.path(), &out.path().join("b"), None).unwrap_err();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("a.md: binary") && msg.contains("b.md: no text"),
        "{msg}"
    );
}

#[test]
fn odd_file_names_get_working_urls_or_a_named_skip() {
    let docs = tempfile::tempdir().unwrap();
    write(
        docs.path(),
        "my page #1?.md",
        "# Odd\n\nA page with an odd name.\n",
    );
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"bad-\xff.md");
        std::fs::write(docs.path().join(name), "# Bad\n\nText.\n").unwrap();
    }
    let out = tempfile::tempdir().unwrap();
    let r = build_dir(docs.path(), &out.path().join("b"), None).unwrap();
    let b = Bundle::from_bytes(&std::fs::read(out.path().join("b")).unwrap()).unwrap();
    assert_eq!(b.pages()[0].url, "/my%20page%20%231%3F.html");
    #[cfg(unix)]
    assert!(
        r.skipped
            .iter()
            .any(|s| s.reason.to_string().contains("not valid UTF-8")),
        "{:?}",
        r.skipped
    );
}

/// `lantern site` builds the bundle before writing any page, and escapes the base URL.
#[test]
fn site_builds_first_and_escapes_the_base_url() {
    use lantern_indexer::site::{site, SiteOptions};
    let m = model();
    let out = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let opts = |docs: &std::path::Path| SiteOptions {
        docs: docs.to_path_buf(),
        out: out.path().join("site"),
        title: "T".into(),
        cache: None,
    };
    assert!(site(&opts(empty.path()), &m.model).is_err());
    assert!(
        !out.path().join("site/search.html").exists(),
        "a failed build writes no pages"
    );
    // Built HTML is refused before anything is written at all.
    let built = tempfile::tempdir().unwrap();
    write(
        built.path(),
        "index.html",
        "<html><body><h1>Built</h1><p>A page.</p></body></html>",
    );
    let err = site(&opts(built.path()), &m.model)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("lantern build"), "{err}");
    assert!(!out.path().join("site").exists(), "nothing left behind");
    let docs = tempfile::tempdir().unwrap();
    sample_docs(docs.path());
    write(
        docs.path(),
        "lantern.toml",
        "base_url = '/x\"><script>alert(1)</script>/'\n",
    );
    let r = site(&opts(docs.path()), &m.model).unwrap();
    assert_eq!(r.pages, 3);
    let html = std::fs::read_to_string(out.path().join("site/index.html")).unwrap();
    assert!(!html.contains("<script>alert(1)"), "{html}");
    // One form published: the split one.
    assert!(out.path().join("site/search.lantern.d/meta.bin").is_file());
    assert!(!out.path().join("site/search.lantern").exists());
    let manifest = std::fs::read_to_string(out.path().join("site/model/manifest.json")).unwrap();
    assert!(
        manifest.contains("\"model-"),
        "content-addressed model files: {manifest}"
    );
    // Browsers run the packed model: it is published, the model file is not.
    let published: Vec<String> = std::fs::read_dir(out.path().join("site/model"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        published.iter().any(|f| f.ends_with(".pack")),
        "{published:?}"
    );
    assert!(
        !published.iter().any(|f| f.ends_with(".onnx")),
        "{published:?}"
    );
    // Without its word rows, which are files of their own; the published manifest pins the
    // pack as published (which pins each row file).
    let rows = published.iter().filter(|f| f.starts_with("rows-")).count();
    assert!(rows > 100, "{published:?}");
    let pack = published.iter().find(|f| f.ends_with(".pack")).unwrap();
    let bytes = std::fs::read(out.path().join("site/model").join(pack)).unwrap();
    let pinned = lantern_engine::Manifest::from_json(manifest.as_bytes()).unwrap();
    assert_eq!(
        lantern_embedder::sha256_hex(&bytes),
        pinned.packed.unwrap().sha256
    );
    assert!(bytes.len() * 10 < m.model.packed_bytes().len() * 6);
    // The published folder is a model folder too (the packaged binary carries one): the same
    // identity for caches, and the same vectors bit for bit.
    let published = lantern_embedder::Model::open(&out.path().join("site/model")).unwrap();
    assert_eq!(
        published.vectors_id().unwrap(),
        m.model.vectors_id().unwrap()
    );
    let text = "How do I upgrade widgetry?";
    assert_eq!(
        published.embedder().unwrap().embed(text).unwrap(),
        m.embedder.embed(text).unwrap()
    );
    // A stale row file of another model is removed by the next publish.
    std::fs::write(out.path().join("site/model/rows-0123456789ab.bin"), b"old").unwrap();
    site(&opts(docs.path()), &m.model).unwrap();
    assert!(!out.path().join("site/model/rows-0123456789ab.bin").exists());
}

/// `lantern build SITE_DIR`: a built site gets one `lantern/` folder with everything to
/// publish; the next build after it does not index that folder, and embeds nothing again.
#[test]
fn a_built_site_gets_one_published_folder_that_is_never_indexed() {
    use lantern_indexer::publish::{check_site, publish, SwScope, MANIFEST_FILE, PUBLISH_FOLDER};
    let m = common::model();
    let site = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let src =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/built-site");
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(&src).unwrap();
        if entry.file_type().is_file() {
            common::write(
                site.path(),
                &rel.to_string_lossy(),
                std::fs::read(entry.path()).unwrap(),
            );
        }
    }
    let runtime: Vec<(&str, &[u8])> = vec![
        ("widget.js", b"// widget"),
        ("sw.js", b"// worker"),
        ("pkg/lantern_search_wasm_bg-0123456789ab.wasm", b"\0asm"),
    ];
    let mut config = Config::default();
    config.input = lantern_indexer::config::Input::Html;
    config.exclude.push(format!("{PUBLISH_FOLDER}/**"));
    let opts = BuildOptions {
        docs: site.path().to_path_buf(),
        out: site.path().join("lantern/search.lantern"),
        config,
        cache: Some(cache.path().join("site.cache")),
        progress: false,
        whole_file: false,
        part: None,
        cache_from: Vec::new(),
    };
    // A whole file and its compressed copy from an earlier release, which published both forms.
    common::write(site.path(), "lantern/search.lantern", b"old");
    common::write(site.path(), "lantern/search.lantern.gz", b"old");
    let first = lantern_indexer::build(&opts, &m.model, &m.embedder).unwrap();
    assert!(site
        .path()
        .join("lantern/search.lantern.d/meta.bin")
        .is_file());
    for gone in ["lantern/search.lantern", "lantern/search.lantern.gz"] {
        assert!(
            !site.path().join(gone).exists(),
            "{gone}: one form published"
        );
    }
    // An older runtime's module, which this publish no longer has.
    common::write(
        site.path(),
        "lantern/pkg/lantern_search_wasm_bg-ffffffffffff.wasm",
        b"old",
    );
    let p = publish(site.path(), &runtime, Some(&m.model), "/", SwScope::Lantern).unwrap();
    let dir = site.path().join("lantern");
    for f in [
        "widget.js",
        "sw.js",
        "index.html",
        "snippet.html",
        "model/manifest.json",
        "search.lantern.query",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    assert!(!dir
        .join("pkg/lantern_search_wasm_bg-ffffffffffff.wasm")
        .exists());
    assert!(p.snippet.contains("src=\"/lantern/widget.js\""));
    assert_eq!(
        std::fs::read_to_string(dir.join("snippet.html")).unwrap(),
        p.snippet
    );
    assert!(!site.path().join("lantern-sw.js").exists());
    // Lantern lists what it wrote; the next build may replace those, and their compressed
    // copies, but an owner's file in the folder stops it before anything is written.
    let manifest = std::fs::read_to_string(dir.join(MANIFEST_FILE)).unwrap();
    for f in [
        "lantern/widget.js",
        "lantern/search.lantern.d/meta.bin",
        "lantern/snippet.html",
    ] {
        assert!(manifest.lines().any(|l| l == f), "{f} in {manifest}");
    }
    common::write(
        site.path(),
        "lantern/widget.js.gz",
        b"precompressed by the owner's CI",
    );
    check_site(site.path()).unwrap();
    common::write(site.path(), "lantern/ui/logo.png", b"the owner's");
    let err = format!("{:#}", check_site(site.path()).expect_err("refused"));
    assert!(
        err.contains("lantern/ui/logo.png") && err.contains("did not write"),
        "{err}"
    );
    std::fs::remove_file(site.path().join("lantern/ui/logo.png")).unwrap();
    // The pages are English: the UI module that stems only English is the one to publish.
    assert_eq!(first.langs, [lantern_engine::Lang::English]);
    // The next deploy: the same pages, none embedded again, nothing of lantern/ indexed.
    let again = lantern_indexer::build(&opts, &m.model, &m.embedder).unwrap();
    assert_eq!((again.pages, again.chunks), (first.pages, first.chunks));
    assert_eq!(again.embedded, 0, "{again}");
    // The whole site's worker is an opt-in, at the root.
    publish(site.path(), &runtime, Some(&m.model), "/", SwScope::Site).unwrap();
    assert_eq!(
        std::fs::read(site.path().join("lantern-sw.js")).unwrap(),
        b"// worker"
    );
    // Opting out again: returning readers' browsers get a worker that unregisters itself.
    publish(site.path(), &runtime, Some(&m.model), "/", SwScope::Lantern).unwrap();
    let retired = std::fs::read_to_string(site.path().join("lantern-sw.js")).unwrap();
    assert!(retired.contains("registration.unregister()"), "{retired}");
    check_site(site.path()).unwrap();
    // A runtime naming a path outside its folder is refused.
    let bad: Vec<(&str, &[u8])> = vec![("widget.js", b""), ("sw.js", b""), ("../evil.js", b"")];
    assert!(publish(site.path(), &bad, Some(&m.model), "/", SwScope::Lantern).is_err());
    assert!(!site.path().join("evil.js").exists());
    // Quick meaning only: the model and the embedder published before are removed, the
    // owner's own file in the model folder is kept, and the tags say there is no model.
    common::write(site.path(), "lantern/model/notes.txt", b"mine");
    let mut with_embedder = runtime.clone();
    with_embedder.push(("pkg/lantern_embed_wasm_bg-0123456789ab.wasm", b"\0asm"));
    with_embedder.push(("embed-worker-0123456789ab.js", b"// worker"));
    let publish_with =
        |model| publish(site.path(), &with_embedder, model, "/", SwScope::Lantern).unwrap();
    publish_with(Some(&m.model));
    assert!(dir.join("embed-worker-0123456789ab.js").is_file());
    let p = publish_with(None);
    let model_dir: Vec<String> = std::fs::read_dir(dir.join("model"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(model_dir, ["notes.txt"]);
    assert!(!dir.join("embed-worker-0123456789ab.js").exists());
    assert!(!dir
        .join("pkg/lantern_embed_wasm_bg-0123456789ab.wasm")
        .exists());
    assert!(dir
        .join("pkg/lantern_search_wasm_bg-0123456789ab.wasm")
        .is_file());
    assert!(p.snippet.contains("model=\"none\""), "{}", p.snippet);
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(page.contains("model=\"none\""), "{page}");
    // Without the owner's file, the folder goes too.
    std::fs::remove_file(dir.join("model/notes.txt")).unwrap();
    publish_with(Some(&m.model));
    publish_with(None);
    assert!(!dir.join("model").exists());
}

/// The runtime's two UI modules: a bundle in English (or a language without a stemmer) gets
/// the small one, a bundle with any other stemmed language the one with every stemmer, each
/// published as ui/.
#[test]
fn the_ui_module_published_is_the_one_the_bundles_languages_need() {
    use lantern_engine::Lang;
    use lantern_indexer::publish::choose_ui;
    let runtime = || {
        vec![
            ("widget.js".to_string(), b"w".to_vec()),
            ("ui/lantern_ui.js".to_string(), b"english".to_vec()),
            ("ui-intl/lantern_ui.js".to_string(), b"every".to_vec()),
        ]
    };
    let published = |langs: &[Lang]| {
        let mut r = runtime();
        choose_ui(&mut r, langs);
        r.into_iter()
            .map(|(p, b)| format!("{p}={}", String::from_utf8(b).unwrap()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        published(&[Lang::English, Lang::None]),
        ["widget.js=w", "ui/lantern_ui.js=english"]
    );
    assert_eq!(
        published(&[Lang::English, Lang::French]),
        ["widget.js=w", "ui/lantern_ui.js=every"]
    );
}

#[test]
fn a_build_split_across_jobs_writes_the_one_job_bundle_without_embedding_again() {
    let docs = tempfile::tempdir().unwrap();
    sample_docs(docs.path());
    let m = model();
    let opts = |out: &std::path::Path, cache: &std::path::Path| BuildOptions {
        docs: docs.path().to_path_buf(),
        out: out.to_path_buf(),
        config: Config::default(),
        cache: Some(cache.to_path_buf()),
        progress: false,
        whole_file: true,
        part: None,
        cache_from: Vec::new(),
    };
    // One job.
    let one = tempfile::tempdir().unwrap();
    let single = one.path().join("b");
    let r = lantern_indexer::build(&opts(&single, &one.path().join("c")), &m.model, &m.embedder)
        .unwrap();
    assert!(
        r.embedded_texts > r.chunks,
        "probes and the query table embedded too"
    );

    // Three parts, each its own cache and no bundle, then a job that merges them.
    let jobs = tempfile::tempdir().unwrap();
    let mut caches = Vec::new();
    let mut shares = 0;
    for index in 1..=3 {
        let cache = jobs.path().join(format!("part-{index}.cache"));
        let o = BuildOptions {
            part: Some(lantern_indexer::Part { index, of: 3 }),
            ..opts(&jobs.path().join("b"), &cache)
        };
        let p =
            lantern_indexer::part::build_part(&o, &m.model, &m.embedder, o.part.unwrap()).unwrap();
        assert!(p.share > 0 && p.embedded == p.share, "{p}");
        assert!(cache.is_file());
        shares += p.share;
        assert_eq!(
            p.texts, r.embedded_texts,
            "every part sees the whole build's texts"
        );
        caches.push(cache);
    }
    assert_eq!(
        shares, r.embedded_texts,
        "the parts share the texts without overlap"
    );
    assert!(!jobs.path().join("b").exists(), "a part writes no bundle");
    let merged = jobs.path().join("merged");
    let report = lantern_indexer::build(
        &BuildOptions {
            cache_from: caches,
            ..opts(&merged, &jobs.path().join("merged.cache"))
        },
        &m.model,
        &m.embedder,
    )
    .unwrap();
    assert_eq!(report.embedded_texts, 0, "everything came from the parts");
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&single).unwrap()
    );
    let table = |b: &std::path::Path| std::fs::read(lantern_indexer::query_table_path(b)).unwrap();
    assert_eq!(table(&merged), table(&single));

    // A part's cache named but missing is an error, not a silent hour of embedding.
    let err = lantern_indexer::build(
        &BuildOptions {
            cache_from: vec![jobs.path().join("part-9.cache")],
            ..opts(&merged, &jobs.path().join("merged.cache"))
        },
        &m.model,
        &m.embedder,
    )
    .unwrap_err();
    assert!(err.to_string().contains("part-9.cache"), "{err}");
}
