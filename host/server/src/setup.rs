//! Where things live, and opening them: the data folder (database, index), plugin folders, the
//! compiled-component cache.

use std::path::{Path, PathBuf};

use std::sync::Arc;

use anyhow::Context;
use quarry_core::ocr::TextRecognizer;
use quarry_embed::{EmbedConfig, Embedder};
use quarry_index::SearchIndex;
use quarry_ocr::LazyOcr;
use quarry_runtime::{Limits, PluginSet, Runtime, RuntimeConfig};
use quarry_store::{DB_FILE, Store};

use crate::bundle::{Bundle, DEFAULT_MODEL};
use crate::cli::Cli;
use crate::private;

/// Where the OCR models are, and ONNX Runtime's library.
#[derive(Debug, Clone)]
pub struct OcrPaths {
    /// The models folder.
    pub models: PathBuf,
    /// ONNX Runtime's shared library.
    pub runtime_library: PathBuf,
}

/// The name of the OCR models' folder under `models/`.
const OCR_MODELS: &str = "ppocr-v6";

/// The folders Quarry uses. None is relative to the working folder: a `quarry` started in an
/// untrusted folder loads no library, model or plugin from it.
#[derive(Debug, Clone)]
pub struct Paths {
    /// Database and index.
    pub data_dir: PathBuf,
    /// The key that seals password settings, outside the data folder.
    pub keys_dir: PathBuf,
    /// The team database's PostgreSQL address; `None` for the data folder's SQLite file.
    pub database: Option<String>,
    /// This host's name in a team ([`host_name`]).
    pub host_name: String,
    /// Folders of plugin folders: the bundled ones (if given), then those installed in the data
    /// folder.
    pub plugin_dirs: Vec<PathBuf>,
    /// The page renderer's component; `None` draws no previews.
    pub renderer: Option<PathBuf>,
    /// Compiled components.
    pub component_cache: PathBuf,
    /// The embedding model; `None` for keyword search only.
    pub model: Option<EmbedConfig>,
    /// The OCR models and the library that runs them; `None` when OCR is off.
    pub ocr: Option<OcrPaths>,
    /// The installation this binary belongs to, whose plugins, model and library are used
    /// where none are named.
    pub bundle: Option<Bundle>,
}

