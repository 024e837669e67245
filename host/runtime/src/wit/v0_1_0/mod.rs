//! `quarry:connector@0.1.0`: its bindings, its host interface (`host.rs`), the checks and
//! conversions of what its plugins return (`convert.rs`), and the four calls of its `source`
//! interface in version-independent types.

mod bindings;
mod calls;
mod convert;
mod host;

use quarry_core::{DocId, ExtractedText, FileChunk, SourceBatch};
use wasmtime::Store;
use wasmtime::component::{HasSelf, Linker};

pub(super) use self::bindings::{Connector, ConnectorPre};
use self::calls::{answer, doc_ref};
use super::source::{Answer, Source};
use crate::limits::Limits;
use crate::sandbox::instance::HostState;

/// Links this version's host interface (`quarry:connector/host@0.1.0` and its types).
pub(super) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    Connector::add_to_linker::<HostState, HasSelf<HostState>>(linker, |s| s)
}

impl Source for Connector {
    source_calls_since_0_1_0!();
}
