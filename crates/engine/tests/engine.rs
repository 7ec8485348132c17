//! The engine on a bundle made with its own writer and hand-made vectors: no model needed.

use lantern_engine::answer::stream::{delta_event, error_event, DONE_EVENT};
use lantern_engine::{
    highlight_segments, Abstention, AskOutcome, AskSession, Bundle, BundleWriter, Engine, Mode,
    ModelInfo,
};

/// A writer for bundles of 4-dimensional hand-made vectors.
fn toy_writer() -> BundleWriter {
    BundleWriter::new(ModelInfo::new("toy", &"0".repeat(64), 4, 64), 0.5)
}

/// Four sections on two pages; each vector points along its own axis.
fn engine() -> Engine {
    let mut w = toy_writer();
    let a = w.add_page(
        "/cache.html",
        "Build cache",
        "cache.md",
        lantern_engine::Lang::English,
    );
    w.add_chunk(
        a,
        vec!["Build cache".into(), "Incremental builds".into()],
        "incremental-builds",
        "Unchanged pages are never processed again; results are kept between runs.",
    );
    w.add_chunk(
        a,
        vec!["Build cache".into(), "Clearing".into()],
        "clearing",
        "Delete the cache file to start from scratch.",
    );
    let b = w.add_page(
        "/faq.html",
        "Café FAQ",
        "faq.md",
        lantern_engine::Lang::English,
    );
    w.add_chunk(
        b,
        vec!["Café FAQ".into(), "Offline".into()],
        "offline",
        "Über café: search keeps working without a network once visited.",
    );
    w.add_chunk(
        b,
        vec!["Café FAQ".into(), "Themes".into()],
        "themes",
        "Dark mode follows the system preference.",
    );
    let axis = |i: usize| {
        (0..4)
            .map(|d| if d == i { 1.0 } else { 0.0 })
            .collect::<Vec<f32>>()
    };
    let bundle = w.finish((0..4).map(axis).collect()).unwrap();
    // Through bytes, as every reader gets it.
    Engine::new(Bundle::from_bytes(&bundle.to_bytes().unwrap()).unwrap())
}

#[test]
fn keyword_vector_and_hybrid_modes() {
    let e = engine();
    let r = e.search("cache file", None, Mode::Hybrid, 5);
    assert_eq!(r.mode, Mode::Keyword, "no vector: keyword");
    assert_eq!(r.hits[0].url, "/cache.html#clearing");
    let q = [0.0, 0.0, 0.9, 0.1];
    let r = e.search("no shared words here", Some(&q), Mode::Vector, 5);
    // The page's first section is its top: the link opens the page, title first.
    assert_eq!(r.hits[0].url, "/faq.html#offline");
    assert!((r.best_cosine.unwrap() - 0.9).abs() < 0.05);
    let r = e.search("cache", Some(&q), Mode::Hybrid, 5);
    assert_eq!(r.mode, Mode::Hybrid);
    assert!(r
        .hits
        .iter()
        .any(|h| h.keyword.is_some() && h.vector.is_some()));
    assert_eq!(r.pages.len(), 2, "grouped by page");
}

#[test]
fn keyword_strength_says_how_much_of_the_query_the_best_section_holds() {
    let e = engine();
    let strength = |q: &str| e.search(q, None, Mode::Keyword, 5).keyword_strength;
    let whole = strength("delete cache file scratch");
    let half = strength("delete cache zeppelin hangar");
    let none = strength("zeppelin hangar");
    // Every word in one section's text (none in its heading): well short of a heading match
    // but far from nothing.
    assert!(
        whole > 0.3 && whole <= 1.0,
        "every word in one section: {whole}"
    );
    // Words the docs never use count against it in full.
    assert!(
        half > 0.0 && half < whole,
        "half the words unknown: {half} vs {whole}"
    );
    assert_eq!(none, 0.0, "no keyword evidence");
}

#[test]
fn highlights_are_utf16_offsets_of_whole_words() {
    let e = engine();
    let r = e.search("café", None, Mode::Keyword, 5);
    let hit = &r.hits[0];
    let marked: Vec<String> = highlight_segments(&hit.excerpt, &hit.highlights)
        .into_iter()
        .filter(|(_, m)| *m)
        .map(|(t, _)| t)
        .collect();
    assert!(
        !marked.is_empty() && marked.iter().all(|w| w.eq_ignore_ascii_case("café")),
        "{marked:?}"
    );
}

