//! What a plugin tells the host besides its answers: log lines and progress (WIT `host.log`,
//! `host.progress`), its stdout and stderr, and the config it reads (`host.config`). Secret
//! setting values are blanked out of everything that leaves, before it is cut to size.

use std::sync::Arc;

use super::stdio::TailCapture;
use crate::limits::{MAX_LOG_LINE_BYTES, MAX_LOG_LINES};
use crate::policy::secrets::Secrets;

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

/// The level of a plugin's log line, whatever the WIT version that sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// The reports slice of one instance.
pub(crate) struct Reports {
    plugin: Arc<str>,
    /// The settings the plugin reads, as the sandbox shows them (folders as sandbox paths).
    pub(crate) config: Vec<(String, String)>,
    progress: Option<ProgressFn>,
    stdio: TailCapture,
    secrets: Secrets,
    log_lines: u32,
}

impl Reports {
    /// The reports of an instance of `plugin`, whose stdout and stderr go to `stdio`.
    pub(crate) fn new(
        plugin: Arc<str>,
        config: Vec<(String, String)>,
        progress: Option<ProgressFn>,
        stdio: TailCapture,
        secrets: Secrets,
    ) -> Reports {
        Reports {
            plugin,
            config,
            progress,
            stdio,
            secrets,
            log_lines: 0,
        }
    }

    /// Logs a line of the plugin's (WIT `host.log`): secrets blanked out, cut to size, and no more
    /// than [`MAX_LOG_LINES`] per instance.
    pub(crate) fn log_line(&mut self, level: LogLevel, message: &str) {
        self.log_lines = self.log_lines.saturating_add(1);
        if self.log_lines > MAX_LOG_LINES {
            if self.log_lines == MAX_LOG_LINES + 1 {
                tracing::warn!(plugin = %self.plugin, "plugin logs too much; further lines dropped");
            }
            return;
        }
        // Blanked out before it is cut, so that no piece of a secret survives the cut.
        let message = self.secrets.redact(message);
        let message = &message[..message.floor_char_boundary(MAX_LOG_LINE_BYTES)];
        let plugin = &*self.plugin;
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
        if let Some(report) = &self.progress {
            let message = self.secrets.redact(message);
            report(Progress {
                plugin: self.plugin.to_string(),
                message: message[..message.floor_char_boundary(MAX_LOG_LINE_BYTES)].to_owned(),
                done,
                total,
            });
        }
    }

    /// The end of what the plugin wrote to stdout and stderr, at most `max` bytes, secrets
    /// blanked out first.
    pub(crate) fn output_tail(&self, max: usize) -> String {
        let output = self.secrets.redact(&self.stdio.text());
        output[output.ceil_char_boundary(output.len().saturating_sub(max))..].to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_tail_ends_on_whole_characters_with_secrets_blanked_out() {
        use wasmtime_wasi::p2::OutputStream;
        let stdio = TailCapture::new(1024);
        let reports = Reports::new(
            "p".into(),
            Vec::new(),
            None,
            stdio.clone(),
            Secrets::new(vec!["hunter2".to_owned()]),
        );
        let mut writer = stdio.clone();
        writer
            .write("héllo hunter2".as_bytes().to_vec().into())
            .expect("write");
        assert_eq!(reports.output_tail(100), "héllo [secret]");
        assert_eq!(reports.output_tail(14), "éllo [secret]");
        // The cut falls inside `é`: the tail starts after it.
        assert_eq!(reports.output_tail(13), "llo [secret]");
    }
}
