//! Lantern's search core. Everything here is plain Rust with no wasm or native-only types, so the
//! builder, the native CLI, the tests and the browser all run the same code.
//!
//! Data flows one way: [`analyze`] turns text into terms, [`bm25`] and [`vector`] index and
//! search chunks, [`bundle`] is the versioned file that carries both to the reader, and
//! [`search`] answers a [`query`] by fusing keyword and vector results.

pub mod analyze;
pub mod answer;
pub mod bm25;
pub mod bundle;
pub mod query;
pub mod search;
pub mod vector;

pub use bundle::{Bundle, BundleError, Chunk, Page};
pub use search::{Engine, Mode, Results};
