//! The golden set's integrity: valid types, unique ids, every expected page and anchor exists,
//! and an exact question's words are still on its pages (docs change; a frozen question must not
//! silently become unanswerable).

use std::collections::HashSet;
use std::path::Path;

use lantern_indexer::config::SlugStyle;
use lantern_indexer::extract::extract;
use lantern_server::eval::{load_golden, TYPES};

#[test]
fn golden_questions_point_at_real_pages_and_anchors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    check_set(
        &root.join("golden/lantern-docs.jsonl"),
        &root.join("site/docs"),
        50,
        true,
    );
}

#[test]
fn the_fastapi_set_is_as_labelled() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let golden = root.join("golden/fastapi.jsonl");
    let qs = load_golden(&golden).unwrap();
    let count = |t: &str| qs.iter().filter(|q| q.kind.as_deref() == Some(t)).count();
    assert!(qs.len() - count("unanswerable") >= 60);
    assert!(count("paraphrase") >= 30);
    assert!(count("unanswerable") >= 10);
}

/// The docs live beside the project (../shared), not in it: run with `--ignored` where they are
/// (tests/run.sh does), so a missing corpus shows as ignored in the count, never as a pass.
#[test]
#[ignore = "needs ../shared/corpora/fastapi-docs"]
fn the_fastapi_set_names_pages_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let docs = root.join("../shared/corpora/fastapi-docs/docs/en/docs");
    assert!(docs.is_dir(), "{} not found", docs.display());
    // FastAPI's identifiers live in the example files its pages include, not in the markdown.
    check_set(&root.join("golden/fastapi.jsonl"), &docs, 70, false);
}

/// Valid types, unique ids, and every expected page and anchor exists under `docs`; with
/// `exact_words`, every word of an exact question is on one of its pages.
fn check_set(golden: &Path, docs: &Path, min_questions: usize, exact_words: bool) {
    let qs = load_golden(golden).unwrap();
    assert!(qs.len() >= min_questions, "{} questions", qs.len());
    let ids: HashSet<&str> = qs.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids.len(), qs.len(), "ids are unique");
    for t in TYPES {
        assert!(
            qs.iter().any(|q| q.kind.as_deref() == Some(t)),
            "no {t} questions"
        );
    }
    let unanswerable = qs
        .iter()
        .filter(|q| q.kind.as_deref() == Some("unanswerable"))
        .count();
    assert!(unanswerable >= 8);
    for q in &qs {
        let kind = q.kind.as_deref().unwrap_or("");
        assert!(TYPES.contains(&kind), "{}: type {kind:?}", q.id);
        assert_eq!(
            kind == "unanswerable",
            q.expected.is_empty(),
            "{}: expected pages iff answerable",
            q.id
        );
        for page in &q.expected {
            let path = docs.join(page);
            assert!(path.is_file(), "{}: {page} does not exist", q.id);
        }
        if let Some(anchor) = &q.anchor {
            let src = std::fs::read_to_string(docs.join(&q.expected[0])).unwrap();
            let page = extract(&src, "", SlugStyle::Github);
            assert!(
                page.sections.iter().any(|s| &s.anchor == anchor),
                "{}: no section #{anchor} in {}",
                q.id,
                q.expected[0]
            );
        }
        if exact_words && kind == "exact" {
            let pages: Vec<String> = q
                .expected
                .iter()
                .map(|p| {
                    std::fs::read_to_string(docs.join(p))
                        .unwrap()
                        .to_lowercase()
                })
                .collect();
            for word in q
                .query
                .to_lowercase()
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .filter(|w| !w.is_empty())
            {
                assert!(
                    pages.iter().any(|p| p.contains(word)),
                    "{}: {word:?} is on none of {:?}: the question is stale",
                    q.id,
                    q.expected
                );
            }
        }
    }
}
