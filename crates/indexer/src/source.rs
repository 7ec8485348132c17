//! Finding the documents to index: globs decide what is in scope; anything in scope that cannot
//! be read as text is skipped with a reason instead of failing the build.

use std::path::Path;

use anyhow::{Context, Result};
use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::config::Config;

/// A document that will be indexed.
pub struct SourceFile {
    /// Path relative to the docs folder, `/`-separated.
    pub rel: String,
    pub text: String,
}

/// A file in scope that was left out, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

fn globset(globs: &[String]) -> Result<GlobSet> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(Glob::new(g).with_context(|| format!("invalid glob {g:?}"))?);
    }
    Ok(b.build()?)
}

/// Reads every in-scope file under `root`, in path order (so builds are deterministic).
pub fn collect(root: &Path, config: &Config) -> Result<(Vec<SourceFile>, Vec<Skipped>)> {
    let include = globset(&config.include)?;
    let exclude = globset(&config.exclude)?;
    if !root.is_dir() {
        anyhow::bail!("{} is not a folder", root.display());
    }
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = e
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                skipped.push(Skipped {
                    path,
                    reason: format!("unreadable: {e}"),
                });
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        if !include.is_match(&rel) || exclude.is_match(&rel) {
            continue;
        }
        match read_text(entry.path(), config.max_file_bytes) {
            Ok(text) => files.push(SourceFile { rel, text }),
            Err(reason) => skipped.push(Skipped { path: rel, reason }),
        }
    }
    Ok((files, skipped))
}

/// The file as text, or why it cannot be indexed.
fn read_text(path: &Path, max_bytes: u64) -> std::result::Result<String, String> {
    let len = std::fs::metadata(path)
        .map_err(|e| format!("unreadable: {e}"))?
        .len();
    if len > max_bytes {
        return Err(format!(
            "too large ({len} bytes; the limit is {max_bytes}, see max_file_bytes)"
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("unreadable: {e}"))?;
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err("binary file (contains NUL bytes)".into());
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "not valid UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok(text
        .strip_prefix('\u{feff}')
        .map(str::to_owned)
        .unwrap_or(text))
}
