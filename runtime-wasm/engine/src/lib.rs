//! Lantern's search core. Everything here is plain Rust with no wasm or native-only types, so the
//! builder, the native CLI, the tests and the browser all run the same code.
//!
//! Data flows one way: [`analyze`] turns text into terms, [`bm25`] and [`vector`] index and
//! search chunks, and [`bundle`] is the versioned file that carries both to the reader.

pub mod analyze;
pub mod bm25;
pub mod bundle;
pub mod vector;

pub use bundle::{Bundle, BundleError, Chunk, Page};
