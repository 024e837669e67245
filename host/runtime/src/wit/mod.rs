//! The versions of the connector contract (`quarry:connector`, the WIT in `wit/`) this host
//! runs, one module each, as in Zed's `extension_host`: a version's bindings, its host interface,
//! the checks and conversions of what its plugins return, and its calls. A released WIT folder
//! never changes, and plugins built against any supported version keep working.
//!
//! The rest of the runtime sees only [`ConnectorPre`] and [`ConnectorInstance`], and calls a
//! plugin through the [`Source`] trait in version-independent types. A new version is a new
//! module implementing [`Source`], a variant of each enum (the compiler then asks for its arm in
//! each `match`), its `add_to_linker` in [`add_to_linker`], and its entry in
//! [`SUPPORTED_WIT_VERSIONS`].

/// The four `source` calls every version has had since 0.1.0, as methods of [`Source`], for a
/// version module whose bindings name them as 0.1.0's do (with `convert`, `answer` and
/// `doc_ref` in scope: `v0_1_0/calls.rs`, compiled in each).
macro_rules! source_calls_since_0_1_0 {
    () => {
        fn list_docs(
            &self,
            store: &mut Store<HostState>,
            checkpoint: Option<&str>,
            limits: &Limits,
        ) -> Answer<SourceBatch> {
            let batch = self
                .quarry_connector_source()
                .call_list_docs(store, checkpoint);
            answer(batch, |batch| convert::batch(batch, limits))
        }

        fn fetch_content(
            &self,
            store: &mut Store<HostState>,
            doc: (&DocId, &str),
            limits: &Limits,
        ) -> Answer<ExtractedText> {
            let content = self
                .quarry_connector_source()
                .call_fetch_content(store, &doc_ref(doc));
            answer(content, |content| convert::content(content, limits))
        }

        fn read_file(
            &self,
            store: &mut Store<HostState>,
            doc: (&DocId, &str),
            (offset, max_bytes): (u64, u32),
        ) -> Answer<FileChunk> {
            let chunk = self.quarry_connector_source().call_read_file(
                store,
                &doc_ref(doc),
                offset,
                max_bytes,
            );
            answer(chunk, |chunk| convert::chunk(chunk, max_bytes))
        }

        fn validate_config(
            &self,
            store: &mut Store<HostState>,
            config: &[(String, String)],
        ) -> Answer<()> {
            let checked = self
                .quarry_connector_source()
                .call_validate_config(store, config);
            answer(checked, Ok)
        }
    };
}

/// `list-changes`, which versions have had since 0.2.0, as a method of [`Source`] (with
/// `convert`, `answer` and `changes_only` in scope).
macro_rules! source_calls_since_0_2_0 {
    () => {
        fn list_changes(
            &self,
            store: &mut Store<HostState>,
            paths: &[String],
            limits: &Limits,
        ) -> Answer<Option<SourceBatch>> {
            let batch = self
                .quarry_connector_source()
                .call_list_changes(store, paths);
            answer(batch, |batch| {
                batch
                    .map(|batch| convert::batch(batch, limits).and_then(changes_only))
                    .transpose()
            })
        }
    };
}

/// The three functions of `quarry:connector/host` every version has had since 0.1.0, as methods
/// of its `host::Host` on [`HostState`] (with `convert` and `types` in scope).
macro_rules! host_calls_since_0_1_0 {
    () => {
        fn log(&mut self, level: types::LogLevel, message: String) {
            self.log_line(convert::log_level(level), &message);
        }

        fn progress(&mut self, message: String, done: u64, total: Option<u64>) {
            self.report_progress(&message, done, total);
        }

        fn config(&mut self) -> Vec<(String, String)> {
            self.sandbox.config.clone()
        }
    };
}

mod v0_1_0;
mod v0_2_0;
mod v0_3_0;

use quarry_core::{Coverage, DocId, ExtractedText, FileChunk, SourceBatch};
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{Engine, Store};

use crate::error::{GuestError, RuntimeError, RuntimeErrorKind};
use crate::host_state::HostState;
use crate::limits::Limits;
use crate::manifest::Manifest;

/// WIT package versions this host can run.
pub const SUPPORTED_WIT_VERSIONS: &[&str] = &[v0_1_0::VERSION, v0_2_0::VERSION, v0_3_0::VERSION];

/// The WIT package name whose `source` interface a connector exports.
pub const WIT_PACKAGE: &str = "quarry:connector";

