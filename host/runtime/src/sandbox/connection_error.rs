//! Why a plugin's connection could not be opened, read or written: what `streams.rs`,
//! `starttls.rs` and `tls.rs` answer, and the WIT's `connection-error` is made from.

/// Why a stream could not be opened, read or written (the WIT's `connection-error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StreamError {
    /// Not allowed; says what was refused and what is granted.
    Denied(String),
    /// The server could not be reached.
    Unreachable(String),
    /// TLS failed, or the server refused STARTTLS.
    Tls(String),
    /// Nothing arrived within the wait.
    TimedOut,
    /// The stream is closed.
    Closed,
    /// Too many streams, or too much asked at once.
    Limit(String),
    /// Another error of the connection.
    Other(String),
}
