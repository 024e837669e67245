//! Quarry's IMAP connector: the messages of a mailbox's folders, over a connection the host
//! secures with TLS (`imaps://`, or `imap://` with STARTTLS) to the server the user named and
//! no other.
//!
//! One document per message (a message in several folders is one document, by its
//! Message-ID): the subject as title, the folder as path, an `imap://` URL (RFC 5092), and the
//! text of its headers, body and attachments through the extractors the folder connector uses
//! (`quarry-extract`). Listings are incremental by UIDVALIDITY and UID (`listing.rs`), `watch`
//! waits in IDLE so new mail is found within seconds, and `read-file` serves the raw RFC 822
//! message by partial FETCH.

mod client;
mod fetch;
mod folders;
mod listing;
mod message;
mod protocol;
mod server;
mod utf7;

use std::time::{Duration, Instant};

use quarry_sdk::{
    Batch, Config, Connector, Content, DocRef, Error, FileChunk, LogLevel, WatchOutcome, log,
};

use crate::client::Imap;
use crate::folders::Chosen;
use crate::listing::{Checkpoint, Lister};
use crate::message::Address;
use crate::protocol::Item;
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
}

impl Connector for Mail {
    fn new(config: Config) -> Result<Self, Error> {
        let server = Server::parse(config.require("server")?)?;
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
        })
    }

    fn list_docs(&self, checkpoint: Option<String>) -> Result<Batch, Error> {
        let mut imap = self.login()?;
        let folders = folders::choose(&mut imap, &self.named)?;
        let batch = self
            .lister(&folders)
            .next(&mut imap, Checkpoint::parse(checkpoint.as_deref()))?;
        imap.logout();
        Ok(batch)
    }

    fn fetch_content(&self, doc: DocRef) -> Result<Content, Error> {
        let mut imap = self.login()?;
        let folders = folders::choose(&mut imap, &self.named)?;
        let content = fetch::content(&mut imap, &folders, &doc)?;
        imap.logout();
        Ok(content)
    }

    fn fetch_contents(&self, docs: Vec<DocRef>) -> Vec<Result<Content, Error>> {
        let session = self
            .login()
            .and_then(|mut imap| folders::choose(&mut imap, &self.named).map(|f| (imap, f)));
        let (mut imap, folders) = match session {
            Ok(session) => session,
            Err(e) => return docs.iter().map(|_| Err(e.clone())).collect(),
        };
        let contents = fetch::contents(&mut imap, &folders, &docs);
        imap.logout();
        contents
    }

    fn read_file(&self, doc: DocRef, offset: u64, max_bytes: u32) -> Result<FileChunk, Error> {
        let mut imap = self.login()?;
        let folders = folders::choose(&mut imap, &self.named)?;
        let address = fetch::find(&mut imap, &folders, &Address::parse(&doc.locator)?)?;
        let items = format!("RFC822.SIZE BODY.PEEK[]<{offset}.{max_bytes}>");
        let fetched = imap.fetch(&[address.uid], &items)?;
        let attributes = fetched.first().ok_or_else(|| fetch::gone(&doc))?;
        let total_size = message::attribute(attributes, "RFC822.SIZE")
            .and_then(Item::number)
            .unwrap_or(0);
        let data = message::section(attributes, "BODY[")
            .and_then(Item::bytes)
            .unwrap_or_default()
            .to_vec();
        imap.logout();
        Ok(FileChunk { data, total_size })
    }

    fn watch(&self, checkpoint: Option<String>, max_wait_ms: u32) -> Result<WatchOutcome, Error> {
        let until = Instant::now() + Duration::from_millis(u64::from(max_wait_ms));
        let mut imap = self.login()?;
        let folders = folders::choose(&mut imap, &self.named)?;
        let checkpoint = Checkpoint::parse(checkpoint.as_deref());
        let lister = self.lister(&folders);
        if let Some(seen) = checkpoint.seen()
            && lister.changed_since(&mut imap, seen)?
        {
            return Ok(WatchOutcome::Changed);
        }
        let Some(first) = folders.first() else {
            return Ok(WatchOutcome::Unsupported);
        };
        let outcome = if imap.has("IDLE") {
            // IDLE tells of the first folder (INBOX); the others are looked at before each wait.
            imap.examine(&first.name)?;
            let left = until.saturating_duration_since(Instant::now());
            let changed = imap.idle(u32::try_from(left.as_millis()).unwrap_or(u32::MAX))?;
            if changed {
                WatchOutcome::Changed
            } else {
                WatchOutcome::Quiet
            }
        } else {
            self.poll(&mut imap, &lister, checkpoint.seen(), until)?
        };
        imap.logout();
        Ok(outcome)
    }

    fn validate(&self) -> Result<(), Error> {
        let mut imap = self.login()?;
        let folders = folders::choose(&mut imap, &self.named)?;
        if folders.is_empty() {
            return Err(Error::InvalidConfig(
                "the server has no folder to read (`folders` names the ones to read)".into(),
            ));
        }
        imap.logout();
        Ok(())
    }
}

impl Mail {
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
