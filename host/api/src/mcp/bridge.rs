//! `quarry mcp` while a server runs on the data folder: relays the client's JSON-RPC messages
//! (one per line on stdin) to the server's `/mcp` with the integration's key, and the server's
//! answers back to stdout, one per line. The server does the work, so one process holds the
//! index and the model, and its limits and audit log count these calls too.

use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderValue, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

use crate::extractors::input::MAX_BODY_BYTES;

/// Longest answer relayed (a whole long document can be large).
const MAX_ANSWER_BYTES: usize = 256 << 20;
/// How long one message may take the server.
const MESSAGE_TIMEOUT: Duration = Duration::from_secs(300);
/// The header that carries the negotiated protocol version over HTTP.
const PROTOCOL_HEADER: &str = "mcp-protocol-version";

/// Relays stdin to `base_url`'s `/mcp` (a plain `http://host:port[/prefix]` URL) and the
/// answers to stdout until stdin ends.
pub async fn bridge_stdio(base_url: &str, key: &str) -> std::io::Result<()> {
    relay(base_url, key, tokio::io::stdin(), tokio::io::stdout()).await
}

async fn relay(
    base_url: &str,
    key: &str,
    input: impl AsyncRead + Unpin,
    mut output: impl AsyncWrite + Unpin,
) -> std::io::Result<()> {
    let endpoint = Endpoint::parse(base_url)?;
    let mut input = BufReader::new(input);
    let mut version: Option<String> = None;
    loop {
        let line = match next_line(&mut input).await? {
            Line::End => return Ok(()),
            Line::TooLong => {
                let error = rpc_error(&Value::Null, -32600, "message too large");
                write_line(&mut output, &error).await?;
                continue;
            }
            Line::Text(line) if line.trim().is_empty() => continue,
            Line::Text(line) => line,
        };
        let message: Value = match serde_json::from_str(&line) {
            Ok(message) => message,
            Err(e) => {
                let error = rpc_error(&Value::Null, -32700, &format!("not JSON: {e}"));
                write_line(&mut output, &error).await?;
                continue;
            }
        };
        let id = message.get("id").cloned();
        let asked = per_request_version(&message).or_else(|| version.clone());
        for answer in endpoint
            .send(key, line, asked.as_deref())
            .await
            .unwrap_or_else(|why| {
                // Only requests get an answer; a notification that failed is dropped.
                id.iter().map(|id| rpc_error(id, -32603, &why)).collect()
            })
        {
            if message["method"] == "initialize"
                && let Some(v) = answer["result"]["protocolVersion"].as_str()
            {
                version = Some(v.to_owned());
            }
            write_line(&mut output, &answer).await?;
        }
    }
}

enum Line {
    Text(String),
    TooLong,
    End,
}

/// The next line of `input`, without reading more than the largest request allowed.
async fn next_line(input: &mut (impl AsyncBufReadExt + Unpin)) -> std::io::Result<Line> {
    let mut bytes = Vec::new();
    let limit = (MAX_BODY_BYTES + 1) as u64;
    let read = (&mut *input)
        .take(limit)
        .read_until(b'\n', &mut bytes)
        .await?;
    if read == 0 {
        return Ok(Line::End);
    }
    if bytes.last() != Some(&b'\n') && read as u64 == limit {
        // Skip the rest of the line.
        let mut rest = Vec::new();
        input.read_until(b'\n', &mut rest).await?;
        return Ok(Line::TooLong);
    }
    Ok(Line::Text(String::from_utf8_lossy(&bytes).into_owned()))
}

async fn write_line(
    output: &mut (impl AsyncWrite + Unpin),
    message: &Value,
) -> std::io::Result<()> {
    let mut line = message.to_string();
    line.push('\n');
    output.write_all(line.as_bytes()).await?;
    output.flush().await
}