#[test]
fn modes_have_one_spelling() {
    for m in Mode::ALL {
        assert_eq!(m.as_str().parse::<Mode>().unwrap(), m);
        assert_eq!(m.to_string(), m.as_str());
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            format!("\"{}\"", m.as_str())
        );
    }
    assert_eq!("semantic".parse::<Mode>().unwrap(), Mode::Vector);
    assert!("fuzzy".parse::<Mode>().is_err());
}

fn answer(session: &mut AskSession, events: &[String]) -> Option<AskOutcome> {
    for e in events {
        session.feed(e.as_bytes()).unwrap();
    }
    session.end_attempt().unwrap().cloned()
}

#[test]
fn the_ask_state_machine_verifies_and_retries_once() {
    let e = engine();
    let q = [0.0, 0.0, 1.0, 0.0];
    let mut s = AskSession::start(&e, "does search work offline", Some(&q));
    let req = s.request().expect("a request to send").clone();
    assert!(!req.passages.is_empty() && req.passages[0].url == "/faq.html#offline");
    assert_eq!(req.passages[0].n, 1);
    // A bad citation: one corrective retry naming it.
    assert!(answer(&mut s, &[delta_event("Yes [9]."), DONE_EVENT.into()]).is_none());
    let retry = s.request().unwrap();
    assert!(retry.correction.as_deref().unwrap().contains("[9]"));
    assert_eq!(s.attempt(), 1);
    // A good one, streamed in pieces, with a multi-number citation.
    let out = answer(
        &mut s,
        &[
            delta_event("Yes, "),
            delta_event("it does [1, 2]."),
            DONE_EVENT.into(),
        ],
    );
    match out {
        Some(AskOutcome::Answered { text, cited, .. }) => {
            assert_eq!(text, "Yes, it does [1, 2].");
            assert_eq!(cited, vec![1, 2]);
        }
        other => panic!("{other:?}"),
    }
    assert!(s.request().is_none(), "over");
}

#[test]
fn asking_ends_without_a_model_call_or_with_an_error() {
    let e = engine();
    // Cosine 0.4 at best is under the bundle's threshold, and no keyword: no request.
    let s = AskSession::start(&e, "zebra migration", Some(&[0.4, -0.4, 0.4, -0.4]));
    assert!(s.request().is_none());
    assert!(matches!(
        s.outcome(),
        Some(AskOutcome::Abstained {
            reason: Abstention::NoGoodMatch,
            model_calls: 0,
            ..
        })
    ));
    // A stream that reports an error ends the ask with that error.
    let mut s = AskSession::start(&e, "cache file", None);
    s.feed(delta_event("partial").as_bytes()).unwrap();
    let err = s
        .feed(error_event("upstream_stream").as_bytes())
        .unwrap_err();
    assert!(err.to_string().contains("upstream_stream"));
    // The outcome serializes as the browser reads it.
    let json = serde_json::to_value(AskOutcome::Abstained {
        reason: Abstention::NotInContext,
        passages: vec![],
        model_calls: 1,
    })
    .unwrap();
    assert_eq!(json["status"], "abstained");
    assert_eq!(json["reason"], "not_in_context");
    assert_eq!(json["modelCalls"], 1);
}

#[test]
fn repeated_and_pasted_words_cost_nothing_extra() {
    let e = engine();
    let once = e.search("file cache ", None, Mode::Keyword, 5);
    let pasted = format!("file {}", "cache ".repeat(9000));
    let many = e.search(&pasted, None, Mode::Keyword, 5);
    let urls =
        |r: &lantern_engine::Results| r.hits.iter().map(|h| h.url.clone()).collect::<Vec<_>>();
    assert_eq!(urls(&many), urls(&once), "a repeated word counts once");
    assert_eq!(many.hits[0].score, once.hits[0].score);
}