impl Paths {
    /// The folders the command line (and environment) name, with the platform's defaults. A
    /// relative path given is taken as from the working folder, made absolute once here.
    pub fn new(cli: &Cli) -> anyhow::Result<Paths> {
        let data_dir = match &cli.data_dir {
            Some(dir) => absolute(dir)?,
            None => dirs::data_dir()
                .context("no data folder on this platform; pass --data-dir")?
                .join("quarry"),
        };
        let keys_dir = match &cli.keys_dir {
            Some(dir) => absolute(dir)?,
            None => dirs::config_dir()
                .context("no config folder on this platform; pass --keys-dir")?
                .join("quarry/keys"),
        };
        let component_cache = match &cli.plugins.component_cache {
            Some(dir) => absolute(dir)?,
            None => dirs::cache_dir()
                .map_or_else(|| data_dir.join("cache"), |d| d.join("quarry"))
                .join("components"),
        };
        let bundle = Bundle::of_this_binary();
        // Unnamed, the data folder's model and library are used where they are, else those
        // this installation ships.
        let own_or_bundled = |own: PathBuf, bundled: Option<PathBuf>| {
            if own.exists() {
                own
            } else {
                bundled.unwrap_or(own)
            }
        };
        let model_dir = match &cli.model.model_dir {
            Some(dir) if dir.as_os_str() == "none" => None,
            Some(dir) => Some(absolute(dir)?),
            None => Some(own_or_bundled(
                data_dir.join("models").join(DEFAULT_MODEL),
                bundle.as_ref().and_then(|b| b.model(DEFAULT_MODEL)),
            )),
        };
        let runtime_library = match &cli.model.ort_lib {
            Some(lib) => absolute(lib)?,
            None => own_or_bundled(
                data_dir.join("models/onnxruntime/libonnxruntime.so"),
                bundle.as_ref().and_then(Bundle::runtime_library),
            ),
        };
        let ocr_models = match &cli.model.ocr_models {
            Some(dir) if dir.as_os_str() == "none" => None,
            Some(dir) => Some(absolute(dir)?),
            None => {
                let own = data_dir.join("models").join(OCR_MODELS);
                let beside_model = model_dir
                    .as_deref()
                    .and_then(Path::parent)
                    .map(|models| models.join(OCR_MODELS))
                    .filter(|dir| dir.is_dir());
                Some(own_or_bundled(
                    own,
                    beside_model.or_else(|| bundle.as_ref().and_then(|b| b.model(OCR_MODELS))),
                ))
            }
        };
        let ocr = ocr_models.map(|models| OcrPaths {
            models,
            runtime_library: runtime_library.clone(),
        });
        let model = model_dir.map(|model_dir| EmbedConfig {
            model_dir,
            runtime_library,
            threads: cli.model.embed_threads.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
            }),
            graph: cli.model.embed_graph.unwrap_or_default(),
        });
        let mut plugin_dirs = Vec::new();
        match &cli.plugins.plugins_dir {
            Some(dir) => plugin_dirs.push(absolute(dir)?),
            None => plugin_dirs.extend(bundle.as_ref().and_then(Bundle::plugins)),
        }
        plugin_dirs.push(data_dir.join("plugins"));
        let renderer = match &cli.plugins.renderer {
            Some(path) => Some(absolute(path)?),
            None => bundle.as_ref().and_then(Bundle::renderer),
        };
        Ok(Paths {
            plugin_dirs,
            renderer,
            data_dir,
            keys_dir,
            database: cli.database.clone(),
            host_name: host_name(cli.host_name.as_deref())?,
            component_cache,
            model,
            ocr,
            bundle,
        })
    }

    /// Quarry's own folders and files, which no plugin may read even where a granted folder
    /// holds them: the data folder, the keys, the component cache, the model and its library,
    /// the plugin folders.
    pub fn own_files(&self) -> Vec<PathBuf> {
        let mut own = vec![
            self.data_dir.clone(),
            self.keys_dir.clone(),
            self.component_cache.clone(),
        ];
        own.extend(self.plugin_dirs.iter().cloned());
        own.extend(self.renderer.clone());
        if let Some(model) = &self.model {
            own.push(model.model_dir.clone());
            own.push(model.runtime_library.clone());
        }
        if let Some(ocr) = &self.ocr {
            own.push(ocr.models.clone());
            own.push(ocr.runtime_library.clone());
        }
        own
    }

    /// The index folder.
    pub fn index(&self) -> PathBuf {
        self.data_dir.join("index")
    }

    /// Where plugins installed by the user live (the settings page, `quarry plugin install`).
    pub fn installed_plugins(&self) -> PathBuf {
        self.data_dir.join("plugins")
    }

    /// The lock of installed plugins: where each came from and how it was verified.
    pub fn plugins_lock(&self) -> PathBuf {
        self.data_dir.join(quarry_packages::LOCK_FILE)
    }

    /// The publishers whose signed plugins install without a pin.
    pub fn trusted_publishers(&self) -> PathBuf {
        self.data_dir.join(quarry_packages::TRUST_FILE)
    }

    /// The plugin indexes the user added.
    pub fn plugin_indexes(&self) -> PathBuf {
        self.data_dir.join(quarry_packages::INDEXES_FILE)
    }

    /// Where uploaded plugins wait for the user's grant.
    pub fn plugin_staging(&self) -> PathBuf {
        self.data_dir.join("plugin-uploads")
    }

    /// Where an older Quarry kept the admin token in clear (removed at the next start).
    pub fn legacy_admin_token(&self) -> PathBuf {
        self.data_dir.join("admin-token")
    }
}

/// This host's name in a team: `given` (`--host-name`), else the machine's host name (else
/// `localhost`).
fn host_name(given: Option<&str>) -> anyhow::Result<String> {
    match given {
        Some(name) => Ok(quarry_store::check_host_name(name)
            .context("--host-name (QUARRY_HOST_NAME)")?
            .to_owned()),
        None => Ok(std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .and_then(|n| quarry_store::check_host_name(&n).ok().map(str::to_owned))
            .unwrap_or_else(|| "localhost".to_owned())),
    }
}

/// Opens the store, creating the data folder if needed and making it private to this user
/// whatever it was (see [`private::secure_data_dir`]); the sealing key is in the keys folder.
/// With a team database the store is on that PostgreSQL server.
pub async fn open_store(paths: &Paths) -> anyhow::Result<Store> {
    private::secure_data_dir(&paths.data_dir)?;
    Ok(match &paths.database {
        Some(url) => Store::open_postgres(url, &paths.keys_dir)
            .await?
            .living_on(&paths.host_name),
        None => Store::open(&paths.data_dir.join(DB_FILE), &paths.keys_dir).await?,
    })
}

/// Opens the index, for writing when `writable` (then [`quarry_index::IndexError::Busy`] means
/// a server holds it). On a team database only `quarry serve` writes a host's index, following
/// the team's log: asked for writing there, this answers `Busy`, so a command asks the team's
/// hosts (the one holding the sync turn syncs) instead of writing here.
pub fn open_index(paths: &Paths, writable: bool) -> Result<SearchIndex, quarry_index::IndexError> {
    if writable && paths.database.is_some() {
        return Err(quarry_index::IndexError::Busy);
    }
    SearchIndex::open(&paths.index(), writable)
}

/// The plugin runtime, caching compiled components in the configured folder, keeping plugins
/// out of Quarry's own folders.
pub fn plugin_runtime(paths: &Paths) -> anyhow::Result<Runtime> {
    let runtime = Runtime::new(runtime_config(paths))?;
    // A sync run here queues what OCR should read; the server reads it.
    Ok(match ocr_engine(paths) {
        Some(ocr) => runtime.with_ocr(ocr),
        None => runtime,
    })
}

