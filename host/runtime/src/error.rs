//! Errors of the plugin runtime.
//!
//! Plugin calls fail at two levels: the host stopped the call (a trap, a timeout, the memory cap,
//! output that breaks the contract), or the plugin itself answered with an error. Every error is
//! one [`RuntimeError`]: the plugin's id, the call, and a [`RuntimeErrorKind`].

use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::policy::secrets::Secrets;

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

/// Everything that can go wrong loading or calling a plugin: which plugin, which call, and what
/// happened.
#[derive(Debug)]
pub struct RuntimeError {
    /// The plugin's id; `None` for a manifest not read yet and for the runtime's own files.
    pub plugin: Option<String>,
    /// The WIT function that failed (`list-docs`); `None` when loading or setting up failed.
    pub call: Option<&'static str>,
    /// What happened.
    pub kind: RuntimeErrorKind,
}

/// What went wrong, by kind. A [`RuntimeError`] adds the plugin and the call.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeErrorKind {
    /// The manifest cannot be read or is invalid.
    #[error("plugin manifest {}: {message}", path.display())]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong, and how to fix it.
        message: String,
    },
    /// The component cannot be read, compiled or linked.
    #[error("{message}")]
    Component {
        /// What went wrong, with wasmtime's causes.
        message: String,
    },
    /// The component implements a WIT version this host does not run, or not the manifest's.
    #[error("{message}")]
    WitVersion {
        /// Names the versions involved.
        message: String,
    },
    /// The configuration or grant does not fit the manifest.
    #[error("{message}")]
    Config {
        /// What is wrong, naming the field.
        message: String,
    },
    /// The call ran past its deadline and was stopped.
    #[error("timed out after {} s and was stopped", limit.as_secs_f64())]
    Timeout {
        /// The deadline.
        limit: Duration,
    },
    /// The call needed more memory than the plugin may use and was stopped.
    #[error("exceeded the memory limit of {} MiB and was stopped", limit_bytes >> 20)]
    MemoryLimit {
        /// The limit.
        limit_bytes: u64,
    },
    /// The plugin crashed (a panic, an unreachable instruction, a bad memory access).
    #[error("crashed: {message}")]
    Trap {
        /// The trap, and the plugin's last output (where panic messages land).
        message: String,
    },
    /// The plugin returned something the contract forbids (too large, a bad id).
    #[error("returned invalid output: {message}")]
    Output {
        /// What was wrong.
        message: String,
    },
    /// The plugin answered with its own error.
    #[error("{error}")]
    Guest {
        /// The plugin's error.
        error: GuestError,
    },
    /// The plugin failed after the host refused it a connection: to a host outside its grant, or
    /// to a granted name that led only to loopback, private or link-local addresses.
    #[error(
        "the host refused a connection to {} (granted hosts: {}); the plugin then failed: {plugin_said}",
        refused.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
        if granted.is_empty() { "none".to_owned() } else { granted.join(", ") }
    )]
    NetworkDenied {
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
        #[source]
        source: std::io::Error,
    },
}

impl RuntimeErrorKind {
    /// True when the host stopped the call (it ran past its deadline, hit the memory cap,
    /// crashed, or answered what the contract forbids), as opposed to the plugin reporting an
    /// error of its own or the plugin never running. These kinds say what the call did, right
    /// after the call's name ("list-docs timed out …"); the others follow it after a colon
    /// ("list-docs: not found: …").
    fn stopped_by_host(&self) -> bool {
        matches!(
            self,
            RuntimeErrorKind::Timeout { .. }
                | RuntimeErrorKind::MemoryLimit { .. }
                | RuntimeErrorKind::Trap { .. }
                | RuntimeErrorKind::Output { .. }
        )
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(plugin) = &self.plugin {
            write!(f, "plugin {plugin}: ")?;
        }
        if let Some(call) = self.call {
            let separator = if self.kind.stopped_by_host() {
                " "
            } else {
                ": "
            };
            write!(f, "{call}{separator}")?;
        }
        write!(f, "{}", self.kind)
    }
}

impl std::error::Error for RuntimeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.kind)
    }
}

/// An error of no plugin: a manifest not read yet, or a file of the runtime's own.
impl From<RuntimeErrorKind> for RuntimeError {
    fn from(kind: RuntimeErrorKind) -> Self {
        RuntimeError {
            plugin: None,
            call: None,
            kind,
        }
    }
}

impl RuntimeError {
    /// An error of `plugin` outside any call: loading it, or checking its settings.
    pub(crate) fn of(plugin: impl Into<String>, kind: RuntimeErrorKind) -> RuntimeError {
        RuntimeError {
            plugin: Some(plugin.into()),
            call: None,
            kind,
        }
    }

    /// An error of `plugin`'s `call`.
    pub(crate) fn in_call(
        plugin: impl Into<String>,
        call: &'static str,
        kind: RuntimeErrorKind,
    ) -> RuntimeError {
        RuntimeError {
            plugin: Some(plugin.into()),
            call: Some(call),
            kind,
        }
    }

    /// What happened.
    pub fn kind(&self) -> &RuntimeErrorKind {
        &self.kind
    }

    /// True when the host stopped the call (see [`RuntimeErrorKind`]'s kinds: timeout, memory,
    /// trap, invalid output), as opposed to the plugin reporting an error of its own.
    pub fn is_host_stop(&self) -> bool {
        self.kind.stopped_by_host()
    }

