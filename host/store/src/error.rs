//! Errors of the store.

use std::path::PathBuf;

use quarry_core::{ErrorCode, ErrorKind};

/// What can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be opened or migrated.
    #[error("cannot open the database {}: {message}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A name is already used (names are unique without regard to case).
    #[error("{what} {name:?} already exists; choose another name")]
    NameTaken {
        /// `integration` or `connector`.
        what: &'static str,
        /// The name asked for.
        name: String,
    },
    /// No such integration or connector.
    #[error("no {what} named {name:?}{}", known_list(known))]
    NotFound {
        /// `integration` or `connector`.
        what: &'static str,
        /// The name asked for.
        name: String,
        /// The names that exist, to help the user.
        known: Vec<String>,
    },
    /// A value does not fit (an empty name, a negative quota).
    #[error("{0}")]
    Invalid(String),
    /// The database failed.
    #[error("database error: {0}")]
    Sql(#[from] sqlx::Error),
    /// Stored data is not what Quarry wrote, or the system refused what the store needs (no
    /// randomness for a key).
    #[error("database error: {0}")]
    Db(String),
}

impl ErrorCode for StoreError {
    fn error_kind(&self) -> ErrorKind {
        match self {
            StoreError::NameTaken { .. } | StoreError::Invalid(_) => ErrorKind::Validation,
            StoreError::NotFound { .. } => ErrorKind::NotFound,
            StoreError::Open { .. } | StoreError::Sql(_) | StoreError::Db(_) => ErrorKind::Internal,
        }
    }
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        " (there are none yet)".to_owned()
    } else {
        format!("; known: {}", known.join(", "))
    }
}
