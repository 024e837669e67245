//! Errors of the store.

use std::path::PathBuf;

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
    Db(String),
}

impl StoreError {
    pub(crate) fn db(e: sqlx::Error) -> StoreError {
        StoreError::Db(e.to_string())
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        StoreError::db(e)
    }
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        " (there are none yet)".to_owned()
    } else {
        format!("; known: {}", known.join(", "))
    }
}
