//! Errors of this crate.

/// What can be wrong with values checked here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoreError {
    /// An identifier is empty, too long, or has characters outside `[A-Za-z0-9_-]`.
    #[error("{what} must be 1 to {max} characters from A-Z, a-z, 0-9, '_' and '-', got {value:?}")]
    InvalidId {
        /// Which identifier (`doc_id`, `connector_id`).
        what: &'static str,
        /// The most characters it may have.
        max: usize,
        /// The offending value, cut to a readable length.
        value: String,
    },
}
