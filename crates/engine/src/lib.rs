//! Lantern's search core. Everything here is plain Rust with no wasm or native-only types, so the
//! indexer, the command line, the servers, the tests and the browser all run the same code.
//!
//! Data flows one way: a [`BundleWriter`] turns pages, chunks and their vectors into a
//! [`Bundle`] (analysed text, BM25 postings, int8 vectors in k-means partitions, in shards a
//! browser fetches as a query needs them); an [`Engine`]
//! answers a query over it with [`Results`] that fuse keyword and vector evidence; an
//! [`AskSession`] turns the best passages into a request for a language model and checks the
//! answer's citations ([`answer`]).

#![warn(missing_docs)]

mod analyze;
pub mod answer;
mod bm25;
mod bundle;
mod case;
mod checksum;
mod content_address;
mod error;
mod excerpt;
mod filter;
mod fold;
mod fusion;
mod keyword;
mod link;
mod model;
mod order;
mod postings;
mod query;
mod query_table;
mod query_terms;
mod results;
mod script;
mod search;
mod varints;
mod vector;
mod want;
mod writer;

#[cfg(test)]
mod structural_fuzz;

pub use analyze::Lang;
pub use answer::{Abstention, AnswerRequest, AskOutcome, AskSession, Passage};
pub use bundle::{
    split_dir, Bundle, Chunk, Header, ModelInfo, Page, PartSizes, Split, FORMAT_VERSION,
    SPLIT_DIR_SUFFIX, SPLIT_META,
};
pub use case::lowercase;
pub use content_address::{hashed_name, is_content_addressed};
pub use error::{Error, Result};
pub use excerpt::highlight_segments;
pub use filter::{Facet, Filter};
pub use fusion::{Fusion, PageScore, VectorNorm};
pub use keyword::MAX_QUERY_TERMS;
pub use link::is_safe_link;
pub use model::{check_file_name, Manifest, ModelFiles, PackSpec, PackedFile, MANIFEST_FILE};
pub use query_table::{QueryTable, QUERY_TABLE_SUFFIX, QUERY_TABLE_VERSION};
pub use results::{Hit, Mode, PageGroup, Results, Signal};
pub use script::Script;
pub use search::Engine;
pub use vector::{dot_f32, l2_normalize, VectorHit, VectorIndex, DEFAULT_PROBE, PARTITION_ABOVE};
pub use writer::BundleWriter;
