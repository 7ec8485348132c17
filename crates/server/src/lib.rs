#![warn(missing_docs)]
//! Lantern over a built bundle, natively. Every command that reads a bundle opens it through
//! [`Searcher`]; [`ask`] drives the engine's answer protocol with an HTTP client; [`eval`]
//! measures retrieval and gates CI; [`tune`] chooses the fusion by leave-one-corpus-out
//! evaluation; [`report`] formats what the CLI prints; [`serve`] is the
//! static server for the demo, [`proxy`] the optional answer service and [`mcp`] the bundle as
//! Model Context Protocol tools.

pub mod ask;
pub mod eval;
mod files;
pub mod mcp;
pub mod proxy;
pub mod report;
mod searcher;
pub mod serve;
pub mod tune;

pub use searcher::{QueryEncoder, Searcher};
