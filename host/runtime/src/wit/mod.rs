//! The versions of the connector contract (`quarry:connector`, the WIT in `wit/`) this host
//! runs, one module each, as in Zed's `extension_host`: a version's bindings, its host interface,
//! the checks and conversions of what its plugins return, and its calls. A released WIT folder
//! never changes, and plugins built against any supported version keep working.
//!
//! The rest of the runtime sees only [`ConnectorPre`] and [`ConnectorInstance`], and calls a
//! plugin through the [`Source`] trait in version-independent types (`source.rs`). A new
//! version is a variant of [`WitVersion`] with its entry in its list (`version.rs`), a new
//! module implementing [`Source`], a variant of each enum here (the compiler then asks for its
//! arm in each `match`), and its `add_to_linker` in [`add_to_linker`].

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

/// `fetch-contents`, which versions have had since 0.3.0, as a method of [`Source`] (with
/// `convert`, `checked` and `doc_ref` in scope).
macro_rules! source_calls_since_0_3_0 {
    () => {
        fn fetch_contents(
            &self,
            store: &mut Store<HostState>,
            docs: &[(&DocId, &str)],
            limits: &Limits,
        ) -> Answer<Option<Vec<Result<ExtractedText, CallError>>>> {
            let refs: Vec<_> = docs.iter().copied().map(doc_ref).collect();
            let answers = self
                .quarry_connector_source()
                .call_fetch_contents(store, &refs)?;
            if answers.len() != docs.len() {
                return Ok(Err(CallError::Output(format!(
                    "fetch-contents answered {} results for {} documents",
                    answers.len(),
                    docs.len()
                ))));
            }
            let texts = answers
                .into_iter()
                .map(|answer| checked(answer, |content| convert::content(content, limits)))
                .collect();
            Ok(Ok(Some(texts)))
        }
    };
}

/// `read-scans`, which versions have had since 0.4.0, as a method of [`Source`] (with
/// `answer`, `doc_ref` and `ScannedPage` in scope).
macro_rules! source_calls_since_0_4_0 {
    () => {
        fn read_scans(
            &self,
            store: &mut Store<HostState>,
            doc: (&DocId, &str),
            pages: &[u32],
            limits: &Limits,
        ) -> Answer<Option<Vec<ScannedPage>>> {
            let scans = self
                .quarry_connector_source()
                .call_read_scans(store, &doc_ref(doc), pages);
            answer(scans, |scans| {
                let pages_read = scans
                    .into_iter()
                    .map(|page| ScannedPage {
                        page: page.page,
                        text: page.text,
                        confidence: page.confidence,
                    })
                    .collect();
                super::source::scans_of(pages_read, pages, limits).map(Some)
            })
        }
    };
}

/// The bulk reads of `quarry:connector/host` versions have had since 0.3.0 (`read-folder`,
/// `read-file-start`, in `sandbox/files/bulk.rs`), as methods of its `host::Host` on
/// [`HostState`] (with `types`, `EntryKind` and `ReadError` in scope).
macro_rules! host_calls_since_0_3_0 {
    () => {
        fn read_folder(
            &mut self,
            path: String,
        ) -> Result<Vec<types::FolderEntry>, types::ReadError> {
            let read_error = |error: ReadError| match error {
                ReadError::NotFound => types::ReadError::NotFound,
                ReadError::Refused => types::ReadError::Refused,
                ReadError::WrongKind => types::ReadError::WrongKind,
                ReadError::TooLarge => types::ReadError::TooLarge,
                ReadError::Other => types::ReadError::Other,
            };
            let entries = self.files.read_folder(&path).map_err(read_error)?;
            Ok(entries
                .into_iter()
                .map(|entry| types::FolderEntry {
                    name: entry.name,
                    kind: match entry.kind {
                        EntryKind::File => types::EntryKind::File,
                        EntryKind::Folder => types::EntryKind::Folder,
                        EntryKind::Symlink => types::EntryKind::Symlink,
                        EntryKind::Other => types::EntryKind::Other,
                    },
                    size_bytes: entry.size_bytes,
                    modified_ns: entry.modified_ns,
                })
                .collect())
        }

        fn read_file_start(
            &mut self,
            path: String,
            max_bytes: u32,
        ) -> Result<(Vec<u8>, u64), types::ReadError> {
            self.files
                .read_file_start(&path, max_bytes)
                .map_err(|error| match error {
                    ReadError::NotFound => types::ReadError::NotFound,
                    ReadError::Refused => types::ReadError::Refused,
                    ReadError::WrongKind => types::ReadError::WrongKind,
                    ReadError::TooLarge => types::ReadError::TooLarge,
                    ReadError::Other => types::ReadError::Other,
                })
        }
    };
}

