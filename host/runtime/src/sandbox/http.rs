//! Outgoing HTTP for plugins (`wasi:http`), only to the hosts the user granted
//! (`policy/hosts.rs`). Every request is checked before a connection is made; a refused one
//! fails in the guest with `HTTP-request-denied`, and the host remembers the authority so that
//! the call's error names it (see `Session::call`). A granted request is sent by `outbound`,
//! which checks the addresses a name resolves to.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Semaphore;
use wasmtime_wasi_http::p2::bindings::http::types::ErrorCode;
use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody, WasiHttpHooks};

use super::outbound::{self, Reach, Refused, Sent, Waits};
use crate::error::Refusal;
use crate::policy::deadline::CallDeadline;
use crate::policy::hosts::HostGrant;
use crate::policy::secrets::Secrets;

/// Requests one instance may have in flight at once (each holds a connection).
const MAX_IN_FLIGHT: usize = 16;
/// Refusals kept per call for its error (the first ones; the rest are logged only).
const MAX_REFUSALS: usize = 16;

/// The `wasi:http` hooks of one plugin instance: the host check, the address check, and the
/// bounds in time and number.
pub(crate) struct NetworkGate {
    grant: HostGrant,
    /// The TLS settings of HTTPS requests, when the connector trusts authorities of its own.
    tls: Option<Arc<rustls::ClientConfig>>,
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
    pub(crate) fn new(
        grant: HostGrant,
        tls: Option<Arc<rustls::ClientConfig>>,
        secrets: Secrets,
    ) -> NetworkGate {
        NetworkGate {
            grant,
            tls,
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
    /// A certificate that did not verify is told apart from other TLS failures, so that the
    /// connector can name the fix (its CA file setting).
    fn p2_error_from_tls(&mut self, error: &std::io::Error) -> ErrorCode {
        let invalid = error
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
            .is_some_and(|e| matches!(e, rustls::Error::InvalidCertificate(_)));
        tracing::debug!("a plugin's TLS handshake failed: {error}");
        if invalid {
            ErrorCode::TlsCertificateError
        } else {
            ErrorCode::TlsProtocolError
        }
    }

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
        let tls = self.tls.clone();
        Box::new(async move {
            match outbound::send(request, reach, waits, tls).await {
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
