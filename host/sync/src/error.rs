//! Errors of a sync.

use quarry_index::IndexError;
use quarry_runtime::{GuestError, RuntimeError, RuntimeErrorKind};
use quarry_store::{StoreError, SyncFailure};

/// Why a sync did not finish.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The plugin failed or was stopped (the message names the plugin and the call).
    #[error(transparent)]
    Plugin(#[from] RuntimeError),
    /// The connector's plugin is not installed.
    #[error("plugin {0:?} is not installed; install it or remove the connector")]
    PluginMissing(String),
    /// A connector's settings are wrong (the message names the field and the fix).
    #[error("{0}")]
    Invalid(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The index failed.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The embedding model failed on this batch (the batch is retried at the next sync).
    #[error("embedding failed: {0}")]
    Embed(#[from] quarry_embed::EmbedError),
    /// A thread the sync needs could not be started.
    #[error("starting {what}: {source}")]
    Thread {
        /// The thread's work.
        what: &'static str,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// A write to the catalog made beside the sync ended without an answer (it panicked, or
    /// the runtime was shutting down).
    #[error("a write to the catalog did not finish: {0}")]
    CatalogWrite(String),
    /// The connector was removed while it synced.
    #[error("the connector was removed")]
    Gone,
    /// The sync was asked to stop (shutdown); the next one resumes where it stopped.
    #[error("the sync was stopped; it resumes at the next start")]
    Stopped,
}

impl SyncError {
    /// Why the sync failed in words an integration may see: what kind of failure, never a host
    /// path, an address, a setting or the plugin's own words (those stay in the full reason,
    /// for the user).
    pub fn public_reason(&self) -> &'static str {
        match self {
            SyncError::Plugin(e) => match e.kind() {
                RuntimeErrorKind::Timeout { .. } => {
                    "the last sync failed: the connector's plugin took too long and was stopped"
                }
                RuntimeErrorKind::MemoryLimit { .. } => {
                    "the last sync failed: the connector's plugin needed more memory than it may use"
                }
                RuntimeErrorKind::Trap { .. } => {
                    "the last sync failed: the connector's plugin crashed"
                }
                RuntimeErrorKind::Output { .. } => {
                    "the last sync failed: the connector's plugin returned invalid data"
                }
                RuntimeErrorKind::NetworkDenied { .. } => {
                    "the last sync failed: the connector's plugin was refused a host or address it may not reach"
                }
                RuntimeErrorKind::Guest {
                    error: GuestError::InvalidConfig(_),
                    ..
                }
                | RuntimeErrorKind::Config { .. } => {
                    "the last sync failed: the connector's settings need the user's attention"
                }
                RuntimeErrorKind::Guest { .. } => {
                    "the last sync failed: the source could not be read"
                }
                RuntimeErrorKind::Manifest { .. }
                | RuntimeErrorKind::Component { .. }
                | RuntimeErrorKind::WitVersion { .. }
                | RuntimeErrorKind::Io { .. } => {
                    "the last sync failed: the connector's plugin could not be loaded"
                }
            },
            SyncError::PluginMissing(_) => {
                "the last sync failed: the connector's plugin is not installed"
            }
            SyncError::Invalid(_) => {
                "the last sync failed: the connector's settings need the user's attention"
            }
            SyncError::Store(_)
            | SyncError::Index(_)
            | SyncError::Embed(_)
            | SyncError::Thread { .. }
            | SyncError::CatalogWrite(_) => {
                "the last sync failed: Quarry could not store what it read; it tries again at the next sync"
            }
            SyncError::Gone | SyncError::Stopped => "the last sync did not finish",
        }
    }

    /// The failure as the store keeps it: in full, and in public words.
    pub fn failure(&self) -> SyncFailure {
        SyncFailure {
            full: self.to_string(),
            public: self.public_reason().to_owned(),
        }
    }
}

impl quarry_core::ErrorCode for SyncError {
    /// As an answer to adding a connector (the one place a sync error reaches a caller): what the
    /// plugin said about the settings, and settings that do not fit, are the user's to fix.
    fn error_kind(&self) -> quarry_core::ErrorKind {
        use quarry_core::ErrorKind;
        match self {
            SyncError::Plugin(e) => match e.kind() {
                RuntimeErrorKind::Guest { .. } | RuntimeErrorKind::Config { .. } => {
                    ErrorKind::Validation
                }
                _ => e.error_kind(),
            },
            SyncError::Store(e) => e.error_kind(),
            SyncError::Invalid(_) | SyncError::PluginMissing(_) => ErrorKind::Validation,
            SyncError::Index(_)
            | SyncError::Embed(_)
            | SyncError::Thread { .. }
            | SyncError::CatalogWrite(_)
            | SyncError::Gone
            | SyncError::Stopped => ErrorKind::Internal,
        }
    }
}
