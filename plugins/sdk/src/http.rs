//! Outgoing HTTP through `wasi:http`, for connectors of network sources.
//!
//! The host lets a connector reach only the hosts its grant allows: the hosts of its `url`
//! settings and those its manifest's `capabilities.network` lists. A request to any other host
//! fails with [`Error::Unavailable`] naming the host, and the host's own error says so too. A
//! redirect is followed (at most [`MAX_REDIRECTS`] of them) as a new request, which the host
//! checks the same way: a redirect to a host outside the grant fails like a request to it.
//!
//! ```ignore
//! let response = quarry_sdk::http::get("https://example.com/feed.xml", &[])?;
//! let text = response.text();
//! ```

use wasip2::http::outgoing_handler;
use wasip2::http::types::{ErrorCode, Fields, Method, OutgoingRequest, Scheme};
use wasip2::io::streams::StreamError;

use crate::Error;

/// Largest body [`send`] reads, in bytes: a body over it is an error, not silently cut.
pub const MAX_BODY_BYTES: usize = 32 << 20;

/// An HTTP response with its whole body.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code (200, 304, 404...).
    pub status: u16,
    /// Header names (lowercase) and values.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of header `name` (any case), as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| std::str::from_utf8(v).ok())
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Redirects [`send`] follows at most.
pub const MAX_REDIRECTS: usize = 5;

/// Requests [`send_all`] has in flight at once (the host allows 16 an instance).
pub const MAX_IN_FLIGHT: usize = 8;

/// Headers kept when a redirect leads to another origin (scheme, host or port): the others
/// (credentials, cookies, tokens in headers of any name, conditional requests) are the first
/// origin's, and not sent on.
const KEPT_ACROSS_ORIGINS: [&str; 4] = ["accept", "accept-language", "user-agent", "depth"];

/// An HTTP request to send: a method, a URL, headers and a body.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `PROPFIND`, `REPORT`... (any method).
    pub method: String,
    /// An `http://` or `https://` URL.
    pub url: String,
    /// Header names and values.
    pub headers: Vec<(String, String)>,
    /// The body (empty for none).
    pub body: Vec<u8>,
}

