//! Attempts on the host's connections (`quarry:connector/network`): to a port outside the
//! grant, in clear, past the number allowed, and a connection kept past the call that opened it.

use std::cell::RefCell;

use quarry_sdk::Config;
use quarry_sdk::net::{Connection, Security};

thread_local! {
    /// A connection `keep` opened in an earlier call.
    static KEPT: RefCell<Option<Connection>> = const { RefCell::new(None) };
}

/// The granted server (`server`, `tls://host:port`) and another loopback port (`port`).
fn target(config: &Config) -> (String, u16, u16) {
    let server = config.get("server").unwrap_or("tls://127.0.0.1:9");
    let authority = server.trim_start_matches("tls://").trim_end_matches('/');
    let (host, port) = authority.rsplit_once(':').unwrap_or((authority, "9"));
    let other = config.get("port").and_then(|p| p.parse().ok()).unwrap_or(9);
    (host.to_owned(), port.parse().unwrap_or(9), other)
}

/// Tries each attempt and reports it as `DENIED`, `TLS`, `LIMIT`, `OTHER` or `CONNECTED <what>`
/// (with the server's first line).
pub fn attempts(config: &Config) -> String {
    let (host, port, other) = target(config);
    let mut report = String::new();
    let mut note = |what: &str, opened: Result<Connection, quarry_sdk::net::ConnectionError>| {
        let line = match opened {
            Ok(mut connection) => {
                let greeting = connection.read(4096, 5000).unwrap_or_default();
                let first = String::from_utf8_lossy(&greeting);
                format!("CONNECTED {what}: {}", first.lines().next().unwrap_or(""))
            }
            Err(e) => format!("{} {what}: {e:?}", kind(&e)),
        };
        report.push_str(&line);
        report.push('\n');
    };
    note(
        &format!("tls {host}:{other}"),
        Connection::open(&host, other, Security::Tls),
    );
    note(
        &format!("plain {host}:{port}"),
        Connection::open(&host, port, Security::Plain),
    );
    note(
        &format!("tls {host}:{port}"),
        Connection::open(&host, port, Security::Tls),
    );
    let mut open = Vec::new();
    for n in 0..5 {
        match Connection::open(&host, port, Security::Tls) {
            Ok(connection) => open.push(connection),
            Err(e) => {
                report.push_str(&format!("{} connection {n}: {e:?}\n", kind(&e)));
                break;
            }
        }
    }
    report.push_str(&format!("OPENED {} at once\n", open.len()));
    report
}

/// Opens a connection to the granted server and keeps it for the next call.
pub fn keep(config: &Config) -> String {
    let (host, port, _) = target(config);
    match Connection::open(&host, port, Security::Tls) {
        Ok(connection) => {
            KEPT.with(|kept| *kept.borrow_mut() = Some(connection));
            "KEPT".to_owned()
        }
        Err(e) => format!("{} {e:?}", kind(&e)),
    }
}

/// Uses the connection an earlier call kept, if this instance has one.
pub fn use_kept() -> String {
    KEPT.with(|kept| match kept.borrow_mut().as_mut() {
        None => "NONE".to_owned(),
        Some(connection) => match connection.read(4096, 2000) {
            Ok(bytes) => format!("READ {} bytes", bytes.len()),
            Err(e) => format!("{} {e:?}", kind(&e)),
        },
    })
}

fn kind(error: &quarry_sdk::net::ConnectionError) -> &'static str {
    use quarry_sdk::net::ConnectionError as E;
    match error {
        E::Denied(_) => "DENIED",
        E::Tls(_) => "TLS",
        E::Limit(_) => "LIMIT",
        E::Closed => "CLOSED",
        _ => "OTHER",
    }
}
