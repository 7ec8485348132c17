//! The bound on a bundle's files; reading them is the indexer's one way to read a named file.

pub(crate) use lantern_indexer::files::{read_bounded, Links};

/// Most bytes a bundle file (whole, or a split bundle's meta) or a query table may have, and a
/// bundle fetched from a URL (`lantern mcp`): refused before it is held in memory.
pub(crate) const MAX_BUNDLE_FILE_BYTES: u64 = 256 * 1024 * 1024;
