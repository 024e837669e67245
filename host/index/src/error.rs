//! Errors of the index.

use std::path::PathBuf;
use std::sync::Arc;

/// What can go wrong with the index.
#[derive(Debug, Clone, thiserror::Error)]
pub enum IndexError {
    /// The index folder cannot be opened or created.
    #[error("cannot open the index in {}: {message}", path.display())]
    Open {
        /// The folder.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The index was written by a version of Quarry with another layout; it must be rebuilt
    /// from the sources (`quarry serve` does so).
    #[error("the index in {} has layout {found}, this Quarry uses {expected}; it must be rebuilt from the sources, which `quarry serve` does when it starts", path.display())]
    Outdated {
        /// The folder.
        path: PathBuf,
        /// Its layout version (0: from before versions were recorded).
        found: u32,
        /// This build's.
        expected: u32,
    },
    /// Another process (a running `quarry serve`) holds the index's writer.
    #[error("the index is being written by another Quarry process")]
    Busy,
    /// This process opened the index read-only.
    #[error("the index was opened read-only")]
    ReadOnly,
    /// The writer stopped.
    #[error("the index writer has stopped")]
    Closed,
    /// tantivy failed.
    #[error("index error: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// The system failed the index (a thread, a read).
    #[error("index error: {what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The system's error (shared: an error reaches every job of a commit).
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The team's log failed, or this host's copy of the index fell behind it.
    #[error("the team's index: {0}")]
    Team(String),
    /// The index holds less than Quarry wrote into it.
    #[error("the index is damaged: {0}")]
    Damaged(String),
}

impl quarry_core::ErrorCode for IndexError {
    /// Every index failure is the service's, never the caller's.
    fn error_kind(&self) -> quarry_core::ErrorKind {
        quarry_core::ErrorKind::Internal
    }
}