/// The protocol version a message carries in its own metadata (MCP 2026-07-28 requests).
fn per_request_version(message: &Value) -> Option<String> {
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        .as_str()
        .map(str::to_owned)
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Where the server's `/mcp` is.
struct Endpoint {
    authority: String,
    path: String,
}

impl Endpoint {
    fn parse(base_url: &str) -> std::io::Result<Endpoint> {
        let rest = base_url.strip_prefix("http://").ok_or_else(|| {
            std::io::Error::other(format!("the server URL {base_url:?} is not an http:// URL"))
        })?;
        let (authority, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let prefix = prefix.trim_end_matches('/');
        Ok(Endpoint {
            authority: authority.to_owned(),
            path: if prefix.is_empty() {
                "/mcp".to_owned()
            } else {
                format!("/{prefix}/mcp")
            },
        })
    }

    /// Posts one message; its answers (none for a notification), or why there are none.
    async fn send(
        &self,
        key: &str,
        body: String,
        version: Option<&str>,
    ) -> Result<Vec<Value>, String> {
        let exchange = self.exchange(key, body, version);
        let (status, is_stream, bytes) = tokio::time::timeout(MESSAGE_TIMEOUT, exchange)
            .await
            .map_err(|_| {
            format!(
                "Quarry's server did not answer within {} s",
                MESSAGE_TIMEOUT.as_secs()
            )
        })??;
        let text = String::from_utf8_lossy(&bytes);
        if status == StatusCode::ACCEPTED {
            return Ok(Vec::new());
        }
        if !status.is_success() {
            return Err(format!(
                "Quarry's server answered {status}: {}",
                text.trim()
            ));
        }
        let payloads: Vec<&str> = if is_stream {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .collect()
        } else {
            vec![&text]
        };
        payloads
            .into_iter()
            .map(|p| {
                serde_json::from_str(p).map_err(|e| format!("Quarry's server sent no JSON: {e}"))
            })
            .collect()
    }

    async fn exchange(
        &self,
        key: &str,
        body: String,
        version: Option<&str>,
    ) -> Result<(StatusCode, bool, Bytes), String> {
        let unreachable = |e: &dyn std::fmt::Display| {
            format!("cannot reach Quarry's server at {}: {e}", self.authority)
        };
        let stream = tokio::net::TcpStream::connect(&self.authority)
            .await
            .map_err(|e| unreachable(&e))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| unreachable(&e))?;
        tokio::spawn(connection);
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(&self.path)
            .header(header::HOST, &self.authority)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header(header::AUTHORIZATION, format!("Bearer {key}"));
        if let Some(version) = version.and_then(|v| HeaderValue::from_str(v).ok()) {
            request = request.header(PROTOCOL_HEADER, version);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| unreachable(&e))?;
        let status = response.status();
        let is_stream = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let bytes = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(|e| format!("reading Quarry's answer: {e}"))?
            .to_bytes();
        Ok((status, is_stream, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_keeps_a_path_prefix() -> std::io::Result<()> {
        let plain = Endpoint::parse("http://127.0.0.1:4747")?;
        assert_eq!(
            (plain.authority.as_str(), plain.path.as_str()),
            ("127.0.0.1:4747", "/mcp")
        );
        let prefixed = Endpoint::parse("http://localhost:8080/quarry/")?;
        assert_eq!(prefixed.path, "/quarry/mcp");
        assert!(Endpoint::parse("https://example.com").is_err());
        Ok(())
    }

    #[tokio::test]
    async fn a_line_longer_than_a_request_may_be_is_skipped_whole() -> std::io::Result<()> {
        let long = "x".repeat(MAX_BODY_BYTES + 10);
        let input = format!("{long}\n{{}}\n");
        let mut reader = BufReader::new(input.as_bytes());
        assert!(matches!(next_line(&mut reader).await?, Line::TooLong));
        assert!(matches!(next_line(&mut reader).await?, Line::Text(t) if t == "{}\n"));
        assert!(matches!(next_line(&mut reader).await?, Line::End));
        Ok(())
    }
}
