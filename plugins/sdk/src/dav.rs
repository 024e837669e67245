//! WebDAV (RFC 4918) for connectors of DAV servers: files (WebDAV), calendars (CalDAV, RFC
//! 4791) and address books (CardDAV, RFC 6352). `PROPFIND` and `REPORT` over [`crate::http`],
//! their multistatus answers read into [`Entry`]s, and RFC 6578's `sync-collection`, which
//! tells what changed in a collection since a token. Feature `dav`.
//!
//! ```ignore
//! let dav = quarry_sdk::dav::Client::new("alice", "secret");
//! let answer = dav.propfind(url, Depth::One, "<d:getetag/><d:resourcetype/>")?;
//! for entry in &answer.entries {
//!     let is_folder = entry.has_type("collection");
//! }
//! ```
//!
//! Property names in the XML this module sends use these prefixes: `d` (`DAV:`), `c`
//! (CalDAV), `card` (CardDAV) and `cs` (`http://calendarserver.org/ns/`). Entries are read by
//! the elements' local names.

use quick_xml::Reader;
use quick_xml::events::Event;

use crate::Error;
use crate::http::{self, Request, Response};

/// The namespace declarations of the requests' root elements.
const NAMESPACES: &str = r#"xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:card="urn:ietf:params:xml:ns:carddav" xmlns:cs="http://calendarserver.org/ns/""#;

/// How deep a `PROPFIND` or `REPORT` looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// The resource itself.
    Zero,
    /// The resource and its members.
    One,
}

impl Depth {
    fn header(self) -> &'static str {
        match self {
            Depth::Zero => "0",
            Depth::One => "1",
        }
    }
}

/// A property of an [`Entry`], as the server answered it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prop {
    /// Its local name (`getetag`, `resourcetype`, `calendar-data`).
    pub name: String,
    /// The text it holds (of every element inside it), trimmed.
    pub text: String,
    /// The local names of the elements inside it (`collection` in a `resourcetype`).
    pub elements: Vec<String>,
    /// The `href`s inside it (`current-user-principal`, `calendar-home-set`).
    pub hrefs: Vec<String>,
}

/// One `response` of a multistatus answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    /// The resource's `href`, as the server wrote it (a path, percent-encoded, or a URL).
    pub href: String,
    /// The status of the response itself, where it has one (404 for a member that
    /// `sync-collection` reports gone).
    pub status: Option<u16>,
    /// The properties found (status 200).
    pub props: Vec<Prop>,
}

impl Entry {
    /// The property of local name `name`, if found.
    pub fn prop(&self, name: &str) -> Option<&Prop> {
        self.props.iter().find(|p| p.name == name)
    }

    /// The text of property `name`, if found and not empty.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.prop(name)
            .map(|p| p.text.as_str())
            .filter(|t| !t.is_empty())
    }

    /// Whether its `resourcetype` holds an element of local name `kind` (`collection`,
    /// `calendar`, `addressbook`).
    pub fn has_type(&self, kind: &str) -> bool {
        self.prop("resourcetype")
            .is_some_and(|p| p.elements.iter().any(|e| e == kind))
    }

    /// Its `getetag`, without the quotes and a weak validator's `W/`.
    pub fn etag(&self) -> Option<&str> {
        let etag = self.text("getetag")?;
        Some(etag.trim_start_matches("W/").trim_matches('"'))
    }

    /// Its `getcontentlength`, in bytes.
    pub fn content_length(&self) -> Option<u64> {
        self.text("getcontentlength")?.trim().parse().ok()
    }

    /// Its `getlastmodified`, in milliseconds since the Unix epoch.
    pub fn last_modified_ms(&self) -> Option<i64> {
        crate::dates::parse_ms(self.text("getlastmodified")?)
    }

    /// Whether the member was reported gone (status 404 in a `sync-collection` answer).
    pub fn is_gone(&self) -> bool {
        self.status == Some(404)
    }
}

/// A multistatus answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Multistatus {
    /// Its responses, in the server's order.
    pub entries: Vec<Entry>,
    /// The `sync-token` of a `sync-collection` answer.
    pub sync_token: Option<String>,
}

/// What `sync-collection` answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sync {
    /// The members changed (and gone: [`Entry::is_gone`]) since the token, and the new token.
    Changes(Multistatus),
    /// The server no longer knows the token (or never offered `sync-collection`): list the
    /// collection whole and start again without a token.
    TokenInvalid,
}

