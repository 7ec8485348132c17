//! The one error type of the engine.

/// Everything the engine can refuse: a file that is not a usable bundle, a bundle made by another
/// model, a malformed model manifest, an unknown search mode, or a broken answer stream.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The bytes do not start with the bundle's magic number.
    #[error("not a Lantern bundle (bad magic bytes)")]
    BadMagic,
    /// The bundle was written in a format version this build cannot read.
    #[error("bundle format version {found} is not supported (this build reads version {supported}); rebuild the bundle with a matching `lantern`")]
    UnsupportedVersion {
        /// Version in the file.
        found: u32,
        /// Version this build reads.
        supported: u32,
    },
    /// The file is shorter than its prefix says.
    #[error("bundle is truncated: expected {expected} bytes, found {found}")]
    Truncated {
        /// Bytes the prefix announces.
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// The checksum over header and payload does not match.
    #[error("bundle checksum mismatch: the file is corrupt")]
    Checksum,
    /// The header or payload could not be decoded.
    #[error("bundle could not be decoded: {0}")]
    Decode(String),
    /// The bundle could not be encoded.
    #[error("bundle could not be encoded: {0}")]
    Encode(String),
    /// The bundle's vectors come from another model than the runtime's.
    #[error("bundle was built with model {bundle} but this runtime has {runtime}; rebuild the bundle or load the matching model")]
    ModelMismatch {
        /// Model named by the bundle.
        bundle: String,
        /// Model of the runtime.
        runtime: String,
    },
    /// A model folder's manifest that is malformed or asks for what Lantern does not do.
    #[error("model manifest: {0}")]
    Manifest(String),
    /// The bundle needs a stemmer this build leaves out ([`crate::Lang::stemmed_here`]).
    #[error("the bundle has pages in {0:?}, which this search core does not stem (it is the small one, for English): publish it with `lantern build SITE_DIR` (or `lantern site`), which ships the search core for the bundle's languages")]
    UnsupportedLanguage(crate::Lang),
    /// Decoded, but its parts do not refer to each other correctly.
    #[error("bundle is inconsistent: {0}")]
    Inconsistent(String),
    /// A search mode name that is not `hybrid`, `vector` (or `semantic`) or `keyword`.
    #[error("unknown mode {0:?} (hybrid, vector or keyword)")]
    UnknownMode(String),
    /// A filter no page of the bundle carries.
    #[error("unknown filter {key:?} ({known})")]
    UnknownFilter {
        /// The key asked for.
        key: String,
        /// The keys the bundle has, as a sentence.
        known: String,
    },
    /// A filter that is not `key=value`.
    #[error("bad filter: {0}")]
    BadFilter(String),
    /// A shard of a split bundle that is not one of its shards, or is damaged.
    #[error("bundle shard {0}")]
    Shard(String),
    /// A query table file that is damaged, foreign, of another version, or fitted to another
    /// bundle.
    #[error("query table {0}")]
    QueryTable(String),
    /// The answer service's event stream failed or broke the protocol.
    #[error("{0}")]
    AnswerStream(String),
}

/// The engine's result type.
pub type Result<T> = std::result::Result<T, Error>;
