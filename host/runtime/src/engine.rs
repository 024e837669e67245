//! The one wasmtime engine of the process: component model, pooling allocator, epoch-based
//! deadlines, and an on-disk cache of compiled components.

use std::collections::HashMap;
use std::hash::Hasher;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use quarry_core::ocr::TextRecognizer;
use sha2::{Digest, Sha256};
use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::component_cache::{ComponentCache, deserialize};
use crate::error::{RuntimeError, RuntimeErrorKind};
use crate::policy::deadline::EPOCH_TICK;
use crate::policy::protected::ProtectedPaths;
use crate::sandbox::files;
use crate::sandbox::instance::HostState;
use crate::sandbox::waits;
use crate::wit;

/// Settings of the runtime as a whole.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Where compiled components are cached (one file per component and engine build). `None`
    /// compiles every time a plugin is loaded.
    pub cache_dir: Option<PathBuf>,
    /// Plugin instances that can exist at once (each sync or download holds one).
    pub max_instances: u32,
    /// The largest memory limit any plugin may be given, in bytes.
    pub max_memory_bytes: u64,
    /// Quarry's own folders (absolute paths): no plugin reads them, even inside a granted
    /// folder. The component cache is one of them anyway.
    pub protected: Vec<PathBuf>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            cache_dir: None,
            max_instances: 64,
            max_memory_bytes: 1 << 30,
            protected: Vec::new(),
        }
    }
}

/// Loads and runs plugins. Create one per process and share it.
pub struct Runtime {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<HostState>,
    pub(crate) max_memory_bytes: u64,
    cache: Option<ComponentCache>,
    /// Components compiled by this process, by cache key: loading a plugin twice compiles once,
    /// and concurrent loads of the same component wait for the first.
    compiled: Mutex<HashMap<String, Component>>,
    /// Shared with every plugin loaded: deadlines keep working while any of them lives.
    pub(crate) ticker: Arc<EpochTicker>,
    /// Folders no sandbox may read.
    pub(crate) protected: Arc<ProtectedPaths>,
    /// The OCR engine behind `recognize-text`, if the host has one.
    pub(crate) ocr: Option<Arc<dyn TextRecognizer>>,
}

