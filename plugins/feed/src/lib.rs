//! Quarry's feed connector: the items of an RSS or Atom feed, over `wasi:http`.
//!
//! The host lets it reach only the host of its `feed_url` setting. Listings are `changes`: an
//! item that drops off the feed stays in the index, so the index keeps the feed's history. The
//! checkpoint holds the feed's validators (ETag, Last-Modified), so an unchanged feed costs one
//! conditional request that answers 304.

mod parse;

use std::cell::RefCell;

use quarry_sdk::http::{self, Response};
use quarry_sdk::{Batch, Config, Connector, Content, Coverage, DocMeta, DocRef, Error, FileChunk};

use crate::parse::Item;

/// Longest locator the host accepts, in bytes.
const MAX_LOCATOR: usize = 4096;

thread_local! {
    /// The feed fetched by this instance, so that the `fetch-content` calls following a listing
    /// in the same instance do not download it again. Never relied on: a fresh instance fetches.
    static FETCHED: RefCell<Option<(String, Vec<Item>)>> = const { RefCell::new(None) };
}

/// The configured feed connector.
struct Feed {
    url: String,
    /// `Authorization` header value, when credentials are set.
    auth: Option<String>,
}

impl Connector for Feed {
    fn new(config: Config) -> Result<Self, Error> {
        let url = config.require("feed_url")?.trim().to_owned();
        let user = config.get("username").unwrap_or("").trim();
        let password = config.get("password").unwrap_or("");
        let auth = (!user.is_empty()).then(|| http::basic_auth(user, password));
        Ok(Feed { url, auth })
    }

    fn list_docs(&self, checkpoint: Option<String>) -> Result<Batch, Error> {
        let validators = checkpoint.unwrap_or_default();
        let (etag, modified) = validators.split_once('\n').unwrap_or(("", ""));
        let mut headers = Vec::new();
        if !etag.is_empty() {
            headers.push(("if-none-match", etag));
        }
        if !modified.is_empty() {
            headers.push(("if-modified-since", modified));
        }
        let response = self.get(&headers)?;
        if response.status == 304 {
            return Ok(changes(Vec::new(), validators.clone()));
        }
        let items = parse::items(&response.text())?;
        let upserts = items.iter().map(meta).collect();
        FETCHED.with(|f| *f.borrow_mut() = Some((self.url.clone(), items)));
        let next = format!(
            "{}\n{}",
            response.header("etag").unwrap_or(""),
            response.header("last-modified").unwrap_or("")
        );
        Ok(changes(upserts, next))
    }

    fn fetch_content(&self, doc: DocRef) -> Result<Content, Error> {
        let item = self.item(&doc)?;
        let mut content = Content::text(text_of(&item));
        if !item.author.is_empty() {
            content = content.with_meta("author", item.author.clone());
        }
        if !item.link.is_empty() {
            content = content.with_meta("link", item.link.clone());
        }
        Ok(content)
    }

    fn read_file(&self, doc: DocRef, offset: u64, max_bytes: u32) -> Result<FileChunk, Error> {
        let item = self.item(&doc)?;
        let bytes = item.body.as_bytes();
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        let end = start.saturating_add(max_bytes as usize).min(bytes.len());
        Ok(FileChunk {
            data: bytes[start..end].to_vec(),
            total_size: bytes.len() as u64,
        })
    }

    fn validate(&self) -> Result<(), Error> {
        let response = self.get(&[])?;
        parse::items(&response.text()).map(|_| ())
    }
}

impl Feed {
    /// GETs the feed; HTTP failures become errors that say what to do.
    fn get(&self, extra: &[(&str, &str)]) -> Result<Response, Error> {
        let mut headers = vec![(
            "accept",
            "application/rss+xml, application/atom+xml, application/xml;q=0.9, */*;q=0.5",
        )];
        headers.extend_from_slice(extra);
        if let Some(auth) = &self.auth {
            headers.push(("authorization", auth));
        }
        let response = http::get(&self.url, &headers)?;
        match response.status {
            200..=299 | 304 => Ok(response),
            401 | 403 => Err(Error::InvalidConfig(format!(
                "the feed answered HTTP {}: check the user name and password",
                response.status
            ))),
            404 | 410 => Err(Error::InvalidConfig(format!(
                "the feed answered HTTP {}: there is no feed at {}",
                response.status, self.url
            ))),
            300..=399 => Err(Error::InvalidConfig(format!(
                "the feed moved (HTTP {}) to {}; give that address",
                response.status,
                response.header("location").unwrap_or("(no location given)")
            ))),
            status => Err(Error::Unavailable(format!(
                "the feed answered HTTP {status}"
            ))),
        }
    }

    /// The item `doc` names, from this instance's copy of the feed or a fresh one.
    fn item(&self, doc: &DocRef) -> Result<Item, Error> {
        let cached = FETCHED.with(|f| {
            f.borrow()
                .as_ref()
                .filter(|(url, _)| *url == self.url)
                .and_then(|(_, items)| find(items, doc))
        });
        if let Some(item) = cached {
            return Ok(item);
        }
        let items = parse::items(&self.get(&[])?.text())?;
        let found = find(&items, doc);
        FETCHED.with(|f| *f.borrow_mut() = Some((self.url.clone(), items)));
        found.ok_or_else(|| Error::NotFound(format!("the feed no longer carries {}", doc.locator)))
    }
}

fn find(items: &[Item], doc: &DocRef) -> Option<Item> {
    items.iter().find(|i| key(i) == doc.locator).cloned()
}

fn changes(upserts: Vec<DocMeta>, checkpoint: String) -> Batch {
    Batch {
        upserts,
        deletes: Vec::new(),
        checkpoint,
        more: false,
        coverage: Coverage::Changes,
    }
}

/// What names an item across fetches: its guid, else its link, else its title and date.
fn key(item: &Item) -> String {
    let key = if !item.guid.is_empty() {
        item.guid.clone()
    } else if !item.link.is_empty() {
        item.link.clone()
    } else {
        format!("{}\n{}", item.title, item.date)
    };
    if key.len() <= MAX_LOCATOR {
        key
    } else {
        quarry_sdk::stable_id("k_", &key)
    }
}

fn meta(item: &Item) -> DocMeta {
    let key = key(item);
    let (title, _) = quarry_sdk::html::to_text(&item.title);
    let title = title.trim();
    DocMeta {
        id: quarry_sdk::stable_id("i_", &key),
        locator: key,
        title: if title.is_empty() {
            "(untitled)".to_owned()
        } else {
            title.to_owned()
        },
        path: None,
        url: (!item.link.is_empty()).then(|| item.link.clone()),
        mime_type: "text/html".to_owned(),
        size_bytes: item.body.len() as u64,
        update_time_ms: quarry_sdk::dates::parse_ms(&item.date).unwrap_or(0),
        version: quarry_sdk::stable_id(
            "v_",
            &format!(
                "{}\n{}\n{}\n{}",
                item.title, item.date, item.author, item.body
            ),
        ),
        has_text: true,
    }
}

/// The item's text: its title, then its body without markup.
fn text_of(item: &Item) -> String {
    let (title, _) = quarry_sdk::html::to_text(&item.title);
    let (body, _) = quarry_sdk::html::to_text(&item.body);
    format!("{}\n\n{}", title.trim(), body.trim())
}

quarry_sdk::export_connector!(Feed);
