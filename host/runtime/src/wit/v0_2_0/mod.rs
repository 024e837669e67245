//! `quarry:connector@0.2.0`: its bindings, its host interface (`host.rs`), the checks and
//! conversions of what its plugins return (`convert.rs`, shared with 0.1.0), and the five calls
//! of its `source` interface in version-independent types: 0.1.0's four and `list-changes`.

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

use self::calls::{answer, doc_ref};
use super::{Answer, Source, changes_only};
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
    source_calls_since_0_1_0!();
    source_calls_since_0_2_0!();
}
