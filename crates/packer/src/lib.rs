//! Makes the model Lantern runs: the downloaded ONNX file prepared (each embedding lookup moved
//! ahead of its int8 conversion), packed into `lantern-embedder`'s format (weights quantized in
//! groups, the encoder's parts found by role in the graph, the tokenizer inside), and checked
//! against tract's run of the ONNX model ([`OnnxEmbedder`]).
//!
//! Run once per model by `models/fetch.sh` (`lantern-prepare-model`). Nothing here runs when a
//! site is indexed or searched: `lantern` and readers' browsers run only the pack.

#![warn(missing_docs)]

mod onnx;
mod pack;
mod prepare;

pub use onnx::{read_graph, OnnxEmbedder};
pub use pack::pack;
pub use prepare::{prepare, prepare_onnx, Prepared, PACKED_FILE};