#[test]
fn excerpts_cut_after_wide_whitespace() {
    // The excerpt backs up from the match to a word boundary; here the boundary is whitespace
    // wider than a byte (a no-break space in the box-drawing trees of some docs, and every
    // other kind Unicode has).
    for ws in (0..=0x10ffff_u32)
        .filter_map(char::from_u32)
        .filter(|c| c.is_whitespace())
    {
        let mut w = toy_writer();
        let p = w.add_page("/t.html", "T", "t.md", lantern_engine::Lang::English);
        let text = format!(
            "{}{ws}{} zebrafinch and more",
            "a".repeat(60),
            "b".repeat(30)
        );
        w.add_chunk(p, vec!["Tree".into()], "tree", &text);
        let bundle = w.finish(vec![vec![1.0, 0.0, 0.0, 0.0]]).unwrap();
        let e = Engine::new(Bundle::from_bytes(&bundle.to_bytes().unwrap()).unwrap());
        let r = e.search("zebrafinch", None, Mode::Keyword, 5);
        let hit = &r.hits[0];
        assert!(hit.excerpt.starts_with("…bbb"), "{:?}: {}", ws, hit.excerpt);
        let marked: Vec<String> = highlight_segments(&hit.excerpt, &hit.highlights)
            .into_iter()
            .filter(|(_, m)| *m)
            .map(|(s, _)| s)
            .collect();
        assert_eq!(marked, ["zebrafinch"], "{ws:?}");
    }
}

#[test]
fn the_parts_of_one_long_section_show_as_one_row() {
    // A long section is stored in parts with one link and breadcrumb: one row, its best part.
    let mut w = toy_writer();
    let p = w.add_page(
        "/guide.html",
        "Guide",
        "guide.md",
        lantern_engine::Lang::English,
    );
    w.add_chunk(
        p,
        vec!["Guide".into(), "Lamps".into()],
        "lamps",
        "zebrafinch lamps and wicks",
    );
    w.add_chunk(
        p,
        vec!["Guide".into(), "Lamps".into()],
        "lamps",
        "more zebrafinch zebrafinch notes",
    );
    w.add_chunk(
        p,
        vec!["Guide".into(), "Oil".into()],
        "oil",
        "zebrafinch oil",
    );
    let vectors = vec![vec![1.0, 0.0, 0.0, 0.0]; 3];
    let bundle = w.finish(vectors).unwrap();
    let e = Engine::new(Bundle::from_bytes(&bundle.to_bytes().unwrap()).unwrap());
    let r = e.search("zebrafinch", None, Mode::Keyword, 10);
    let urls: Vec<&str> = r.hits.iter().map(|h| h.url.as_str()).collect();
    assert_eq!(urls.len(), 2, "{urls:?}");
    assert!(
        urls.contains(&"/guide.html#lamps") && urls.contains(&"/guide.html#oil"),
        "{urls:?}"
    );
    assert_eq!(
        r.pages[0].more, 0,
        "a part is not another section: {:?}",
        r.pages[0]
    );
}

#[test]
fn a_bundle_whose_page_links_run_script_is_refused() {
    // A reader follows page links: a tampered bundle may not turn them into script.
    for (url, ok) in [
        ("/guide/t.html", true),
        ("https://docs.example.com/t.html", true),
        ("javascript:alert(1)//", false),
        (" javascript:alert(1)", false),
        ("data:text/html,x", false),
    ] {
        let mut w = toy_writer();
        let p = w.add_page(url, "T", "t.md", lantern_engine::Lang::English);
        w.add_chunk(p, vec!["T".into()], "t", "zebrafinch");
        let bundle = w.finish(vec![vec![1.0, 0.0, 0.0, 0.0]]).unwrap();
        let read = Bundle::from_bytes(&bundle.to_bytes().unwrap());
        assert_eq!(read.is_ok(), ok, "{url:?}");
        if !ok {
            let e = read.err().unwrap().to_string();
            assert!(e.contains("http(s)"), "{e}");
        }
    }
}

/// The toy model's manifest, as a browser fetches it; `extra` adds fields.
fn toy_manifest(extra: &str) -> Vec<u8> {
    format!(
        r#"{{"model_id": "toy", "sha256": "{}", "tokenizer_sha256": "{}", "dimensions": 4,
            "pooling": "mean", "normalize": "l2", "max_tokens": 64, "abstain_cosine": 0.5{extra}}}"#,
        "0".repeat(64),
        "1".repeat(64)
    )
    .into_bytes()
}

