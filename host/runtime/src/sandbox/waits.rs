//! Waiting inside a call ends at the call's deadline.
//!
//! The epoch deadline interrupts running WebAssembly, not a host function that waits: a plugin
//! that sleeps (`wasi:clocks` + `wasi:io/poll`), waits on any other pollable, or blocks on a
//! stream (an HTTP body that does not come, a request body nobody reads) would keep the calling
//! thread and its instance past the deadline. `poll`, `pollable.block` and the blocking stream
//! functions of `wasi:io/streams` are replaced in the linker by versions that wait at most until
//! the deadline and then stop the call.

use std::time::Duration;

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceTable};
use wasmtime_wasi::p2::bindings::io::poll::{Host as Poll, HostPollable};
use wasmtime_wasi::p2::bindings::io::streams::{
    self, HostInputStream as Input, HostOutputStream as Output,
};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, DynPollable};
use wasmtime_wasi::runtime::in_tokio;

use super::instance::HostState;
use crate::policy::deadline::DeadlineReached;

/// The `wasi:io/poll` instance whose functions are replaced.
const POLL: &str = "wasi:io/poll@0.2.12";
/// The `wasi:io/streams` instance whose blocking functions are replaced.
const STREAMS: &str = "wasi:io/streams@0.2.12";

/// Replaces `poll` and `pollable.block` of `wasi:io/poll`, and the blocking functions of
/// `wasi:io/streams`, in `linker` (which must already hold wasmtime-wasi's).
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    add_streams(linker)?;
    let mut poll = linker.instance(POLL)?;
    poll.func_wrap(
        "poll",
        |mut store: StoreContextMut<'_, HostState>, (pollables,): (Vec<Resource<DynPollable>>,)| {
            let (table, left) = store.data_mut().waits();
            let ready = until(left, Poll::poll(table, pollables))??;
            Ok((ready,))
        },
    )?;
    poll.func_wrap(
        "[method]pollable.block",
        |mut store: StoreContextMut<'_, HostState>, (pollable,): (Resource<DynPollable>,)| {
            let (table, left) = store.data_mut().waits();
            until(left, HostPollable::block(table, pollable))??;
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
            let (table, left) = store.data_mut().waits();
            let read = until(left, Input::blocking_read(table, stream, len))?;
            Ok((answer(table, read)?,))
        },
    )?;
    streams.func_wrap(
        "[method]input-stream.blocking-skip",
        |mut store: StoreContextMut<'_, HostState>,
         (stream, len): (Resource<DynInputStream>, u64)| {
            let (table, left) = store.data_mut().waits();
            let skipped = until(left, Input::blocking_skip(table, stream, len))?;
            Ok((answer(table, skipped)?,))
        },
    )?;
    streams.func_wrap(
        "[method]output-stream.blocking-write-and-flush",
        |mut store: StoreContextMut<'_, HostState>,
         (stream, bytes): (Resource<DynOutputStream>, Vec<u8>)| {
            let (table, left) = store.data_mut().waits();
            let written = until(left, Output::blocking_write_and_flush(table, stream, bytes))?;
            Ok((answer(table, written)?,))
        },
    )?;
    streams.func_wrap(
        "[method]output-stream.blocking-write-zeroes-and-flush",
        |mut store: StoreContextMut<'_, HostState>,
         (stream, len): (Resource<DynOutputStream>, u64)| {
            let (table, left) = store.data_mut().waits();
            let written = until(
                left,
                Output::blocking_write_zeroes_and_flush(table, stream, len),
            )?;
            Ok((answer(table, written)?,))
        },
    )?;
    streams.func_wrap(
        "[method]output-stream.blocking-flush",
        |mut store: StoreContextMut<'_, HostState>, (stream,): (Resource<DynOutputStream>,)| {
            let (table, left) = store.data_mut().waits();
            let flushed = until(left, Output::blocking_flush(table, stream))?;
            Ok((answer(table, flushed)?,))
        },
    )?;
    streams.func_wrap(
        "[method]output-stream.blocking-splice",
        |mut store: StoreContextMut<'_, HostState>,
         (to, from, len): (Resource<DynOutputStream>, Resource<DynInputStream>, u64)| {
            let (table, left) = store.data_mut().waits();
            let spliced = until(left, Output::blocking_splice(table, to, from, len))?;
            Ok((answer(table, spliced)?,))
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
