//! Quarry's browser connector: the history and bookmarks of one Chromium or Firefox profile
//! the user grants (read-only), read inside the sandbox from a consistent copy of the
//! databases while the browser holds them open (`quarry-sqlite`; no host code parses them).
//!
//! One document per address: its title and address, when it was last visited and how often,
//! and the bookmark folders it is in. Only the history and bookmarks files are ever opened
//! (`profile.rs`): never cookies, saved passwords or form data; private windows leave no
//! history to read. A listing after the first asks only for the addresses visited since the
//! newest visit it saw (by visit id); a change to the bookmarks, or history cleared, lists the
//! whole profile again, and so does the daily full sync.

mod chromium;
mod firefox;
mod history;
mod pages;
mod profile;

use std::cell::RefCell;
use std::collections::HashMap;

use quarry_sdk::{Batch, Config, Connector, Content, Coverage, DocRef, Error};

use crate::history::History;
use crate::pages::Page;
use crate::profile::{Browser, Profile};

/// Documents per listing batch.
const BATCH: usize = 1000;

/// The configured browser connector.
struct Browse {
    path: String,
    /// The listing under way in this instance, and the texts of what it listed.
    listing: RefCell<Option<Listing>>,
}

/// A listing: the pages it lists, how, and the checkpoint it ends at.
struct Listing {
    /// The checkpoint it was made from.
    from: String,
    pages: Vec<Page>,
    /// Each page's place in `pages`, by address.
    index: HashMap<String, usize>,
    coverage: Coverage,
    end: String,
}

impl Listing {
    fn new(from: String, pages: Vec<Page>, coverage: Coverage, end: String) -> Listing {
        let index = pages
            .iter()
            .enumerate()
            .map(|(at, page)| (page.url.clone(), at))
            .collect();
        Listing {
            from,
            pages,
            index,
            coverage,
            end,
        }
    }

    fn page(&self, url: &str) -> Option<&Page> {
        self.index.get(url).and_then(|at| self.pages.get(*at))
    }
}

/// Where a listing stands: after the newest visit `visit` and with bookmarks `bookmarks`; and,
/// mid-listing, the page it is at.
#[derive(Debug, Default, PartialEq)]
struct Checkpoint {
    visit: i64,
    bookmarks: String,
    page: usize,
    from: String,
}

impl Checkpoint {
    fn parse(text: &str) -> Checkpoint {
        // `v:<visit>:b:<bookmarks>` at the end of a listing; `p:<page>:<from>` in the middle.
        if let Some(rest) = text.strip_prefix("p:")
            && let Some((page, from)) = rest.split_once(':')
            && let Ok(page) = page.parse()
        {
            return Checkpoint {
                page,
                from: from.to_owned(),
                ..Checkpoint::parse(from)
            };
        }
        let mut parts = text.split(':');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some("v"), Some(visit), Some("b"), Some(bookmarks)) => Checkpoint {
                visit: visit.parse().unwrap_or(0),
                bookmarks: bookmarks.to_owned(),
                page: 0,
                from: text.to_owned(),
            },
            _ => Checkpoint::default(),
        }
    }
}

impl Connector for Browse {
    fn new(config: Config) -> Result<Self, Error> {
        Ok(Browse {
            path: config.require("profile")?.to_owned(),
            listing: RefCell::new(None),
        })
    }

    fn list_docs(&self, checkpoint: Option<String>) -> Result<Batch, Error> {
        let at = Checkpoint::parse(checkpoint.as_deref().unwrap_or_default());
        let mut listing = self.listing.borrow_mut();
        if at.page == 0 || listing.as_ref().is_none_or(|l| l.from != at.from) {
            *listing = Some(self.make_listing(&at)?);
        }
        let Some(current) = listing.as_ref() else {
            return Err(Error::Other("the listing was lost".to_owned()));
        };
        let start = at.page.saturating_mul(BATCH).min(current.pages.len());
        let end = (start + BATCH).min(current.pages.len());
        let more = end < current.pages.len();
        Ok(Batch {
            upserts: current.pages[start..end]
                .iter()
                .map(Page::doc_meta)
                .collect(),
            deletes: Vec::new(),
            checkpoint: if more {
                format!("p:{}:{}", at.page + 1, current.from)
            } else {
                current.end.clone()
            },
            more,
            coverage: current.coverage,
        })
    }

    fn fetch_content(&self, doc: DocRef) -> Result<Content, Error> {
        let browser = self.browser_name()?;
        let mut listing = self.listing.borrow_mut();
        if listing
            .as_ref()
            .is_none_or(|l| l.page(&doc.locator).is_none())
        {
            // A fresh instance, or a page of another listing: the profile read once more, kept
            // for the next documents.
            let history = self.read()?;
            *listing = Some(Listing::new(
                String::new(),
                history.pages.into_values().collect(),
                Coverage::Full,
                String::new(),
            ));
        }
        listing
            .as_ref()
            .and_then(|l| l.page(&doc.locator))
            .map(|page| page.content(browser))
            .ok_or_else(|| Error::NotFound(format!("{} is no longer in the history", doc.locator)))
    }

    fn validate(&self) -> Result<(), Error> {
        self.read().map(|_| ())
    }
}

impl Browse {
    fn profile(&self) -> Result<Profile, Error> {
        Profile::open(&self.path)
    }

    fn browser_name(&self) -> Result<&'static str, Error> {
        Ok(match self.profile()?.browser {
            Browser::Chromium => "chromium",
            Browser::Firefox => "firefox",
        })
    }

    fn read(&self) -> Result<History, Error> {
        let profile = self.profile()?;
        match profile.browser {
            Browser::Chromium => chromium::read(&profile),
            Browser::Firefox => firefox::read(&profile),
        }
    }

    /// A new listing from checkpoint `at`: what was visited since, or everything when the
    /// bookmarks changed, the history was cleared, or nothing was listed yet.
    fn make_listing(&self, at: &Checkpoint) -> Result<Listing, Error> {
        let history = self.read()?;
        let end = format!("v:{}:b:{}", history.last_visit_id, history.bookmarks);
        let incremental = !at.bookmarks.is_empty()
            && at.bookmarks == history.bookmarks
            && history.last_visit_id >= at.visit;
        let (pages, coverage) = if incremental {
            let pages = history
                .visited_after(at.visit)
                .into_iter()
                .cloned()
                .collect();
            (pages, Coverage::Changes)
        } else {
            (history.pages.into_values().collect(), Coverage::Full)
        };
        Ok(Listing::new(at.from.clone(), pages, coverage, end))
    }
}

quarry_sdk::export_connector!(Browse);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_say_where_a_listing_stands() {
        let end = Checkpoint::parse("v:42:b:abc");
        assert_eq!(
            (end.visit, end.bookmarks.as_str(), end.page),
            (42, "abc", 0)
        );
        assert_eq!(end.from, "v:42:b:abc");
        let middle = Checkpoint::parse("p:3:v:42:b:abc");
        assert_eq!(middle.page, 3);
        assert_eq!(middle.visit, 42);
        assert_eq!(middle.from, "v:42:b:abc");
        let first = Checkpoint::parse("p:1:");
        assert_eq!((first.page, first.from.as_str(), first.visit), (1, "", 0));
        assert_eq!(Checkpoint::parse("garbage"), Checkpoint::default());
    }
}
