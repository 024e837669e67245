//! Sending a plugin's granted HTTP request. The host name is resolved here and every address it
//! resolves to is checked before one is connected to; the connection goes to that checked
//! address and the name is never resolved again, so a name cannot answer one address for the
//! check and another for the connection (DNS rebinding). A name that leads only to loopback,
//! private, link-local, shared or metadata addresses is refused: such an address is reachable
//! only when the grant names it (`127.0.0.1:8080`, `[::1]:9000`, `192.168.1.5`, or `localhost`
//! for loopback).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::uri::Scheme;
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use tokio::net::TcpStream;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error as HttpError, WasiBody};

/// What a request may reach, decided from its host as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// A name: only public addresses it resolves to.
    PublicOnly,
    /// An address the grant names: exactly that one.
    Exactly(IpAddr),
    /// `localhost`, named by the grant: its loopback addresses.
    Loopback,
}

impl Reach {
    /// What a granted request to `host` (as the URI writes it) may reach.
    pub(crate) fn of(host: &str) -> Reach {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            Reach::Exactly(ip)
        } else if host.eq_ignore_ascii_case("localhost") {
            Reach::Loopback
        } else {
            Reach::PublicOnly
        }
    }

    fn allows(self, ip: IpAddr) -> bool {
        match self {
            Reach::PublicOnly => is_public(ip),
            Reach::Exactly(granted) => canonical(ip) == canonical(granted),
            Reach::Loopback => canonical(ip).is_loopback(),
        }
    }
}

/// Why a request did not leave.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The name resolved only to addresses it may not reach (listed).
    Addresses(Vec<IpAddr>),
    /// Resolving or connecting failed.
    Failed(HttpError),
}

/// The response and the future that drives its connection, as `wasi:http` hooks return them.
pub(crate) type Sent = (
    http::Response<WasiBody>,
    Box<dyn Future<Output = Result<(), HttpError>> + Send>,
);

/// How long each phase of a request may wait: what the plugin asked for, never past the call's
/// deadline.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waits {
    /// The call's deadline: nothing of the request outlives it.
    pub deadline: Instant,
    /// Connecting (each address tried gets a share of it).
    pub connect: Option<Duration>,
    /// From sending the request to the start of the response.
    pub first_byte: Option<Duration>,
    /// Between two parts of the response's body.
    pub between_bytes: Option<Duration>,
}

impl Waits {
    /// `asked`, or what is left of the call, whichever ends first.
    pub(crate) fn within(&self, asked: Option<Duration>) -> Duration {
        let left = self.deadline.saturating_duration_since(Instant::now());
        asked.map_or(left, |asked| asked.min(left))
    }
}

