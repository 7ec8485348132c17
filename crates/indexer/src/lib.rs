#![warn(missing_docs)]
//! Lantern's build side. Data flows one way: [`source`] finds the files, [`extract`] turns each
//! into a title and sections, [`chunk`] cuts sections to the model's size, [`build`] embeds
//! them (through the [`cache`]) and writes the bundle with the engine's `BundleWriter`, its "no good
//! match" threshold measured on the site ([`abstain`]).
//! [`site`] renders markdown docs into pages with the search widget and publishes the model
//! beside them; [`publish`] writes what a built site publishes for search into its `lantern/`
//! folder; [`plan`] decides from `lantern build`'s flags what is built and published;
//! [`model`] prepares a downloaded model once and publishes it.

pub mod abstain;
pub mod build;
pub mod cache;
pub mod chunk;
pub mod config;
pub mod extract;
pub mod files;
pub mod model;
mod output;
pub mod part;
pub mod plan;
pub(crate) mod progress;
pub mod publish;
pub mod query_fit;
pub mod render;
pub mod site;
pub mod source;

pub use build::{build, query_table_path, BuildOptions, BuildReport, ChromeReport};
pub use config::Config;
pub use output::{remove_stale, split_dir, write_atomic, write_split};
pub use part::{Part, PartReport};
pub use plan::{BuildFlags, BuildOutcome, BuildPlan, Built};
pub use publish::{Meaning, SwScope};
