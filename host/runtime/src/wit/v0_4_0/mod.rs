//! `quarry:connector@0.4.0`: its bindings, its host interface (`host.rs`: 0.3.0's and
//! `recognize-text`), the checks and conversions of what its plugins return (`convert.rs`,
//! shared with 0.1.0), and the seven calls of its `source` interface in version-independent
//! types: 0.3.0's six and `read-scans`.

mod bindings;

// The types 0.4.0 shares with 0.1.0 have the same names and fields, so the same checks and
// conversions compile against this version's bindings, as for 0.2.0 and 0.3.0.
#[path = "../v0_1_0/calls.rs"]
#[allow(clippy::duplicate_mod)] // compiled against each version's bindings, on purpose
mod calls;
#[path = "../v0_1_0/convert.rs"]
#[allow(clippy::duplicate_mod)]
mod convert;
mod host;

use quarry_core::ocr::ScannedPage;
use quarry_core::{DocId, ExtractedText, FileChunk, SourceBatch};
use wasmtime::Store;
use wasmtime::component::{HasSelf, Linker};

pub(super) use self::bindings::{Connector, ConnectorPre};
use self::calls::{answer, checked, doc_ref};
use super::source::{Answer, CallError, Source, changes_only};
use crate::limits::Limits;
use crate::sandbox::instance::HostState;

/// Links this version's host interface (`quarry:connector/host@0.4.0` and its types).
pub(super) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    Connector::add_to_linker::<HostState, HasSelf<HostState>>(linker, |s| s)
}

impl Source for Connector {
    source_calls_since_0_1_0!();
    source_calls_since_0_2_0!();
    source_calls_since_0_3_0!();
    source_calls_since_0_4_0!();
}
