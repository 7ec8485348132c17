//! The model contract: `manifest.json` beside the model files says which files make the model
//! (by name and sha256), how many dimensions it produces, how many tokens it reads and how its
//! output is pooled. Every consumer reads these facts from here and nowhere else: the embedder
//! (indexer, CLI, servers, the browser's worker) and the search core, which checks a model
//! folder against the bundle before a browser downloads the model.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::script::Script;

/// The manifest's file name in a model folder.
pub const MANIFEST_FILE: &str = "manifest.json";

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
    /// Pooling over token vectors; Lantern's embedder implements `mean`.
    pub pooling: String,
    /// Normalization of the pooled vector; Lantern's embedder implements `l2`.
    pub normalize: String,
    /// Tokens the model reads, special tokens included; longer texts are truncated.
    pub max_tokens: usize,
    /// Best query-to-section cosine under which search says "no good match": a property of
    /// the model's similarity scale, calibrated across Lantern's labelled sets
    /// (evaluation.md). A site's `lantern.toml` may override it.
    pub abstain_cosine: f32,
    /// Writing systems the model was trained to read (`["latin"]` for an English model). A
    /// question mostly in another script gets cosines that measure nothing, so search judges
    /// "no good match" for it by its words alone. Empty (or absent): every question is judged
    /// by its cosine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<Script>,
    /// File names in the model folder.
    #[serde(default)]
    pub files: ModelFiles,
    /// The same model packed small for readers' browsers, when prepared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packed: Option<PackedFile>,
}

/// The model packed small for readers' browsers (`lantern-embedder`'s packed format):
/// approximate query vectors for far fewer bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackedFile {
    /// File name in the model folder.
    pub file: String,
    /// sha256 of the packed file (hex).
    pub sha256: String,
    /// How it was packed.
    pub spec: PackSpec,
}

impl Manifest {
    /// Parses manifest JSON and checks it (see [`Manifest::validate`]).
    pub fn from_json(bytes: &[u8]) -> Result<Manifest> {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| Error::Manifest(format!("not UTF-8 text: {e}")))?;
        let m: Manifest = serde_json::from_str(text).map_err(|e| Error::Manifest(e.to_string()))?;
        m.validate()?;
        Ok(m)
    }

    /// The manifest as pretty JSON with a final newline, as committed and published.
    pub fn to_json(&self) -> Vec<u8> {
        let mut json = serde_json::to_vec_pretty(self).unwrap_or_default();
        json.push(b'\n');
        json
    }

    /// Refuses what Lantern's embedder cannot honour: other pooling, sizes out of range, file names
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
            check_file_name(name)?;
        }
        if let Some(p) = &self.packed {
            if !p.spec.is_supported() {
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
        let name = crate::content_address::hashed_name;
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

/// Refuses a model file name that is not a plain name within the model folder (no path, no
/// leading dot): the files are fetched relative to the manifest.
pub fn check_file_name(name: &str) -> Result<()> {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        && !name.starts_with('.');
    if !plain {
        return Err(Error::Manifest(format!(
            "file name {name:?} is not a plain file name"
        )));
    }
    Ok(())
}

/// How a model is packed: bits per weight and values per scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackSpec {
    /// Bits per value of the layers' weights (per-column scales), 2 to 8.
    pub bits: u8,
    /// Bits per value of the embedding tables (per-row scales), 2 to 8: they tolerate fewer.
    pub table_bits: u8,
    /// Values per group (one scale each).
    pub group: u32,
}

impl PackSpec {
    /// Whether packers and readers of this build handle the spec.
    pub fn is_supported(&self) -> bool {
        let bits = 2..=8;
        bits.contains(&self.bits)
            && bits.contains(&self.table_bits)
            && (8..=4096).contains(&self.group)
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
            scripts: vec![Script::Latin],
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
}