/// A DAV client with the user's credentials, sent as HTTP Basic authentication to the
/// origin of each request only (a redirect to another origin drops them).
#[derive(Clone)]
pub struct Client {
    authorization: Option<String>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").finish_non_exhaustive()
    }
}

impl Client {
    /// A client that signs in as `username` with `password` (no credentials when `username`
    /// is empty).
    pub fn new(username: &str, password: &str) -> Client {
        Client {
            authorization: (!username.is_empty()).then(|| http::basic_auth(username, password)),
        }
    }

    /// A request of `method` for `url` with the credentials.
    pub fn request(&self, method: &str, url: &str) -> Request {
        let request = Request::new(method, url);
        match &self.authorization {
            Some(value) => request.header("authorization", value),
            None => request,
        }
    }

    /// `PROPFIND` of the properties `props` (XML elements such as `<d:getetag/>`, with the
    /// prefixes of this module) at `url`, to `depth`.
    pub fn propfind(&self, url: &str, depth: Depth, props: &str) -> Result<Multistatus, Error> {
        let body = format!(
            r#"<?xml version="1.0" encoding="utf-8"?><d:propfind {NAMESPACES}><d:prop>{props}</d:prop></d:propfind>"#
        );
        self.multistatus(url, "PROPFIND", depth, body)
    }

    /// `REPORT` at `url` to `depth`: `body` is the report's element (such as
    /// `<c:calendar-query>...`), its root without namespace declarations (they are added).
    pub fn report(&self, url: &str, depth: Depth, body: &str) -> Result<Multistatus, Error> {
        let body = with_namespaces(body);
        self.multistatus(url, "REPORT", depth, body)
    }

    /// RFC 6578 `sync-collection` of the members of the collection at `url` (one level) with
    /// the properties `props`, since `token` (empty: every member).
    pub fn sync_collection(&self, url: &str, token: &str, props: &str) -> Result<Sync, Error> {
        let token = escape(token);
        let body = format!(
            r#"<?xml version="1.0" encoding="utf-8"?><d:sync-collection {NAMESPACES}><d:sync-token>{token}</d:sync-token><d:sync-level>1</d:sync-level><d:prop>{props}</d:prop></d:sync-collection>"#
        );
        let response = http::send(
            self.request("REPORT", url)
                .header("depth", "0")
                .header("content-type", "application/xml; charset=utf-8")
                .body(body),
        )?;
        // A token the server no longer knows: 403 or 409 with `valid-sync-token` (RFC 6578
        // 3.2); a server without the report answers 403, 405, 415 or 501.
        if matches!(response.status, 400 | 403 | 405 | 409 | 415 | 501) {
            return Ok(Sync::TokenInvalid);
        }
        let response = checked(url, response)?;
        Ok(Sync::Changes(parse(url, &response.body)?))
    }

    /// `GET` of `url`, failed unless it answers 2xx.
    pub fn get(&self, url: &str) -> Result<Response, Error> {
        checked(url, http::send(self.request("GET", url))?)
    }

    /// `GET` of each of `urls`, several at a time ([`http::send_all`]), in the order given.
    pub fn get_all(&self, urls: &[String]) -> Vec<Result<Response, Error>> {
        let requests = urls.iter().map(|url| self.request("GET", url)).collect();
        http::send_all(requests)
            .into_iter()
            .zip(urls)
            .map(|(response, url)| response.and_then(|r| checked(url, r)))
            .collect()
    }

    fn multistatus(
        &self,
        url: &str,
        method: &str,
        depth: Depth,
        body: String,
    ) -> Result<Multistatus, Error> {
        let response = http::send(
            self.request(method, url)
                .header("depth", depth.header())
                .header("content-type", "application/xml; charset=utf-8")
                .body(body),
        )?;
        let response = checked(url, response)?;
        if response.status != 207 {
            return Err(Error::Unavailable(format!(
                "{url}: {method} answered {} instead of a multistatus (207): is this a WebDAV address?",
                response.status
            )));
        }
        parse(url, &response.body)
    }
}

/// `element` (a request body's root, such as `<c:calendar-query>`) with the namespace
/// declarations added to its first tag.
fn with_namespaces(element: &str) -> String {
    let element = element.trim();
    let name_end = element
        .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
        .unwrap_or(element.len());
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?>{} {NAMESPACES}{}"#,
        &element[..name_end],
        &element[name_end..]
    )
}

