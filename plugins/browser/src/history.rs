//! What a profile's history and bookmarks hold, read the same way for either browser: every
//! page (one per address, history and bookmarks merged), the newest visit's id, and a
//! fingerprint of the bookmarks.

use std::collections::BTreeMap;

use quarry_sdk::Error;

use crate::pages::Page;

/// A profile's pages as read now.
#[derive(Debug, Default)]
pub struct History {
    /// Every page, by address.
    pub pages: BTreeMap<String, Page>,
    /// The id of the newest visit (0 for none).
    pub last_visit_id: i64,
    /// The addresses visited after each visit id, newest last: (visit id, address).
    pub visits: Vec<(i64, String)>,
    /// A fingerprint of the bookmarks (addresses, titles and folders).
    pub bookmarks: String,
}

impl History {
    /// The page of `url`, made if new.
    pub fn page(&mut self, url: &str) -> &mut Page {
        self.pages.entry(url.to_owned()).or_insert_with(|| Page {
            url: url.to_owned(),
            ..Page::default()
        })
    }

    /// Notes that `url` is bookmarked in `folder` (titled `title`, added at `added_ms`).
    pub fn bookmark(&mut self, url: &str, title: &str, folder: &str, added_ms: i64) {
        if !Page::is_indexed(url) {
            return;
        }
        let page = self.page(url);
        if page.title.is_empty() {
            page.title = title.to_owned();
        }
        if !page.folders.iter().any(|f| f == folder) {
            page.folders.push(folder.to_owned());
        }
        if page.bookmarked_ms == 0 || (added_ms > 0 && added_ms < page.bookmarked_ms) {
            page.bookmarked_ms = added_ms;
        }
    }

    /// The addresses visited after visit `after`.
    pub fn visited_after(&self, after: i64) -> Vec<&Page> {
        let mut urls: Vec<&str> = self
            .visits
            .iter()
            .filter(|(id, _)| *id > after)
            .map(|(_, url)| url.as_str())
            .collect();
        urls.sort_unstable();
        urls.dedup();
        urls.iter().filter_map(|url| self.pages.get(*url)).collect()
    }

    /// Sets the bookmarks' fingerprint from the pages.
    pub fn seal_bookmarks(&mut self) {
        let mut all = String::new();
        for page in self.pages.values().filter(|p| !p.folders.is_empty()) {
            all.push_str(&page.url);
            all.push('\0');
            all.push_str(&page.folders.join("\0"));
            all.push('\n');
        }
        self.bookmarks = quarry_sdk::stable_id("", &all);
    }
}

/// A column's text that must be there.
pub fn missing(what: &str) -> Error {
    Error::Other(format!(
        "the history database has no {what}: a browser version this plugin does not know"
    ))
}
