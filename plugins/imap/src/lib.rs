//! Quarry's IMAP connector: the messages of a mailbox's folders, over a connection the host
//! secures with TLS (`imaps://`, or `imap://` with STARTTLS) to the server the user named and
//! no other.
//!
//! One document per message (a message in several folders is one document, by its
//! Message-ID): the subject as title, the folder as path, an `imap://` URL (RFC 5092), and the
//! text of its headers, body and attachments through the extractors the folder connector uses
//! (`quarry-extract`). Listings are incremental by UIDVALIDITY and UID (`listing.rs`), `watch`
//! waits in IDLE (with NOTIFY for every folder where the server has it) so new mail is found
//! within seconds, and `read-file` serves the raw RFC 822
//! message by partial FETCH.

mod client;
mod fetch;
mod folders;
mod listing;
mod message;
mod protocol;
mod recent;
mod server;
mod utf7;

use std::cell::RefCell;
use std::time::{Duration, Instant};

use quarry_sdk::{
    Batch, Config, Connector, Content, DocRef, Error, FileChunk, LogLevel, WatchOutcome, log,
};

use crate::client::Imap;
use crate::folders::Chosen;
use crate::listing::{Checkpoint, Lister};
use crate::message::Address;
use crate::protocol::Item;
use crate::recent::Recent;
use crate::server::Server;

/// How often a server without IDLE is asked for news while watching.
const POLL: Duration = Duration::from_secs(10);

/// The configured IMAP connector.
struct Mail {
    server: Server,
    user: String,
    password: String,
    /// The `folders` setting; empty for the default choice.
    named: Vec<String>,
    /// Messages larger than this are listed without their text.
    max_message_bytes: u64,
    /// The session of an earlier call of this instance, kept: the host keeps a connection for
    /// the instance's later calls (30 s at most unused), so a sync logs in once, not once a
    /// message.
    kept: RefCell<Option<Imap>>,
    /// The raw messages fetched lately, which answer `read-file` without the server.
    recent: RefCell<Recent>,
}

impl Connector for Mail {
    fn new(config: Config) -> Result<Self, Error> {
        let server = Server::parse(config.require("server")?)?
            .allowing_plaintext(config.bool_or("allow_plaintext", false)?);
        let max_mb = config.u64_or("max_message_mb", 50)?;
        Ok(Mail {
            server,
            user: config.require("username")?.to_owned(),
            password: config.require("password")?.to_owned(),
            named: config
                .list_or("folders", &[])
                .into_iter()
                .map(|f| f.trim().to_owned())
                .filter(|f| !f.is_empty())
                .collect(),
            max_message_bytes: max_mb.saturating_mul(1 << 20),
            kept: RefCell::new(None),
            recent: RefCell::default(),
        })
    }

    fn list_docs(&self, checkpoint: Option<String>) -> Result<Batch, Error> {
        let checkpoint = Checkpoint::parse(checkpoint.as_deref());
        self.with_imap(|imap| {
            let folders = folders::choose(imap, &self.named)?;
            self.lister(&folders).next(imap, checkpoint.clone())
        })
    }

    fn fetch_content(&self, doc: DocRef) -> Result<Content, Error> {
        self.with_imap(|imap| {
            fetch::content(imap, &self.named, &doc, &mut self.recent.borrow_mut())
        })
    }

    fn fetch_contents(&self, docs: Vec<DocRef>) -> Vec<Result<Content, Error>> {
        self.with_imap(|imap| {
            Ok(fetch::contents(
                imap,
                &self.named,
                &docs,
                &mut self.recent.borrow_mut(),
            ))
        })
        .unwrap_or_else(|e| docs.iter().map(|_| Err(e.clone())).collect())
    }

    fn read_file(&self, doc: DocRef, offset: u64, max_bytes: u32) -> Result<FileChunk, Error> {
        if let Some(chunk) = self.recent.borrow().chunk(&doc.locator, offset, max_bytes) {
            return Ok(chunk);
        }
        let items = format!("UID RFC822.SIZE BODY.PEEK[]<{offset}.{max_bytes}>");
        let address = Address::parse(&doc.locator)?;
        let (_, attributes) =
            self.with_imap(|imap| fetch::fetch_one(imap, &self.named, &address, &items))?;
        let total_size = message::attribute(&attributes, "RFC822.SIZE")
            .and_then(Item::number)
            .unwrap_or(0);
        let data = message::section(&attributes, "BODY[")
            .and_then(Item::bytes)
            .unwrap_or_default()
            .to_vec();
        Ok(FileChunk { data, total_size })
    }

