//! The plugins installed in a set of folders, by id.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::manifest::MANIFEST_FILE;
use crate::{Limits, Plugin, Runtime, RuntimeError};

/// Loaded plugins by id. A plugin that fails to load is reported and left out; the others work.
#[derive(Clone, Default)]
pub struct PluginSet {
    plugins: BTreeMap<String, Plugin>,
}

impl PluginSet {
    /// Loads every plugin folder (a folder with a `quarry-plugin.toml`) inside `dirs`, each with
    /// `limits`. Later folders win when two hold the same id. Returns the set and what failed.
    pub fn load(
        runtime: &Runtime,
        dirs: &[PathBuf],
        limits: &Limits,
    ) -> (PluginSet, Vec<RuntimeError>) {
        let mut set = PluginSet::default();
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
                    Ok(plugin) => {
                        set.plugins.insert(plugin.id().to_owned(), plugin);
                    }
                    Err(e) => failed.push(e),
                }
            }
        }
        (set, failed)
    }

    /// The plugin with this id.
    pub fn get(&self, id: &str) -> Option<&Plugin> {
        self.plugins.get(id)
    }

    /// Every plugin, by id.
    pub fn iter(&self) -> impl Iterator<Item = &Plugin> {
        self.plugins.values()
    }
}
