//! What the host keeps per plugin instance, in one slice per area: wasmtime-wasi's contexts and
//! resource table, the files (`files::guard::FileGuard`), the HTTP gate, the streams, the call's deadline,
//! the reports, the memory cap and the OCR gate. Each shadow and host call borrows the slice it needs.

use std::time::Duration;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::files::guard::{FileGuard, FilesView};
use super::files::mounts::MountDirs;
use super::http::NetworkGate;
use super::limiter::MemoryLimiter;
use super::ocr::OcrGate;
use super::reports::Reports;
use super::streams::StreamGate;
use crate::policy::deadline::CallDeadline;

/// State of one plugin instance.
pub struct HostState {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    table: ResourceTable,
    /// The files the instance opens.
    pub(crate) files: FileGuard,
    /// Its outgoing HTTP.
    pub(crate) gate: NetworkGate,
    /// Its streams (`network.open-stream`).
    pub(crate) streams: StreamGate,
    /// Its log, progress, output and config.
    pub(crate) reports: Reports,
    /// Its memory cap.
    pub(crate) limiter: MemoryLimiter,
    /// The host's OCR, open during `read-scans`.
    pub(crate) ocr: OcrGate,
    /// The time one call may take: each call's deadline lies this far from its start.
    call_timeout: Duration,
    /// When the running call must end.
    deadline: CallDeadline,
}

impl HostState {
    /// The state of an instance whose WASI context is `wasi`; its mounts are learnt from the
    /// context. The outer error is wasmtime's.
    #[allow(clippy::too_many_arguments)] // one slice per area, each made by its own module
    pub(crate) fn new(
        wasi: WasiCtx,
        files: FileGuard,
        gate: NetworkGate,
        streams: StreamGate,
        reports: Reports,
        limiter: MemoryLimiter,
        ocr: OcrGate,
        call_timeout: Duration,
    ) -> wasmtime::Result<HostState> {
        let mut state = HostState {
            wasi,
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            files,
            gate,
            streams,
            reports,
            limiter,
            ocr,
            call_timeout,
            deadline: CallDeadline::default(),
        };
        let mounts = MountDirs::learn(&mut state.files().wasi)?;
        state.files.mounts = mounts;
        Ok(state)
    }

    /// Starts a call that may take the plugin's call timeout and `longer` (a `watch` call's
    /// wait): host functions that wait stop waiting at its end.
    pub(crate) fn begin_call(&mut self, longer: Duration) {
        self.deadline = CallDeadline::starting_now(self.call_timeout + longer);
        self.gate.set_deadline(self.deadline);
        self.streams.begin_call(self.deadline);
        self.ocr.set_deadline(self.deadline);
    }

    /// The streams slice and the resource table that holds the plugin's handles.
    pub(crate) fn streams(&mut self) -> (&mut ResourceTable, &mut StreamGate) {
        (&mut self.table, &mut self.streams)
    }

    /// The files slice with wasmtime-wasi's filesystem context and the resource table.
    pub(crate) fn files(&mut self) -> FilesView<'_> {
        FilesView {
            wasi: WasiFilesystemCtxView {
                ctx: self.wasi.filesystem(),
                table: &mut self.table,
            },
            guard: &mut self.files,
        }
    }

    /// The resource table, and the time left before the running call's deadline.
    pub(crate) fn waits(&mut self) -> (&mut ResourceTable, Duration) {
        (&mut self.table, self.deadline.left())
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for HostState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.gate,
        }
    }
}
