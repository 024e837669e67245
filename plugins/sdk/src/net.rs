//! Connections to network servers (`quarry:connector/network`, WIT 0.5.0), for connectors that
//! speak a protocol of their own (IMAP, SMTP, LDAP). The host does the TLS and checks the
//! server's certificate; a connection reaches only a host and port of the connector's grant
//! (the host of a `url` setting whose manifest field names the scheme, such as
//! `imaps://mail.example.com`), and only when the manifest says `capabilities.streams = true`.
//! A connection may serve later calls of the same instance (keep it in the connector); the
//! host closes it when the instance ends or once it has gone unused for 30 s, after which it
//! answers `closed`.
//!
//! ```ignore
//! use quarry_sdk::net::{Connection, Security};
//! let mut imap = Connection::open("mail.example.com", 993, Security::Tls)?;
//! imap.write_all(b"a1 CAPABILITY\r\n")?;
//! let answer = imap.read(64 << 10, 10_000)?;
//! ```

use crate::bindings::quarry::connector::network;
pub use crate::bindings::quarry::connector::types::{ConnectionError, Security};

/// Most bytes one read answers or one write takes.
pub const MAX_IO_BYTES: usize = 1 << 20;

/// An open connection to a server.
pub struct Connection {
    inner: network::Connection,
}

impl Connection {
    /// Opens a connection to `host` on `port`, protected as `security` says.
    pub fn open(host: &str, port: u16, security: Security) -> Result<Connection, ConnectionError> {
        network::connect(host, port, security).map(|inner| Connection { inner })
    }

    /// What has arrived, at most `max_bytes`, waiting at most `timeout_ms` for it (never past
    /// the call's time limit). Empty when the server closed the connection.
    pub fn read(&mut self, max_bytes: u32, timeout_ms: u32) -> Result<Vec<u8>, ConnectionError> {
        self.inner.read(max_bytes, timeout_ms)
    }

    /// Sends all of `data`, in writes of at most [`MAX_IO_BYTES`].
    pub fn write_all(&mut self, data: &[u8]) -> Result<(), ConnectionError> {
        for part in data.chunks(MAX_IO_BYTES) {
            self.inner.write(part)?;
        }
        Ok(())
    }
}
