//! Errors of a sync.

use quarry_index::IndexError;
use quarry_runtime::{GuestError, RuntimeError};
use quarry_store::{StoreError, SyncFailure};

/// Why a sync did not finish.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The plugin failed or was stopped (the message names the plugin and the call).
    #[error("{0}")]
    Plugin(#[from] RuntimeError),
    /// The connector's plugin is not installed.
    #[error("plugin {0:?} is not installed; install it or remove the connector")]
    PluginMissing(String),
    /// A connector's settings are wrong (the message names the field and the fix).
    #[error("{0}")]
    Invalid(String),
    /// The store failed.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The index failed.
    #[error("{0}")]
    Index(#[from] IndexError),
    /// The embedding model failed on this batch (the batch is retried at the next sync).
    #[error("embedding failed: {0}")]
    Embed(String),
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
            SyncError::Plugin(e) => match e {
                RuntimeError::Timeout { .. } => {
                    "the last sync failed: the connector's plugin took too long and was stopped"
                }
                RuntimeError::MemoryLimit { .. } => {
                    "the last sync failed: the connector's plugin needed more memory than it may use"
                }
                RuntimeError::Trap { .. } => "the last sync failed: the connector's plugin crashed",
                RuntimeError::Output { .. } => {
                    "the last sync failed: the connector's plugin returned invalid data"
                }
                RuntimeError::NetworkDenied { .. } => {
                    "the last sync failed: the connector's plugin was refused a host or address it may not reach"
                }
                RuntimeError::Guest {
                    error: GuestError::InvalidConfig(_),
                    ..
                }
                | RuntimeError::Config { .. } => {
                    "the last sync failed: the connector's settings need the user's attention"
                }
                RuntimeError::Guest { .. } => "the last sync failed: the source could not be read",
                RuntimeError::Manifest { .. }
                | RuntimeError::Component { .. }
                | RuntimeError::WitVersion { .. }
                | RuntimeError::Io { .. } => {
                    "the last sync failed: the connector's plugin could not be loaded"
                }
            },
            SyncError::PluginMissing(_) => {
                "the last sync failed: the connector's plugin is not installed"
            }
            SyncError::Invalid(_) => {
                "the last sync failed: the connector's settings need the user's attention"
            }
            SyncError::Store(_) | SyncError::Index(_) | SyncError::Embed(_) => {
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
