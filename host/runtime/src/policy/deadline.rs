//! When the running call must end. The epoch deadline interrupts running WebAssembly; the
//! sandbox's waits (`sandbox/waits.rs`) and HTTP (`sandbox/http.rs`) end at the same instant.

use std::time::{Duration, Instant};

/// How often the engine's epoch advances; deadlines are measured in these ticks.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The error that stops a call whose deadline passed while it waited in the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DeadlineReached;

impl std::fmt::Display for DeadlineReached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the call's deadline passed while it waited")
    }
}

impl std::error::Error for DeadlineReached {}

/// When the running call must end; `None` between calls.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CallDeadline(Option<Instant>);

impl CallDeadline {
    /// The deadline of a call starting now that may take `limit`.
    pub(crate) fn starting_now(limit: Duration) -> CallDeadline {
        CallDeadline(Instant::now().checked_add(limit))
    }

    /// Time left until the deadline: zero once it passed, and outside a call.
    pub(crate) fn left(self) -> Duration {
        self.0.map_or(Duration::ZERO, |d| {
            d.saturating_duration_since(Instant::now())
        })
    }

    /// The instant itself (now, outside a call).
    pub(crate) fn at(self) -> Instant {
        self.0.unwrap_or_else(Instant::now)
    }
}
