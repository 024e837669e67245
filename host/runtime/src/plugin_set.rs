//! The plugins installed in a set of folders, by id. Shared: a plugin installed while the
//! server runs (from the settings page) is seen by the API and the sync at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use crate::error::RuntimeErrorKind;
use crate::manifest::MANIFEST_FILE;
use crate::{Limits, Plugin, Runtime, RuntimeError};

/// Loaded plugins by id. A plugin that fails to load is reported and left out; the others work.
/// Clones share one set.
#[derive(Clone, Default)]
pub struct PluginSet {
    plugins: Arc<RwLock<BTreeMap<String, Plugin>>>,
}

impl PluginSet {
    /// Loads every plugin folder (a folder with a `quarry-plugin.toml`) inside `dirs`, each with
    /// `limits`. The first folder holding an id keeps it: a plugin of a later folder (the data
    /// folder's installed plugins come after the bundled ones) cannot take the id of an earlier
    /// one, and with it the grants of that plugin's connectors. Returns the set and what failed.
    pub fn load(
        runtime: &Runtime,
        dirs: &[PathBuf],
        limits: &Limits,
    ) -> (PluginSet, Vec<RuntimeError>) {
        let set = PluginSet::default();
        let mut failed = Vec::new();
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut folders: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.join(MANIFEST_FILE).is_file())
                .collect();
            folders.sort();
            for folder in folders {
                match runtime.load(&folder, limits.clone()) {
                    Ok(plugin) => match set.get(plugin.id()) {
                        Some(first) => failed.push(RuntimeError::of(
                            plugin.id(),
                            RuntimeErrorKind::Config {
                                message: format!(
                                    "{} is not loaded: the id belongs to the plugin in {}",
                                    folder.display(),
                                    first.dir().display()
                                ),
                            },
                        )),
                        None => set.insert(plugin),
                    },
                    Err(e) => failed.push(e),
                }
            }
        }
        (set, failed)
    }

    /// The plugin with this id.
    pub fn get(&self, id: &str) -> Option<Plugin> {
        self.plugins
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// Every plugin, by id.
    pub fn all(&self) -> Vec<Plugin> {
        self.plugins
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }

    /// Refuses to install a plugin with id `id` into `installed` when a plugin that comes with
    /// Quarry (one not installed there) holds that id: it would take over that plugin's
    /// connectors and their grants.
    pub fn check_installable(&self, id: &str, installed: &Path) -> Result<(), RuntimeError> {
        match self.get(id) {
            Some(bundled) if bundled.dir().parent() != Some(installed) => Err(RuntimeError::of(
                id,
                RuntimeErrorKind::Config {
                    message: format!(
                        "the id {id:?} belongs to a plugin that comes with Quarry ({}, from {}); give this plugin another id in its {MANIFEST_FILE}",
                        bundled.manifest().name,
                        bundled.dir().display()
                    ),
                },
            )),
            _ => Ok(()),
        }
    }

    /// Takes out the plugin with this id.
    pub fn remove(&self, id: &str) -> Option<Plugin> {
        self.plugins
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
    }

    /// Adds `plugin`, replacing one with the same id.
    pub fn insert(&self, plugin: Plugin) {
        self.plugins
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(plugin.id().to_owned(), plugin);
    }
}
