//! What the host keeps per plugin instance: the WASI context, the memory limiter, and the state
//! behind the `host` imports (log, progress, config), which each WIT version's `host` interface
//! (`wit/v*/host.rs`) calls.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::deadline::CallDeadline;
use crate::fs_guard::{ClearFolders, MountDirs, OpenedSizes, ProtectedPaths};
use crate::limits::{MAX_LOG_LINE_BYTES, MAX_LOG_LINES};
use crate::network::NetworkGate;
use crate::settings::Secrets;
use crate::stdio::TailCapture;

/// A progress report from a plugin (WIT `host.progress`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// The plugin's id.
    pub plugin: String,
    /// What the plugin is doing.
    pub message: String,
    /// Units done.
    pub done: u64,
    /// Units in all, if known.
    pub total: Option<u64>,
}

/// Receives progress reports.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// State of one plugin instance.
pub struct HostState {
    pub(crate) wasi: WasiCtx,
    pub(crate) http: WasiHttpCtx,
    pub(crate) table: ResourceTable,
    /// What the sandbox is made of.
    pub(crate) sandbox: Sandbox,
    /// Folders known to lie outside Quarry's own.
    pub(crate) clear: ClearFolders,
    /// The granted folders' descriptors and real paths (learnt once the context is made).
    pub(crate) mounts: MountDirs,
    /// The size of each file opened, as it was when it was opened.
    pub(crate) opened: OpenedSizes,
    /// Files refused as Quarry's own since the session last asked, relative to their mount.
    refused_own: Vec<String>,
    /// When the running call must end.
    deadline: CallDeadline,
    log_lines: u32,
}

/// Refused files an instance remembers at most between two looks.
const MAX_REFUSED_OWN: usize = 1024;

/// What a sandbox is made of, besides its WASI context.
pub(crate) struct Sandbox {
    pub(crate) gate: NetworkGate,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) plugin: Arc<str>,
    pub(crate) config: Vec<(String, String)>,
    pub(crate) progress: Option<ProgressFn>,
    pub(crate) stdio: TailCapture,
    /// Quarry's own folders, out of reach of every open.
    pub(crate) protected: Arc<ProtectedPaths>,
    /// The time one call may take: each call's deadline lies this far from its start.
    pub(crate) call_timeout: Duration,
    /// Secret setting values, blanked out of log lines.
    pub(crate) secrets: Secrets,
}

impl HostState {
    /// The state of an instance of `sandbox`, whose WASI context mounts `mounts`.
    pub(crate) fn new(wasi: WasiCtx, sandbox: Sandbox, mounts: Vec<std::path::PathBuf>) -> Self {
        HostState {
            wasi,
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            sandbox,
            clear: ClearFolders::new(mounts),
            mounts: MountDirs::default(),
            opened: OpenedSizes::default(),
            refused_own: Vec::new(),
            deadline: CallDeadline::default(),
            log_lines: 0,
        }
    }

    /// Starts a call that may take the plugin's call timeout: host functions that wait stop
    /// waiting at its end.
    pub(crate) fn begin_call(&mut self) {
        self.deadline = CallDeadline::starting_now(self.sandbox.call_timeout);
        self.sandbox.gate.set_deadline(self.deadline);
    }

    /// The end of what the plugin wrote to stdout and stderr, at most `max` bytes, secrets
    /// blanked out first.
    pub(crate) fn output_tail(&self, max: usize) -> String {
        let output = self.sandbox.secrets.redact(&self.sandbox.stdio.text());
        let mut start = output.len().saturating_sub(max);
        while !output.is_char_boundary(start) {
            start += 1;
        }
        output[start..].to_owned()
    }