/// `response` if it succeeded (2xx), else the error its status means, naming `url` and the fix.
pub fn checked(url: &str, response: Response) -> Result<Response, Error> {
    let status = response.status;
    match status {
        200..=299 => Ok(response),
        401 => Err(Error::InvalidConfig(format!(
            "{url}: the server refused the user name and password (401 Unauthorized): check `username` and `password` (an app password where the service asks for one)"
        ))),
        403 => Err(Error::InvalidConfig(format!(
            "{url}: the server forbids this user to read it (403 Forbidden)"
        ))),
        404 | 410 => Err(Error::NotFound(format!(
            "{url}: not found on the server ({status})"
        ))),
        408 | 429 | 500..=599 => Err(Error::Unavailable(format!(
            "{url}: the server answered {status}; Quarry tries again later"
        ))),
        _ => Err(Error::Other(format!("{url}: the server answered {status}"))),
    }
}

/// XML's five escapes.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// The multistatus answer `body` (from `url`, for errors).
pub fn parse(url: &str, body: &[u8]) -> Result<Multistatus, Error> {
    let garbage = |why: String| {
        Error::Unavailable(format!(
            "{url}: the server's answer is not a WebDAV multistatus ({why}); Quarry tries again later"
        ))
    };
    let mut reader = Reader::from_reader(body);
    reader.config_mut().expand_empty_elements = true;
    let mut parser = Parser::default();
    let mut buf = Vec::new();
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| garbage(e.to_string()))?;
        match event {
            Event::Eof => break,
            Event::Start(e) => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                parser.open(name);
            }
            Event::End(_) => parser.close(),
            Event::Text(t) => {
                let text = t.xml_content().map_err(|e| garbage(e.to_string()))?;
                parser.text(&text);
            }
            Event::CData(t) => parser.text(&String::from_utf8_lossy(&t)),
            Event::GeneralRef(r) => {
                let name = r.decode().unwrap_or_default();
                parser.text(&crate::html::resolve_xml_entity(&name));
            }
            _ => {}
        }
        buf.clear();
    }
    if !parser.saw_multistatus {
        return Err(garbage("no multistatus element".to_owned()));
    }
    if !parser.path.is_empty() {
        return Err(garbage("it ends before its elements do".to_owned()));
    }
    Ok(parser.done)
}

/// The state of [`parse`]: where in the multistatus it is.
#[derive(Default)]
struct Parser {
    /// Local names of the open elements.
    path: Vec<String>,
    saw_multistatus: bool,
    done: Multistatus,
    entry: Entry,
    /// The properties of the propstat being read, and its status.
    propstat: Vec<Prop>,
    propstat_status: Option<u16>,
    /// The property being read (open at depth 5: multistatus/response/propstat/prop/NAME).
    prop: Option<Prop>,
    text: String,
}

impl Parser {
    fn open(&mut self, name: String) {
        if self.path.is_empty() && name == "multistatus" {
            self.saw_multistatus = true;
        }
        if self.path.len() == 4 && self.path[3] == "prop" {
            self.prop = Some(Prop {
                name: name.clone(),
                ..Prop::default()
            });
        } else if let Some(prop) = &mut self.prop {
            prop.elements.push(name.clone());
        }
        self.text.clear();
        self.path.push(name);
    }

    fn text(&mut self, text: &str) {
        self.text.push_str(text);
        if let Some(prop) = &mut self.prop {
            prop.text.push_str(text);
        }
    }

    fn close(&mut self) {
        let Some(name) = self.path.pop() else {
            return;
        };
        let text = std::mem::take(&mut self.text);
        let parent = self.path.last().map(String::as_str);
        match (self.path.len(), name.as_str(), parent) {
            (1, "response", _) => {
                let entry = std::mem::take(&mut self.entry);
                self.done.entries.push(entry);
            }
            (1, "sync-token", _) => self.done.sync_token = Some(text.trim().to_owned()),
            (2, "href", Some("response")) => self.entry.href = text.trim().to_owned(),
            (2, "status", Some("response")) => self.entry.status = status_code(&text),
            (3, "status", Some("propstat")) => self.propstat_status = status_code(&text),
            (2, "propstat", _) => {
                let props = std::mem::take(&mut self.propstat);
                if self.propstat_status.take().is_none_or(|s| s == 200) {
                    self.entry.props.extend(props);
                }
            }
            (4, _, Some("prop")) => {
                if let Some(mut prop) = self.prop.take() {
                    prop.text = prop.text.trim().to_owned();
                    self.propstat.push(prop);
                }
            }
            (_, "href", _) if self.path.len() > 4 => {
                if let Some(prop) = &mut self.prop {
                    prop.hrefs.push(text.trim().to_owned());
                }
            }
            _ => {}
        }
    }
}

