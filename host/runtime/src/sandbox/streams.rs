//! Streams to network servers for plugins (`network.open-stream`, WIT 0.5.0), only to the hosts
//! and ports of the connector's grant and only for a plugin whose manifest asks for streams.
//! The host resolves the name and connects to a checked address (`outbound.rs`, as for HTTP),
//! and does the TLS itself (`tls.rs`): the plugin sees only the clear bytes of a verified
//! connection. STARTTLS is the host's too (`starttls.rs`), so no byte of the plugin's crosses
//! the network in clear, unless the user consented to it for this connector (a setting of type
//! `plaintext-consent` set to true). Bounds: at most [`MAX_OPEN`] streams at once, every wait within the
//! call's deadline, at most [`MAX_IO_BYTES`] a read or write; a stream lives with its instance
//! (a later call of the same instance may use it: a sync does not log in again for every
//! message) and is closed when the instance ends (a session's end, a trap) or once it has not
//! been used for [`MAX_IDLE`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wasmtime_wasi::runtime::in_tokio;

use super::connection_error::StreamError;
use super::outbound::{self, Reach, Refused, Stream, Waits};
use super::starttls::{self, Upgrade};
use crate::error::Refusal;
use crate::policy::deadline::CallDeadline;
use crate::policy::grant::Plaintext;
use crate::policy::hosts::HostGrant;
use crate::policy::secrets::Secrets;

/// Streams one instance may have open at once.
pub(crate) const MAX_OPEN: usize = 4;
/// Most bytes one read answers or one write takes.
pub(crate) const MAX_IO_BYTES: u32 = 1 << 20;
/// A stream unused this long is closed when the next call begins.
pub(crate) const MAX_IDLE: Duration = Duration::from_secs(30);

/// How a plugin asks a stream to be protected (the WIT's `security`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Security {
    /// TLS from the first byte.
    Tls,
    /// Clear at first, then TLS by the protocol's STARTTLS, done by the host.
    StartTls(Upgrade),
    /// Never encrypted: only with the user's consent.
    Plain,
}

/// The handle a plugin holds for a stream: a slot of its instance's gate, and the stream's
/// number (a slot is used again for later streams; an old handle does not reach them).
#[derive(Debug)]
pub struct OpenStream {
    slot: usize,
    number: u64,
}

/// An open stream in its slot.
struct Open {
    number: u64,
    stream: Box<dyn Stream>,
    last_used: Instant,
}

/// The streams of one plugin instance: what it may reach, and what it has open.
pub(crate) struct StreamGate {
    grant: HostGrant,
    /// Hosts granted as text, for refusals' messages.
    granted: Vec<String>,
    /// The TLS settings, when the manifest asks for streams (`capabilities.streams`).
    tls: Option<Arc<rustls::ClientConfig>>,
    /// Whether the user consented to connections in clear.
    plaintext: Plaintext,
    deadline: CallDeadline,
    /// The number of the last stream opened.
    opened: u64,
    open: Vec<Option<Open>>,
    /// Bytes read and written since [`StreamGate::take_bytes`].
    bytes: u64,
    /// Refusals of the current call, for its error.
    refused: Vec<Refusal>,
    secrets: Secrets,
}

impl StreamGate {
    /// The gate of a plugin granted `granted` hosts, allowed streams with the TLS settings
    /// `tls` when it has them, and connections in clear as `plaintext` says.
    pub(crate) fn new(
        granted: &[String],
        tls: Option<Arc<rustls::ClientConfig>>,
        plaintext: Plaintext,
        secrets: Secrets,
    ) -> StreamGate {
        StreamGate {
            grant: HostGrant::new(granted),
            granted: granted.to_vec(),
            tls,
            plaintext,
            deadline: CallDeadline::default(),
            opened: 0,
            open: Vec::new(),
            bytes: 0,
            refused: Vec::new(),
            secrets,
        }
    }

