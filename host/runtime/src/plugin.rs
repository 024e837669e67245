//! A loaded plugin, and sessions that call it.
//!
//! Loading checks the manifest, compiles the component (or takes it from the cache), checks the
//! WIT version it was built against, and links it once (`InstancePre`). A [`Session`] is one
//! sandboxed instance with its own store, memory cap and config; each call gets a deadline. A call
//! the host had to stop poisons the instance, so the next call starts a fresh one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use quarry_core::ocr::{ScannedPage, TextRecognizer};
use quarry_core::{DocId, ExtractedText, FileChunk, SourceBatch, SourceDoc};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use crate::change_hints::{self, MAX_HINTS_PER_CALL};
use crate::engine::{EpochTicker, Runtime};
use crate::error::{RuntimeError, RuntimeErrorKind};
use crate::limits::{Limits, MAX_STDIO_BYTES};
use crate::manifest::{MANIFEST_FILE, Manifest};
use crate::plugin_files::{MAX_COMPONENT_BYTES, read_bounded};
use crate::policy::grant::{Grant, SandboxSetup, resolve};
use crate::policy::hosts::HostGrant;
use crate::policy::protected::ProtectedPaths;
use crate::sandbox::files::guard::FileGuard;
use crate::sandbox::http::NetworkGate;
use crate::sandbox::instance::HostState;
use crate::sandbox::limiter::MemoryLimiter;
use crate::sandbox::ocr::OcrGate;
use crate::sandbox::reports::{ProgressFn, Reports};
use crate::sandbox::stdio::TailCapture;
use crate::sandbox::stopped::{classify, deadline_ticks};
use crate::sandbox::streams::StreamGate;
use crate::sandbox::tls;
use crate::usage::{Usage, thread_cpu_time};
use crate::wit::source::{Answer, CallError, Watched};
use crate::wit::version::WitVersion;
use crate::wit::{self, ConnectorInstance, ConnectorPre, WIT_PACKAGE};

/// A plugin ready to run: manifest checked, component compiled and linked. Cheap to clone.
#[derive(Clone)]
pub struct Plugin {
    inner: Arc<Inner>,
}

struct Inner {
    id: Arc<str>,
    manifest: Manifest,
    dir: PathBuf,
    engine: Engine,
    /// Linked, in the WIT version the component exports.
    pre: ConnectorPre,
    /// That version.
    version: WitVersion,
    /// What the component imports (`wasi:http/types@0.2.6`, `quarry:connector/host@0.1.0`).
    imports: Vec<String>,
    limits: Limits,
    /// Quarry's own folders: never mounted, never opened.
    protected: Arc<ProtectedPaths>,
    /// Advances call deadlines while a call runs.
    ticker: Arc<EpochTicker>,
    /// The host's OCR engine, for `recognize-text`.
    ocr: Option<Arc<dyn TextRecognizer>>,
}

