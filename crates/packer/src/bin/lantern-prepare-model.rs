//! Prepares the downloaded model under the committed manifest's contract (run by
//! `models/fetch.sh`): the ONNX file (its embedding lookups moved ahead of their int8
//! conversion), the tokenizer, and the packed model that `lantern` and readers' browsers run.
//!
//!   lantern-prepare-model --onnx FILE --tokenizer FILE --out DIR
//!
//! `DIR/manifest.json` must exist: a result that differs from it is not written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use lantern_embedder::{Manifest, MANIFEST_FILE};
use lantern_packer::prepare;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn arg(args: &[String], name: &str) -> Result<PathBuf, String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from)
        .ok_or_else(|| format!("usage: lantern-prepare-model --onnx FILE --tokenizer FILE --out DIR (missing {name})"))
}

fn read(p: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("reading {}: {e}", p.display()))
}

/// Writes through a temporary file and a rename: an interrupted run leaves no half file.
fn write(p: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = p.with_extension("partial");
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, p))
        .map_err(|e| format!("writing {}: {e}", p.display()))
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let (onnx, tokenizer, out) = (
        arg(&args, "--onnx")?,
        arg(&args, "--tokenizer")?,
        arg(&args, "--out")?,
    );
    let pinned_path = out.join(MANIFEST_FILE);
    let pinned = Manifest::from_json(&read(&pinned_path)?).map_err(|e| e.to_string())?;
    let prepared =
        prepare(&read(&onnx)?, &read(&tokenizer)?, &pinned).map_err(|e| e.to_string())?;
    if prepared.manifest != pinned {
        return Err(format!(
            "prepared model differs from the pinned manifest {}; prepared:\n{}",
            pinned_path.display(),
            String::from_utf8_lossy(&prepared.manifest.to_json())
        ));
    }
    let m = &prepared.manifest;
    write(&out.join(&m.files.model), &prepared.onnx)?;
    write(&out.join(&m.files.tokenizer), &prepared.tokenizer)?;
    if let (Some(p), Some(bytes)) = (&m.packed, &prepared.packed) {
        write(&out.join(&p.file), bytes)?;
    }
    println!(
        "prepared {} (sha256 {}) in {}",
        m.model_id,
        m.sha256,
        out.display()
    );
    Ok(())
}
