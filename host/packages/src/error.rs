//! The one error of this crate: what went wrong with a packed plugin, its source or the lock,
//! in words that name the fix.

use std::path::PathBuf;

use quarry_core::{ErrorCode, ErrorKind};

/// Everything that can go wrong packing, fetching, verifying or recording a plugin.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A packed file that is not one Quarry wrote, or was cut short or changed since.
    #[error("not a packed Quarry plugin: {0}")]
    Format(String),
    /// A plugin folder or manifest that cannot be packed or installed as it is.
    #[error("{0}")]
    Plugin(String),
    /// The bytes are not those the pin names.
    #[error(
        "the download's sha256 is {actual}, not the {expected} you gave: nothing was installed. Ask the publisher for the right hash, or check that the address is the one they gave"
    )]
    DigestMismatch {
        /// The pinned digest.
        expected: String,
        /// The digest of what arrived.
        actual: String,
    },
    /// A source Quarry refuses to use as given (a plain `http://` address on the network, an
    /// unpinned download).
    #[error("{0}")]
    Refused(String),
    /// A download or registry request that failed, answered wrongly, or took too long.
    #[error("{url}: {message}")]
    Fetch {
        /// What was asked for.
        url: String,
        /// What went wrong, and the fix where there is one.
        message: String,
    },
    /// A signature that is malformed, by a key not trusted, or that does not match the file.
    #[error("{0}")]
    Signature(String),
    /// The lock file, trusted keys or index list cannot be read.
    #[error("{}: {message}", path.display())]
    State {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

impl PackageError {
    /// An I/O error on `path`, for `map_err`.
    pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> PackageError {
        let path = path.to_owned();
        move |source| PackageError::Io { path, source }
    }
}

impl ErrorCode for PackageError {
    fn error_kind(&self) -> ErrorKind {
        match self {
            PackageError::Io { .. } | PackageError::State { .. } => ErrorKind::Internal,
            PackageError::Format(_)
            | PackageError::Plugin(_)
            | PackageError::DigestMismatch { .. }
            | PackageError::Refused(_)
            | PackageError::Fetch { .. }
            | PackageError::Signature(_) => ErrorKind::Validation,
        }
    }
}
