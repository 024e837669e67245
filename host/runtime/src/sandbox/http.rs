//! Outgoing HTTP for plugins (`wasi:http`), only to the hosts the user granted.
//!
//! A grant entry is `host` (ports 80 and 443, the defaults of http and https) or `host:port`
//! (that port only). Hosts compare without regard to case. Every request is checked before a
//! connection is made; a refused one fails in the guest with `HTTP-request-denied`, and the host
//! remembers the authority so that the call's error names it (see `Session::call`). A granted
//! request is sent by `outbound`, which checks the addresses a name resolves to.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Semaphore;
use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody, WasiHttpHooks};

use crate::deadline::CallDeadline;
use crate::error::Refusal;
use crate::outbound::{self, Reach, Refused, Sent, Waits};
use crate::settings::Secrets;

/// A granted host, parsed: `host` or `host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Allowed {
    host: String,
    port: Option<u16>,
}

/// Parses a grant entry (`example.com`, `127.0.0.1:8080`, `[::1]:8080`). The error completes
/// "the host ... ".
pub(crate) fn check_host_entry(entry: &str) -> Result<(), String> {
    parse_entry(entry).map(|_| ())
}

fn parse_entry(entry: &str) -> Result<Allowed, String> {
    let bad = || {
        format!(
            "{entry:?} is not a host name: write it as `example.com` or `example.com:8080` (no scheme, no path)"
        )
    };
    let authority: http::uri::Authority = entry.parse().map_err(|_| bad())?;
    if authority.as_str() != entry || entry.contains('@') || authority.host().is_empty() {
        return Err(bad());
    }
    Ok(Allowed {
        host: authority.host().to_ascii_lowercase(),
        port: authority.port_u16(),
    })
}

/// The grant entry that allows exactly `url`'s host and port (`host` for a default port,
/// `host:port` otherwise). The error completes "`field` ...".
pub(crate) fn entry_for_url(url: &str) -> Result<String, String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|_| format!("must be a URL like https://example.com/feed.xml, got {url:?}"))?;
    let scheme = uri.scheme_str().unwrap_or_default();
    if scheme != "http" && scheme != "https" {
        return Err(format!("must start with http:// or https://, got {url:?}"));
    }
    let authority = uri
        .authority()
        .filter(|a| !a.host().is_empty() && !a.as_str().contains('@'))
        .ok_or_else(|| format!("must name a host (https://example.com/...), got {url:?}"))?;
    let host = authority.host().to_ascii_lowercase();
    Ok(match authority.port_u16() {
        Some(port) if !(scheme == "http" && port == 80 || scheme == "https" && port == 443) => {
            format!("{host}:{port}")
        }
        _ => host,
    })
}

/// The set of hosts one sandbox may reach.
#[derive(Debug, Clone, Default)]
pub(crate) struct HostGrant {
    allowed: Vec<Allowed>,
}

impl HostGrant {
    /// The grant of these entries; entries that do not parse allow nothing.
    pub(crate) fn new(entries: &[String]) -> HostGrant {
        HostGrant {
            allowed: entries.iter().filter_map(|e| parse_entry(e).ok()).collect(),
        }
    }

    /// Whether a request to `host` on `port` is allowed.
    fn allows(&self, host: &str, port: u16) -> bool {
        let host = host.to_ascii_lowercase();
        self.allowed.iter().any(|a| {
            a.host == host
                && match a.port {
                    Some(p) => p == port,
                    None => port == 80 || port == 443,
                }
        })
    }
}

/// Requests one instance may have in flight at once (each holds a connection).
const MAX_IN_FLIGHT: usize = 16;
/// Refusals kept per call for its error (the first ones; the rest are logged only).
const MAX_REFUSALS: usize = 16;

/// The `wasi:http` hooks of one plugin instance: the host check, the address check, and the
/// bounds in time and number.
pub(crate) struct NetworkGate {
    grant: HostGrant,
    /// When the running call must end: no request waits past it for a connection, a response or
    /// the next part of a body (the call's epoch deadline cannot interrupt the host while it
    /// waits).
    deadline: CallDeadline,
    /// Requests in flight: each holds a permit until its connection ends.
    in_flight: Arc<Semaphore>,
    /// What was refused during the current call.
    refused: Arc<Mutex<Vec<Refusal>>>,
    /// Secret settings, kept out of the log lines about refusals (a host name is the plugin's).
    secrets: Secrets,
}

impl NetworkGate {
    pub(crate) fn new(grant: HostGrant, secrets: Secrets) -> NetworkGate {
        NetworkGate {
            grant,
            deadline: CallDeadline::default(),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            refused: Arc::default(),
            secrets,
        }
    }

