//! What can go wrong loading or running an embedding model.

use std::path::PathBuf;

/// The embedding crate's one error type.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The model directory lacks a file it needs.
    #[error(
        "the model directory {dir} has no {wanted}; a model directory holds tokenizer.json and onnx/model.onnx (or model.onnx)"
    )]
    MissingFile {
        /// The directory looked in.
        dir: PathBuf,
        /// What was looked for.
        wanted: String,
    },
    /// A file of the model directory could not be read or parsed.
    #[error("reading {path}: {message}")]
    BadFile {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// ONNX Runtime's shared library could not be loaded.
    #[error(
        "loading ONNX Runtime from {path}: {message} (run `make setup`, or set QUARRY_ORT_LIB to a libonnxruntime.so)"
    )]
    Runtime {
        /// The library tried.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The model does not have the inputs and outputs of a sentence-embedding model.
    #[error("the model {path} is not a sentence-embedding model: {message}")]
    Shape {
        /// The model file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Tokenising or running the model failed.
    #[error("embedding failed: {0}")]
    Inference(String),
}

impl quarry_core::ErrorCode for EmbedError {
    /// A model that cannot embed is the service's failure, never the caller's.
    fn error_kind(&self) -> quarry_core::ErrorKind {
        quarry_core::ErrorKind::Internal
    }
}