impl Runtime {
    /// Loads the plugin in `dir` (its `quarry-plugin.toml` and the component it names), to run
    /// with `limits`.
    pub fn load(&self, dir: &Path, limits: Limits) -> Result<Plugin, RuntimeError> {
        let manifest = Manifest::load(&dir.join(MANIFEST_FILE))?;
        let id: Arc<str> = manifest.id.as_str().into();
        if limits.memory_bytes > self.max_memory_bytes {
            return Err(RuntimeError::of(
                &*id,
                RuntimeErrorKind::Config {
                    message: format!(
                        "a memory limit of {} MiB is over the runtime's maximum of {} MiB",
                        limits.memory_bytes >> 20,
                        self.max_memory_bytes >> 20
                    ),
                },
            ));
        }
        let path = manifest.component_path(dir);
        let bytes = read_bounded(&path, MAX_COMPONENT_BYTES).map_err(|e| {
            RuntimeError::of(
                &*id,
                RuntimeErrorKind::Component {
                    message: format!("cannot read the component {}: {e}", path.display()),
                },
            )
        })?;
        let component = self.compile(&id, &bytes)?;
        let version = wit::check_wit_version(&self.engine, &component, &manifest)?;
        let link_error = |e: wasmtime::Error| {
            RuntimeError::of(
                &*id,
                RuntimeErrorKind::Component {
                    message: format!(
                        "cannot be linked: {e:#}. A connector may import only {WIT_PACKAGE}/host and the WASI interfaces the host provides"
                    ),
                },
            )
        };
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(link_error)?;
        let pre = ConnectorPre::new(version, pre).map_err(link_error)?;
        let imports = component
            .component_type()
            .imports(&self.engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        Ok(Plugin {
            inner: Arc::new(Inner {
                id,
                manifest,
                dir: dir.to_owned(),
                engine: self.engine.clone(),
                pre,
                version,
                imports,
                limits,
                protected: self.protected.clone(),
                ticker: self.ticker.clone(),
                ocr: self.ocr.clone(),
            }),
        })
    }
}

impl Plugin {
    /// The plugin's id.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// The plugin's manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.inner.manifest
    }

    /// The folder the plugin was loaded from.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The version of `quarry:connector` its component was built against.
    pub fn wit_version(&self) -> WitVersion {
        self.inner.version
    }

    /// The OCR models its documents' scans are read with: `None` unless its version has
    /// `read-scans` and the host has OCR models.
    pub fn ocr_models(&self) -> Option<&str> {
        let engine = self.inner.ocr.as_deref()?;
        self.inner.version.reads_scans().then(|| engine.models())
    }

    /// The interfaces its component imports, by name and version.
    pub fn imports(&self) -> &[String] {
        &self.inner.imports
    }

    /// The limits its calls run under.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// Quarry's own folders, which its sessions never read.
    pub fn protected(&self) -> &ProtectedPaths {
        &self.inner.protected
    }

    /// Opens a session for a connector with these settings and this grant. Fails if they do not
    /// fit the manifest (unknown or missing fields, folders not granted).
    pub fn session(
        &self,
        values: &BTreeMap<String, String>,
        grant: &Grant,
        progress: Option<ProgressFn>,
    ) -> Result<Session, RuntimeError> {
        let config_error =
            |message| RuntimeError::of(self.id(), RuntimeErrorKind::Config { message });
        let setup = resolve(&self.inner.manifest, values, grant, &self.inner.protected)
            .map_err(config_error)?;
        let tls = if setup.streams && self.inner.version.watches() {
            Some(tls::client_config(&setup.certificates).map_err(config_error)?)
        } else {
            None
        };
        // HTTPS trusts the web's roots, and with `certificate` settings those authorities too.
        let http_tls = if setup.certificates.is_empty() {
            None
        } else {
            Some(tls::client_config(&setup.certificates).map_err(config_error)?)
        };
        Ok(Session {
            plugin: self.clone(),
            setup,
            tls,
            http_tls,
            progress,
            live: None,
            usage: Usage::default(),
            refused_own: Vec::new(),
        })
    }

    /// Checks settings against the manifest, then asks the plugin (`validate-config`).
    pub fn validate_config(
        &self,
        values: &BTreeMap<String, String>,
        grant: &Grant,
    ) -> Result<(), RuntimeError> {
        let mut session = self.session(values, grant, None)?;
        let config = session.setup.config.clone();
        session.call("validate-config", |instance, store| {
            instance.source().validate_config(store, &config)
        })
    }
}

/// A document to extract the text of: its id and locator as listed, and its listed size.
#[derive(Debug, Clone, Copy)]
pub struct ToFetch<'a> {
    /// The document's id.
    pub id: &'a DocId,
    /// The locator its listing gave.
    pub locator: &'a str,
    /// Its listed size in bytes.
    pub size_bytes: u64,
}

