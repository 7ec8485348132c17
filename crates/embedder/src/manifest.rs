//! The model contract: `manifest.json` beside the model files says which files make the model
//! (by name and sha256), how many dimensions it produces, how many tokens it reads and how its
//! output is pooled. Every consumer (indexer, CLI, servers, the browser's worker) reads these
//! facts from here and nowhere else.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::embed::Embedder;
use crate::error::{Error, Result};

/// The manifest's file name in a model folder.
pub const MANIFEST_FILE: &str = "manifest.json";
/// Environment variable naming the model folder when no flag does.
pub const MODEL_DIR_ENV: &str = "LANTERN_MODEL_DIR";
/// The model folder when neither flag nor environment names one, relative to the working
/// directory (the repository root, where `models/fetch.sh` prepares it).
pub const DEFAULT_MODEL_DIR: &str = "models/minilm";

/// Largest dimension and token count accepted from a manifest: generous for sentence models,
/// small enough that a damaged manifest cannot ask for absurd allocations.
const MAX_DIMENSIONS: usize = 4096;
const MAX_TOKENS: usize = 8192;

/// The files that make up a model, by name within its folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelFiles {
    /// The prepared ONNX file.
    pub model: String,
    /// The tokenizer (Hugging Face `tokenizer.json`).
    pub tokenizer: String,
}

impl Default for ModelFiles {
    fn default() -> Self {
        ModelFiles {
            model: "model.onnx".into(),
            tokenizer: "tokenizer.json".into(),
        }
    }
}

/// Pins a prepared model and states its contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Human-readable model name, recorded in bundles.
    pub model_id: String,
    /// sha256 of the prepared ONNX file (hex); bundles record it and runtimes compare it.
    pub sha256: String,
    /// sha256 of the tokenizer file (hex).
    pub tokenizer_sha256: String,
    /// Output dimensions.
    pub dimensions: usize,
    /// Pooling over token vectors; this embedder implements `mean`.
    pub pooling: String,
    /// Normalization of the pooled vector; this embedder implements `l2`.
    pub normalize: String,
    /// Tokens the model reads, special tokens included; longer texts are truncated.
    pub max_tokens: usize,
    /// Best query-to-section cosine under which search says "no good match": a property of
    /// the model's similarity scale, calibrated across Lantern's labelled sets
    /// (evaluation.md). A site's `lantern.toml` may override it.
    pub abstain_cosine: f32,
    /// File names in the model folder.
    #[serde(default)]
    pub files: ModelFiles,
    /// The same model packed small for readers' browsers, when prepared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packed: Option<PackedFile>,
}

/// The model packed small ([`crate::pack`]): approximate query vectors for far fewer bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackedFile {
    /// File name in the model folder.
    pub file: String,
    /// sha256 of the packed file (hex).
    pub sha256: String,
    /// How it was packed.
    pub spec: crate::pack::PackSpec,
}

impl Manifest {
    /// Parses manifest JSON and checks it (see [`Manifest::validate`]).
    pub fn from_json(bytes: &[u8]) -> Result<Manifest> {
        let m: Manifest =
            serde_json::from_slice(bytes).map_err(|e| Error::Manifest(e.to_string()))?;
        m.validate()?;
        Ok(m)
    }

    /// The manifest as pretty JSON with a final newline, as committed and published.
    pub fn to_json(&self) -> Vec<u8> {
        let mut json = serde_json::to_vec_pretty(self).unwrap_or_default();
        json.push(b'\n');
        json
    }

