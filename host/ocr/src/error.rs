//! What can go wrong loading the OCR models.

use std::path::PathBuf;

/// The OCR crate's one error type.
#[derive(Debug, thiserror::Error)]
pub enum OcrError {
    /// The models folder lacks a model.
    #[error(
        "the OCR models folder {dir} has no {wanted}; run `make setup` (scripts/fetch-model.sh) or set --ocr-models"
    )]
    MissingFile {
        /// The folder looked in.
        dir: PathBuf,
        /// The file looked for.
        wanted: &'static str,
    },
    /// ONNX Runtime could not be loaded.
    #[error(transparent)]
    Runtime(#[from] quarry_embed::EmbedError),
    /// A model file could not be loaded, or is not the model it should be.
    #[error("the OCR model {path} cannot be used: {message}")]
    BadModel {
        /// The model file.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

impl quarry_core::ErrorCode for OcrError {
    /// Models that cannot be loaded are the service's failure, never the caller's.
    fn error_kind(&self) -> quarry_core::ErrorKind {
        quarry_core::ErrorKind::Internal
    }
}
