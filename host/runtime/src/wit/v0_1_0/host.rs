//! The host interface of 0.1.0 (`quarry:connector/host`; 0.2.0's is the same), on the
//! version-independent [`HostState`].

use super::bindings::quarry::connector::{host, types};
use super::convert;
use crate::sandbox::instance::HostState;

impl types::Host for HostState {}

impl host::Host for HostState {
    host_calls_since_0_1_0!();
}
