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
    /// The team database cannot be reached or migrated, or this host's sealing key is not the
    /// one its secrets were sealed with.
    #[error("cannot open the database {database}: {message}")]
    Connect {
        /// Its address, without a password.
        database: String,
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
    /// Stored data is not what Quarry wrote.
    #[error(
        "database error: stored data is not what Quarry wrote: {what}{}",
        source.as_ref().map(|s| format!(": {s}")).unwrap_or_default()
    )]
    Corrupt {
        /// What is wrong, naming the table and column.
        what: String,
        /// Why it does not read, when something said so.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The system refused what the store needs: randomness for a key, an id or a seal.
    #[error("{what}: {source}")]
    System {
        /// What the store was doing.
        what: &'static str,
        /// The system's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Sealing a secret setting failed (the cipher says no more).
    #[error("sealing a secret failed")]
    Seal,
}

impl StoreError {
    /// Stored data that is not what Quarry wrote: `what` says where.
    pub(crate) fn corrupt(what: impl Into<String>) -> StoreError {
        StoreError::Corrupt {
            what: what.into(),
            source: None,
        }
    }

    /// Stored data at `what` that does not read, for the reason `source` gives.
    pub(crate) fn unreadable(
        what: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> StoreError {
        StoreError::Corrupt {
            what: what.into(),
            source: Some(Box::new(source)),
        }
    }

    /// The system refused `what`.
    pub(crate) fn system(
        what: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> StoreError {
        StoreError::System {
            what,
            source: Box::new(source),
        }
    }
}

impl ErrorCode for StoreError {
    fn error_kind(&self) -> ErrorKind {
        match self {
            StoreError::NameTaken { .. } | StoreError::Invalid(_) => ErrorKind::Validation,
            StoreError::NotFound { .. } => ErrorKind::NotFound,
            StoreError::Sql(e) if db_unavailable(e) => ErrorKind::Unavailable,
            StoreError::Open { .. }
            | StoreError::Connect { .. }
            | StoreError::Sql(_)
            | StoreError::Corrupt { .. }
            | StoreError::System { .. }
            | StoreError::Seal => ErrorKind::Internal,
        }
    }
}

/// Whether `e` says the database is out of reach rather than that a statement failed: no
/// connection (refused, dropped, none free in time), a server shutting down or starting up, or a
/// standby that is not yet promoted refusing a write.
fn db_unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            // 08: connection exception; 57P01-03: admin shutdown, crash shutdown, cannot
            // connect now; 25006: read-only transaction (a standby).
            code.starts_with("08") || code.starts_with("57P") || code == "25006"
        }),
        _ => false,
    }
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        " (there are none yet)".to_owned()
    } else {
        format!("; known: {}", known.join(", "))
    }
}
