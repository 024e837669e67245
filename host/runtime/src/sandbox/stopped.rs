//! What stopped a call into a sandbox: the memory cap, the deadline, or a crash; and the
//! deadline of a call in the engine's ticks. Shared by connectors and the page renderer.

use std::time::Duration;

use wasmtime::Trap;

use super::instance::HostState;
use crate::error::{RuntimeError, RuntimeErrorKind};
use crate::limits::Limits;
use crate::policy::deadline::{DeadlineReached, EPOCH_TICK};

/// What stopped component `id`'s `call` under `limits`, told from wasmtime's `error` and, once
/// the instance exists, its `state`: the memory cap, the deadline, or else a crash with the
/// component's last output.
pub(crate) fn classify(
    id: &str,
    limits: &Limits,
    call: &'static str,
    error: &wasmtime::Error,
    state: Option<&HostState>,
) -> RuntimeError {
    tracing::debug!(plugin = %id, call, "plugin call stopped: {error:?}");
    if state.is_some_and(|state| state.limiter.hit) {
        return RuntimeError::in_call(
            id,
            call,
            RuntimeErrorKind::MemoryLimit {
                limit_bytes: limits.memory_bytes,
            },
        );
    }
    if error.downcast_ref::<Trap>() == Some(&Trap::Interrupt)
        || error.downcast_ref::<DeadlineReached>().is_some()
    {
        return RuntimeError::in_call(
            id,
            call,
            RuntimeErrorKind::Timeout {
                limit: limits.call_timeout,
            },
        );
    }
    let trap = match error.downcast_ref::<Trap>() {
        Some(trap) => trap.to_string(),
        None => error.root_cause().to_string(),
    };
    let output = state
        .map(|state| state.reports.output_tail(1024))
        .unwrap_or_default();
    let message = if output.is_empty() {
        trap
    } else {
        format!("{trap}; its last output: {output}")
    };
    RuntimeError::in_call(id, call, RuntimeErrorKind::Trap { message })
}

/// A call's deadline `limit` in the engine's ticks (at least one).
pub(crate) fn deadline_ticks(limit: Duration) -> u64 {
    let ticks = limit.as_millis() / EPOCH_TICK.as_millis();
    u64::try_from(ticks).unwrap_or(u64::MAX).max(1)
}
