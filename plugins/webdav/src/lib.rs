//! Quarry's WebDAV connector: the files of a folder on a WebDAV server (Nextcloud, ownCloud,
//! a NAS, Apache mod_dav), reached over HTTPS (or HTTP on this machine) with the user's
//! credentials, at the host of the `url` setting and no other.
//!
//! A listing walks the folder tree with `PROPFIND` (`walk.rs`), a page of folders a call; a
//! file's version is its ETag (or size and modification time), so the host fetches only what
//! changed, and a file deleted or moved is gone from the next listing, which the host then
//! drops from the index. Texts are fetched several at a time and extracted by the folder
//! connector's extractors (`quarry-extract`); images and scanned PDF pages go to the host's
//! OCR. `watch` walks the tree again every so often (more seldom the longer a walk takes) and
//! compares its fingerprint with the last listing's, so changes show within a minute.

mod checkpoint;
mod files;
mod place;
mod walk;

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use quarry_sdk::dav::{Client, Depth};
use quarry_sdk::{
    Batch, Config, Connector, Content, Coverage, DocRef, Error, FileChunk, LogLevel, ScannedPage,
    WatchOutcome, log,
};

use crate::checkpoint::{Checkpoint, Fingerprint};
use crate::place::Place;
use crate::walk::{Resume, Walker};

/// Files listed per `list-docs` call, at most (a page ends after the folder that reaches it).
const BATCH_FILES: usize = 1000;
/// How long a `list-docs` call walks before it answers what it found.
const PAGE_TIME: Duration = Duration::from_secs(10);
/// The shortest pause between two walks of `watch`.
const MIN_POLL: Duration = Duration::from_secs(15);
/// Walks of `watch` take at most this share of the time: a walk of 2 s waits 40 s.
const POLL_FACTOR: u32 = 20;
/// A tree whose walk takes longer than this is not watched: it is synced on its schedule.
const MAX_WATCH_WALK: Duration = Duration::from_secs(15);
/// The largest file whose text is read, in MiB (what the host reads of one response).
const MAX_FILE_MB: u64 = 32;

/// The configured WebDAV connector.
struct WebDav {
    place: Place,
    dav: Client,
    max_file_bytes: u64,
    /// Where the last page of this instance stopped.
    resume: RefCell<Resume>,
    /// When `watch` walks next.
    next_walk: Cell<Option<Instant>>,
}

impl Connector for WebDav {
    fn new(config: Config) -> Result<Self, Error> {
        let place = Place::parse(config.require("url")?)?;
        let max_mb = config.u64_or("max_file_mb", MAX_FILE_MB)?.min(MAX_FILE_MB);
        Ok(WebDav {
            place,
            dav: Client::new(
                config.get("username").unwrap_or_default(),
                config.get("password").unwrap_or_default(),
            ),
            max_file_bytes: max_mb << 20,
            resume: RefCell::default(),
            next_walk: Cell::new(None),
        })
    }

    fn list_docs(&self, checkpoint: Option<String>) -> Result<Batch, Error> {
        let (mut fingerprint, after) = match Checkpoint::parse(checkpoint.as_deref()) {
            Checkpoint::Walking { fingerprint, after } => (Fingerprint(fingerprint), Some(after)),
            _ => (Fingerprint::default(), None),
        };
        let page = self.walker().page(
            after.as_deref(),
            &mut self.resume.borrow_mut(),
            BATCH_FILES,
            Instant::now() + PAGE_TIME,
        )?;
        let mut upserts = Vec::with_capacity(page.files.len());
        for found in &page.files {
            let version = files::version(found);
            fingerprint.add(found, &version);
            upserts.push(files::doc_meta(
                &self.place,
                found,
                version,
                self.max_file_bytes,
            ));
        }
        let checkpoint = match (page.more, page.last) {
            (true, Some(after)) => Checkpoint::Walking {
                fingerprint: fingerprint.0,
                after,
            },
            _ => Checkpoint::Done {
                fingerprint: fingerprint.0,
            },
        };
        Ok(Batch {
            upserts,
            deletes: Vec::new(),
            checkpoint: checkpoint.text(),
            more: page.more,
            coverage: Coverage::Full,
        })
    }

