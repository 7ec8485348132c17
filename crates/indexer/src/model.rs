//! Publishing a model beside a website with content-addressed file names.

use std::collections::HashSet;
use std::path::Path;

use anyhow::{Context, Result};

use lantern_embedder::{sha256_hex, Manifest, Model, MANIFEST_FILE};

use crate::output::write_atomic;

/// Copies what browsers run of `model` into `dir` for a website: the packed model without its
/// word-embedding rows and the rows' shards (fetched as readers' queries need them), named by
/// their content (`model-<sha12>.pack`, `rows-<sha12>.bin`) so hosts and the service worker
/// can cache them forever, and a `manifest.json` naming them (its packed sha256 is the
/// published pack's, which pins each shard's). Neither the model file nor the tokenizer file
/// is copied: browsers, and `lantern` reading a published folder, run only the packed form,
/// whose tokenizer is inside (the manifest still names both files, whose sha256 sums are the
/// model's identity, checked against the bundle and the packed tokenizer). Files of other
/// versions in `dir`, and model files an earlier version published, are removed.
pub fn publish_model(model: &Model, dir: &Path) -> Result<Manifest> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut published = model.manifest.clone();
    let mut split = None;
    if let Some(p) = &mut published.packed {
        let (head, rows) = model.published_pack()?;
        p.sha256 = sha256_hex(&head);
        split = Some((head, rows));
    }
    let m = published.content_addressed();
    let mut files = Vec::new();
    if let (Some(p), Some((head, rows))) = (&m.packed, split) {
        files.push((p.file.clone(), head));
        files.extend(rows);
    }
    for (name, bytes) in &files {
        let path = dir.join(name);
        // Named by content: a file of that name and size is that file.
        let same = std::fs::metadata(&path).is_ok_and(|md| md.len() == bytes.len() as u64);
        if !same {
            write_atomic(&path, bytes)?;
        }
    }
    write_atomic(&dir.join(MANIFEST_FILE), &m.to_json())?;
    let current: HashSet<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    remove_model_files(dir, |name| !current.contains(name))?;
    Ok(m)
}

/// Removes a model [`publish_model`] wrote into `dir` (its files and manifest; nothing else
/// there), and `dir` itself once empty: a site that no longer publishes the model.
pub fn unpublish_model(dir: &Path) -> Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    remove_model_files(dir, |_| true)?;
    crate::remove_stale(&dir.join(MANIFEST_FILE))?;
    // Only when nothing else is left: the folder may hold files of the site's own.
    let _ = std::fs::remove_dir(dir);
    Ok(())
}

/// Removes the model files in `dir` (by the names [`publish_model`] gives them, with their
/// precompressed copies) that `stale` picks.
fn remove_model_files(dir: &Path, stale: impl Fn(&str) -> bool) -> Result<()> {
    for entry in std::fs::read_dir(dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let plain = name.trim_end_matches(".br").trim_end_matches(".gz");
        let ours = [
            ("model-", ".onnx"),
            ("model-", ".pack"),
            ("rows-", ".bin"),
            ("tokenizer-", ".json"),
        ]
        .iter()
        .any(|(start, end)| plain.starts_with(start) && plain.ends_with(end));
        if ours && stale(plain) && entry.path().is_file() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(())
}
