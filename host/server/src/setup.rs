//! Where things live, and opening them: the data folder (database, index), plugin folders, the
//! compiled-component cache.

use std::path::{Path, PathBuf};

use std::sync::Arc;

use anyhow::Context;
use quarry_embed::{EmbedConfig, Embedder};
use quarry_index::SearchIndex;
use quarry_runtime::{Limits, PluginSet, Runtime, RuntimeConfig};
use quarry_store::{DB_FILE, Store};

use crate::cli::Cli;

/// The folders Quarry uses.
#[derive(Debug, Clone)]
pub struct Paths {
    /// Database and index.
    pub data_dir: PathBuf,
    /// Folders of plugin folders: the bundled ones, then those installed in the data folder.
    pub plugin_dirs: Vec<PathBuf>,
    /// Compiled components.
    pub component_cache: PathBuf,
    /// The embedding model; `None` for keyword search only.
    pub model: Option<EmbedConfig>,
}

impl Paths {
    /// The folders the command line (and environment) name, with the platform's defaults.
    pub fn new(cli: &Cli) -> anyhow::Result<Paths> {
        let data_dir = match &cli.data_dir {
            Some(dir) => dir.clone(),
            None => dirs::data_dir()
                .context("no data folder on this platform; pass --data-dir")?
                .join("quarry"),
        };
        let component_cache = match &cli.plugins.component_cache {
            Some(dir) => dir.clone(),
            None => dirs::cache_dir()
                .unwrap_or_else(std::env::temp_dir)
                .join("quarry/components"),
        };
        let model = (cli.model.model_dir.as_os_str() != "none").then(|| EmbedConfig {
            model_dir: cli.model.model_dir.clone(),
            runtime_library: cli.model.ort_lib.clone(),
            threads: cli.model.embed_threads.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
            }),
        });
        Ok(Paths {
            plugin_dirs: vec![cli.plugins.plugins_dir.clone(), data_dir.join("plugins")],
            data_dir,
            component_cache,
            model,
        })
    }

    /// The index folder.
    pub fn index(&self) -> PathBuf {
        self.data_dir.join("index")
    }

    /// Where plugins installed by the user live (the settings page, `quarry plugin install`).
    pub fn installed_plugins(&self) -> PathBuf {
        self.data_dir.join("plugins")
    }

    /// Where uploaded plugins wait for the user's grant.
    pub fn plugin_staging(&self) -> PathBuf {
        self.data_dir.join("plugin-uploads")
    }

    /// The admin token's file.
    pub fn admin_token(&self) -> PathBuf {
        self.data_dir.join("admin-token")
    }
}

/// Opens the store, creating the data folder (readable by this user only) if needed.
pub async fn open_store(paths: &Paths) -> anyhow::Result<Store> {
    create_private_dir(&paths.data_dir)?;
    Ok(Store::open(&paths.data_dir.join(DB_FILE)).await?)
}

/// Opens the index, for writing when `writable` (then [`quarry_index::IndexError::Busy`] means
/// a server holds it).
pub fn open_index(paths: &Paths, writable: bool) -> Result<SearchIndex, quarry_index::IndexError> {
    SearchIndex::open(&paths.index(), writable)
}

/// The plugin runtime, caching compiled components in the configured folder.
pub fn plugin_runtime(paths: &Paths) -> anyhow::Result<Runtime> {
    Ok(Runtime::new(RuntimeConfig {
        cache_dir: Some(paths.component_cache.clone()),
        ..RuntimeConfig::default()
    })?)
}

/// Loads the installed plugins; plugins that fail to load are reported and left out.
pub fn load_plugins(paths: &Paths) -> anyhow::Result<PluginSet> {
    load_plugins_with(&plugin_runtime(paths)?, paths)
}

/// [`load_plugins`] with a runtime the caller keeps (to install more plugins later).
pub fn load_plugins_with(runtime: &Runtime, paths: &Paths) -> anyhow::Result<PluginSet> {
    let (plugins, failed) = PluginSet::load(runtime, &paths.plugin_dirs, &Limits::default());
    for error in failed {
        tracing::warn!("plugin not loaded: {error}");
    }
    if plugins.all().is_empty() {
        tracing::warn!(
            "no plugins found in {}; run `make plugins` or pass --plugins-dir",
            paths
                .plugin_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(" or ")
        );
    }
    Ok(plugins)
}

/// Loads the embedding model; without one (none configured, or it fails to load, which is
/// logged) search is keyword-only.
pub fn load_embedder(paths: &Paths) -> Option<Arc<Embedder>> {
    let Some(config) = &paths.model else {
        tracing::info!("semantic search is off (--model-dir none)");
        return None;
    };
    match Embedder::load(config) {
        Ok(embedder) => {
            tracing::info!(
                model = embedder.id(),
                dims = embedder.dims(),
                "semantic search is on"
            );
            Some(Arc::new(embedder))
        }
        Err(e) => {
            tracing::warn!("semantic search is off, searches run as keyword searches: {e}");
            None
        }
    }
}

fn create_private_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot restrict {}", dir.display()))?;
    }
    Ok(())
}