/// The functions of `quarry:connector/source` in every version so far (0.2.0 adds
/// `list-changes`, 0.3.0 `fetch-contents`: [`source_functions`]).
const SOURCE_FUNCTIONS: [&str; 4] = ["list-docs", "fetch-content", "read-file", "validate-config"];

/// The functions of `quarry:connector/source` in `version` (one of [`SUPPORTED_WIT_VERSIONS`]).
pub fn source_functions(version: &str) -> Vec<&'static str> {
    let mut functions = SOURCE_FUNCTIONS.to_vec();
    if version != v0_1_0::VERSION {
        functions.insert(1, "list-changes");
    }
    if fetches_together(version) {
        functions.insert(3, "fetch-contents");
    }
    functions
}

/// Whether plugins of `version` can extract several documents in one call (`fetch-contents`,
/// since 0.3.0).
pub(crate) fn fetches_together(version: &str) -> bool {
    ![v0_1_0::VERSION, v0_2_0::VERSION].contains(&version)
}

/// Links the host interface of every supported version.
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    v0_1_0::add_to_linker(linker)?;
    v0_2_0::add_to_linker(linker)?;
    v0_3_0::add_to_linker(linker)
}

/// Checks that an answer to `list-changes` is what the contract says: a listing of changes, in
/// one batch.
fn changes_only(batch: SourceBatch) -> Result<SourceBatch, String> {
    if batch.coverage != Coverage::Changes || batch.more {
        return Err(
            "list-changes must answer one batch of coverage `changes` with `more` false".to_owned(),
        );
    }
    Ok(batch)
}

/// How a call into a plugin ended: `Err` when the host stopped it (a trap, the deadline, the
/// memory cap), `Ok(Err(_))` when the plugin returned without a usable value.
pub(crate) type Answer<T> = wasmtime::Result<Result<T, CallError>>;

/// A call the plugin returned from without a usable value.
pub(crate) enum CallError {
    /// The plugin's own error (WIT `connector-error`).
    Guest(GuestError),
    /// An answer that breaks the contract (too large, a bad id); says what was wrong.
    Output(String),
}

/// A component linked against the host, ready to instantiate, in the WIT version it exports.
pub(crate) enum ConnectorPre {
    /// `quarry:connector@0.1.0`.
    V0_1_0(v0_1_0::ConnectorPre<HostState>),
    /// `quarry:connector@0.2.0`.
    V0_2_0(v0_2_0::ConnectorPre<HostState>),
    /// `quarry:connector@0.3.0`.
    V0_3_0(v0_3_0::ConnectorPre<HostState>),
}

impl ConnectorPre {
    /// Finds the exports of `version` (one of [`SUPPORTED_WIT_VERSIONS`], as
    /// [`check_wit_version`] found it) in the linked component `pre`.
    pub(crate) fn new(version: &str, pre: InstancePre<HostState>) -> wasmtime::Result<Self> {
        match version {
            v0_1_0::VERSION => Ok(ConnectorPre::V0_1_0(v0_1_0::ConnectorPre::new(pre)?)),
            v0_2_0::VERSION => Ok(ConnectorPre::V0_2_0(v0_2_0::ConnectorPre::new(pre)?)),
            v0_3_0::VERSION => Ok(ConnectorPre::V0_3_0(v0_3_0::ConnectorPre::new(pre)?)),
            other => wasmtime::bail!("this host does not run {WIT_PACKAGE}@{other}"),
        }
    }

    /// A new instance in `store`.
    pub(crate) fn instantiate(
        &self,
        store: &mut Store<HostState>,
    ) -> wasmtime::Result<ConnectorInstance> {
        match self {
            ConnectorPre::V0_1_0(pre) => pre.instantiate(store).map(ConnectorInstance::V0_1_0),
            ConnectorPre::V0_2_0(pre) => pre.instantiate(store).map(ConnectorInstance::V0_2_0),
            ConnectorPre::V0_3_0(pre) => pre.instantiate(store).map(ConnectorInstance::V0_3_0),
        }
    }
}

/// An instance of a connector, in the WIT version it was built against. Each method is the WIT
/// function of the same name, its answer checked against the contract.
pub(crate) enum ConnectorInstance {
    /// `quarry:connector@0.1.0`.
    V0_1_0(v0_1_0::Connector),
    /// `quarry:connector@0.2.0`.
    V0_2_0(v0_2_0::Connector),
    /// `quarry:connector@0.3.0`.
    V0_3_0(v0_3_0::Connector),
}

