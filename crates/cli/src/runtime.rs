//! The browser runtime a built site publishes: from a folder (`--runtime`, as `site/build.sh`
//! assembles it) or the one this binary carries (`dist/package.sh`).

use std::path::Path;

use anyhow::{bail, Context, Result};

/// The runtime's files, each as (path under the published folder, bytes).
pub fn load(dir: Option<&Path>) -> Result<Vec<(String, Vec<u8>)>> {
    let Some(dir) = dir else {
        let carried = lantern_assets::web();
        if carried.is_empty() {
            bail!(
                "this lantern carries no browser runtime (a development build): pass --runtime out/web/lantern after `bash site/build.sh`, or build the binary with `bash dist/package.sh`"
            );
        }
        return Ok(carried
            .iter()
            .map(|(p, b)| (p.to_string(), b.to_vec()))
            .collect());
    };
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(dir).follow_links(false) {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(dir)?
            .to_string_lossy()
            .replace('\\', "/");
        if rel.ends_with(".br") || rel.ends_with(".gz") {
            continue;
        }
        let bytes = std::fs::read(entry.path())
            .with_context(|| format!("reading {}", entry.path().display()))?;
        files.push((rel, bytes));
    }
    if !files.iter().any(|(p, _)| p == "widget.js") {
        bail!("{} is not a Lantern runtime (no widget.js)", dir.display());
    }
    Ok(files)
}
