//! The golden set's integrity: valid types, unique ids, and every expected page and anchor exists.

use std::collections::HashSet;
use std::path::Path;

use lantern_indexer::config::SlugStyle;
use lantern_indexer::extract::extract;
use lantern_server::eval::{load_golden, TYPES};

#[test]
fn golden_questions_point_at_real_pages_and_anchors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let qs = load_golden(&root.join("golden/lantern-docs.jsonl")).unwrap();
    assert!(qs.len() >= 50, "{} questions", qs.len());
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
            let path = root.join("site/docs").join(page);
            assert!(path.is_file(), "{}: {page} does not exist", q.id);
        }
        if let Some(anchor) = &q.anchor {
            let src = std::fs::read_to_string(root.join("site/docs").join(&q.expected[0])).unwrap();
            let page = extract(&src, "", SlugStyle::Github);
            assert!(
                page.sections.iter().any(|s| &s.anchor == anchor),
                "{}: no section #{anchor} in {}",
                q.id,
                q.expected[0]
            );
        }
    }
}