impl ConnectorInstance {
    /// Its `source` interface.
    pub(crate) fn source(&self) -> &dyn Source {
        match self {
            ConnectorInstance::V0_1_0(c) => c,
            ConnectorInstance::V0_2_0(c) => c,
            ConnectorInstance::V0_3_0(c) => c,
        }
    }
}

/// The `source` interface of every version, in version-independent types: each method is the
/// WIT function of the same name, its answer checked against the contract.
pub(crate) trait Source {
    /// One batch of the listing after `checkpoint`, within `limits`.
    fn list_docs(
        &self,
        store: &mut Store<HostState>,
        checkpoint: Option<&str>,
        limits: &Limits,
    ) -> Answer<SourceBatch>;

    /// What changed at `paths` (sandbox paths), within `limits`; `None` when the plugin cannot
    /// tell from the paths (a full listing is needed). Versions before 0.2.0 never can.
    fn list_changes(
        &self,
        _store: &mut Store<HostState>,
        _paths: &[String],
        _limits: &Limits,
    ) -> Answer<Option<SourceBatch>> {
        Ok(Ok(None))
    }

    /// The text of a document, within `limits`.
    fn fetch_content(
        &self,
        store: &mut Store<HostState>,
        doc: (&DocId, &str),
        limits: &Limits,
    ) -> Answer<ExtractedText>;

    /// The texts of several documents in one call, each checked as [`Source::fetch_content`]
    /// checks one, within `limits`: one result per document, in order. `None` when the version
    /// has no such call (before 0.3.0): ask for one document at a time.
    fn fetch_contents(
        &self,
        _store: &mut Store<HostState>,
        _docs: &[(&DocId, &str)],
        _limits: &Limits,
    ) -> Answer<Option<Vec<Result<ExtractedText, CallError>>>> {
        Ok(Ok(None))
    }

    /// At most `range.1` bytes of the original file from offset `range.0`.
    fn read_file(
        &self,
        store: &mut Store<HostState>,
        doc: (&DocId, &str),
        range: (u64, u32),
    ) -> Answer<FileChunk>;

    /// The plugin's verdict on `config`.
    fn validate_config(
        &self,
        store: &mut Store<HostState>,
        config: &[(String, String)],
    ) -> Answer<()>;
}

/// Finds the `quarry:connector/source` export, checks its version against the host's and the
/// manifest's, and that it has every function. Returns the version.
pub(crate) fn check_wit_version(
    engine: &Engine,
    component: &Component,
    manifest: &Manifest,
) -> Result<&'static str, RuntimeError> {
    let refused = |message: String| {
        RuntimeError::of(
            manifest.id.clone(),
            RuntimeErrorKind::WitVersion { message },
        )
    };
    let prefix = format!("{WIT_PACKAGE}/source@");
    let exports: Vec<String> = component
        .component_type()
        .exports(engine)
        .map(|(name, _)| name.to_owned())
        .collect();
    let Some(found) = exports.iter().find_map(|n| n.strip_prefix(&prefix)) else {
        return Err(refused(format!(
            "the component does not export {WIT_PACKAGE}/source (it exports: {}); build it against the WIT in wit/connector@{}",
            if exports.is_empty() {
                "nothing".to_owned()
            } else {
                exports.join(", ")
            },
            SUPPORTED_WIT_VERSIONS.join(", ")
        )));
    };
    let Some(&version) = SUPPORTED_WIT_VERSIONS.iter().find(|v| **v == found) else {
        return Err(refused(format!(
            "the component was built against {WIT_PACKAGE}@{found}, but this host runs {WIT_PACKAGE}@{}; rebuild it against a supported version",
            SUPPORTED_WIT_VERSIONS.join(", @")
        )));
    };
    let interface = format!("{prefix}{found}");
    if let Some(ComponentItem::ComponentInstance(instance)) = component
        .component_type()
        .get_export(engine, &interface)
        .map(|e| e.ty)
    {
        let has: Vec<&str> = instance.exports(engine).map(|(name, _)| name).collect();
        let missing: Vec<&str> = source_functions(version)
            .into_iter()
            .filter(|f| !has.contains(f))
            .collect();
        if !missing.is_empty() {
            return Err(refused(format!(
                "the component's {interface} lacks {} (it has: {}); implement every function of the interface",
                missing.join(", "),
                has.join(", ")
            )));
        }
    }
    if found != manifest.wit {
        return Err(refused(format!(
            "the component was built against {WIT_PACKAGE}@{found}, but its manifest says wit = \"{}\"; make them agree",
            manifest.wit
        )));
    }
    Ok(version)
}