impl<'a> From<&'a SourceDoc> for ToFetch<'a> {
    fn from(doc: &'a SourceDoc) -> Self {
        ToFetch {
            id: &doc.id,
            locator: &doc.locator,
            size_bytes: doc.meta.size_bytes,
        }
    }
}

/// Documents of at most this listed size are asked for together.
const TOGETHER_DOC_BYTES: u64 = 64 << 10;

/// At most this many documents are asked for in one call,
const TOGETHER_DOCS: usize = 64;

/// and at most this many bytes of them by their listed sizes.
const TOGETHER_BYTES: u64 = 1 << 20;

/// How many of the first of `docs` to ask for in one call: the run of small ones at the start,
/// within the bounds above (0 when the first is not small).
fn together_len(docs: &[ToFetch<'_>]) -> usize {
    let mut bytes = 0u64;
    docs.iter()
        .take(TOGETHER_DOCS)
        .take_while(|doc| {
            bytes = bytes.saturating_add(doc.size_bytes);
            doc.size_bytes <= TOGETHER_DOC_BYTES && bytes <= TOGETHER_BYTES
        })
        .count()
}

/// One sandboxed instance of a plugin, for a run of calls (a sync batch, a file download).
pub struct Session {
    plugin: Plugin,
    setup: SandboxSetup,
    /// The TLS settings of its streams, when its plugin opens streams.
    tls: Option<Arc<rustls::ClientConfig>>,
    /// The TLS settings of its HTTPS requests, when its `certificate` settings name authorities
    /// (the web's roots otherwise).
    http_tls: Option<Arc<rustls::ClientConfig>>,
    progress: Option<ProgressFn>,
    live: Option<Live>,
    usage: Usage,
    /// Files the sandbox refused as Quarry's own since [`Session::take_refused_own`].
    refused_own: Vec<String>,
}

struct Live {
    store: Store<HostState>,
    instance: ConnectorInstance,
}

impl Session {
    /// The plugin this session runs.
    pub fn plugin(&self) -> &Plugin {
        &self.plugin
    }

    /// What this session's calls have cost so far.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// The files (paths relative to their granted folder) the sandbox refused as Quarry's own
    /// since the last look: hard links to Quarry's files, files of a copy of a data folder.
    pub fn take_refused_own(&mut self) -> Vec<String> {
        std::mem::take(&mut self.refused_own)
    }

    /// Lists one batch (WIT `list-docs`).
    pub fn list_docs(&mut self, checkpoint: Option<&str>) -> Result<SourceBatch, RuntimeError> {
        let plugin = self.plugin.clone();
        self.call("list-docs", |instance, store| {
            instance
                .source()
                .list_docs(store, checkpoint, &plugin.inner.limits)
        })
    }

    /// The sandbox paths of `changed` (host paths a watcher saw change): only those inside this
    /// session's granted folders and outside Quarry's own, each once.
    pub fn change_hints(&self, changed: &[PathBuf]) -> Vec<String> {
        change_hints::to_sandbox(&self.setup.mounts, &self.plugin.inner.protected, changed)
    }

    /// What changed at `hints` (from [`Session::change_hints`]; WIT `list-changes`, called with
    /// at most [`MAX_HINTS_PER_CALL`] at a time): a batch of changes per call, or `None` as soon
    /// as the plugin cannot tell from the paths (or its WIT version has no such call) and a full
    /// listing is needed.
    pub fn list_changes(
        &mut self,
        hints: &[String],
    ) -> Result<Option<Vec<SourceBatch>>, RuntimeError> {
        if !self.plugin.inner.version.has_list_changes() {
            return Ok(None);
        }
        let plugin = self.plugin.clone();
        let mut batches = Vec::new();
        for some in hints.chunks(MAX_HINTS_PER_CALL) {
            let batch = self.call("list-changes", |instance, store| {
                instance
                    .source()
                    .list_changes(store, some, &plugin.inner.limits)
            })?;
            match batch {
                Some(batch) => batches.push(batch),
                None => return Ok(None),
            }
        }
        Ok(Some(batches))
    }

    /// Extracts the text of a document (WIT `fetch-content`).
    pub fn fetch_content(
        &mut self,
        id: &DocId,
        locator: &str,
    ) -> Result<ExtractedText, RuntimeError> {
        let plugin = self.plugin.clone();
        self.call("fetch-content", |instance, store| {
            instance
                .source()
                .fetch_content(store, (id, locator), &plugin.inner.limits)
        })
    }

    /// Extracts the texts of all `docs`, as [`Session::fetch_some`] does (several small ones in
    /// one call): one result for each, in order. For a few documents; a sync, which must bound
    /// the texts it holds and see a stop, calls `fetch_some` itself.
    pub fn fetch_all(&mut self, docs: &[ToFetch<'_>]) -> Vec<Result<ExtractedText, RuntimeError>> {
        let mut texts = Vec::with_capacity(docs.len());
        while texts.len() < docs.len() {
            texts.extend(self.fetch_some(&docs[texts.len()..]));
        }
        texts
    }

    /// Extracts the texts of the first of `docs`: the run of those small by their listed size at
    /// the start, a few dozen at most, in one call (WIT `fetch-contents`, since 0.3.0), or else
    /// the first alone (`fetch-content`). Returns one result for each document it took, in
    /// order (at least one unless `docs` is empty); call again with the rest. Should a call for
    /// several fail as a whole, each of them is asked for on its own, so a document that cannot
    /// be read fails alone. Taking a few at a time bounds the texts held at once.
    pub fn fetch_some(&mut self, docs: &[ToFetch<'_>]) -> Vec<Result<ExtractedText, RuntimeError>> {
        let together = if self.plugin.inner.version.fetches_together() {
            together_len(docs)
        } else {
            0
        };
        match docs {
            [] => Vec::new(),
            [first, ..] if together < 2 => vec![self.fetch_content(first.id, first.locator)],
            _ => {
                let docs = &docs[..together];
                self.fetch_together(docs).unwrap_or_else(|| {
                    docs.iter()
                        .map(|d| self.fetch_content(d.id, d.locator))
                        .collect()
                })
            }
        }
    }

    /// One `fetch-contents` call for `docs`; `None` when it failed as a whole.
    fn fetch_together(
        &mut self,
        docs: &[ToFetch<'_>],
    ) -> Option<Vec<Result<ExtractedText, RuntimeError>>> {
        let plugin = self.plugin.clone();
        let refs: Vec<(&DocId, &str)> = docs.iter().map(|d| (d.id, d.locator)).collect();
        let answers = match self.call("fetch-contents", |instance, store| {
            instance
                .source()
                .fetch_contents(store, &refs, &plugin.inner.limits)
        }) {
            Ok(Some(answers)) => answers,
            Ok(None) => return None,
            Err(e) => {
                tracing::debug!(plugin = %plugin.id(), "fetch-contents failed, asking one by one: {e}");
                return None;
            }
        };
        let mut broken = false;
        let texts = answers
            .into_iter()
            .map(|answer| {
                answer.map_err(|error| {
                    // Counted as `call` counts a whole call: the plugin's own error is a failed
                    // call, output that breaks the contract is not (it drops the instance).
                    let kind = match error {
                        CallError::Guest(error) => {
                            self.usage.failed_calls += 1;
                            RuntimeErrorKind::Guest { error }
                        }
                        CallError::Output(message) => {
                            broken = true;
                            RuntimeErrorKind::Output { message }
                        }
                    };
                    RuntimeError::in_call(plugin.id(), "fetch-contents", kind)
                        .redacted(&self.setup.secrets)
                })
            })
            .collect();
        if broken {
            // It answered, but broke the contract: not trusted for the next call.
            self.live = None;
        }
        Some(texts)
    }

    /// Reads up to `max_bytes` (capped by the limits) of the original file from `offset`
    /// (WIT `read-file`).
    pub fn read_file(
        &mut self,
        id: &DocId,
        locator: &str,
        offset: u64,
        max_bytes: u32,
    ) -> Result<FileChunk, RuntimeError> {
        let max_bytes = max_bytes.min(self.plugin.inner.limits.max_chunk_bytes);
        self.call("read-file", |instance, store| {
            instance
                .source()
                .read_file(store, (id, locator), (offset, max_bytes))
        })
    }

    /// Reads by OCR `pages` (counted from 1, ascending) of a document (WIT `read-scans`): the
    /// pages read, in order, at least the first; the host's `recognize-text` answers only
    /// during this call. `None` when the plugin's version has no such call.
    pub fn read_scans(
        &mut self,
        id: &DocId,
        locator: &str,
        pages: &[u32],
    ) -> Result<Option<Vec<ScannedPage>>, RuntimeError> {
        let limits = self.plugin.inner.limits.clone();
        self.call("read-scans", |instance, store| {
            store.data_mut().ocr.set_open(true);
            let scans = instance
                .source()
                .read_scans(store, (id, locator), pages, &limits);
            store.data_mut().ocr.set_open(false);
            scans
        })
    }

    /// Whether the source changed after `checkpoint` (WIT `watch`), waiting at most `max_wait`
    /// for it; the call may take that long besides its usual time. [`Watched::Unsupported`]
    /// for a plugin whose version has no such call (before 0.5.0).
    pub fn watch(
        &mut self,
        checkpoint: Option<&str>,
        max_wait: Duration,
    ) -> Result<Watched, RuntimeError> {
        if !self.plugin.inner.version.watches() {
            return Ok(Watched::Unsupported);
        }
        let max_wait_ms = u32::try_from(max_wait.as_millis()).unwrap_or(u32::MAX);
        let watched = self.call_unredacted("watch", max_wait, |instance, store| {
            instance.source().watch(store, checkpoint, max_wait_ms)
        });
        watched
            .map(|w| w.unwrap_or(Watched::Unsupported))
            .map_err(|e| e.redacted(&self.setup.secrets))
    }

    /// Runs one call on the live instance (creating it first if needed), under the deadline.
    /// A host-side failure (output that breaks the contract too) drops the instance; the plugin's
    /// own error does not. An error never carries a secret setting's value, whatever the plugin
    /// said.
    fn call<R>(
        &mut self,
        call: &'static str,
        f: impl FnOnce(&ConnectorInstance, &mut Store<HostState>) -> Answer<R>,
    ) -> Result<R, RuntimeError> {
        self.call_unredacted(call, Duration::ZERO, f)
            .map_err(|e| e.redacted(&self.setup.secrets))
    }

    /// Runs one call that may take `longer` than the plugin's call timeout (`watch`).
    fn call_unredacted<R>(
        &mut self,
        call: &'static str,
        longer: Duration,
        f: impl FnOnce(&ConnectorInstance, &mut Store<HostState>) -> Answer<R>,
    ) -> Result<R, RuntimeError> {
        let ticks = deadline_ticks(self.plugin.inner.limits.call_timeout + longer);
        let _deadline_running = self.plugin.inner.ticker.call_running();
        // A call's CPU time includes making its instance, when it needs a new one.
        let cpu_before = thread_cpu_time();
        self.usage.calls += 1;
        let mut live = match self.live.take() {
            Some(live) => live,
            None => self.instantiate(call, ticks).inspect_err(|_| {
                self.usage.failed_calls += 1;
                self.usage.cpu += thread_cpu_time().saturating_sub(cpu_before);
            })?,
        };
        live.store.set_epoch_deadline(ticks);
        live.store.data_mut().begin_call(longer);
        let result = f(&live.instance, &mut live.store);
        self.usage.cpu += thread_cpu_time().saturating_sub(cpu_before);
        let state = live.store.data_mut();
        self.refused_own.extend(state.files.take_refused_own());
        self.usage.network_bytes += state.streams.take_bytes();
        let mut refused = state.gate.take_refused();
        refused.extend(state.streams.take_refused());
        self.usage.peak_memory_bytes = self.usage.peak_memory_bytes.max(state.limiter.used);
        let outcome = match result {
            Ok(Ok(value)) => {
                self.live = Some(live);
                return Ok(value);
            }
            // The instance answered, but broke the contract: it is not trusted for the next call.
            // Not a failed call, and not one the network refusals explain.
            Ok(Err(CallError::Output(message))) => {
                return Err(RuntimeError::in_call(
                    self.plugin.id(),
                    call,
                    RuntimeErrorKind::Output { message },
                ));
            }
            Ok(Err(CallError::Guest(error))) => {
                self.live = Some(live);
                RuntimeError::in_call(self.plugin.id(), call, RuntimeErrorKind::Guest { error })
            }
            // The instance is dropped: after a trap its state cannot be trusted.
            Err(error) => classify(
                self.plugin.id(),
                &self.plugin.inner.limits,
                call,
                &error,
                Some(live.store.data()),
            ),
        };
        self.usage.failed_calls += 1;
        if refused.is_empty() {
            return Err(outcome);
        }
        // The plugin failed after the host refused it a host: that refusal is the news.
        Err(RuntimeError::in_call(
            self.plugin.id(),
            call,
            RuntimeErrorKind::NetworkDenied {
                refused,
                granted: self.setup.hosts.clone(),
                plugin_said: outcome.to_string(),
            },
        ))
    }

    fn instantiate(&self, call: &'static str, ticks: u64) -> Result<Live, RuntimeError> {
        let inner = &self.plugin.inner;
        let stdio = TailCapture::new(MAX_STDIO_BYTES);
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdout(stdio.clone())
            .stderr(stdio.clone())
            .allow_blocking_current_thread(true);
        for (host, guest) in &self.setup.mounts {
            wasi.preopened_dir(host, guest, FsPerms::ReadOnly)
                .map_err(|e| {
                    RuntimeError::of(
                        self.plugin.id(),
                        RuntimeErrorKind::Config {
                            message: format!(
                                "cannot open the granted folder {}: {e:#}",
                                host.display()
                            ),
                        },
                    )
                })?;
        }
        let mounts = self.setup.mounts.iter().map(|(host, _)| host.clone());
        let mut state = HostState::new(
            wasi.build(),
            FileGuard::new(inner.id.clone(), inner.protected.clone(), mounts.collect()),
            NetworkGate::new(
                HostGrant::new(&self.setup.hosts),
                self.http_tls.clone(),
                self.setup.secrets.clone(),
            ),
            StreamGate::new(
                &self.setup.hosts,
                self.tls.clone(),
                self.setup.plaintext.clone(),
                self.setup.secrets.clone(),
            ),
            Reports::new(
                inner.id.clone(),
                self.setup.config.clone(),
                self.progress.clone(),
                stdio,
                self.setup.secrets.clone(),
            ),
            MemoryLimiter::new(inner.limits.memory_bytes),
            OcrGate::new(inner.ocr.clone()),
            inner.limits.call_timeout,
        )
        .map_err(|e| classify(self.plugin.id(), &self.plugin.inner.limits, call, &e, None))?;
        state.begin_call(Duration::ZERO);
        let mut store = Store::new(&inner.engine, state);
        store.limiter(|state| &mut state.limiter);
        store.epoch_deadline_trap();
        store.set_epoch_deadline(ticks);
        match inner.pre.instantiate(&mut store) {
            Ok(instance) => Ok(Live { store, instance }),
            Err(error) => Err(classify(
                self.plugin.id(),
                &self.plugin.inner.limits,
                call,
                &error,
                Some(store.data()),
            )),
        }
    }
}