    /// Notes that the file at host path `real` was refused as one of Quarry's own (a hard link
    /// to one, a copy of a data folder): the sync leaves its document out instead of counting a
    /// failure. Kept as the path relative to its mount.
    pub(crate) fn refused_own(&mut self, real: Option<std::path::PathBuf>) {
        let Some(real) = real else {
            return;
        };
        let relative = self.mounts.relative(&real).map(str::to_owned);
        if let Some(relative) = relative
            && self.refused_own.len() < MAX_REFUSED_OWN
        {
            self.refused_own.push(relative);
        }
    }

    /// The files refused as Quarry's own since the last look (see [`HostState::refused_own`]).
    pub(crate) fn take_refused_own(&mut self) -> Vec<String> {
        std::mem::take(&mut self.refused_own)
    }

    /// Time left before the running call's deadline.
    pub(crate) fn time_left(&self) -> Duration {
        self.deadline.left()
    }

    /// Logs a line of the plugin's (WIT `host.log`): secrets blanked out, cut to size, and no more
    /// than [`MAX_LOG_LINES`] per instance.
    pub(crate) fn log_line(&mut self, level: LogLevel, message: &str) {
        self.log_lines = self.log_lines.saturating_add(1);
        if self.log_lines > MAX_LOG_LINES {
            if self.log_lines == MAX_LOG_LINES + 1 {
                tracing::warn!(plugin = %self.sandbox.plugin, "plugin logs too much; further lines dropped");
            }
            return;
        }
        // Blanked out before it is cut, so that no piece of a secret survives the cut.
        let message = self.sandbox.secrets.redact(message);
        let message = cut(&message, MAX_LOG_LINE_BYTES);
        let plugin = &*self.sandbox.plugin;
        match level {
            LogLevel::Trace => tracing::trace!(plugin, "{message}"),
            LogLevel::Debug => tracing::debug!(plugin, "{message}"),
            LogLevel::Info => tracing::info!(plugin, "{message}"),
            LogLevel::Warn => tracing::warn!(plugin, "{message}"),
            LogLevel::Error => tracing::error!(plugin, "{message}"),
        }
    }

    /// Passes a progress report of the plugin's (WIT `host.progress`) on, secrets blanked out.
    pub(crate) fn report_progress(&self, message: &str, done: u64, total: Option<u64>) {
        if let Some(report) = &self.sandbox.progress {
            report(Progress {
                plugin: self.sandbox.plugin.to_string(),
                message: cut(&self.sandbox.secrets.redact(message), MAX_LOG_LINE_BYTES).to_owned(),
                done,
                total,
            });
        }
    }
}

/// The level of a plugin's log line, whatever the WIT version that sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
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
            hooks: &mut self.sandbox.gate,
        }
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(crate) fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Caps the linear memory of one instance (all its memories together) and remembers whether the
/// cap was hit, so a crash that follows can be reported as what it is.
pub struct MemoryLimiter {
    limit: u64,
    /// Bytes of linear memory the instance has (memories only grow, so this is also its peak).
    pub(crate) used: u64,
    pub(crate) hit: bool,
}

impl MemoryLimiter {
    pub(crate) fn new(limit: u64) -> Self {
        MemoryLimiter {
            limit,
            used: 0,
            hit: false,
        }
    }
}

/// Table elements one instance may have.
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let grow = desired.saturating_sub(current) as u64;
        if self.used.saturating_add(grow) > self.limit {
            self.hit = true;
            return Ok(false);
        }
        self.used += grow;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_respects_char_boundaries() {
        assert_eq!(cut("héllo", 2), "h");
        assert_eq!(cut("héllo", 3), "hé");
        assert_eq!(cut("hi", 10), "hi");
    }

    #[test]
    fn limiter_counts_all_memories() -> wasmtime::Result<()> {
        let mut limiter = MemoryLimiter::new(100);
        assert!(limiter.memory_growing(0, 60, None)?);
        assert!(limiter.memory_growing(0, 40, None)?);
        assert!(!limiter.memory_growing(40, 41, None)?);
        assert!(limiter.hit);
        Ok(())
    }
}
