//! `quarry:connector@0.2.0`: its bindings, its host interface (`host.rs`), the checks and
//! conversions of what its plugins return (`convert.rs`, shared with 0.1.0), and the five calls
//! of its `source` interface in version-independent types: 0.1.0's four and `list-changes`.

// The types of 0.2.0 are those of 0.1.0 (same names, same fields), so the same checks and
// conversions compile against this version's bindings: one source for both keeps them in step.
#[path = "../v0_1_0/convert.rs"]
#[allow(clippy::duplicate_mod)] // compiled against each version's bindings, on purpose
mod convert;
mod host;

use quarry_core::{DocId, ExtractedText, FileChunk, SourceBatch};
use wasmtime::Store;
use wasmtime::component::{HasSelf, Linker};

use self::quarry::connector::types as wit;
use super::{Answer, CallError, Source, changes_only};
use crate::host_state::HostState;
use crate::limits::Limits;

wasmtime::component::bindgen!({
    path: "../../wit/connector@0.2.0",
    world: "connector",
});

/// The version, as a component's exports name it (`quarry:connector/source@0.2.0`).
pub(super) const VERSION: &str = "0.2.0";

/// Links this version's host interface (`quarry:connector/host@0.2.0` and its types).
pub(super) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    Connector::add_to_linker::<HostState, HasSelf<HostState>>(linker, |s| s)
}

impl Source for Connector {
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
        let chunk =
            self.quarry_connector_source()
                .call_read_file(store, &doc_ref(doc), offset, max_bytes);
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
}

fn doc_ref((id, locator): (&DocId, &str)) -> wit::DocRef {
    wit::DocRef {
        id: id.as_str().to_owned(),
        locator: locator.to_owned(),
    }
}

/// A call's result with the plugin's answer checked and converted by `check`, or its own error.
fn answer<W, T>(
    result: wasmtime::Result<Result<W, wit::ConnectorError>>,
    check: impl FnOnce(W) -> Result<T, String>,
) -> Answer<T> {
    Ok(match result? {
        Ok(value) => check(value).map_err(CallError::Output),
        Err(error) => Err(CallError::Guest(convert::guest_error(error))),
    })
}