/// The runtime's settings for these folders.
pub fn runtime_config(paths: &Paths) -> RuntimeConfig {
    RuntimeConfig {
        cache_dir: Some(paths.component_cache.clone()),
        protected: paths.own_files(),
        ..RuntimeConfig::default()
    }
}

/// Takes out of `plugins` the installed versions their index revoked (`plugin update` marks
/// them in the lock): they stay on disk for the user to see, but never run.
fn leave_out_revoked(plugins: &PluginSet, paths: &Paths) {
    let lock = match quarry_packages::Lock::read(&paths.plugins_lock()) {
        Ok(lock) => lock,
        Err(e) => {
            tracing::warn!("the plugin lock cannot be read: {e}");
            return;
        }
    };
    let installed = paths.installed_plugins();
    for entry in lock.plugins.iter().filter(|p| p.revoked.is_some()) {
        let same = plugins.get(&entry.id).is_some_and(|p| {
            p.dir().parent() == Some(installed.as_path()) && p.manifest().version == entry.version
        });
        if same {
            plugins.remove(&entry.id);
            tracing::warn!(
                plugin = entry.id,
                version = entry.version,
                "plugin not loaded: its publisher revoked this version ({}); update or remove it",
                entry.revoked.as_deref().unwrap_or_default()
            );
        }
    }
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
    leave_out_revoked(&plugins, paths);
    if plugins.all().is_empty() {
        tracing::warn!(
            "no plugins found in {}; install Quarry (`make install`, the Debian package), or in a checkout run `make plugins` and pass --plugins-dir",
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
    if let Err(why) = quarry_core::trust::check_trusted(&config.runtime_library) {
        tracing::warn!(
            "semantic search is off, searches run as keyword searches: ONNX Runtime's library is not loaded: {why}"
        );
        return None;
    }
    match Embedder::load(config) {
        Ok(embedder) => {
            tracing::info!(
                model = embedder.id(),
                graph = embedder.graph().name(),
                cpu_vnni = quarry_embed::graph::Cpu::this().vnni,
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

/// The OCR engine, its models loaded at first use; `None` when OCR is off (none configured, or
/// no models where they should be). Without it, images and scanned pages are found by name.
pub fn ocr_engine(paths: &Paths) -> Option<Arc<LazyOcr>> {
    let ocr = paths.ocr.as_ref()?;
    if !ocr.models.is_dir() || quarry_core::trust::check_trusted(&ocr.runtime_library).is_err() {
        return None;
    }
    // Every core: OCR's threads run at the lowest priority, so searches and syncs come first.
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    Some(Arc::new(LazyOcr::new(
        &ocr.models,
        &ocr.runtime_library,
        threads,
    )))
}

/// Loads the OCR models for the server, saying whether OCR is on and why not.
pub fn load_ocr(paths: &Paths) -> Option<Arc<LazyOcr>> {
    let Some(ocr) = &paths.ocr else {
        tracing::info!("OCR is off (--ocr-models none)");
        return None;
    };
    if let Err(why) = quarry_core::trust::check_trusted(&ocr.runtime_library) {
        tracing::warn!("OCR is off: ONNX Runtime's library is not loaded: {why}");
        return None;
    }
    let Some(engine) = ocr_engine(paths) else {
        tracing::info!(
            "OCR is off: no models at {} (run `make setup`, or see docs/ocr.md); images and scanned pages are found by name only",
            ocr.models.display()
        );
        return None;
    };
    // Loaded once to check them, then let go until there is something to read.
    match engine.load_now() {
        Ok(_) => {
            engine.release();
            tracing::info!(models = quarry_ocr::MODELS, "OCR is on");
            Some(engine)
        }
        Err(e) => {
            tracing::warn!("OCR is off: {e}");
            None
        }
    }
}

/// `path` made absolute against the working folder, once, where the command line gave it.
fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))
}

/// Checks the documents already indexed with the credential rules, unless this index was checked
/// with them: those that would now be held back leave the index before anything is served or
/// synced (`serve`, a sync in the CLI, `quarry mcp` on the folder). Returns the line that reports
/// it, once, when some did.
pub async fn recheck_for_credentials(
    store: &Store,
    index: &Arc<SearchIndex>,
) -> anyhow::Result<Option<String>> {
    let (store, index) = (store.clone(), index.clone());
    let handle = tokio::runtime::Handle::current();
    let report =
        tokio::task::spawn_blocking(move || quarry_sync::recheck_index(&store, &index, &handle))
            .await
            .context("checking the index for credentials")??;
    let Some(report) = report.filter(|r| !r.held_back.is_empty()) else {
        return Ok(None);
    };
    let listed: Vec<String> = report
        .held_back
        .iter()
        .map(|(name, n)| format!("{n} in {name}"))
        .collect();
    let line = format!(
        "credentials: {} document(s) already indexed hold credentials and were removed from the index ({}); `quarry connector status NAME` lists them",
        report.held_back.iter().map(|(_, n)| n).sum::<u64>(),
        listed.join(", ")
    );
    tracing::warn!("{line}");
    Ok(Some(line))
}
