//! The host interface of 0.1.0 (`quarry:connector/host`; 0.2.0's is the same), on the
//! version-independent [`HostState`].

use super::convert;
use super::quarry::connector::{host, types};
use crate::host_state::HostState;

impl types::Host for HostState {}

impl host::Host for HostState {
    fn log(&mut self, level: types::LogLevel, message: String) {
        self.log_line(convert::log_level(level), &message);
    }

    fn progress(&mut self, message: String, done: u64, total: Option<u64>) {
        self.report_progress(&message, done, total);
    }

    fn config(&mut self) -> Vec<(String, String)> {
        self.sandbox.config.clone()
    }
}