    /// Starts a call: its streams wait no longer than `deadline`, and those unused for
    /// [`MAX_IDLE`] are closed.
    pub(crate) fn begin_call(&mut self, deadline: CallDeadline) {
        self.deadline = deadline;
        for slot in &mut self.open {
            if slot
                .as_ref()
                .is_some_and(|open| open.last_used.elapsed() >= MAX_IDLE)
            {
                *slot = None;
            }
        }
    }

    /// Bytes read and written since the last time this was asked.
    pub(crate) fn take_bytes(&mut self) -> u64 {
        std::mem::take(&mut self.bytes)
    }

    /// What was refused during the call, sorted.
    pub(crate) fn take_refused(&mut self) -> Vec<Refusal> {
        let mut refused = std::mem::take(&mut self.refused);
        refused.sort();
        refused
    }

    /// Opens a stream to `host` on `port`, protected as `security` says.
    pub(crate) fn open(
        &mut self,
        host: &str,
        port: u16,
        security: Security,
    ) -> Result<OpenStream, StreamError> {
        let tls = self.check(host, port, security)?;
        let Some(slot) = self.free_slot() else {
            return Err(StreamError::Limit(format!(
                "at most {MAX_OPEN} connections may be open at once; close one first"
            )));
        };
        let waits = Waits {
            deadline: self.deadline.at(),
            connect: None,
            first_byte: None,
            between_bytes: None,
        };
        let reach = Reach::of(host);
        let name = host.to_owned();
        // A server without STARTTLS: the refusal names the consent the plugin asks for.
        let clear_hint = match &self.plaintext {
            Plaintext::Declined(key) => {
                format!("; or, on a network you trust, set `{key}` to true to connect unencrypted")
            }
            Plaintext::NotAsked | Plaintext::Allowed(_) => String::new(),
        };
        let opened = in_tokio(async move {
            let addresses = outbound::resolve_allowed(&name, port, &reach, &waits).await?;
            let stream = outbound::connect(&addresses, waits.within(None))
                .await
                .map_err(Refused::Failed)?;
            let how = (security, tls, clear_hint.as_str());
            Ok::<_, Refused>(connect_as(stream, &name, how, &waits).await)
        });
        let stream = match opened {
            Ok(Ok(stream)) => stream,
            Ok(Err(error)) => return Err(error),
            Err(Refused::Addresses(addresses)) => {
                let refusal = Refusal {
                    authority: format!("{host}:{port}"),
                    addresses,
                };
                let message = refusal.to_string();
                self.note(refusal);
                return Err(StreamError::Denied(message));
            }
            Err(Refused::Failed(error)) => {
                return Err(StreamError::Unreachable(format!("{host}:{port}: {error}")));
            }
        };
        self.opened += 1;
        self.open[slot] = Some(Open {
            number: self.opened,
            stream,
            last_used: Instant::now(),
        });
        Ok(OpenStream {
            slot,
            number: self.opened,
        })
    }

    /// What has arrived on `stream`, at most `max_bytes`, waiting at most `timeout` for it.
    pub(crate) fn read(
        &mut self,
        stream: &OpenStream,
        max_bytes: u32,
        timeout: Duration,
    ) -> Result<Vec<u8>, StreamError> {
        if max_bytes > MAX_IO_BYTES {
            return Err(StreamError::Limit(format!(
                "a read answers at most {MAX_IO_BYTES} bytes, {max_bytes} were asked for"
            )));
        }
        let wait = timeout.min(self.deadline.left());
        let connection = self.connection(stream)?;
        let mut buffer = vec![0u8; max_bytes.min(64 << 10) as usize];
        let read =
            in_tokio(async { tokio::time::timeout(wait, connection.read(&mut buffer)).await });
        match read {
            Err(_) => Err(StreamError::TimedOut),
            Ok(Ok(n)) => {
                buffer.truncate(n);
                self.bytes += n as u64;
                if n == 0 {
                    self.open[stream.slot] = None;
                }
                Ok(buffer)
            }
            Ok(Err(error)) => {
                self.open[stream.slot] = None;
                Err(io_error(&error))
            }
        }
    }

