//! Errors of the plugin runtime.
//!
//! Plugin calls fail at two levels: the host stopped the call (a trap, a timeout, the memory cap,
//! output that breaks the contract), or the plugin itself answered with an error. Both carry the
//! plugin's id and the call.

use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::settings::Secrets;

/// An error the plugin itself reported (WIT `connector-error`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuestError {
    /// The document does not exist (any more).
    #[error("not found: {0}")]
    NotFound(String),
    /// The source cannot be reached right now.
    #[error("source unavailable: {0}")]
    Unavailable(String),
    /// The configuration is wrong.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

/// A connection the host refused a plugin.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Refusal {
    /// `host:port` as the plugin asked for it.
    pub authority: String,
    /// Empty when the host is outside the grant; otherwise the addresses the granted name
    /// resolved to, none of which it may reach (loopback, private, link-local).
    pub addresses: Vec<IpAddr>,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.addresses.is_empty() {
            return write!(f, "{}: not in this connector's grant", self.authority);
        }
        let addresses: Vec<String> = self.addresses.iter().map(ToString::to_string).collect();
        write!(
            f,
            "{}: it resolves only to {}, which a granted name may not lead to (loopback, private and link-local addresses are reached only when the grant names the address itself)",
            self.authority,
            addresses.join(", ")
        )
    }
}

/// Everything that can go wrong loading or calling a plugin.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The manifest cannot be read or is invalid.
    #[error("plugin manifest {}: {message}", path.display())]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong, and how to fix it.
        message: String,
    },
    /// The component cannot be read, compiled or linked.
    #[error("plugin {plugin}: {message}")]
    Component {
        /// Plugin id.
        plugin: String,
        /// What went wrong.
        message: String,
    },
    /// The component implements a WIT version this host does not run, or not the manifest's.
    #[error("plugin {plugin}: {message}")]
    WitVersion {
        /// Plugin id.
        plugin: String,
        /// Names the versions involved.
        message: String,
    },
    /// The configuration or grant does not fit the manifest.
    #[error("plugin {plugin}: {message}")]
    Config {
        /// Plugin id.
        plugin: String,
        /// What is wrong, naming the field.
        message: String,
    },
    /// The call ran past its deadline and was stopped.
    #[error("plugin {plugin}: {call} timed out after {} s and was stopped", limit.as_secs_f64())]
    Timeout {
        /// Plugin id.
        plugin: String,
        /// The WIT function called.
        call: &'static str,
        /// The deadline.
        limit: Duration,
    },
    /// The call needed more memory than the plugin may use and was stopped.
    #[error("plugin {plugin}: {call} exceeded the memory limit of {} MiB and was stopped", limit_bytes >> 20)]
    MemoryLimit {
        /// Plugin id.
        plugin: String,
        /// The WIT function called.
        call: &'static str,
        /// The limit.
        limit_bytes: u64,
    },
    /// The plugin crashed (a panic, an unreachable instruction, a bad memory access).
    #[error("plugin {plugin}: {call} crashed: {message}")]
    Trap {
        /// Plugin id.
        plugin: String,
        /// The WIT function called.
        call: &'static str,
        /// The trap, and the plugin's last output (where panic messages land).
        message: String,
    },
    /// The plugin returned something the contract forbids (too large, a bad id).
    #[error("plugin {plugin}: {call} returned invalid output: {message}")]
    Output {
        /// Plugin id.
        plugin: String,
        /// The WIT function called.
        call: &'static str,
        /// What was wrong.
        message: String,
    },
    /// The plugin answered with its own error.
    #[error("plugin {plugin}: {call}: {error}")]
    Guest {
        /// Plugin id.
        plugin: String,
        /// The WIT function called.
        call: &'static str,
        /// The plugin's error.
        error: GuestError,
    },
    /// The plugin failed after the host refused it a connection: to a host outside its grant, or
    /// to a granted name that led only to loopback, private or link-local addresses.
    #[error(
        "plugin {plugin}: {call}: the host refused a connection to {} (granted hosts: {}); the plugin then failed: {plugin_said}",
        refused.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
        if granted.is_empty() { "none".to_owned() } else { granted.join(", ") }
    )]
    NetworkDenied {
        /// Plugin id.
        plugin: String,
        /// The WIT function called.
        call: &'static str,
        /// What was refused, and why.
        refused: Vec<Refusal>,
        /// The hosts the connector may reach.
        granted: Vec<String>,
        /// The error that followed, as the host saw it.
        plugin_said: String,
    },
    /// A file of the runtime's own (the component cache) could not be used.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl RuntimeError {
    /// True when the host stopped the call (trap, timeout, memory, invalid output), as opposed to
    /// the plugin reporting an error of its own.
    pub fn is_host_stop(&self) -> bool {
        matches!(
            self,
            RuntimeError::Timeout { .. }
                | RuntimeError::MemoryLimit { .. }
                | RuntimeError::Trap { .. }
                | RuntimeError::Output { .. }
        )
    }

    /// This error with every secret value blanked out of the texts that came from the plugin.
    pub(crate) fn redacted(self, secrets: &Secrets) -> RuntimeError {
        if secrets.is_empty() {
            return self;
        }
        let clean = |text: String| secrets.redact(&text);
        match self {
            RuntimeError::Trap {
                plugin,
                call,
                message,
            } => RuntimeError::Trap {
                plugin,
                call,
                message: clean(message),
            },
            RuntimeError::Output {
                plugin,
                call,
                message,
            } => RuntimeError::Output {
                plugin,
                call,
                message: clean(message),
            },
            RuntimeError::Config { plugin, message } => RuntimeError::Config {
                plugin,
                message: clean(message),
            },
            RuntimeError::Guest {
                plugin,
                call,
                error,
            } => RuntimeError::Guest {
                plugin,
                call,
                error: match error {
                    GuestError::NotFound(m) => GuestError::NotFound(clean(m)),
                    GuestError::Unavailable(m) => GuestError::Unavailable(clean(m)),
                    GuestError::InvalidConfig(m) => GuestError::InvalidConfig(clean(m)),
                    GuestError::Other(m) => GuestError::Other(clean(m)),
                },
            },
            RuntimeError::NetworkDenied {
                plugin,
                call,
                refused,
                granted,
                plugin_said,
            } => RuntimeError::NetworkDenied {
                plugin,
                call,
                refused: refused
                    .into_iter()
                    .map(|r| Refusal {
                        authority: clean(r.authority),
                        ..r
                    })
                    .collect(),
                granted,
                plugin_said: clean(plugin_said),
            },
            other => other,
        }
    }

    /// The plugin's own error, if this is one.
    pub fn guest_error(&self) -> Option<&GuestError> {
        match self {
            RuntimeError::Guest { error, .. } => Some(error),
            _ => None,
        }
    }
}
