//! The host interface of 0.3.0 (`quarry:connector/host`): 0.1.0's, and the bulk reads
//! (`read-folder`, `read-file-start`, in `sandbox/files/bulk.rs`), on the version-independent
//! [`HostState`].

use super::bindings::quarry::connector::{host, types};
use super::convert;
use crate::sandbox::files::bulk::{EntryKind, ReadError};
use crate::sandbox::instance::HostState;

impl types::Host for HostState {}

impl host::Host for HostState {
    host_calls_since_0_1_0!();
    host_calls_since_0_3_0!();
}