    /// Refuses what this embedder cannot honour: other pooling, sizes out of range, file names
    /// that leave the model folder.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Manifest(m));
        if self.pooling != "mean" || self.normalize != "l2" {
            return bad(format!(
                "pooling {:?} with normalization {:?} is not supported (mean and l2 are)",
                self.pooling, self.normalize
            ));
        }
        if !(1..=MAX_DIMENSIONS).contains(&self.dimensions) {
            return bad(format!(
                "dimensions {} is outside 1..={MAX_DIMENSIONS}",
                self.dimensions
            ));
        }
        if !(4..=MAX_TOKENS).contains(&self.max_tokens) {
            return bad(format!(
                "max_tokens {} is outside 4..={MAX_TOKENS}",
                self.max_tokens
            ));
        }
        if !(self.abstain_cosine.is_finite() && (-1.0..=1.0).contains(&self.abstain_cosine)) {
            return bad(format!(
                "abstain_cosine {} is not a cosine from -1 to 1",
                self.abstain_cosine
            ));
        }
        let packed_file = self.packed.as_ref().map(|p| &p.file);
        for name in [&self.files.model, &self.files.tokenizer]
            .into_iter()
            .chain(packed_file)
        {
            let plain = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
                && !name.starts_with('.');
            if !plain {
                return bad(format!("file name {name:?} is not a plain file name"));
            }
        }
        if let Some(p) = &self.packed {
            let bits = 2..=8;
            if !bits.contains(&p.spec.bits)
                || !bits.contains(&p.spec.table_bits)
                || !(8..=4096).contains(&p.spec.group)
            {
                return bad(format!("packed model spec {:?} is not supported", p.spec));
            }
        }
        let packed_sha = self.packed.as_ref().map(|p| &p.sha256);
        for sha in [&self.sha256, &self.tokenizer_sha256]
            .into_iter()
            .chain(packed_sha)
        {
            if sha.len() != 64 || !sha.chars().all(|c| c.is_ascii_hexdigit()) {
                return bad(format!("{sha:?} is not a sha256"));
            }
        }
        Ok(())
    }

    /// The same model with content-addressed file names (`model-<sha12>.onnx`), for publishing
    /// on a website where the files can then be cached forever.
    pub fn content_addressed(&self) -> Manifest {
        let name = |base: &str, sha: &str, ext: &str| format!("{base}-{}.{ext}", &sha[..12]);
        let mut m = self.clone();
        m.files = ModelFiles {
            model: name("model", &self.sha256, "onnx"),
            tokenizer: name("tokenizer", &self.tokenizer_sha256, "json"),
        };
        if let Some(p) = &mut m.packed {
            p.file = name("model", &p.sha256, "pack");
        }
        m
    }
}

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
        Embedder::from_packed(&self.manifest, &self.read_packed(p)?, &self.tokenizer)
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

    fn manifest() -> Manifest {
        Manifest {
            model_id: "m".into(),
            sha256: "a".repeat(64),
            tokenizer_sha256: "b".repeat(64),
            dimensions: 384,
            pooling: "mean".into(),
            normalize: "l2".into(),
            max_tokens: 256,
            abstain_cosine: 0.4,
            files: ModelFiles::default(),
            packed: None,
        }
    }

    #[test]
    fn out_of_range_contracts_are_refused() {
        assert!(manifest().validate().is_ok());
        for m in [
            Manifest {
                max_tokens: 0,
                ..manifest()
            },
            Manifest {
                max_tokens: 100_000,
                ..manifest()
            },
            Manifest {
                dimensions: 0,
                ..manifest()
            },
            Manifest {
                pooling: "cls".into(),
                ..manifest()
            },
            Manifest {
                sha256: "xyz".into(),
                ..manifest()
            },
            Manifest {
                abstain_cosine: f32::NAN,
                ..manifest()
            },
            Manifest {
                abstain_cosine: 2.0,
                ..manifest()
            },
            Manifest {
                files: ModelFiles {
                    model: "../x.onnx".into(),
                    tokenizer: "t.json".into(),
                },
                ..manifest()
            },
        ] {
            assert!(matches!(m.validate(), Err(Error::Manifest(_))), "{m:?}");
        }
    }

    #[test]
    fn content_addressed_names_carry_the_hash() {
        let m = manifest().content_addressed();
        assert_eq!(m.files.model, format!("model-{}.onnx", "a".repeat(12)));
        assert_eq!(
            m.files.tokenizer,
            format!("tokenizer-{}.json", "b".repeat(12))
        );
        assert!(m.validate().is_ok());
        let back = Manifest::from_json(&m.to_json()).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn the_flag_wins_over_the_default() {
        assert_eq!(model_dir(Some(Path::new("/x"))), PathBuf::from("/x"));
    }
}
