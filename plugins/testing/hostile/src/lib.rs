//! A connector that misbehaves on purpose, for Quarry's containment tests.
//!
//! The `mode` config field picks the misbehaviour:
//! - `loop`: `list-docs` never returns.
//! - `hog`: `list-docs` allocates memory until it gets no more.
//! - `trap`: `list-docs` panics.
//! - `huge-list`: `list-docs` returns far more documents than a batch may hold.
//! - `huge-text`: `fetch-content` returns 80 MiB of text.
//! - `bad-ids`: `list-docs` returns ids and locators that break the contract.
//! - `escape`: `fetch-content` tries to read outside its folder and reports what happened.
//! - `network`: `fetch-content` tries to open a TCP connection, to resolve a name, and HTTP GETs.
//! - `fetch`: `list-docs` GETs the URL in `url` (a text field: nothing is granted for it) and
//!   fails if the request does.
//! - `sleep`: `list-docs` sleeps for an hour in a WASI call (a clock subscription and a poll).
//! - `echo-secret`: `list-docs` logs its `secret` setting and fails with it in its message.
//! - `read-all`: `fetch-content` reads every entry of its folder, whatever its type (FIFOs,
//!   sockets, devices, Quarry's own folders), and reports what happened to each.
//! - `streams`: `fetch-content` asks the host for connections it may not have (another port,
//!   in clear, too many) and one to its `server`, and reports what happened to each.
//! - `keep`: `list-docs` opens a connection to its `server` and keeps it; `fetch-content`
//!   then tries to read from it, in a later call.
//! - `eager`: `watch` answers `changed` at once, every time, though nothing changed.
//! - `waits`: `watch` waits as long as it may, then answers `quiet`.
//!
//! In any other mode it behaves: one document, with text.
//!
//! In every mode, `fetch-content` of a document whose locator is `panic` panics, of one whose
//! locator is `spin` never returns, and of one whose locator is `missing` answers not-found (so a
//! call for several documents can hold one that fails).

use std::hint::black_box;

use quarry_sdk::{
    Batch, Config, Connector, Content, Coverage, DocMeta, DocRef, Error, WatchOutcome,
};

mod escape;
mod network;
mod streams;

struct Hostile {
    mode: String,
    config: Config,
}

fn doc(id: &str) -> DocMeta {
    DocMeta {
        id: id.to_owned(),
        locator: id.to_owned(),
        title: format!("{id}.txt"),
        path: Some(format!("{id}.txt")),
        url: None,
        mime_type: "text/plain".to_owned(),
        size_bytes: 5,
        update_time_ms: 1_700_000_000_000,
        version: "1".to_owned(),
        has_text: true,
    }
}

impl Connector for Hostile {
    fn new(config: Config) -> Result<Self, Error> {
        Ok(Hostile {
            mode: config.get("mode").unwrap_or("ok").to_owned(),
            config,
        })
    }

    fn list_docs(&self, _checkpoint: Option<String>) -> Result<Batch, Error> {
        match self.mode.as_str() {
            "loop" => {
                let mut n: u64 = 0;
                loop {
                    n = black_box(n.wrapping_add(1));
                }
            }
            "hog" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 1 << 20]);
                    black_box(&hoard);
                }
            }
            "trap" => panic!("hostile plugin panics on purpose"),
            "huge-list" => {
                let upserts = (0..200_000).map(|i| doc(&format!("d{i}"))).collect();
                Ok(Batch::last(upserts, Coverage::Full))
            }
            "echo-secret" => {
                let secret = self.config.get("secret").unwrap_or_default();
                quarry_sdk::log(
                    quarry_sdk::LogLevel::Warn,
                    &format!("logging in with {secret}"),
                );
                Err(Error::Unavailable(format!("login refused for {secret}")))
            }
            "sleep" => {
                std::thread::sleep(std::time::Duration::from_secs(3600));
                Ok(Batch::last(vec![doc("woke")], Coverage::Full))
            }
            "fetch" => {
                let url = self.config.require("url")?;
                let response = quarry_sdk::http::get(url, &[])?;
                let mut probe = doc("fetched");
                probe.title = format!("HTTP {}", response.status);
                Ok(Batch::last(vec![probe], Coverage::Full))
            }
            "keep" => {
                let mut kept = doc("kept");
                kept.title = streams::keep(&self.config);
                Ok(Batch::last(vec![kept], Coverage::Full))
            }
            "bad-ids" => {
                let mut bad = doc("../../etc/passwd");
                bad.locator = "x".repeat(10_000);
                Ok(Batch::last(vec![bad], Coverage::Full))
            }
            _ => Ok(Batch::last(vec![doc("probe")], Coverage::Full)),
        }
    }

    /// As the SDK's, except that a document at locator `short` makes the answer one result
    /// short, which breaks the contract.
    fn fetch_contents(&self, docs: Vec<DocRef>) -> Vec<Result<Content, Error>> {
        let short = docs.iter().any(|doc| doc.locator == "short");
        let mut texts: Vec<_> = docs
            .into_iter()
            .map(|doc| self.fetch_content(doc))
            .collect();
        if short {
            texts.pop();
        }
        texts
    }

    fn fetch_content(&self, doc: DocRef) -> Result<Content, Error> {
        match doc.locator.as_str() {
            "panic" => panic!("asked for the document that panics"),
            "spin" => {
                let mut n: u64 = 0;
                loop {
                    n = black_box(n.wrapping_add(1));
                }
            }
            "missing" => return Err(Error::NotFound(format!("no document {}", doc.id))),
            _ => {}
        }
        match self.mode.as_str() {
            "huge-text" => Ok(Content::text("x".repeat(80 << 20))),
            "escape" => Ok(Content::text(escape::attempts(&self.config))),
            "read-all" => Ok(Content::text(escape::read_all(&self.config))),
            "network" => Ok(Content::text(network::attempts(&self.config))),
            "streams" => Ok(Content::text(streams::attempts(&self.config))),
            "keep" => Ok(Content::text(streams::use_kept())),
            _ => Ok(Content::text("hello")),
        }
    }

    fn watch(&self, _checkpoint: Option<String>, max_wait_ms: u32) -> Result<WatchOutcome, Error> {
        match self.mode.as_str() {
            "eager" => Ok(WatchOutcome::Changed),
            "waits" => {
                std::thread::sleep(std::time::Duration::from_millis(u64::from(max_wait_ms)));
                Ok(WatchOutcome::Quiet)
            }
            _ => Ok(WatchOutcome::Unsupported),
        }
    }
}

quarry_sdk::export_connector!(Hostile);
