//! Waiting inside a call ends at the call's deadline.
//!
//! The epoch deadline interrupts running WebAssembly, not a host function that waits: a plugin
//! that sleeps (`wasi:clocks` + `wasi:io/poll`), waits on any other pollable, or blocks on a
//! stream (an HTTP body that does not come, a request body nobody reads) would keep the calling
//! thread and its instance past the deadline. `poll`, `pollable.block` and the blocking stream
//! functions of `wasi:io/streams` are replaced in the linker by versions that wait at most until
//! the deadline and then stop the call.

use std::time::{Duration, Instant};

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceTable};
use wasmtime_wasi::p2::bindings::io::poll::{Host as Poll, HostPollable};
use wasmtime_wasi::p2::bindings::io::streams::{
    self, HostInputStream as Input, HostOutputStream as Output,
};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, DynPollable};
use wasmtime_wasi::runtime::in_tokio;

use crate::host_state::HostState;

/// The `wasi:io/poll` instance whose functions are replaced.
const POLL: &str = "wasi:io/poll@0.2.12";
/// The `wasi:io/streams` instance whose blocking functions are replaced.
const STREAMS: &str = "wasi:io/streams@0.2.12";

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

/// Replaces `poll` and `pollable.block` of `wasi:io/poll`, and the blocking functions of
/// `wasi:io/streams`, in `linker` (which must already hold wasmtime-wasi's).
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    add_streams(linker)?;
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

/// The blocking stream functions, each bounded like [`until`].
fn add_streams(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    let mut streams = linker.instance(STREAMS)?;
    streams.func_wrap(
        "[method]input-stream.blocking-read",
        |mut store: StoreContextMut<'_, HostState>,
         (stream, len): (Resource<DynInputStream>, u64)| {
            let state = store.data_mut();
            let left = state.time_left();
            let read = until(left, Input::blocking_read(&mut state.table, stream, len))?;
            Ok((answer(&mut state.table, read)?,))
        },
    )?;
    streams.func_wrap(
        "[method]input-stream.blocking-skip",
        |mut store: StoreContextMut<'_, HostState>,
         (stream, len): (Resource<DynInputStream>, u64)| {
            let state = store.data_mut();
            let left = state.time_left();
            let skipped = until(left, Input::blocking_skip(&mut state.table, stream, len))?;
            Ok((answer(&mut state.table, skipped)?,))
        },
    )?;
    streams.func_wrap(
        "[method]output-stream.blocking-write-and-flush",
        |mut store: StoreContextMut<'_, HostState>,
         (stream, bytes): (Resource<DynOutputStream>, Vec<u8>)| {
            let state = store.data_mut();
            let left = state.time_left();
            let written = until(
                left,
                Output::blocking_write_and_flush(&mut state.table, stream, bytes),
            )?;
            Ok((answer(&mut state.table, written)?,))
        },
    )?;
    streams.func_wrap(
        "[method]output-stream.blocking-write-zeroes-and-flush",
        |mut store: StoreContextMut<'_, HostState>,
         (stream, len): (Resource<DynOutputStream>, u64)| {
            let state = store.data_mut();
            let left = state.time_left();
            let written = until(
                left,
                Output::blocking_write_zeroes_and_flush(&mut state.table, stream, len),
            )?;
            Ok((answer(&mut state.table, written)?,))
        },
    )?;
    streams.func_wrap(
        "[method]output-stream.blocking-flush",
        |mut store: StoreContextMut<'_, HostState>, (stream,): (Resource<DynOutputStream>,)| {
            let state = store.data_mut();
            let left = state.time_left();
            let flushed = until(left, Output::blocking_flush(&mut state.table, stream))?;
            Ok((answer(&mut state.table, flushed)?,))
        },
    )?;
    streams.func_wrap(
        "[method]output-stream.blocking-splice",
        |mut store: StoreContextMut<'_, HostState>,
         (to, from, len): (Resource<DynOutputStream>, Resource<DynInputStream>, u64)| {
            let state = store.data_mut();
            let left = state.time_left();
            let spliced = until(
                left,
                Output::blocking_splice(&mut state.table, to, from, len),
            )?;
            Ok((answer(&mut state.table, spliced)?,))
        },
    )?;
    Ok(())
}

/// A stream function's result as the guest gets it: its value, or the stream error (a trap
/// stays a trap).
fn answer<T>(
    table: &mut ResourceTable,
    result: Result<T, wasmtime_wasi::p2::StreamError>,
) -> wasmtime::Result<Result<T, streams::StreamError>> {
    match result {
        Ok(value) => Ok(Ok(value)),
        Err(e) => Ok(Err(streams::Host::convert_stream_error(table, e)?)),
    }
}

/// Runs `wait` for at most `left`; past that the call stops with [`DeadlineReached`].
fn until<T>(left: Duration, wait: impl Future<Output = T>) -> wasmtime::Result<T> {
    // The timer is made inside the runtime `in_tokio` enters.
    in_tokio(async move { tokio::time::timeout(left, wait).await })
        .map_err(|_elapsed| wasmtime::Error::new(DeadlineReached))
}
