//! What Lantern tells its users names only commands and flags that exist: the sources of every
//! message (Rust, the browser runtime and widget) and the docs are read for names that were
//! removed or never were.

use std::path::{Path, PathBuf};

/// Phrases that once pointed users at something that does not exist, with what it was.
const GONE: [(&str, &str); 3] = [
    ("build --site", "lantern build has no --site flag"),
    (
        "`lantern prepare-model`",
        "not a subcommand (lantern-prepare-model is a separate program)",
    ),
    (
        "`onnx` feature",
        "the embedder has no onnx feature: tract lives in crates/packer",
    ),
];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !matches!(name.as_str(), "target" | "node_modules" | "tests" | ".venv") {
                files(&p, out);
            }
        } else if [".rs", ".js", ".md", ".sh", ".toml"]
            .iter()
            .any(|ext| name.ends_with(ext))
        {
            out.push(p);
        }
    }
}

#[test]
fn messages_and_docs_name_only_commands_and_flags_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut all = Vec::new();
    for dir in ["crates", "web", "site/docs", "dist"] {
        files(&root.join(dir), &mut all);
    }
    all.push(root.join("README.md"));
    assert!(all.len() > 50, "the sources were found: {}", all.len());
    let mut found = Vec::new();
    for path in &all {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        for (phrase, why) in GONE {
            if text.contains(phrase) && !path.ends_with("messages.rs") {
                found.push(format!("{}: {phrase:?} ({why})", path.display()));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