/// Sends `request` to an address its host resolves to that `reach` allows, each phase bounded
/// by `waits`: the connection, the response's start, every part of its body and the connection
/// itself all end by the call's deadline at the latest.
pub(crate) async fn send(
    mut request: http::Request<WasiBody>,
    reach: Reach,
    waits: Waits,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> Result<Sent, Refused> {
    let uri = request.uri().clone();
    let authority = uri
        .authority()
        .ok_or(Refused::Failed(HttpError::HttpRequestUriInvalid))?;
    let tls_of_uri = uri.scheme() == Some(&Scheme::HTTPS);
    let port = authority
        .port_u16()
        .unwrap_or(if tls_of_uri { 443 } else { 80 });
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let left = || waits.within(None);
    let allowed = resolve_allowed(&host, port, &reach, &waits).await?;
    let tls = tls_of_uri.then(|| tls.unwrap_or_else(|| TLS.clone()));
    let stream = open_stream(&allowed, host, tls, &waits).await?;
    let (mut sender, connection) = match tokio::time::timeout(
        left(),
        hyper::client::conn::http1::Builder::new().handshake(TokioIo::new(stream)),
    )
    .await
    {
        Ok(Ok(handshake)) => handshake,
        Ok(Err(e)) => return Err(Refused::Failed(HttpError::from(e))),
        Err(_) => return Err(Refused::Failed(HttpError::ConnectionTimeout)),
    };
    // The request line carries the path only: scheme and authority go to proxies.
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    *request.uri_mut() =
        http::Uri::try_from(path).map_err(|_| Refused::Failed(HttpError::HttpRequestUriInvalid))?;

    let deadline = tokio::time::Instant::from_std(waits.deadline);
    let mut connection = Box::pin(tokio::time::timeout_at(deadline, connection));
    let first_byte = waits.within(waits.first_byte);
    let mut response = Box::pin(tokio::time::timeout(
        first_byte,
        sender.send_request(request),
    ));
    // Drive the connection until the response head arrives.
    let mut finished: Option<Result<Result<(), hyper::Error>, tokio::time::error::Elapsed>> = None;
    let head = std::future::poll_fn(|cx| {
        if let Poll::Ready(outcome) = response.as_mut().poll(cx) {
            return Poll::Ready(outcome);
        }
        if finished.is_none()
            && let Poll::Ready(outcome) = connection.as_mut().poll(cx)
        {
            finished = Some(outcome);
            return response.as_mut().poll(cx);
        }
        Poll::Pending
    })
    .await;
    let response = match head {
        Ok(Ok(response)) => response,
        Ok(Err(e)) => return Err(Refused::Failed(HttpError::from(e))),
        Err(_) => return Err(Refused::Failed(HttpError::ConnectionReadTimeout)),
    };
    let idle = waits.within(waits.between_bytes);
    let response = response.map(|incoming| {
        Bounded {
            inner: incoming,
            idle,
            deadline,
            timer: Box::pin(tokio::time::sleep_until(
                (tokio::time::Instant::now() + idle).min(deadline),
            )),
        }
        .boxed_unsync()
    });
    let io: Box<dyn Future<Output = Result<(), HttpError>> + Send> = Box::new(async move {
        let outcome = match finished {
            Some(outcome) => outcome,
            None => connection.await,
        };
        match outcome {
            Ok(done) => done.map_err(HttpError::from),
            Err(_) => Err(HttpError::ConnectionTimeout),
        }
    });
    Ok((response, io))
}

/// The addresses `host` resolves to that the grant lets the plugin reach; refused with the
/// addresses when there are none (a granted name leading only to private ones).
pub(crate) async fn resolve_allowed(
    host: &str,
    port: u16,
    reach: &Reach,
    waits: &Waits,
) -> Result<Vec<SocketAddr>, Refused> {
    let left = || waits.within(None);
    let resolved: Vec<SocketAddr> =
        match tokio::time::timeout(left(), tokio::net::lookup_host((host, port))).await {
            Ok(Ok(addresses)) => addresses.collect(),
            Ok(Err(_)) => return Err(Refused::Failed(HttpError::DestinationNotFound)),
            Err(_) => return Err(Refused::Failed(HttpError::DnsTimeout)),
        };
    let allowed: Vec<SocketAddr> = resolved
        .iter()
        .copied()
        .filter(|a| reach.allows(a.ip()))
        .collect();
    if allowed.is_empty() {
        let mut refused: Vec<IpAddr> = resolved.iter().map(SocketAddr::ip).collect();
        refused.dedup();
        return Err(Refused::Addresses(refused));
    }
    Ok(allowed)
}

/// A connection to the first of `allowed` that answers, in TLS for `host` with these settings
/// when there are any.
async fn open_stream(
    allowed: &[SocketAddr],
    host: String,
    tls: Option<Arc<rustls::ClientConfig>>,
    waits: &Waits,
) -> Result<Box<dyn Stream>, Refused> {
    let left = || waits.within(None);
    let stream = connect(allowed, waits.within(waits.connect))
        .await
        .map_err(Refused::Failed)?;
    let Some(tls) = tls else {
        return Ok(Box::new(stream));
    };
    let name = rustls::pki_types::ServerName::try_from(host)
        .map_err(|e| Refused::Failed(HttpError::from(e)))?;
    let connector = tokio_rustls::TlsConnector::from(tls);
    match tokio::time::timeout(left(), connector.connect(name, stream)).await {
        Ok(Ok(stream)) => Ok(Box::new(stream)),
        Ok(Err(e)) => Err(Refused::Failed(HttpError::Tls(e))),
        Err(_) => Err(Refused::Failed(HttpError::ConnectionTimeout)),
    }
}

/// Connects to the first of `addresses` that answers, within `limit` in all: each address gets
/// an equal share of what is left, so one that never answers does not use up the others' time.
pub(crate) async fn connect(
    addresses: &[SocketAddr],
    limit: Duration,
) -> Result<TcpStream, HttpError> {
    let until = Instant::now() + limit;
    let mut last = HttpError::ConnectionTimeout;
    for (tried, address) in addresses.iter().enumerate() {
        let share =
            until.saturating_duration_since(Instant::now()) / (addresses.len() - tried) as u32;
        match tokio::time::timeout(share, TcpStream::connect(address)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = HttpError::Connect(e),
            Err(_) => last = HttpError::ConnectionTimeout,
        }
    }
    Err(last)
}

/// A connection, plain or TLS.
pub(crate) trait Stream:
    tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static
{
}
impl<T> Stream for T where T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}

