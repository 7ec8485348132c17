//! Sentence embeddings for Lantern, and the model contract.
//!
//! One implementation serves the indexer (chunks) and the browser (queries): the vectors a
//! reader's query is compared with were made by exactly this code. What the model is (files,
//! dimensions, token limit, pooling) comes from its [`Manifest`] (the contract, defined in
//! `lantern-engine`) and nowhere else.

#![warn(missing_docs)]

mod embed;
mod encoder;
mod error;
mod manifest;
mod pack;
#[cfg(feature = "onnx")]
mod prepare;

#[cfg(feature = "onnx")]
pub use embed::read_graph;
pub use embed::{l2_normalize, Embedder, PendingEmbedder};
pub use error::{Error, Result};
// The contract is the engine's (it checks a model against a bundle); re-exported so callers
// of the embedder need only this crate.
pub use lantern_engine::{Manifest, ModelFiles, PackedFile, MANIFEST_FILE};
pub use manifest::{model_dir, sha256_hex, Model, DEFAULT_MODEL_DIR, MODEL_DIR_ENV};
#[cfg(feature = "onnx")]
pub use pack::pack;
pub use pack::{read_packed, split_packed, PackSpec, PackedModel, WordRows, PACK_VERSION};
#[cfg(feature = "onnx")]
pub use prepare::{prepare, prepare_onnx, Prepared};