/// The three functions of `quarry:connector/host` every version has had since 0.1.0, as methods
/// of its `host::Host` on [`HostState`] (with `convert` and `types` in scope).
macro_rules! host_calls_since_0_1_0 {
    () => {
        fn log(&mut self, level: types::LogLevel, message: String) {
            self.reports.log_line(convert::log_level(level), &message);
        }

        fn progress(&mut self, message: String, done: u64, total: Option<u64>) {
            self.reports.report_progress(&message, done, total);
        }

        fn config(&mut self) -> Vec<(String, String)> {
            self.reports.config.clone()
        }
    };
}

pub(crate) mod source;
mod v0_1_0;
mod v0_2_0;
mod v0_3_0;
mod v0_4_0;
mod v0_5_0;
pub(crate) mod version;

use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{Engine, Store};

use self::source::Source;
use self::version::WitVersion;
use crate::error::{RuntimeError, RuntimeErrorKind};
use crate::manifest::Manifest;
use crate::sandbox::instance::HostState;

/// The WIT package name whose `source` interface a connector exports.
pub const WIT_PACKAGE: &str = "quarry:connector";

/// Links the host interface of every supported version.
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    v0_1_0::add_to_linker(linker)?;
    v0_2_0::add_to_linker(linker)?;
    v0_3_0::add_to_linker(linker)?;
    v0_4_0::add_to_linker(linker)?;
    v0_5_0::add_to_linker(linker)
}

/// A component linked against the host, ready to instantiate, in the WIT version it exports.
pub(crate) enum ConnectorPre {
    /// `quarry:connector@0.1.0`.
    V0_1_0(v0_1_0::ConnectorPre<HostState>),
    /// `quarry:connector@0.2.0`.
    V0_2_0(v0_2_0::ConnectorPre<HostState>),
    /// `quarry:connector@0.3.0`.
    V0_3_0(v0_3_0::ConnectorPre<HostState>),
    /// `quarry:connector@0.4.0`.
    V0_4_0(v0_4_0::ConnectorPre<HostState>),
    /// `quarry:connector@0.5.0`.
    V0_5_0(v0_5_0::ConnectorPre<HostState>),
}

impl ConnectorPre {
    /// Finds the exports of `version` (as [`check_wit_version`] found it) in the linked
    /// component `pre`.
    pub(crate) fn new(version: WitVersion, pre: InstancePre<HostState>) -> wasmtime::Result<Self> {
        Ok(match version {
            WitVersion::V0_1_0 => ConnectorPre::V0_1_0(v0_1_0::ConnectorPre::new(pre)?),
            WitVersion::V0_2_0 => ConnectorPre::V0_2_0(v0_2_0::ConnectorPre::new(pre)?),
            WitVersion::V0_3_0 => ConnectorPre::V0_3_0(v0_3_0::ConnectorPre::new(pre)?),
            WitVersion::V0_4_0 => ConnectorPre::V0_4_0(v0_4_0::ConnectorPre::new(pre)?),
            WitVersion::V0_5_0 => ConnectorPre::V0_5_0(v0_5_0::ConnectorPre::new(pre)?),
        })
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
            ConnectorPre::V0_4_0(pre) => pre.instantiate(store).map(ConnectorInstance::V0_4_0),
            ConnectorPre::V0_5_0(pre) => pre.instantiate(store).map(ConnectorInstance::V0_5_0),
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
    /// `quarry:connector@0.4.0`.
    V0_4_0(v0_4_0::Connector),
    /// `quarry:connector@0.5.0`.
    V0_5_0(v0_5_0::Connector),
}

impl ConnectorInstance {
    /// Its `source` interface.
    pub(crate) fn source(&self) -> &dyn Source {
        match self {
            ConnectorInstance::V0_1_0(c) => c,
            ConnectorInstance::V0_2_0(c) => c,
            ConnectorInstance::V0_3_0(c) => c,
            ConnectorInstance::V0_4_0(c) => c,
            ConnectorInstance::V0_5_0(c) => c,
        }
    }
}

/// Finds the `quarry:connector/source` export, checks its version against the host's and the
/// manifest's, and that it has every function. Returns the version.
pub(crate) fn check_wit_version(
    engine: &Engine,
    component: &Component,
    manifest: &Manifest,
) -> Result<WitVersion, RuntimeError> {
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
            WitVersion::all_joined(", ")
        )));
    };
    let Some(version) = WitVersion::parse(found) else {
        return Err(refused(format!(
            "the component was built against {WIT_PACKAGE}@{found}, but this host runs {WIT_PACKAGE}@{}; rebuild it against a supported version",
            WitVersion::all_joined(", @")
        )));
    };
    let interface = format!("{prefix}{found}");
    if let Some(ComponentItem::ComponentInstance(instance)) = component
        .component_type()
        .get_export(engine, &interface)
        .map(|e| e.ty)
    {
        let has: Vec<&str> = instance.exports(engine).map(|(name, _)| name).collect();
        let missing: Vec<&str> = version
            .source_functions()
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
