//! `quarry:connector@0.5.0`: its bindings, its host interfaces (`host`: 0.4.0's, compiled from
//! `v0_4_0/host.rs`; `network`: the streams, `network.rs`), the checks and conversions of what
//! its plugins return (`convert.rs`, shared with 0.1.0), and the eight calls of its `source`
//! interface in version-independent types: 0.4.0's seven and `watch`.

mod bindings;

// The types 0.5.0 shares with 0.1.0 have the same names and fields, so the same checks and
// conversions compile against this version's bindings, as for 0.2.0 to 0.4.0; so does 0.4.0's
// host interface.
#[path = "../v0_1_0/calls.rs"]
#[allow(clippy::duplicate_mod)] // compiled against each version's bindings, on purpose
mod calls;
#[path = "../v0_1_0/convert.rs"]
#[allow(clippy::duplicate_mod)]
mod convert;
#[path = "../v0_4_0/host.rs"]
#[allow(clippy::duplicate_mod)]
mod host;
mod network;

use quarry_core::ocr::ScannedPage;
use quarry_core::{DocId, ExtractedText, FileChunk, SourceBatch};
use wasmtime::Store;
use wasmtime::component::{HasSelf, Linker};

use self::bindings::quarry::connector::types::WatchOutcome;
pub(super) use self::bindings::{Connector, ConnectorPre};
use self::calls::{answer, checked, doc_ref};
use super::source::{Answer, CallError, Source, Watched, changes_only};
use crate::limits::Limits;
use crate::sandbox::instance::HostState;

/// Links this version's host interfaces (`quarry:connector/host@0.5.0`, `network@0.5.0` and
/// their types).
pub(super) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    Connector::add_to_linker::<HostState, HasSelf<HostState>>(linker, |s| s)
}

impl Source for Connector {
    source_calls_since_0_1_0!();
    source_calls_since_0_2_0!();
    source_calls_since_0_3_0!();
    source_calls_since_0_4_0!();

    fn watch(
        &self,
        store: &mut Store<HostState>,
        checkpoint: Option<&str>,
        max_wait_ms: u32,
    ) -> Answer<Option<Watched>> {
        let outcome = self
            .quarry_connector_source()
            .call_watch(store, checkpoint, max_wait_ms);
        answer(outcome, |outcome| {
            Ok(Some(match outcome {
                WatchOutcome::Changed => Watched::Changed,
                WatchOutcome::Quiet => Watched::Quiet,
                WatchOutcome::Unsupported => Watched::Unsupported,
            }))
        })
    }
}
