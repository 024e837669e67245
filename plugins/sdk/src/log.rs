//! Logging and progress reports to the host.

use crate::LogLevel;
use crate::bindings::quarry::connector::host;

/// Writes a line to the host's log, tagged with this plugin's id.
pub fn log(level: LogLevel, message: &str) {
    host::log(level, message);
}

/// Reports progress of the current call: `done` of `total` (if known) units, with a short message.
pub fn progress(message: &str, done: u64, total: Option<u64>) {
    host::progress(message, done, total);
}