    /// This error with every secret value blanked out of the texts that came from the plugin.
    pub(crate) fn redacted(self, secrets: &Secrets) -> RuntimeError {
        if secrets.is_empty() {
            return self;
        }
        let clean = |text: String| secrets.redact(&text);
        let kind = match self.kind {
            RuntimeErrorKind::Trap { message } => RuntimeErrorKind::Trap {
                message: clean(message),
            },
            RuntimeErrorKind::Output { message } => RuntimeErrorKind::Output {
                message: clean(message),
            },
            RuntimeErrorKind::Config { message } => RuntimeErrorKind::Config {
                message: clean(message),
            },
            RuntimeErrorKind::Guest { error } => RuntimeErrorKind::Guest {
                error: match error {
                    GuestError::NotFound(m) => GuestError::NotFound(clean(m)),
                    GuestError::Unavailable(m) => GuestError::Unavailable(clean(m)),
                    GuestError::InvalidConfig(m) => GuestError::InvalidConfig(clean(m)),
                    GuestError::Other(m) => GuestError::Other(clean(m)),
                },
            },
            RuntimeErrorKind::NetworkDenied {
                refused,
                granted,
                plugin_said,
            } => RuntimeErrorKind::NetworkDenied {
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
        };
        RuntimeError { kind, ..self }
    }

    /// The plugin's own error, if this is one.
    pub fn guest_error(&self) -> Option<&GuestError> {
        match &self.kind {
            RuntimeErrorKind::Guest { error } => Some(error),
            _ => None,
        }
    }
}

impl quarry_core::ErrorCode for RuntimeError {
    /// A document the plugin no longer finds is a 404; settings it or the host finds wrong are
    /// the caller's to fix; every other failure of a plugin is the service's.
    fn error_kind(&self) -> quarry_core::ErrorKind {
        use quarry_core::ErrorKind;
        match &self.kind {
            RuntimeErrorKind::Guest {
                error: GuestError::NotFound(_),
            } => ErrorKind::NotFound,
            RuntimeErrorKind::Guest {
                error: GuestError::InvalidConfig(_),
            }
            | RuntimeErrorKind::Config { .. } => ErrorKind::Validation,
            _ => ErrorKind::Internal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind renders as it did when each was its own variant with the plugin and the call.
    #[test]
    fn messages_name_the_plugin_and_the_call() {
        let path = PathBuf::from("/p/quarry-plugin.toml");
        let cases = [
            (
                RuntimeError::from(RuntimeErrorKind::Manifest {
                    path: path.clone(),
                    message: "bad".into(),
                }),
                "plugin manifest /p/quarry-plugin.toml: bad",
            ),
            (
                RuntimeError::from(RuntimeErrorKind::Io {
                    path: path.clone(),
                    source: std::io::Error::other("denied"),
                }),
                "/p/quarry-plugin.toml: denied",
            ),
            (
                RuntimeError::of(
                    "x",
                    RuntimeErrorKind::Component {
                        message: "m".into(),
                    },
                ),
                "plugin x: m",
            ),
            (
                RuntimeError::of(
                    "x",
                    RuntimeErrorKind::WitVersion {
                        message: "m".into(),
                    },
                ),
                "plugin x: m",
            ),
            (
                RuntimeError::of(
                    "x",
                    RuntimeErrorKind::Config {
                        message: "m".into(),
                    },
                ),
                "plugin x: m",
            ),
            (
                RuntimeError::in_call(
                    "x",
                    "list-docs",
                    RuntimeErrorKind::Timeout {
                        limit: Duration::from_millis(2500),
                    },
                ),
                "plugin x: list-docs timed out after 2.5 s and was stopped",
            ),
            (
                RuntimeError::in_call(
                    "x",
                    "list-docs",
                    RuntimeErrorKind::MemoryLimit {
                        limit_bytes: 64 << 20,
                    },
                ),
                "plugin x: list-docs exceeded the memory limit of 64 MiB and was stopped",
            ),
            (
                RuntimeError::in_call(
                    "x",
                    "read-file",
                    RuntimeErrorKind::Trap {
                        message: "t".into(),
                    },
                ),
                "plugin x: read-file crashed: t",
            ),
            (
                RuntimeError::in_call(
                    "x",
                    "fetch-content",
                    RuntimeErrorKind::Output {
                        message: "o".into(),
                    },
                ),
                "plugin x: fetch-content returned invalid output: o",
            ),
            (
                RuntimeError::in_call(
                    "x",
                    "fetch-content",
                    RuntimeErrorKind::Guest {
                        error: GuestError::NotFound("a".into()),
                    },
                ),
                "plugin x: fetch-content: not found: a",
            ),
            (
                RuntimeError::in_call(
                    "x",
                    "list-docs",
                    RuntimeErrorKind::NetworkDenied {
                        refused: vec![Refusal {
                            authority: "h:80".into(),
                            addresses: Vec::new(),
                        }],
                        granted: Vec::new(),
                        plugin_said: "s".into(),
                    },
                ),
                "plugin x: list-docs: the host refused a connection to h:80: not in this connector's grant (granted hosts: none); the plugin then failed: s",
            ),
        ];
        for (error, expected) in cases {
            assert_eq!(error.to_string(), expected);
        }
    }

    #[test]
    fn the_io_error_is_the_source() {
        let error = RuntimeError::from(RuntimeErrorKind::Io {
            path: PathBuf::from("/c"),
            source: std::io::Error::other("denied"),
        });
        let source = std::error::Error::source(&error).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("denied"));
    }
}
