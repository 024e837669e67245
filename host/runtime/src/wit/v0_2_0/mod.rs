//! `quarry:connector@0.2.0`: its bindings, its host interface (`host.rs`), the checks and
//! conversions of what its plugins return (`convert.rs`, shared with 0.1.0), and the five calls
//! of its `source` interface in version-independent types: 0.1.0's four and `list-changes`.

mod bindings;

// The types of 0.2.0 are those of 0.1.0 (same names, same fields), so the same checks and
// conversions compile against this version's bindings: one source for both keeps them in step.
// So are its host interface and what the calls share.
#[path = "../v0_1_0/calls.rs"]
#[allow(clippy::duplicate_mod)] // compiled against each version's bindings, on purpose
mod calls;
#[path = "../v0_1_0/convert.rs"]
#[allow(clippy::duplicate_mod)]
mod convert;
#[path = "../v0_1_0/host.rs"]
#[allow(clippy::duplicate_mod)]
mod host;

use quarry_core::{DocId, ExtractedText, FileChunk, SourceBatch};
use wasmtime::Store;
use wasmtime::component::{HasSelf, Linker};

pub(super) use self::bindings::{Connector, ConnectorPre};
use self::calls::{answer, doc_ref};
use super::source::{Answer, Source, changes_only};
use crate::limits::Limits;
use crate::sandbox::instance::HostState;

/// Links this version's host interface (`quarry:connector/host@0.2.0` and its types).
pub(super) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    Connector::add_to_linker::<HostState, HasSelf<HostState>>(linker, |s| s)
}

impl Source for Connector {
    source_calls_since_0_1_0!();
    source_calls_since_0_2_0!();
}