/// TLS client settings of a connector without authorities of its own: the web's root
/// certificates (webpki-roots), nothing from the machine.
static TLS: LazyLock<Arc<rustls::ClientConfig>> = LazyLock::new(|| {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.into(),
    };
    Arc::new(
        rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
});

/// A response body that fails when no part of it arrives for `idle`, and in any case at the
/// call's deadline.
struct Bounded {
    inner: hyper::body::Incoming,
    idle: Duration,
    deadline: tokio::time::Instant,
    timer: Pin<Box<tokio::time::Sleep>>,
}

impl Body for Bounded {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let next = (tokio::time::Instant::now() + self.idle).min(self.deadline);
                self.timer.as_mut().reset(next);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(HttpError::from(e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                ready!(self.timer.as_mut().poll(cx));
                Poll::Ready(Some(Err(HttpError::ConnectionReadTimeout)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
}

/// An IPv4 address carried in IPv6 (mapped, compatible, NAT64, 6to4) as that IPv4 address; any
/// other address as it is.
fn canonical(ip: IpAddr) -> IpAddr {
    let IpAddr::V6(v6) = ip else {
        return ip;
    };
    let s = v6.segments();
    let embedded = |hi: u16, lo: u16| {
        IpAddr::V4(Ipv4Addr::new(
            (hi >> 8) as u8,
            hi as u8,
            (lo >> 8) as u8,
            lo as u8,
        ))
    };
    if let Some(v4) = v6.to_ipv4_mapped() {
        IpAddr::V4(v4)
    } else if (s[..6] == [0, 0, 0, 0, 0, 0] && !v6.is_loopback() && !v6.is_unspecified())
        || s[..6] == [0x64, 0xff9b, 0, 0, 0, 0]
    {
        embedded(s[6], s[7]) // ::a.b.c.d (the deprecated "compatible" form), NAT64
    } else if s[0] == 0x2002 {
        embedded(s[1], s[2]) // 6to4
    } else {
        IpAddr::V6(v6)
    }
}

/// Whether `ip` is an address of the public internet, which a granted name may lead to: not
/// loopback, private (RFC 1918, unique local), link-local (where cloud metadata services
/// answer, 169.254.169.254), shared (CGNAT), unspecified, multicast, broadcast or reserved.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => public_v6(v6),
    }
}

fn public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && ip.octets()[2] == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

fn public_v6(ip: Ipv6Addr) -> bool {
    let [first, second, third, ..] = ip.segments();
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local, fd00:ec2::254 (a metadata service) among them
        || (first & 0xffc0) == 0xfe80 // link-local
        || (first & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (first == 0x64 && second == 0xff9b && third == 1) // local-use NAT64 (64:ff9b:1::/48)
        || (first == 0x2001 && second == 0) // Teredo: an IPv4 address in disguise
        || (first == 0x2001 && second == 0xdb8)) // documentation
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.5",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "64:ff9b:1::a00:1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:db8::1",
        ] {
            assert!(!is_public(ip(private)), "{private} is not public");
        }
        for public in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(is_public(ip(public)), "{public} is public");
        }
    }

    #[test]
    fn a_grant_reaches_what_it_names() {
        assert_eq!(Reach::of("example.com"), Reach::PublicOnly);
        assert_eq!(Reach::of("LocalHost"), Reach::Loopback);
        assert_eq!(Reach::of("[::1]"), Reach::Exactly(ip("::1")));
        assert!(Reach::of("127.0.0.1").allows(ip("127.0.0.1")));
        assert!(Reach::of("127.0.0.1").allows(ip("::ffff:127.0.0.1")));
        assert!(!Reach::of("127.0.0.1").allows(ip("127.0.0.2")));
        assert!(Reach::of("localhost").allows(ip("::1")));
        assert!(!Reach::of("localhost").allows(ip("10.0.0.1")));
        assert!(!Reach::of("rebind.example").allows(ip("127.0.0.1")));
        assert!(Reach::of("rebind.example").allows(ip("93.184.216.34")));
    }
}
