//! Model files on disk: preparing a downloaded model under the committed manifest's contract,
//! and publishing a model beside a website with content-addressed file names.

use std::path::Path;

use anyhow::{bail, Context, Result};

use lantern_embedder::{prepare, Manifest, Model, MANIFEST_FILE};

use crate::output::write_atomic;

/// Prepares `onnx` and `tokenizer` into `out`. `out/manifest.json` must exist: it states the
/// model's contract and pins the result, and a result that differs from it is not written.
pub fn prepare_model(onnx: &Path, tokenizer: &Path, out: &Path) -> Result<Manifest> {
    let pinned_path = out.join(MANIFEST_FILE);
    let pinned = Manifest::from_json(
        &std::fs::read(&pinned_path)
            .with_context(|| format!("reading the pinned {}", pinned_path.display()))?,
    )?;
    let read = |p: &Path| std::fs::read(p).with_context(|| format!("reading {}", p.display()));
    let prepared = prepare(&read(onnx)?, &read(tokenizer)?, &pinned)?;
    if prepared.manifest != pinned {
        bail!(
            "prepared model differs from the pinned manifest {}; prepared:\n{}",
            pinned_path.display(),
            String::from_utf8_lossy(&prepared.manifest.to_json())
        );
    }
    let m = &prepared.manifest;
    write_atomic(&out.join(&m.files.model), &prepared.onnx)?;
    write_atomic(&out.join(&m.files.tokenizer), &prepared.tokenizer)?;
    if let (Some(p), Some(bytes)) = (&m.packed, &prepared.packed) {
        write_atomic(&out.join(&p.file), bytes)?;
    }
    Ok(prepared.manifest)
}

/// Copies what browsers run of `model` into `dir` for a website: the packed model and the
/// tokenizer, named by their content (`model-<sha12>.pack`) so hosts and the service worker
/// can cache them forever, and a `manifest.json` naming them. The model file itself is not
/// copied: browsers run only the packed form (the manifest still names the model file, whose
/// sha256 is the model's identity, checked against the bundle). Files of other versions in
/// `dir`, and model files an earlier version published, are removed.
pub fn publish_model(model: &Model, dir: &Path) -> Result<Manifest> {
    let m = model.manifest.content_addressed();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let packed = match (&model.manifest.packed, &m.packed) {
        (Some(src), Some(dst)) => Some((&dst.file, model.read_packed(src)?)),
        _ => None,
    };
    let files = [(&m.files.tokenizer, &model.tokenizer)];
    for (name, bytes) in files
        .into_iter()
        .chain(packed.as_ref().map(|(n, b)| (*n, b)))
    {
        let path = dir.join(name);
        let same = std::fs::metadata(&path).is_ok_and(|md| md.len() == bytes.len() as u64);
        if !same {
            write_atomic(&path, bytes)?;
        }
    }
    write_atomic(&dir.join(MANIFEST_FILE), &m.to_json())?;
    for entry in std::fs::read_dir(dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let packed_name = m.packed.as_ref().map(|p| p.file.as_str());
        let stale = (name.starts_with("model-") && name.ends_with(".onnx"))
            || (name.starts_with("model-")
                && name.ends_with(".pack")
                && Some(name.as_str()) != packed_name)
            || (name.starts_with("tokenizer-")
                && name.ends_with(".json")
                && name != m.files.tokenizer);
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(m)
}