    /// Sends all of `data` on `stream`, within the call's deadline.
    pub(crate) fn write(&mut self, stream: &OpenStream, data: &[u8]) -> Result<(), StreamError> {
        if data.len() > MAX_IO_BYTES as usize {
            return Err(StreamError::Limit(format!(
                "a write takes at most {MAX_IO_BYTES} bytes, {} were given",
                data.len()
            )));
        }
        let wait = self.deadline.left();
        let connection = self.connection(stream)?;
        let written = in_tokio(async {
            tokio::time::timeout(wait, async {
                connection.write_all(data).await?;
                connection.flush().await
            })
            .await
        });
        match written {
            Err(_) => {
                self.open[stream.slot] = None;
                Err(StreamError::TimedOut)
            }
            Ok(Ok(())) => {
                self.bytes += data.len() as u64;
                Ok(())
            }
            Ok(Err(error)) => {
                self.open[stream.slot] = None;
                Err(io_error(&error))
            }
        }
    }

    /// Closes `stream` (the plugin dropped its handle).
    pub(crate) fn close(&mut self, stream: &OpenStream) {
        if let Some(slot) = self.open.get_mut(stream.slot)
            && slot
                .as_ref()
                .is_some_and(|open| open.number == stream.number)
        {
            *slot = None;
        }
    }

    /// Refuses what the manifest or the grant does not allow; answers the TLS settings.
    fn check(
        &mut self,
        host: &str,
        port: u16,
        security: Security,
    ) -> Result<Arc<rustls::ClientConfig>, StreamError> {
        let Some(tls) = self.tls.clone() else {
            return Err(StreamError::Denied(
                "this plugin's manifest does not ask for connections (capabilities.streams)".into(),
            ));
        };
        if !self.grant.allows(host, port) {
            let refusal = Refusal {
                authority: format!("{host}:{port}"),
                addresses: Vec::new(),
            };
            let message = format!(
                "{refusal} (granted: {})",
                if self.granted.is_empty() {
                    "none".to_owned()
                } else {
                    self.granted.join(", ")
                }
            );
            self.note(refusal);
            return Err(StreamError::Denied(message));
        }
        if security == Security::Plain {
            match &self.plaintext {
                Plaintext::Allowed(clear) if HostGrant::new(clear).allows(host, port) => {}
                Plaintext::Allowed(clear) => {
                    return Err(StreamError::Denied(format!(
                        "{host}:{port}: a connection in clear was asked for, and the user consented to one only to {}; use TLS or STARTTLS",
                        clear.join(", ")
                    )));
                }
                Plaintext::Declined(key) => {
                    return Err(StreamError::Denied(format!(
                        "{host}:{port}: a connection in clear was asked for, and the setting `{key}` does not allow one; use TLS or STARTTLS, or, on a network you trust, set `{key}` to true (the password and data then cross the network unencrypted)"
                    )));
                }
                Plaintext::NotAsked => {
                    return Err(StreamError::Denied(format!(
                        "{host}:{port}: a connection in clear was asked for, and Quarry opens one only with the user's consent, which this plugin's manifest does not ask for; use TLS or STARTTLS"
                    )));
                }
            }
        }
        Ok(tls)
    }

    fn free_slot(&mut self) -> Option<usize> {
        if let Some(free) = self.open.iter().position(Option::is_none) {
            return Some(free);
        }
        (self.open.len() < MAX_OPEN).then(|| {
            self.open.push(None);
            self.open.len() - 1
        })
    }

    fn connection(&mut self, stream: &OpenStream) -> Result<&mut Box<dyn Stream>, StreamError> {
        let open = self
            .open
            .get_mut(stream.slot)
            .and_then(Option::as_mut)
            .filter(|open| open.number == stream.number)
            .ok_or(StreamError::Closed)?;
        open.last_used = Instant::now();
        Ok(&mut open.stream)
    }

    fn note(&mut self, refusal: Refusal) {
        let refusal = Refusal {
            authority: self.secrets.redact(&refusal.authority),
            ..refusal
        };
        tracing::warn!("refused a plugin's stream: {refusal}");
        if self.refused.len() < 16 && !self.refused.contains(&refusal) {
            self.refused.push(refusal);
        }
    }
}

