//! What the settings page keeps: where plugins are installed and staged, the runtime that loads
//! them, and the uploads waiting for the user's grant.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use quarry_runtime::{Runtime, StagedPlugin};

/// What the settings page needs from the server (the admin token's hash is in the store).
pub struct AdminConfig {
    /// Where uploaded plugins are installed (the data folder's `plugins`).
    pub plugins_dir: PathBuf,
    /// Where uploads wait for the user's grant.
    pub staging_dir: PathBuf,
    /// The lock of installed plugins (the data folder's `plugins.lock`).
    pub lock_path: PathBuf,
    /// Loads uploaded plugins.
    pub runtime: Arc<Runtime>,
}

/// The settings page's state.
pub(crate) struct Admin {
    pub(crate) plugins_dir: PathBuf,
    pub(crate) staging_dir: PathBuf,
    pub(crate) lock_path: PathBuf,
    pub(crate) runtime: Arc<Runtime>,
    /// Uploads waiting for the grant, by stage id (oldest first).
    pub(crate) staged: Mutex<BTreeMap<String, StagedPlugin>>,
}

impl Admin {
    pub(crate) fn new(config: AdminConfig) -> Arc<Admin> {
        Arc::new(Admin {
            plugins_dir: config.plugins_dir,
            staging_dir: config.staging_dir,
            lock_path: config.lock_path,
            runtime: config.runtime,
            staged: Mutex::new(BTreeMap::new()),
        })
    }
}
