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
//! let text = response.text()?;
//! ```

use wasip2::http::outgoing_handler;
use wasip2::http::types::{ErrorCode, Fields, Method, OutgoingRequest, Scheme};
use wasip2::io::streams::StreamError;

use crate::Error;

/// Largest body [`get`] reads, in bytes: a body over it is an error, not silently cut.
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

/// Redirects [`get`] follows at most.
pub const MAX_REDIRECTS: usize = 5;

/// Headers kept when a redirect leads to another origin (scheme, host or port): the others
/// (credentials, cookies, tokens in headers of any name, conditional requests) are the first
/// origin's, and not sent on.
const KEPT_ACROSS_ORIGINS: [&str; 3] = ["accept", "accept-language", "user-agent"];

/// Sends a GET request for `url` (`http://` or `https://`) with these extra headers and reads the
/// whole response, following redirects (301, 302, 303, 307, 308) to where their `Location`
/// points; on a change of origin only harmless headers ([`KEPT_ACROSS_ORIGINS`]) go on.
pub fn get(url: &str, headers: &[(&str, &str)]) -> Result<Response, Error> {
    let mut url = url.to_owned();
    let mut headers: Vec<(&str, &str)> = headers.to_vec();
    for _ in 0..=MAX_REDIRECTS {
        let response = get_once(&url, &headers)?;
        let location = match response.status {
            301 | 302 | 303 | 307 | 308 => response.header("location"),
            _ => None,
        };
        let Some(location) = location else {
            return Ok(response);
        };
        let next = resolve(&url, location);
        if origin_of(&next) != origin_of(&url) {
            headers.retain(|(name, _)| {
                KEPT_ACROSS_ORIGINS
                    .iter()
                    .any(|kept| name.eq_ignore_ascii_case(kept))
            });
        }
        url = next;
    }
    Err(Error::Unavailable(format!(
        "{url}: more than {MAX_REDIRECTS} redirects"
    )))
}

/// Where a `Location` header leads from `base`: an absolute URL, a path from the root of the
/// same host, or a path beside `base`'s.
fn resolve(base: &str, location: &str) -> String {
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
fn origin_of(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    format!("{scheme}://{authority}").to_ascii_lowercase()
}

/// One GET request, no redirect followed.
fn get_once(url: &str, headers: &[(&str, &str)]) -> Result<Response, Error> {
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
    for (name, value) in headers {
        fields
            .append(name, value.as_bytes())
            .map_err(|e| Error::Other(format!("header {name}: {e:?}")))?;
    }
    let request = OutgoingRequest::new(fields);
    let invalid = |what: &str| Error::InvalidConfig(format!("{url:?}: invalid {what}"));
    request
        .set_method(&Method::Get)
        .map_err(|()| invalid("method"))?;
    request
        .set_scheme(Some(&scheme))
        .map_err(|()| invalid("scheme"))?;
    request
        .set_authority(Some(authority))
        .map_err(|()| invalid("host"))?;
    request
        .set_path_with_query(Some(&path))
        .map_err(|()| invalid("path"))?;

    let failed = |code: ErrorCode| request_error(authority, code);
    let pending = outgoing_handler::handle(request, None).map_err(failed)?;
    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Err(failed(code)),
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