    fn fetch_content(&self, doc: DocRef) -> Result<Content, Error> {
        let mut texts = self.fetch_contents(vec![doc]);
        texts
            .pop()
            .unwrap_or_else(|| Err(Error::Other("no text was fetched".to_owned())))
    }

    fn fetch_contents(&self, docs: Vec<DocRef>) -> Vec<Result<Content, Error>> {
        let locators: Vec<&str> = docs.iter().map(|d| d.locator.as_str()).collect();
        files::contents(&self.dav, &self.place, &locators, self.max_file_bytes)
    }

    fn read_scans(&self, doc: DocRef, pages: Vec<u32>) -> Result<Vec<ScannedPage>, Error> {
        files::read_scans(&self.dav, &self.place, &doc.locator, &pages)
    }

    fn read_file(&self, doc: DocRef, offset: u64, max_bytes: u32) -> Result<FileChunk, Error> {
        files::read(&self.dav, &self.place, &doc.locator, offset, max_bytes)
    }

    fn watch(&self, checkpoint: Option<String>, max_wait_ms: u32) -> Result<WatchOutcome, Error> {
        let until = Instant::now() + Duration::from_millis(u64::from(max_wait_ms));
        // Only a finished listing has a fingerprint to compare with; during a listing (or
        // before the first) there is nothing to watch for yet.
        let Checkpoint::Done { fingerprint } = Checkpoint::parse(checkpoint.as_deref()) else {
            sleep_until(until);
            return Ok(WatchOutcome::Quiet);
        };
        let walk_at = self.next_walk.get().unwrap_or_else(Instant::now);
        if walk_at > until {
            sleep_until(until);
            return Ok(WatchOutcome::Quiet);
        }
        sleep_until(walk_at);
        let started = Instant::now();
        let Some(now) = self.fingerprint(started + MAX_WATCH_WALK)? else {
            log(
                LogLevel::Info,
                &format!(
                    "the folder's tree takes more than {} s to walk: it is synced on its schedule instead of watched",
                    MAX_WATCH_WALK.as_secs()
                ),
            );
            return Ok(WatchOutcome::Unsupported);
        };
        let took = started.elapsed();
        self.next_walk
            .set(Some(Instant::now() + (took * POLL_FACTOR).max(MIN_POLL)));
        Ok(if now == fingerprint {
            WatchOutcome::Quiet
        } else {
            WatchOutcome::Changed
        })
    }

    fn validate(&self) -> Result<(), Error> {
        let url = self.place.root_url();
        let answer = self
            .dav
            .propfind(&url, Depth::Zero, "<d:resourcetype/>")
            .map_err(|e| match e {
                Error::NotFound(why) => {
                    Error::InvalidConfig(format!("`url`: no such folder on the server ({why})"))
                }
                other => other,
            })?;
        let root = answer
            .entries
            .iter()
            .find(|e| self.place.relative(&e.href).as_deref() == Some(""));
        match root {
            Some(root) if root.has_type("collection") => Ok(()),
            Some(_) => Err(Error::InvalidConfig(format!(
                "`url` {url} is a file, not a folder: give the folder that holds it"
            ))),
            None => Err(Error::InvalidConfig(format!(
                "`url` {url}: the server's answer does not describe this folder"
            ))),
        }
    }
}

impl WebDav {
    fn walker(&self) -> Walker<'_> {
        Walker {
            dav: &self.dav,
            place: &self.place,
        }
    }

    /// The fingerprint of a whole walk of the tree, or none when it is not done by `until`.
    fn fingerprint(&self, until: Instant) -> Result<Option<u64>, Error> {
        let walker = self.walker();
        let mut resume = Resume::default();
        let mut fingerprint = Fingerprint::default();
        let mut after: Option<String> = None;
        loop {
            let page = walker.page(after.as_deref(), &mut resume, usize::MAX, until)?;
            for found in &page.files {
                fingerprint.add(found, &files::version(found));
            }
            if !page.more {
                return Ok(Some(fingerprint.0));
            }
            if Instant::now() >= until {
                return Ok(None);
            }
            after = page.last;
        }
    }
}

fn sleep_until(at: Instant) {
    let left = at.saturating_duration_since(Instant::now());
    if !left.is_zero() {
        std::thread::sleep(left);
    }
}

quarry_sdk::export_connector!(WebDav);
