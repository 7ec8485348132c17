//! Lantern over a built bundle, natively. Every command that reads a bundle opens it through
//! [`Searcher`]; [`ask`] drives the engine's answer protocol with an HTTP client; [`eval`]
//! measures retrieval and gates CI; [`tune`] chooses the fusion by leave-one-corpus-out
//! evaluation; [`report`] formats what the CLI prints; [`serve`] is the
//! static server for the demo and [`proxy`] the optional answer service.

pub mod ask;
pub mod eval;
pub mod proxy;
pub mod report;
mod searcher;
pub mod serve;
pub mod tune;

pub use searcher::Searcher;