/// `stream`, connected to `host`, made what `security` asks: TLS at once (by `tls`), or after
/// the protocol's STARTTLS (whose refusal ends with `clear_hint`), or left in clear.
async fn connect_as(
    stream: tokio::net::TcpStream,
    host: &str,
    (security, tls, clear_hint): (Security, Arc<rustls::ClientConfig>, &str),
    waits: &Waits,
) -> Result<Box<dyn Stream>, StreamError> {
    let mut stream = stream;
    // A protocol of commands and answers: each write is a whole command, sent at once (Nagle's
    // wait for more would hold every small command back behind the server's delayed ACK).
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!("TCP_NODELAY on a plugin's connection: {e}");
    }
    match security {
        Security::Plain => return Ok(Box::new(stream)),
        Security::Tls => {}
        Security::StartTls(upgrade) => {
            tokio::time::timeout(
                waits.within(None),
                starttls::negotiate(&mut stream, upgrade),
            )
            .await
            .map_err(|_| StreamError::TimedOut)?
            .map_err(|error| match error {
                StreamError::Tls(refusal) => StreamError::Tls(format!("{refusal}{clear_hint}")),
                other => other,
            })?;
        }
    }
    let name = rustls::pki_types::ServerName::try_from(host.to_owned())
        .map_err(|e| StreamError::Tls(format!("{host} is not a name TLS can verify: {e}")))?;
    let connector = tokio_rustls::TlsConnector::from(tls);
    match tokio::time::timeout(waits.within(None), connector.connect(name, stream)).await {
        Ok(Ok(stream)) => Ok(Box::new(stream)),
        Ok(Err(error)) => Err(super::tls::handshake_error(host, &error)),
        Err(_) => Err(StreamError::TimedOut),
    }
}

fn io_error(error: &std::io::Error) -> StreamError {
    use std::io::ErrorKind;
    match error.kind() {
        ErrorKind::ConnectionReset | ErrorKind::BrokenPipe | ErrorKind::UnexpectedEof => {
            StreamError::Closed
        }
        _ => StreamError::Other(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(plaintext: Plaintext) -> StreamGate {
        let none: [&str; 0] = [];
        let tls = super::super::tls::client_config(&none).expect("the system's roots");
        StreamGate::new(
            &["127.0.0.1:143".to_owned()],
            Some(tls),
            plaintext,
            Secrets::default(),
        )
    }

    fn refusal(plaintext: Plaintext) -> String {
        match gate(plaintext).check("127.0.0.1", 143, Security::Plain) {
            Err(StreamError::Denied(message)) => message,
            other => panic!("a connection in clear without consent: {other:?}"),
        }
    }

    #[test]
    fn a_connection_in_clear_needs_the_users_consent_and_the_refusal_names_it() {
        let allowed = || Plaintext::Allowed(vec!["127.0.0.1:143".to_owned()]);
        assert!(
            gate(allowed())
                .check("127.0.0.1", 143, Security::Plain)
                .is_ok()
        );
        let declined = refusal(Plaintext::Declined("allow_plaintext".into()));
        assert!(
            declined.contains("set `allow_plaintext` to true"),
            "{declined}"
        );
        let not_asked = refusal(Plaintext::NotAsked);
        assert!(not_asked.contains("user's consent"), "{not_asked}");
        // Consent is to the consented server only, not to every granted one.
        let gate_of_two = StreamGate::new(
            &["127.0.0.1:143".to_owned(), "127.0.0.1:993".to_owned()],
            gate(Plaintext::NotAsked).tls,
            allowed(),
            Secrets::default(),
        );
        let mut gate_of_two = gate_of_two;
        assert!(matches!(
            gate_of_two.check("127.0.0.1", 993, Security::Plain),
            Err(StreamError::Denied(m)) if m.contains("only to 127.0.0.1:143")
        ));
    }
}