    /// Bounds the requests of the call that starts.
    pub(crate) fn set_deadline(&mut self, deadline: CallDeadline) {
        self.deadline = deadline;
    }

    /// What was refused since the last time this was asked, sorted.
    pub(crate) fn take_refused(&self) -> Vec<Refusal> {
        let mut refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
        let mut all = std::mem::take(&mut *refused);
        all.sort();
        all
    }
}

/// Logs a refusal and keeps it for the call's error (once, and at most [`MAX_REFUSALS`]).
fn record(refused: &Mutex<Vec<Refusal>>, secrets: &Secrets, refusal: Refusal) {
    let refusal = Refusal {
        authority: secrets.redact(&refusal.authority),
        ..refusal
    };
    tracing::warn!("refused a plugin's request: {refusal}");
    let mut refused = refused.lock().unwrap_or_else(PoisonError::into_inner);
    if refused.len() < MAX_REFUSALS && !refused.contains(&refusal) {
        refused.push(refusal);
    }
}

type ResponseFuture = Box<dyn Future<Output = Result<Sent, HttpError>> + Send>;

impl WasiHttpHooks for NetworkGate {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ) -> ResponseFuture {
        drop(fut);
        let uri = request.uri();
        let https = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
        let granted = uri.authority().filter(|a| {
            let port = a.port_u16().unwrap_or(if https { 443 } else { 80 });
            self.grant.allows(a.host(), port)
        });
        let authority = uri
            .authority()
            .map_or_else(|| "(no host)".to_owned(), |a| a.as_str().to_owned());
        let Some(reach) = granted.map(|a| Reach::of(a.host())) else {
            record(
                &self.refused,
                &self.secrets,
                Refusal {
                    authority,
                    addresses: Vec::new(),
                },
            );
            return Box::new(async { Err(HttpError::HttpRequestDenied) });
        };
        let Ok(permit) = self.in_flight.clone().try_acquire_owned() else {
            return Box::new(async { Err(HttpError::ConnectionLimitReached) });
        };
        // The whole exchange ends by the call's deadline, whatever the plugin asked for.
        let options = options.unwrap_or_default();
        let waits = Waits {
            deadline: self.deadline.at(),
            connect: options.connect_timeout,
            first_byte: options.first_byte_timeout,
            between_bytes: options.between_bytes_timeout,
        };
        let (refused, secrets) = (self.refused.clone(), self.secrets.clone());
        Box::new(async move {
            match outbound::send(request, reach, waits).await {
                Ok((response, io)) => {
                    // The permit is held as long as the connection.
                    let io = Box::into_pin(io);
                    let io: Box<dyn Future<Output = Result<(), HttpError>> + Send> =
                        Box::new(async move {
                            let _permit = permit;
                            io.await
                        });
                    Ok((response, io))
                }
                Err(Refused::Failed(e)) => Err(e),
                Err(Refused::Addresses(addresses)) => {
                    let refusal = Refusal {
                        authority,
                        addresses,
                    };
                    record(&refused, &secrets, refusal);
                    Err(HttpError::DestinationIpProhibited)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_and_urls() {
        assert_eq!(
            entry_for_url("http://127.0.0.1:8080/feed.xml"),
            Ok("127.0.0.1:8080".to_owned())
        );
        assert_eq!(
            entry_for_url("https://Example.com/feed"),
            Ok("example.com".to_owned())
        );
        assert_eq!(
            entry_for_url("https://example.com:443/"),
            Ok("example.com".to_owned())
        );
        for bad in [
            "ftp://example.com/",
            "example.com/feed",
            "https://u:p@example.com/",
            "",
        ] {
            assert!(entry_for_url(bad).is_err(), "{bad} should be refused");
        }
        for good in ["example.com", "127.0.0.1:8080", "[::1]:9000"] {
            assert!(check_host_entry(good).is_ok(), "{good} should be accepted");
        }
        for bad in ["https://example.com", "example.com/x", "", "a@b.com"] {
            assert!(check_host_entry(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn ports_must_match_the_grant() {
        let grant = HostGrant::new(&["example.com".to_owned(), "127.0.0.1:8080".to_owned()]);
        assert!(grant.allows("EXAMPLE.com", 443));
        assert!(grant.allows("example.com", 80));
        assert!(!grant.allows("example.com", 8443));
        assert!(grant.allows("127.0.0.1", 8080));
        assert!(!grant.allows("127.0.0.1", 8081));
        assert!(!grant.allows("other.example.com", 443));
        assert!(!HostGrant::default().allows("example.com", 443));
    }
}