/// The code of a status line (`HTTP/1.1 404 Not Found`).
fn status_code(line: &str) -> Option<u16> {
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `text` with its `%XX` escapes decoded (invalid UTF-8 replaced).
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(&a), Some(&b)) = (bytes.get(i + 1), bytes.get(i + 2))
            && let (Some(a), Some(b)) = (hex(a), hex(b))
        {
            out.push((a * 16 + b) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The path of `href` (a path, or a URL whose path it takes), without query or fragment.
pub fn href_path(href: &str) -> &str {
    let path = match href.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |at| &rest[at..]),
        None => href,
    };
    path.split(['?', '#']).next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANSWER: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<D:multistatus xmlns:D="DAV:" xmlns:ns0="http://calendarserver.org/ns/">
  <D:response>
    <D:href>/dav/Reports%202026/</D:href>
    <D:propstat>
      <D:prop>
        <D:resourcetype><D:collection/></D:resourcetype>
        <D:getlastmodified>Wed, 25 Nov 2026 10:00:00 GMT</D:getlastmodified>
      </D:prop>
      <D:status>HTTP/1.1 200 OK</D:status>
    </D:propstat>
    <D:propstat>
      <D:prop><D:getcontentlength/></D:prop>
      <D:status>HTTP/1.1 404 Not Found</D:status>
    </D:propstat>
  </D:response>
  <D:response>
    <D:href>http://127.0.0.1:8080/dav/Reports%202026/q3%20&amp;%20q4.pdf</D:href>
    <D:propstat>
      <D:prop>
        <D:resourcetype/>
        <D:getetag>W/"abc-123"</D:getetag>
        <D:getcontentlength>4096</D:getcontentlength>
        <D:current-user-principal><D:href>/principals/alice/</D:href></D:current-user-principal>
      </D:prop>
      <D:status>HTTP/1.1 200 OK</D:status>
    </D:propstat>
  </D:response>
  <D:response><D:href>/dav/gone.txt</D:href><D:status>HTTP/1.1 404 Not Found</D:status></D:response>
  <D:sync-token>http://example.com/sync/7</D:sync-token>
</D:multistatus>"#;

    #[test]
    fn a_multistatus_reads_into_entries_with_their_found_properties() {
        let answer = parse("u", ANSWER.as_bytes()).expect("parses");
        assert_eq!(answer.entries.len(), 3);
        let folder = &answer.entries[0];
        assert_eq!(folder.href, "/dav/Reports%202026/");
        assert!(folder.has_type("collection"));
        assert_eq!(folder.last_modified_ms(), Some(1_795_600_800_000));
        assert_eq!(
            folder.prop("getcontentlength"),
            None,
            "a 404 propstat is left out"
        );
        let file = &answer.entries[1];
        assert!(!file.has_type("collection"));
        assert_eq!(file.etag(), Some("abc-123"));
        assert_eq!(file.content_length(), Some(4096));
        assert_eq!(
            file.prop("current-user-principal").map(|p| p.hrefs.clone()),
            Some(vec!["/principals/alice/".to_owned()])
        );
        assert_eq!(
            percent_decode(href_path(&file.href)),
            "/dav/Reports 2026/q3 & q4.pdf"
        );
        assert!(answer.entries[2].is_gone());
        assert_eq!(
            answer.sync_token.as_deref(),
            Some("http://example.com/sync/7")
        );
    }

    #[test]
    fn garbage_is_an_error_that_asks_to_try_again() {
        for body in [
            "<html><body>Login</body></html>",
            "<D:multistatus xmlns:D=\"DAV:\"><D:response>",
            "\u{0}\u{1}garbage",
        ] {
            match parse("http://h/dav/", body.as_bytes()) {
                Err(Error::Unavailable(message)) => assert!(message.contains("http://h/dav/")),
                other => panic!("{body}: {other:?}"),
            }
        }
    }

    #[test]
    fn report_bodies_get_the_namespaces() {
        assert_eq!(
            with_namespaces("<c:calendar-query><d:prop/></c:calendar-query>"),
            format!(
                r#"<?xml version="1.0" encoding="utf-8"?><c:calendar-query {NAMESPACES}><d:prop/></c:calendar-query>"#
            )
        );
        assert_eq!(href_path("https://h:1/a/b?x#y"), "/a/b");
        assert_eq!(percent_decode("%E2%82%AC%zz"), "€%zz");
    }
}
