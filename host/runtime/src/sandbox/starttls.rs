//! STARTTLS, done by the host for a plugin's stream: the exchange in clear that has a server
//! of IMAP (RFC 9051, 6.2.1), SMTP (RFC 3207) or POP3 (RFC 2595) switch to TLS. The plugin's
//! first bytes then go over TLS: none of its own crosses the network in clear.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::connection_error::StreamError;

/// Longest line of the exchange in clear.
const MAX_LINE: usize = 8 << 10;
/// Most lines of the exchange in clear (a greeting or EHLO of many lines).
const MAX_LINES: usize = 64;

/// The protocol whose STARTTLS the host speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Upgrade {
    /// IMAP's `STARTTLS`.
    Imap,
    /// SMTP's `EHLO` then `STARTTLS`.
    Smtp,
    /// POP3's `STLS`.
    Pop3,
}

/// Has the server at the other end of `stream` switch to TLS; the caller then shakes hands.
pub(crate) async fn negotiate(stream: &mut TcpStream, upgrade: Upgrade) -> Result<(), StreamError> {
    match upgrade {
        Upgrade::Imap => {
            let greeting = line(stream).await?;
            if !greeting.starts_with("* OK") {
                return Err(refused("IMAP", &greeting));
            }
            stream.write_all(b"Q0 STARTTLS\r\n").await.map_err(io)?;
            for _ in 0..MAX_LINES {
                let answer = line(stream).await?;
                if answer.starts_with("* ") {
                    continue;
                }
                if answer.starts_with("Q0 OK") {
                    return Ok(());
                }
                return Err(refused("IMAP", &answer));
            }
            Err(refused("IMAP", "too many lines"))
        }
        Upgrade::Smtp => {
            expect_reply(stream, "220").await?;
            stream
                .write_all(b"EHLO quarry.invalid\r\n")
                .await
                .map_err(io)?;
            expect_reply(stream, "250").await?;
            stream.write_all(b"STARTTLS\r\n").await.map_err(io)?;
            expect_reply(stream, "220").await
        }
        Upgrade::Pop3 => {
            let greeting = line(stream).await?;
            if !greeting.starts_with("+OK") {
                return Err(refused("POP3", &greeting));
            }
            stream.write_all(b"STLS\r\n").await.map_err(io)?;
            let answer = line(stream).await?;
            if answer.starts_with("+OK") {
                Ok(())
            } else {
                Err(refused("POP3", &answer))
            }
        }
    }
}

/// Reads an SMTP reply (its lines `code-...` up to `code ...`) and checks its code.
async fn expect_reply(stream: &mut TcpStream, code: &str) -> Result<(), StreamError> {
    for _ in 0..MAX_LINES {
        let reply = line(stream).await?;
        if !reply.starts_with(code) {
            return Err(refused("SMTP", &reply));
        }
        if reply.as_bytes().get(3) != Some(&b'-') {
            return Ok(());
        }
    }
    Err(refused("SMTP", "too many lines"))
}

/// One line, without its end. Read a byte at a time: nothing after the line is taken from the
/// stream, since what follows belongs to TLS.
async fn line(stream: &mut TcpStream) -> Result<String, StreamError> {
    let mut bytes = Vec::new();
    loop {
        let byte = stream.read_u8().await.map_err(io)?;
        if byte == b'\n' {
            break;
        }
        if bytes.len() == MAX_LINE {
            return Err(StreamError::Tls(format!(
                "the server sent a line longer than {MAX_LINE} bytes before TLS"
            )));
        }
        bytes.push(byte);
    }
    if bytes.last() == Some(&b'\r') {
        bytes.pop();
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn refused(protocol: &str, answer: &str) -> StreamError {
    let answer: String = answer.chars().take(200).collect();
    StreamError::Tls(format!(
        "the server did not switch to TLS with {protocol}'s STARTTLS (it answered {answer:?}); Quarry sends nothing in clear: use a server that offers STARTTLS, or its TLS port"
    ))
}

fn io(error: std::io::Error) -> StreamError {
    if error.kind() == std::io::ErrorKind::UnexpectedEof {
        return StreamError::Closed;
    }
    StreamError::Other(error.to_string())
}