    fn watch(&self, checkpoint: Option<String>, max_wait_ms: u32) -> Result<WatchOutcome, Error> {
        let until = Instant::now() + Duration::from_millis(u64::from(max_wait_ms));
        let checkpoint = Checkpoint::parse(checkpoint.as_deref());
        self.with_imap(|imap| self.watch_on(imap, &checkpoint, until))
    }

    fn validate(&self) -> Result<(), Error> {
        self.with_imap(|imap| {
            if folders::choose(imap, &self.named)?.is_empty() {
                return Err(Error::InvalidConfig(
                    "the server has no folder to read (`folders` names the ones to read)".into(),
                ));
            }
            Ok(())
        })
    }
}

impl Mail {
    /// Runs `work` on the session kept from an earlier call, or on a new one; a kept session
    /// whose connection turns out to be gone (the host closes idle ones, servers time out) is
    /// replaced once. The session is kept for the next call unless its connection failed.
    fn with_imap<T>(
        &self,
        mut work: impl FnMut(&mut Imap) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let kept = self.kept.borrow_mut().take();
        if let Some(mut imap) = kept {
            imap.new_call();
            let done = work(&mut imap);
            if !imap.is_broken() {
                *self.kept.borrow_mut() = Some(imap);
                return done;
            }
        }
        let mut imap = self.login()?;
        let done = work(&mut imap);
        if !imap.is_broken() {
            *self.kept.borrow_mut() = Some(imap);
        }
        done
    }

    fn login(&self) -> Result<Imap, Error> {
        let max_literal = usize::try_from(self.max_message_bytes)
            .unwrap_or(usize::MAX)
            .saturating_add(1 << 20);
        Imap::login(&self.server, &self.user, &self.password, max_literal)
    }

    fn lister<'a>(&'a self, folders: &'a [Chosen]) -> Lister<'a> {
        Lister {
            folders,
            server: &self.server,
            user: &self.user,
            max_text_bytes: self.max_message_bytes,
        }
    }

    /// Whether the mailbox changed after `checkpoint`: each folder's STATUS first, then IDLE
    /// on the first (INBOX) until `until`, told of the others too where the server has NOTIFY.
    fn watch_on(
        &self,
        imap: &mut Imap,
        checkpoint: &Checkpoint,
        until: Instant,
    ) -> Result<WatchOutcome, Error> {
        let folders = folders::choose(imap, &self.named)?;
        let lister = self.lister(&folders);
        if let Some(seen) = checkpoint.seen()
            && lister.changed_since(imap, seen)?
        {
            return Ok(WatchOutcome::Changed);
        }
        let Some(first) = folders.first() else {
            return Ok(WatchOutcome::Unsupported);
        };
        if !imap.has("IDLE") {
            return self.poll(imap, &lister, checkpoint.seen(), until);
        }
        // IDLE tells of the first folder (INBOX), and of the others where the server offers
        // NOTIFY; without it they are looked at (STATUS) before each wait.
        imap.examine(&first.name)?;
        if imap.has("NOTIFY") {
            let others: Vec<&[u8]> = folders[1..].iter().map(|f| f.name.as_slice()).collect();
            if let Err(refused) = imap.notify(&others) {
                log(
                    LogLevel::Debug,
                    &format!("NOTIFY refused, waiting on the first folder only: {refused}"),
                );
            }
        }
        let left = until.saturating_duration_since(Instant::now());
        let changed = imap.idle(u32::try_from(left.as_millis()).unwrap_or(u32::MAX))?;
        Ok(if changed {
            WatchOutcome::Changed
        } else {
            WatchOutcome::Quiet
        })
    }

    /// Watching without IDLE: each folder's STATUS every [`POLL`] until `until`.
    fn poll(
        &self,
        imap: &mut Imap,
        lister: &Lister<'_>,
        seen: Option<&[listing::Seen]>,
        until: Instant,
    ) -> Result<WatchOutcome, Error> {
        let Some(seen) = seen else {
            log(
                LogLevel::Debug,
                "the server has no IDLE and nothing is listed yet",
            );
            return Ok(WatchOutcome::Quiet);
        };
        while Instant::now() + POLL < until {
            std::thread::sleep(POLL);
            if lister.changed_since(imap, seen)? {
                return Ok(WatchOutcome::Changed);
            }
        }
        Ok(WatchOutcome::Quiet)
    }
}

quarry_sdk::export_connector!(Mail);
