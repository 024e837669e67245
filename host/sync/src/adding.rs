//! Adding a connector, the same way from the CLI and the settings page: the settings are checked
//! against the plugin's manifest, folders are resolved to real absolute paths and granted
//! (read-only), the plugin checks the settings itself (`validate-config`) with exactly that
//! grant, and only then is the connector stored. A running server syncs it at its next look.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use quarry_runtime::{FieldKind, Grant, PluginSet};
use quarry_store::{Connector, ConnectorGrant, NewConnector, Store, now_ms};

use crate::SyncError;

/// A connector to add. Its `Debug` shows setting keys only: values may be secrets.
#[derive(Clone)]
pub struct ConnectorRequest {
    /// Its name (unique, without regard to case).
    pub name: String,
    /// The installed plugin that reads it.
    pub plugin_id: String,
    /// Its settings by manifest key; folders must be absolute paths.
    pub values: BTreeMap<String, String>,
}

impl std::fmt::Debug for ConnectorRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectorRequest")
            .field("name", &self.name)
            .field("plugin_id", &self.plugin_id)
            .field("value_keys", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Adds the connector; every folder named in a directory field is granted read-only, and the
/// hosts of its URL fields and of the manifest's `capabilities.network` may be reached over HTTP.
pub async fn add_connector(
    store: &Store,
    plugins: &PluginSet,
    mut request: ConnectorRequest,
) -> Result<Connector, SyncError> {
    let plugin = plugins.get(&request.plugin_id).ok_or_else(|| {
        let installed: Vec<String> = plugins.all().iter().map(|p| p.id().to_owned()).collect();
        SyncError::Invalid(format!(
            "plugin {:?} is not installed (installed: {})",
            request.plugin_id,
            installed.join(", ")
        ))
    })?;
    for field in &plugin.manifest().config {
        if field.kind != FieldKind::Directory {
            continue;
        }
        if let Some(value) = request.values.get_mut(&field.key) {
            *value = real_folder(&field.label, value)?;
        }
    }
    // What the settings grant: their folders, the hosts of their URLs, and the hosts the
    // manifest asks for (shown when the plugin was installed).
    let grant = Grant::for_settings(plugin.manifest(), &request.values);
    let granted = ConnectorGrant {
        dirs: grant
            .directories
            .iter()
            .map(|(field, folder)| (field.clone(), folder.to_string_lossy().into_owned()))
            .collect(),
        hosts: grant.stored_hosts(),
    };
    let secret_keys = plugin.manifest().secret_keys();
    let values = request.values.clone();
    let checking = plugin.clone();
    tokio::task::spawn_blocking(move || checking.validate_config(&values, &grant))
        .await
        .map_err(|e| SyncError::Invalid(format!("checking the settings failed: {e}")))??;
    let connector = store
        .add_connector(
            &NewConnector {
                name: request.name,
                plugin_id: plugin.id().to_owned(),
                plugin_version: plugin.manifest().version.clone(),
                grant: granted,
                secret_keys,
                config: request.values,
            },
            now_ms(),
        )
        .await?;
    Ok(connector)
}

/// The real path of a folder (symlinks resolved), or an error naming the field.
fn real_folder(label: &str, value: &str) -> Result<String, SyncError> {
    let path = Path::new(value.trim());
    if !path.is_absolute() {
        return Err(SyncError::Invalid(format!(
            "{label}: give the folder's full path (starting with /), got {value:?}"
        )));
    }
    let real = path
        .canonicalize()
        .map_err(|e| SyncError::Invalid(format!("{label}: cannot open {value:?}: {e}")))?;
    if !real.is_dir() {
        return Err(SyncError::Invalid(format!(
            "{label}: {} is a file, not a folder",
            real.display()
        )));
    }
    Ok(real.to_string_lossy().into_owned())
}

/// Quarry's own folders inside the folders `connector` was granted: they are left out of it
/// (never listed, never read), which adding the connector says.
pub fn own_folders_inside(plugins: &PluginSet, connector: &Connector) -> Vec<PathBuf> {
    let Some(plugin) = plugins.get(&connector.plugin_id) else {
        return Vec::new();
    };
    connector
        .grant
        .dirs
        .values()
        .flat_map(|folder| plugin.protected().inside(Path::new(folder)))
        .collect()
}

/// Seals the secret settings still stored in clear (by a Quarry from before sealing): each
/// connector's `password` fields, as its plugin's manifest names them. Returns how many
/// connectors changed.
pub async fn seal_stored_secrets(store: &Store, plugins: &PluginSet) -> Result<usize, SyncError> {
    let mut sealed = 0;
    for connector in store.connectors().await? {
        let Some(plugin) = plugins.get(&connector.plugin_id) else {
            continue;
        };
        let keys = plugin.manifest().secret_keys();
        if !keys.is_empty() && store.seal_secrets(&connector.id, &keys).await? {
            sealed += 1;
        }
    }
    Ok(sealed)
}
