//! Sentence embeddings for Lantern, and the packed model they are made with.
//!
//! One implementation embeds the chunks at build time (natively, on every core) and the
//! queries (natively, and in the browser compiled to wasm): the packed model run by Lantern's
//! own encoder, so documents and questions meet with the same vectors bit for bit on every
//! target. What the model is (files, dimensions, token limit, pooling) comes from its
//! [`Manifest`] (the contract, defined in `lantern-engine`) and nowhere else. The pack is made
//! from the ONNX model by `lantern-packer`, which writes [`pack_format`].

#![warn(missing_docs)]

mod digest;
mod embed;
mod encoder;
mod error;
mod manifest;
mod pack;

pub use digest::sha256_hex;
pub use embed::{l2_normalize, mean_pool, pinned, tokenizers, Embedder, PendingEmbedder};
pub use error::{Error, Result};
// The contract is the engine's (it checks a model against a bundle); re-exported so callers
// of the embedder need only this crate.
pub use lantern_engine::{Manifest, ModelFiles, PackedFile, MANIFEST_FILE};
pub use manifest::{model_dir, user_cache_dir, Model, DEFAULT_MODEL_DIR, MODEL_DIR_ENV};
pub use pack::{read_packed, split_packed, PackSpec, PackedModel, WordRows, PACK_VERSION};

/// The packed model's file format, for the tool that writes it (`lantern-packer`): the parts
/// as the file stores them, the quantization that codes them, and the file's bytes. Readers
/// use [`read_packed`] and [`Embedder`].
pub mod pack_format {
    pub use crate::pack::{
        decode, quantize, serialize, shard_words, Decoded, EncoderSpec, LayerSpec, LinearSpec,
        NormSpec, PackSpec, Packed, PackedTokenizer, Weights, WordTable,
    };
}
