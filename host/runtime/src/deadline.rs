//! Waiting inside a call ends at the call's deadline.
//!
//! The epoch deadline interrupts running WebAssembly, not a host function that waits: a plugin
//! that sleeps (`wasi:clocks` + `wasi:io/poll`) or waits on any other pollable would keep the
//! calling thread and its instance past the deadline. `poll` and `pollable.block` are replaced in
//! the linker by versions that wait at most until the deadline and then stop the call.

use std::time::{Duration, Instant};

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::p2::DynPollable;
use wasmtime_wasi::p2::bindings::io::poll::{Host as Poll, HostPollable};
use wasmtime_wasi::runtime::in_tokio;

use crate::host_state::HostState;

/// The `wasi:io/poll` instance whose functions are replaced.
const POLL: &str = "wasi:io/poll@0.2.12";

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

    /// Time left until the deadline (zero once it passed); `fallback` when there is none.
    pub(crate) fn left(self, fallback: Duration) -> Duration {
        self.0
            .map_or(fallback, |d| d.saturating_duration_since(Instant::now()))
    }
}

/// Replaces `poll` and `pollable.block` of `wasi:io/poll` in `linker` (which must already hold
/// wasmtime-wasi's).
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut poll = linker.instance(POLL)?;
    poll.func_wrap(
        "poll",
        |mut store: StoreContextMut<'_, HostState>, (pollables,): (Vec<Resource<DynPollable>>,)| {
            let state = store.data_mut();
            let left = state.time_left();
            let ready = until(left, Poll::poll(&mut state.table, pollables))??;
            Ok((ready,))
        },
    )?;
    poll.func_wrap(
        "[method]pollable.block",
        |mut store: StoreContextMut<'_, HostState>, (pollable,): (Resource<DynPollable>,)| {
            let state = store.data_mut();
            let left = state.time_left();
            until(left, HostPollable::block(&mut state.table, pollable))??;
            Ok(())
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// Runs `wait` for at most `left`; past that the call stops with [`DeadlineReached`].
fn until<T>(left: Duration, wait: impl Future<Output = T>) -> wasmtime::Result<T> {
    // The timer is made inside the runtime `in_tokio` enters.
    in_tokio(async move { tokio::time::timeout(left, wait).await })
        .map_err(|_elapsed| wasmtime::Error::new(DeadlineReached))
}