impl Runtime {
    /// Builds the engine, links the host imports (WASI and `quarry:connector/host`) and starts
    /// the epoch ticker that enforces call deadlines.
    pub fn new(config: RuntimeConfig) -> Result<Runtime, RuntimeError> {
        let engine_error = |message: String| {
            RuntimeError::of("(runtime)", RuntimeErrorKind::Component { message })
        };
        let mut pool = PoolingAllocationConfig::new();
        let instances = config.max_instances.max(1);
        pool.total_component_instances(instances)
            .total_core_instances(instances.saturating_mul(16))
            .total_memories(instances.saturating_mul(4))
            .total_tables(instances.saturating_mul(16))
            .max_memory_size(usize::try_from(config.max_memory_bytes).unwrap_or(usize::MAX));
        let mut wasm = Config::new();
        wasm.wasm_component_model(true)
            .epoch_interruption(true)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine = Engine::new(&wasm).map_err(|e| engine_error(format!("engine: {e:#}")))?;

        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|e| engine_error(format!("linking WASI: {e:#}")))?;
        // Outgoing HTTP, gated per instance by the connector's granted hosts (`sandbox/http.rs`).
        wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut linker)
            .map_err(|e| engine_error(format!("linking WASI HTTP: {e:#}")))?;
        wit::add_to_linker(&mut linker)
            .map_err(|e| engine_error(format!("linking the host interface: {e:#}")))?;
        // Stricter than WASI: opens never block nor reach Quarry's own folders, and waits end
        // at the call's deadline.
        files::wasi::add_to_linker(&mut linker)
            .map_err(|e| engine_error(format!("linking the guarded filesystem: {e:#}")))?;
        waits::add_to_linker(&mut linker)
            .map_err(|e| engine_error(format!("linking the bounded waits: {e:#}")))?;

        let cache = config
            .cache_dir
            .as_deref()
            .map(ComponentCache::open)
            .transpose()?;
        // Made once every folder exists (the cache was just created), so that each is known by
        // its real path and its device and inode.
        let protected = ProtectedPaths::new(config.protected.into_iter().chain(config.cache_dir));
        let ticker = EpochTicker::start(engine.clone())
            .map(Arc::new)
            .map_err(|e| engine_error(format!("starting the deadline ticker: {e}")))?;
        Ok(Runtime {
            engine,
            linker,
            max_memory_bytes: config.max_memory_bytes,
            cache,
            compiled: Mutex::new(HashMap::new()),
            ticker,
            protected: Arc::new(protected),
            ocr: None,
        })
    }

    /// Gives plugins loaded from now on the host's OCR engine (`recognize-text`, WIT 0.4.0).
    pub fn with_ocr(mut self, engine: Arc<dyn TextRecognizer>) -> Runtime {
        self.ocr = Some(engine);
        self
    }

    /// Compiles a component, or takes its compiled form from memory or the on-disk cache.
    pub(crate) fn compile(&self, plugin: &str, bytes: &[u8]) -> Result<Component, RuntimeError> {
        let key = self.cache_key(bytes);
        let mut compiled = self.compiled.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(component) = compiled.get(&key) {
            return Ok(component.clone());
        }
        let component = self.compile_uncached(plugin, &key, bytes)?;
        compiled.insert(key, component.clone());
        Ok(component)
    }

    fn compile_uncached(
        &self,
        plugin: &str,
        key: &str,
        bytes: &[u8],
    ) -> Result<Component, RuntimeError> {
        let component_error =
            |message: String| RuntimeError::of(plugin, RuntimeErrorKind::Component { message });
        let Some(cache) = &self.cache else {
            return Component::new(&self.engine, bytes)
                .map_err(|e| component_error(format!("not a valid component: {e:#}")));
        };
        if let Some(component) = cache.load(&self.engine, key) {
            return Ok(component);
        }
        let compiled = self
            .engine
            .precompile_component(bytes)
            .map_err(|e| component_error(format!("not a valid component: {e:#}")))?;
        cache.store(key, &compiled)?;
        // Mapped from the cache as at any later start; from memory if that fails.
        if let Some(component) = cache.load(&self.engine, key) {
            return Ok(component);
        }
        deserialize(&self.engine, &compiled)
            .map_err(|e| component_error(format!("compiled component unusable: {e:#}")))
    }

    /// The OCR engine plugins are given, if OCR is on.
    pub fn ocr(&self) -> Option<&Arc<dyn TextRecognizer>> {
        self.ocr.as_ref()
    }

    /// Quarry's own folders, which no plugin reads.
    pub fn protected(&self) -> &ProtectedPaths {
        &self.protected
    }

    /// The cache file name: the component's hash and the engine's compatibility hash, so a new
    /// wasmtime or different settings never load a stale compilation.
    fn cache_key(&self, bytes: &[u8]) -> String {
        let mut hasher = Sha256Hasher(Sha256::new());
        hasher.0.update(bytes);
        std::hash::Hash::hash(&self.engine.precompile_compatibility_hash(), &mut hasher);
        hex::encode(hasher.0.finalize())
    }
}

/// Feeds `Hash` output into SHA-256, for a hash that is stable across processes.
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn finish(&self) -> u64 {
        0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// Advances the engine's epoch every [`EPOCH_TICK`] while a plugin call runs, until dropped.
/// With no call running it sleeps without waking: an idle server spends no CPU on deadlines.
/// Deadlines count ticks, so a pause between calls costs no call any of its time.
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
    /// Calls running now.
    running: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    fn start(engine: Engine) -> std::io::Result<EpochTicker> {
        let stop = Arc::new(AtomicBool::new(false));
        let running = Arc::new(AtomicUsize::new(0));
        let (flag, calls) = (stop.clone(), running.clone());
        let thread = std::thread::Builder::new()
            .name("quarry-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    if calls.load(Ordering::Acquire) == 0 {
                        // Woken by the next call (an unpark before this park is not lost).
                        std::thread::park();
                        continue;
                    }
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })?;
        Ok(EpochTicker {
            stop,
            running,
            thread: Some(thread),
        })
    }

    /// Keeps the epoch advancing until the returned guard is dropped: held for each call.
    pub(crate) fn call_running(&self) -> CallRunning<'_> {
        self.running.fetch_add(1, Ordering::AcqRel);
        if let Some(thread) = &self.thread {
            thread.thread().unpark();
        }
        CallRunning(self)
    }
}

/// A plugin call under way; see [`EpochTicker::call_running`].
pub(crate) struct CallRunning<'a>(&'a EpochTicker);

impl Drop for CallRunning<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}
