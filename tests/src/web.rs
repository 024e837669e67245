//! A small HTTP/1.1 server on loopback, for connectors that reach the network: it serves fixed
//! pages and redirects, can require Basic credentials, answers conditional requests, and records
//! what it was asked.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

/// A request the server saw.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The request line's path.
    pub path: String,
    /// Header names (lowercase) and values.
    pub headers: BTreeMap<String, String>,
}

/// A page: content type and body.
#[derive(Debug, Clone)]
pub struct Page {
    /// `Content-Type`.
    pub content_type: String,
    /// The body.
    pub body: String,
}

struct Shared {
    pages: BTreeMap<String, Page>,
    /// Paths answered with `302 Found` and this `Location`.
    redirects: BTreeMap<String, String>,
    /// Paths whose answer announces a body and never sends it.
    stalls: Vec<String>,
    /// `Authorization` value required on every page, if any.
    auth: Option<String>,
    seen: Vec<Seen>,
}

/// The running server. It stops with the test process.
pub struct WebServer {
    port: u16,
    shared: Arc<Mutex<Shared>>,
}

impl WebServer {
    /// Starts a server on 127.0.0.1 with no pages.
    pub fn start() -> WebServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().expect("local address").port();
        let shared = Arc::new(Mutex::new(Shared {
            pages: BTreeMap::new(),
            redirects: BTreeMap::new(),
            stalls: Vec::new(),
            auth: None,
            seen: Vec::new(),
        }));
        let serving = shared.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = serving.clone();
                thread::spawn(move || serve(stream, &shared));
            }
        });
        WebServer { port, shared }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Serves `body` at `path` (replacing what was there); the page's ETag follows the body.
    pub fn put(&self, path: &str, content_type: &str, body: &str) {
        self.lock().pages.insert(
            path.to_owned(),
            Page {
                content_type: content_type.to_owned(),
                body: body.to_owned(),
            },
        );
    }

    /// Answers `path` with `302 Found` to `location`.
    pub fn redirect(&self, path: &str, location: &str) {
        self.lock()
            .redirects
            .insert(path.to_owned(), location.to_owned());
    }

    /// Answers `path` with a head announcing a body of a kilobyte, then sends nothing more,
    /// holding the connection open: a server that stopped answering.
    pub fn stall(&self, path: &str) {
        self.lock().stalls.push(path.to_owned());
    }

    /// Requires these Basic credentials on every page from now on.
    pub fn require_basic(&self, user: &str, password: &str) {
        use base64::Engine;
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        self.lock().auth = Some(format!("Basic {token}"));
    }

    /// The requests seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.lock().seen.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn serve(stream: TcpStream, shared: &Mutex<Shared>) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let mut headers = BTreeMap::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
            }
        }
        let (status, content_type, body, etag, location) = {
            let mut s = shared.lock().unwrap_or_else(PoisonError::into_inner);
            s.seen.push(Seen {
                path: path.clone(),
                headers: headers.clone(),
            });
            if s.stalls.contains(&path) {
                drop(s);
                let _ = writer.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1024\r\n\r\n",
                );
                std::thread::sleep(std::time::Duration::from_secs(3600));
                return;
            }
            let authorised = s
                .auth
                .as_ref()
                .is_none_or(|a| headers.get("authorization") == Some(a));
            if let Some(location) = s.redirects.get(&path) {
                let moved = "moved".to_owned();
                (
                    302,
                    "text/plain".to_owned(),
                    moved,
                    None,
                    Some(location.clone()),
                )
            } else {
                match s.pages.get(&path) {
                    _ if !authorised => (
                        401,
                        "text/plain".to_owned(),
                        "who are you?".to_owned(),
                        None,
                        None,
                    ),
                    Some(page) => {
                        let etag = format!("\"{:x}\"", fnv(&page.body));
                        if headers.get("if-none-match") == Some(&etag) {
                            (
                                304,
                                page.content_type.clone(),
                                String::new(),
                                Some(etag),
                                None,
                            )
                        } else {
                            (
                                200,
                                page.content_type.clone(),
                                page.body.clone(),
                                Some(etag),
                                None,
                            )
                        }
                    }
                    None => (
                        404,
                        "text/plain".to_owned(),
                        "no such page".to_owned(),
                        None,
                        None,
                    ),
                }
            }
        };
        let reason = match status {
            200 => "OK",
            302 => "Found",
            304 => "Not Modified",
            401 => "Unauthorized",
            _ => "Not Found",
        };
        let mut head = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n",
            if status == 304 { 0 } else { body.len() }
        );
        if let Some(etag) = etag {
            head.push_str(&format!("ETag: {etag}\r\n"));
        }
        if let Some(location) = location {
            head.push_str(&format!("Location: {location}\r\n"));
        }
        if status == 401 {
            head.push_str("WWW-Authenticate: Basic realm=\"feed\"\r\n");
        }
        head.push_str("\r\n");
        let mut out = head.into_bytes();
        if status != 304 {
            out.extend_from_slice(body.as_bytes());
        }
        if writer.write_all(&out).is_err() {
            return;
        }
    }
}

/// A cheap content hash for ETags (FNV-1a).
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// An RSS 2.0 feed of `(guid, title, description)` items, dated a day apart from
/// 2026-11-01.
pub fn rss(items: &[(&str, &str, &str)]) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel><title>Test feed</title>\n",
    );
    for (i, (guid, title, description)) in items.iter().enumerate() {
        xml.push_str(&format!(
            "<item><guid>{guid}</guid><title>{title}</title><link>https://example.org/{guid}</link>\
             <pubDate>{:02} Nov 2026 09:00:00 GMT</pubDate><description>{description}</description></item>\n",
            i + 1
        ));
    }
    xml.push_str("</channel></rss>\n");
    xml
}
