//! The embedder's one error type.

/// Why a model could not be opened, checked or run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A model file could not be read.
    #[error("{0}")]
    Io(String),
    /// The manifest is missing, malformed or asks for what this embedder does not do.
    #[error("model manifest: {0}")]
    Manifest(String),
    /// A file does not match the sha256 the manifest pins.
    #[error("{0}")]
    Mismatch(String),
    /// The tokenizer could not be loaded or failed on a text.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// The ONNX model could not be loaded or run.
    #[error("model: {0}")]
    Model(String),
    /// The model's output does not have the manifest's dimensions.
    #[error("model output has {got} dimensions, the manifest says {expected}")]
    Dimensions {
        /// Dimensions produced.
        got: usize,
        /// Dimensions the manifest declares.
        expected: usize,
    },
}

impl From<lantern_engine::Error> for Error {
    fn from(e: lantern_engine::Error) -> Self {
        match e {
            lantern_engine::Error::Manifest(m) => Error::Manifest(m),
            other => Error::Model(other.to_string()),
        }
    }
}

/// The embedder's result type.
pub type Result<T> = std::result::Result<T, Error>;
