//! Errors of a sync.

use quarry_index::IndexError;
use quarry_runtime::RuntimeError;
use quarry_store::StoreError;

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
