//! Model folders on disk: where the model is, and its files read and checked against the
//! manifest. The contract itself ([`Manifest`]) lives in `lantern-engine`, which checks a
//! model against a bundle before anything downloads it.

use std::path::{Path, PathBuf};

use lantern_engine::{Manifest, PackedFile, MANIFEST_FILE};
use sha2::{Digest, Sha256};

use crate::embed::Embedder;
use crate::error::{Error, Result};

/// Environment variable naming the model folder when no flag does.
pub const MODEL_DIR_ENV: &str = "LANTERN_MODEL_DIR";
/// The model folder when neither flag nor environment names one, relative to the working
/// directory (the repository root, where `models/fetch.sh` prepares it).
pub const DEFAULT_MODEL_DIR: &str = "models/minilm";

/// sha256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The model folder to use: the flag if given, else `$LANTERN_MODEL_DIR`, else
/// [`DEFAULT_MODEL_DIR`].
pub fn model_dir(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    match std::env::var_os(MODEL_DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(DEFAULT_MODEL_DIR),
    }
}

/// A model folder read from disk and verified against its manifest.
pub struct Model {
    /// The contract.
    pub manifest: Manifest,
    /// The ONNX file's bytes.
    pub onnx: Vec<u8>,
    /// The tokenizer file's bytes.
    pub tokenizer: Vec<u8>,
    /// The folder the model was read from.
    pub dir: PathBuf,
}

impl Model {
    /// Reads `dir/manifest.json` and the files it names, checking their sha256 sums.
    pub fn open(dir: &Path) -> Result<Model> {
        let hint = "run `bash models/fetch.sh` to fetch and prepare the model, or pass --model-dir";
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| {
                Error::Io(format!(
                    "reading {}: {e} ({hint})",
                    dir.join(name).display()
                ))
            })
        };
        let manifest = Manifest::from_json(&read(MANIFEST_FILE)?)?;
        let onnx = read(&manifest.files.model)?;
        let tokenizer = read(&manifest.files.tokenizer)?;
        for (bytes, want, name) in [
            (&onnx, &manifest.sha256, &manifest.files.model),
            (
                &tokenizer,
                &manifest.tokenizer_sha256,
                &manifest.files.tokenizer,
            ),
        ] {
            if &sha256_hex(bytes) != want {
                return Err(Error::Mismatch(format!(
                    "{} does not match the manifest's sha256 ({hint})",
                    dir.join(name).display()
                )));
            }
        }
        Ok(Model {
            manifest,
            onnx,
            tokenizer,
            dir: dir.to_path_buf(),
        })
    }

    /// Loads the embedder.
    #[cfg(feature = "onnx")]
    pub fn embedder(&self) -> Result<Embedder> {
        Embedder::new(&self.manifest, &self.onnx, &self.tokenizer)
    }

    /// An embedder running the model as packed for readers' browsers (read from the folder
    /// now, checked against the manifest): what a reader's queries are embedded with.
    pub fn packed_embedder(&self) -> Result<Embedder> {
        let Some(p) = &self.manifest.packed else {
            return Err(Error::Manifest(format!(
                "{} names no packed model (run `bash models/fetch.sh`)",
                self.dir.join(MANIFEST_FILE).display()
            )));
        };
        Embedder::from_packed(&self.manifest, &self.read_packed(p)?)
    }

    /// The packed model's bytes from the model folder, checked against `entry`'s sha256.
    pub fn read_packed(&self, entry: &PackedFile) -> Result<Vec<u8>> {
        let path = self.dir.join(&entry.file);
        let bytes = std::fs::read(&path).map_err(|e| {
            Error::Io(format!(
                "reading {}: {e} (run `bash models/fetch.sh`)",
                path.display()
            ))
        })?;
        if sha256_hex(&bytes) != entry.sha256 {
            return Err(Error::Mismatch(format!(
                "{} does not match the manifest's sha256 (run `bash models/fetch.sh`)",
                path.display()
            )));
        }
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_over_the_default() {
        assert_eq!(model_dir(Some(Path::new("/x"))), PathBuf::from("/x"));
    }
}