#[test]
fn a_question_the_model_cannot_read_is_judged_by_its_words() {
    // Equally far from every section: a cosine of 0.3, under the threshold.
    let far = [0.3f32; 4];
    let chinese_with_a_word = "清除 cache 的方法是什麼？";
    let chinese_only = "快取在哪裡？";

    // A model that states no scripts: every question is judged by its cosine.
    let e = engine();
    let r = e.search(chinese_with_a_word, Some(&far), Mode::Hybrid, 5);
    assert!(r.best_cosine.unwrap() < 0.5);
    assert!(!r.unread_script);
    assert!(
        r.no_good_match,
        "cosine under the threshold, not every word found"
    );

    let mut e = engine();
    let other = String::from_utf8(toy_manifest(r#", "scripts": ["latin"]"#))
        .unwrap()
        .replace(&"0".repeat(64), &"2".repeat(64));
    assert!(matches!(
        e.accept_manifest(other.as_bytes()),
        Err(lantern_engine::Error::ModelMismatch { .. })
    ));
    let m = e
        .accept_manifest(&toy_manifest(r#", "scripts": ["latin"]"#))
        .unwrap();
    assert_eq!(m.scripts, [lantern_engine::Script::Latin]);
    // Mostly Chinese, to a model that reads Latin letters: a section holding one of its
    // words vouches for the results, whatever the cosine...
    let r = e.search(chinese_with_a_word, Some(&far), Mode::Hybrid, 5);
    assert!(r.unread_script);
    assert!(!r.no_good_match);
    assert_eq!(r.pages[0].url, "/cache.html");
    // ...no section holding any of them is no good match, and meaning alone is never one.
    let r = e.search(chinese_only, Some(&far), Mode::Hybrid, 5);
    assert!(r.unread_script && r.no_good_match);
    let r = e.search(chinese_with_a_word, Some(&far), Mode::Vector, 5);
    assert!(r.unread_script && r.no_good_match);
    // A question in Latin letters is still judged by its cosine.
    let r = e.search("where does the cache live", Some(&far), Mode::Hybrid, 5);
    assert!(!r.unread_script);
    assert!(r.no_good_match);
    let near = [0.0, 0.0, 0.9, 0.1];
    let r = e.search("where does the cache live", Some(&near), Mode::Hybrid, 5);
    assert!(!r.no_good_match);
}

/// A page named "Testing" with an intro and five sections, and a changelog whose sections
/// mention tests over and over; vectors along 8 axes, chunk i on axis i % 8.
fn structured() -> Engine {
    let mut w = axis_writer();
    let t = page(&mut w, "/testing.html", "Testing", "testing.md");
    w.add_chunk(
        t,
        vec!["Testing".into()],
        "",
        "How a package checks itself.",
    );
    for s in [
        "Unit",
        "Integration",
        "Documentation",
        "Benchmarks",
        "Fixtures",
    ] {
        w.add_chunk(
            t,
            vec!["Testing".into(), s.into()],
            &s.to_lowercase(),
            &format!("{s} checks run with the rest; tests are found by name."),
        );
    }
    let c = page(&mut w, "/changes.html", "Changelog", "changes.md");
    for v in 1..=4 {
        w.add_chunk(
            c,
            vec!["Changelog".into(), format!("Version {v}")],
            &format!("v{v}"),
            "Fixed tests. More tests. Tests run faster; flaky tests retried.",
        );
    }
    axis_engine(w, 10)
}

/// A writer for eight-dimensional toy vectors.
fn axis_writer() -> BundleWriter {
    BundleWriter::new(ModelInfo::new("toy", &"0".repeat(64), 8, 64), 0.5)
}

/// The bundle of `n` chunks, chunk i's vector on axis i % 8.
fn axis_engine(w: BundleWriter, n: usize) -> Engine {
    let vectors = (0..n)
        .map(|i| (0..8).map(|d| if d == i % 8 { 1.0 } else { 0.0 }).collect())
        .collect();
    let bundle = w.finish(vectors).unwrap();
    Engine::new(Bundle::from_bytes(&bundle.to_bytes().unwrap()).unwrap())
}

/// An English page.
fn page(w: &mut BundleWriter, url: &str, title: &str, source: &str) -> u32 {
    w.add_page(url, title, source, lantern_engine::Lang::English)
}

#[test]
fn a_page_named_by_the_query_comes_first_and_opens_at_its_top() {
    let e = structured();
    // Keyword: the page's title outranks a changelog that repeats the word in every section.
    let r = e.search("testing", None, Mode::Keyword, 10);
    assert_eq!(r.pages[0].title, "Testing", "{:?}", r.pages);
    assert_eq!(
        r.pages[0].hits[0].url, "/testing.html",
        "the page's top, no anchor"
    );
    // Hybrid with a query vector pointing at a deep section: the top still leads its page.
    let mut q = vec![0.0; 8];
    q[4] = 1.0;
    let r = e.search("testing", Some(&q), Mode::Hybrid, 10);
    assert_eq!(r.pages[0].title, "Testing");
    assert_eq!(r.pages[0].hits[0].url, "/testing.html");
    // Words of a heading, not the title: that section, not the page's top.
    let r = e.search("fixtures", None, Mode::Keyword, 10);
    assert_eq!(r.hits[0].url, "/testing.html#fixtures");
}

#[test]
fn a_page_shows_three_sections_and_counts_the_rest() {
    let e = structured();
    let r = e.search("tests", None, Mode::Keyword, 10);
    for g in &r.pages {
        assert!(g.hits.len() <= 3, "{} shows {}", g.title, g.hits.len());
    }
    let changelog = r.pages.iter().find(|g| g.title == "Changelog").unwrap();
    assert_eq!(
        changelog.hits.len() as u32 + changelog.more,
        4,
        "all four counted"
    );
    assert!(changelog.more >= 1);
    let testing = r.pages.iter().find(|g| g.title == "Testing").unwrap();
    // The title ("Testing") counts for the top; five sections say "tests".
    assert_eq!(testing.hits.len() as u32 + testing.more, 6);
}

#[test]
fn a_page_whose_title_holds_every_word_outranks_headings_holding_some() {
    const KEYS: [&str; 4] = ["jobs", "target", "rustflags", "incremental"];
    const FILLER: usize = 3;
    // A command's page, and a reference page whose keys are named after the command and
    // whose text spells the tool's name in every environment variable.
    let mut w = axis_writer();
    let cmd = page(
        &mut w,
        "/commands/tool-build.html",
        "tool-build(1)",
        "commands/tool-build.md",
    );
    w.add_chunk(
        cmd,
        vec!["tool-build(1)".into(), "NAME".into()],
        "name",
        "tool-build --- Compile the current package",
    );
    w.add_chunk(
        cmd,
        vec!["tool-build(1)".into(), "OPTIONS".into()],
        "options",
        "Compile local packages and all of their dependencies with these options.",
    );
    let cfg = page(
        &mut w,
        "/reference/config.html",
        "Configuration",
        "reference/config.md",
    );
    for key in ["jobs", "target", "rustflags", "incremental"] {
        w.add_chunk(
            cfg,
            vec![
                "Configuration".into(),
                "[build]".into(),
                format!("build.{key}"),
            ],
            &format!("build{key}"),
            &format!(
                "Type: string. Environment: TOOL_BUILD_{} sets the {key} of every build the tool runs.",
                key.to_uppercase()
            ),
        );
    }
    // The rest of the docs, which say neither word.
    for i in 0..FILLER {
        let p = page(
            &mut w,
            &format!("/guide/{i}.html"),
            &format!("Guide {i}"),
            &format!("guide/{i}.md"),
        );
        w.add_chunk(
            p,
            vec![format!("Guide {i}")],
            "",
            "Packages, manifests and registries.",
        );
    }
    let e = axis_engine(w, 2 + KEYS.len() + FILLER);
    let r = e.search("tool build", None, Mode::Keyword, 10);
    assert_eq!(r.pages[0].title, "tool-build(1)", "{:?}", r.pages);
    // One word of the title is not the page's name: the headings holding it lead.
    let r = e.search("build jobs", None, Mode::Keyword, 10);
    assert_eq!(
        r.hits[0].url, "/reference/config.html#buildjobs",
        "{:?}",
        r.hits
    );
}

/// A bundle with a French page: searched with French stemming where this build has it, and
/// refused by name (never searched with the wrong stems) by the build that stems English only
/// (`cargo test -p lantern-engine --no-default-features`, run by tests/run.sh).
#[test]
fn a_french_bundle_needs_the_build_with_every_stemmer() {
    let mut w = toy_writer();
    let p = w.add_page("/fr.html", "Chevaux", "fr.md", lantern_engine::Lang::French);
    w.add_chunk(
        p,
        vec!["Chevaux".into()],
        "chevaux",
        "les chevaux courent vite",
    );
    let bytes = w
        .finish(vec![vec![1.0, 0.0, 0.0, 0.0]])
        .unwrap()
        .to_bytes()
        .unwrap();
    match (Bundle::from_bytes(&bytes), cfg!(feature = "all-languages")) {
        (Ok(bundle), true) => {
            let r = Engine::new(bundle).search("chevaux", None, Mode::Keyword, 5);
            assert!(r
                .hits
                .first()
                .is_some_and(|h| h.url.starts_with("/fr.html")));
        }
        (Err(e), false) => {
            assert!(e.to_string().contains("French"), "{e}");
            assert!(e.to_string().contains("lantern build SITE_DIR"), "{e}");
            assert!(!e.to_string().contains("--site"), "no such flag: {e}");
        }
        (r, every) => panic!("all-languages {every}: {:?}", r.err()),
    }
}

/// Three pages: one says "workspace", one says "monorepo" itself (in the body, as alike as
/// can be), one neither; with or without declared synonyms.
fn synonym_engine(synonyms: Vec<(String, Vec<String>)>) -> Engine {
    let mut w = toy_writer().synonyms(synonyms);
    let en = lantern_engine::Lang::English;
    for (url, title, text) in [
        (
            "/ws.html",
            "Sharing a lock file",
            "A workspace keeps every package in one lock file.",
        ),
        (
            "/mono.html",
            "Repository layout",
            "A monorepo keeps every package in one repository.",
        ),
        (
            "/other.html",
            "Publishing",
            "Upload a package to the registry with its metadata.",
        ),
    ] {
        let p = w.add_page(url, title, "x.md", en);
        w.add_chunk(p, vec![title.into()], "", text);
    }
    let v = |i: usize| {
        (0..4)
            .map(|d| if d == i { 1.0 } else { 0.0 })
            .collect::<Vec<f32>>()
    };
    let bundle = w.finish(vec![v(0), v(1), v(2)]).unwrap();
    Engine::new(Bundle::from_bytes(&bundle.to_bytes().unwrap()).unwrap())
}

fn page_urls(e: &Engine, q: &str) -> Vec<String> {
    e.search(q, None, Mode::Keyword, 10)
        .pages
        .iter()
        .map(|p| p.url.clone())
        .collect()
}

#[test]
fn declared_synonyms_find_the_docs_words_one_way_behind_the_readers_own() {
    let plain = synonym_engine(vec![]);
    assert_eq!(page_urls(&plain, "monorepo"), ["/mono.html"]);
    let declared = vec![("monorepo".to_string(), vec!["workspace".to_string()])];
    let e = synonym_engine(declared);
    // The page using the reader's word first, then the docs' word for it; stemmed both ways.
    assert_eq!(page_urls(&e, "monorepo"), ["/mono.html", "/ws.html"]);
    assert_eq!(page_urls(&e, "monorepos"), ["/mono.html", "/ws.html"]);
    // One way: the docs' word does not find the reader's.
    assert_eq!(page_urls(&e, "workspaces"), ["/ws.html"]);
    // A value of several words shares the match; stop words and unknown words drop.
    let e = synonym_engine(vec![(
        "vendoring".to_string(),
        vec![
            "upload the registry".to_string(),
            "nowhere-word".to_string(),
        ],
    )]);
    assert_eq!(page_urls(&e, "vendoring"), ["/other.html"]);
}