impl Request {
    /// A request of `method` for `url`, without headers or body.
    pub fn new(method: &str, url: &str) -> Request {
        Request {
            method: method.to_owned(),
            url: url.to_owned(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// A GET request for `url`.
    pub fn get(url: &str) -> Request {
        Request::new("GET", url)
    }

    /// The request with header `name: value` added.
    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The request with these headers added.
    pub fn headers(mut self, headers: &[(&str, &str)]) -> Request {
        for (name, value) in headers {
            self = self.header(name, value);
        }
        self
    }

    /// The request with `body`.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Request {
        self.body = body.into();
        self
    }

    /// The request a redirect to `location` makes of this one, or none when this one is not
    /// a redirect: a 303 becomes a GET without body, the others keep method and body (WebDAV
    /// servers redirect a collection's URL without its final slash, PROPFIND included); on a
    /// change of origin only harmless headers ([`KEPT_ACROSS_ORIGINS`]) go on.
    fn redirected(&self, response: &Response) -> Option<Request> {
        let location = match response.status {
            301 | 302 | 303 | 307 | 308 => response.header("location")?,
            _ => return None,
        };
        let mut next = self.clone();
        next.url = resolve(&self.url, location);
        if response.status == 303 {
            next.method = "GET".to_owned();
            next.body.clear();
        }
        if origin_of(&next.url) != origin_of(&self.url) {
            next.headers.retain(|(name, _)| {
                KEPT_ACROSS_ORIGINS
                    .iter()
                    .any(|kept| name.eq_ignore_ascii_case(kept))
            });
        }
        Some(next)
    }
}

/// Sends a GET request for `url` (`http://` or `https://`) with these extra headers and reads the
/// whole response, following redirects as [`send`] does.
pub fn get(url: &str, headers: &[(&str, &str)]) -> Result<Response, Error> {
    send(Request::get(url).headers(headers))
}

/// Sends `request` and reads the whole response, following redirects (301, 302, 303, 307, 308)
/// to where their `Location` points, at most [`MAX_REDIRECTS`] of them.
pub fn send(request: Request) -> Result<Response, Error> {
    let first = finish(start(&request)?)?;
    follow(request, first)
}

/// The response at the end of the redirects that `response`, the answer to `request`, starts.
fn follow(mut request: Request, mut response: Response) -> Result<Response, Error> {
    for _ in 0..MAX_REDIRECTS {
        let Some(next) = request.redirected(&response) else {
            return Ok(response);
        };
        request = next;
        response = finish(start(&request)?)?;
    }
    match request.redirected(&response) {
        None => Ok(response),
        Some(_) => Err(Error::Unavailable(format!(
            "{}: more than {MAX_REDIRECTS} redirects",
            request.url
        ))),
    }
}

/// Sends every request, [`MAX_IN_FLIGHT`] at a time, and answers each in the order given:
/// fetching many small files this way costs about one round trip per [`MAX_IN_FLIGHT`] files,
/// not one per file. Bodies are read one at a time, so at most one is held in memory.
pub fn send_all(requests: Vec<Request>) -> Vec<Result<Response, Error>> {
    let mut pending: std::collections::VecDeque<Result<Pending, Error>> =
        std::collections::VecDeque::new();
    let mut answers = Vec::with_capacity(requests.len());
    let mut next = 0;
    while answers.len() < requests.len() {
        while next < requests.len() && pending.len() < MAX_IN_FLIGHT {
            pending.push_back(start(&requests[next]));
            next += 1;
        }
        let Some(first) = pending.pop_front() else {
            break;
        };
        let request = &requests[answers.len()];
        answers.push(
            first
                .and_then(finish)
                .and_then(|r| follow(request.clone(), r)),
        );
    }
    answers
}

/// Where a `Location` header leads from `base`: an absolute URL, a path from the root of the
/// same host, or a path beside `base`'s.
pub fn resolve(base: &str, location: &str) -> String {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.to_owned();
    }
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let root_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    if location.starts_with('/') {
        return format!("{}{location}", &base[..root_end]);
    }
    let path = base[root_end..].split(['?', '#']).next().unwrap_or("");
    let dir = path.rfind('/').map_or("/", |i| &path[..=i]);
    format!("{}{dir}{location}", &base[..root_end])
}

/// The scheme and `host:port` of a URL, lowercased.
pub fn origin_of(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    format!("{scheme}://{authority}").to_ascii_lowercase()
}

/// A request sent, its response not read yet.
struct Pending {
    authority: String,
    future: wasip2::http::types::FutureIncomingResponse,
    /// Why the body could not be sent, if it could not.
    unsent: Option<Error>,
}

/// Sends one request (no redirect followed): its head and body go out, the response is read
/// by [`finish`].
fn start(request: &Request) -> Result<Pending, Error> {
    let url = &request.url;
    let (scheme, rest) = if let Some(rest) = url.strip_prefix("https://") {
        (Scheme::Https, rest)
    } else if let Some(rest) = url.strip_prefix("http://") {
        (Scheme::Http, rest)
    } else {
        return Err(Error::InvalidConfig(format!(
            "{url:?} is not an http:// or https:// URL"
        )));
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    let fields = Fields::new();
    for (name, value) in &request.headers {
        fields
            .append(name, value.as_bytes())
            .map_err(|e| Error::Other(format!("header {name}: {e:?}")))?;
    }
    if !request.body.is_empty() {
        fields
            .append("content-length", request.body.len().to_string().as_bytes())
            .map_err(|e| Error::Other(format!("header content-length: {e:?}")))?;
    }
    let outgoing = OutgoingRequest::new(fields);
    let invalid = |what: &str| Error::InvalidConfig(format!("{url:?}: invalid {what}"));
    let method = match request.method.as_str() {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        "OPTIONS" => Method::Options,
        other => Method::Other(other.to_owned()),
    };
    outgoing
        .set_method(&method)
        .map_err(|()| invalid("method"))?;
    outgoing
        .set_scheme(Some(&scheme))
        .map_err(|()| invalid("scheme"))?;
    outgoing
        .set_authority(Some(authority))
        .map_err(|()| invalid("host"))?;
    outgoing
        .set_path_with_query(Some(&path))
        .map_err(|()| invalid("path"))?;
    let body = if request.body.is_empty() {
        None
    } else {
        Some(
            outgoing
                .body()
                .map_err(|()| Error::Other(format!("{authority}: the body was taken twice")))?,
        )
    };
    let future =
        outgoing_handler::handle(outgoing, None).map_err(|code| request_error(authority, code))?;
    // A server may answer before it reads the whole body (a 401 at once) and close: its
    // answer, if it came, is what counts, so a failed write is told only without one.
    let unsent = body.and_then(|body| write_body(authority, body, &request.body).err());
    Ok(Pending {
        authority: authority.to_owned(),
        future,
        unsent,
    })
}

/// Writes `bytes` as a request's body and ends it.
fn write_body(
    authority: &str,
    body: wasip2::http::types::OutgoingBody,
    bytes: &[u8],
) -> Result<(), Error> {
    let failed = |e: StreamError| match e {
        StreamError::LastOperationFailed(e) => Error::Unavailable(format!(
            "{authority}: sending the request failed: {}",
            e.to_debug_string()
        )),
        StreamError::Closed => Error::Unavailable(format!("{authority}: the connection closed")),
    };
    let stream = body
        .write()
        .map_err(|()| Error::Other(format!("{authority}: the body was taken twice")))?;
    // `blocking-write-and-flush` takes at most 4096 bytes a call.
    for chunk in bytes.chunks(4096) {
        stream.blocking_write_and_flush(chunk).map_err(failed)?;
    }
    drop(stream);
    wasip2::http::types::OutgoingBody::finish(body, None)
        .map_err(|code| request_error(authority, code))
}

/// Waits for the response of a request [`start`] sent, and reads all of it.
fn finish(pending: Pending) -> Result<Response, Error> {
    let authority = pending.authority.as_str();
    let failed = |code: ErrorCode| request_error(authority, code);
    pending.future.subscribe().block();
    let response = match (pending.future.get(), pending.unsent) {
        (Some(Ok(Ok(response))), _) => response,
        (_, Some(unsent)) => return Err(unsent),
        (Some(Ok(Err(code))), None) => return Err(failed(code)),
        _ => return Err(Error::Other(format!("{authority}: the response was lost"))),
    };
    let status = response.status();
    let headers = response
        .headers()
        .entries()
        .into_iter()
        .map(|(name, value)| (name.to_ascii_lowercase(), value))
        .collect();
    let body = response
        .consume()
        .map_err(|()| Error::Other(format!("{authority}: the body was taken twice")))?;
    let stream = body
        .stream()
        .map_err(|()| Error::Other(format!("{authority}: the body was taken twice")))?;
    let mut bytes = Vec::new();
    loop {
        match stream.blocking_read(64 << 10) {
            Ok(chunk) => {
                if bytes.len() + chunk.len() > MAX_BODY_BYTES {
                    return Err(Error::Other(format!(
                        "{authority}: the response is larger than {} MiB",
                        MAX_BODY_BYTES >> 20
                    )));
                }
                bytes.extend_from_slice(&chunk);
            }
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(e)) => {
                return Err(Error::Unavailable(format!(
                    "{authority}: reading the response failed: {}",
                    e.to_debug_string()
                )));
            }
        }
    }
    drop(stream);
    Ok(Response {
        status,
        headers,
        body: bytes,
    })
}

fn request_error(authority: &str, code: ErrorCode) -> Error {
    match code {
        ErrorCode::HttpRequestDenied => Error::Unavailable(format!(
            "the host refused a connection to {authority}: it is not in this connector's grant"
        )),
        ErrorCode::DnsError(_) | ErrorCode::DestinationNotFound => {
            Error::Unavailable(format!("{authority}: no such host"))
        }
        ErrorCode::ConnectionRefused => {
            Error::Unavailable(format!("{authority}: connection refused"))
        }
        ErrorCode::ConnectionTimeout | ErrorCode::ConnectionReadTimeout => {
            Error::Unavailable(format!("{authority}: timed out"))
        }
        ErrorCode::TlsCertificateError | ErrorCode::TlsAlertReceived(_) => {
            Error::Unavailable(format!(
                "{authority}: the server's TLS certificate did not verify; if a private certificate authority signed it, give that authority's PEM file in the connector's certificate setting (`ca_file`)"
            ))
        }
        other => Error::Unavailable(format!("{authority}: {other:?}")),
    }
}

/// `Basic` credentials for an `Authorization` header.
pub fn basic_auth(user: &str, password: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let input = format!("{user}:{password}");
    let mut out = String::from("Basic ");
    for chunk in input.as_bytes().chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_locations_resolve_against_the_request() {
        let base = "http://example.com:8080/feeds/main.xml?x=1";
        assert_eq!(resolve(base, "https://other.org/f"), "https://other.org/f");
        assert_eq!(
            resolve(base, "/moved.xml"),
            "http://example.com:8080/moved.xml"
        );
        assert_eq!(
            resolve(base, "new.xml"),
            "http://example.com:8080/feeds/new.xml"
        );
        assert_eq!(resolve("http://h", "/a"), "http://h/a");
        assert_eq!(origin_of(base), "http://example.com:8080");
        assert_ne!(origin_of("https://h/a"), origin_of("http://h/a"));
    }

    #[test]
    fn basic_auth_is_base64() {
        assert_eq!(
            basic_auth("Aladdin", "open sesame"),
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
        assert_eq!(basic_auth("a", "b"), "Basic YTpi");
        assert_eq!(basic_auth("ab", "c"), "Basic YWI6Yw==");
    }
}
