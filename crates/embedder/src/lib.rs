//! Sentence embeddings for Lantern, and the model contract.
//!
//! One implementation serves the indexer (chunks) and the browser (queries): the vectors a
//! reader's query is compared with were made by exactly this code. What the model is (files,
//! dimensions, token limit, pooling) comes from its [`Manifest`] and nowhere else.

#![warn(missing_docs)]

mod embed;
mod error;
mod manifest;
mod pack;
#[cfg(feature = "onnx")]
mod prepare;

#[cfg(feature = "onnx")]
pub use embed::read_graph;
pub use embed::{l2_normalize, Embedder};
pub use error::{Error, Result};
pub use manifest::{
    model_dir, sha256_hex, Manifest, Model, ModelFiles, PackedFile, DEFAULT_MODEL_DIR,
    MANIFEST_FILE, MODEL_DIR_ENV,
};
#[cfg(feature = "onnx")]
pub use pack::pack;
pub use pack::{read_packed, PackSpec, PACK_VERSION};
#[cfg(feature = "onnx")]
pub use prepare::{prepare, prepare_onnx, Prepared};
