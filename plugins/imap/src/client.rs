//! An IMAP4rev1/rev2 client session over a connection the host secures (`quarry_sdk::net`):
//! log in, list folders, look at one, search and fetch by UID, and IDLE. Every read is bounded
//! in size and time; the server is not trusted to be well-behaved.

use std::time::{Duration, Instant};

use quarry_sdk::Error;
use quarry_sdk::net::{Connection, ConnectionError, Security};

use crate::protocol::{self, Item, Part};
use crate::server::{Protection, Server};

/// How long one read waits for the server.
const READ_TIMEOUT_MS: u32 = 20_000;
/// Longest line of a response, literals aside.
const MAX_LINE: usize = 256 << 10;
/// Most untagged responses one command may bring (a folder of this many messages is fetched
/// in smaller sets).
const MAX_UNTAGGED: usize = 200_000;

/// How a command ended.
#[derive(Debug)]
pub struct Response {
    /// The untagged responses (`* ...`), without the `*`.
    pub untagged: Vec<Vec<Item>>,
    /// The tagged OK's response code (`[CAPABILITY ...]`), if it has one.
    pub code: Option<String>,
}

impl Response {
    /// The untagged responses named `name` (`LIST`, `SEARCH`, `CAPABILITY`).
    fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Vec<Item>> + 'a {
        self.untagged.iter().filter(move |r| {
            r.first()
                .and_then(Item::atom)
                .is_some_and(|a| a.eq_ignore_ascii_case(name))
        })
    }

    /// The UIDs of its SEARCH responses.
    fn searched(&self) -> impl Iterator<Item = u32> + '_ {
        self.named("SEARCH")
            .flat_map(|r| r[1..].iter().filter_map(Item::number))
            .filter_map(|n| u32::try_from(n).ok())
    }
}

/// What the server told about a folder when it was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FolderState {
    /// UIDVALIDITY: UIDs stay valid while this stays the same.
    pub uid_validity: u32,
    /// The UID the next message will get.
    pub uid_next: u32,
    /// How many messages it holds.
    pub messages: u32,
}

/// A folder as LIST tells it.
#[derive(Debug, Clone)]
pub struct Folder {
    /// The name as the server writes it (modified UTF-7), to send back.
    pub name: Vec<u8>,
    /// The name for people.
    pub display: String,
    /// Its flags (`\Trash`, `\Junk`, `\All`, `\Noselect`), lower-cased.
    pub flags: Vec<String>,
}

/// A logged-in session.
pub struct Imap {
    connection: Connection,
    /// Bytes read and not yet taken.
    pending: Vec<u8>,
    tag: u32,
    /// The server's capabilities, upper-cased.
    pub capabilities: Vec<String>,
    /// The largest literal accepted (a message over it is refused before it is read whole).
    max_literal: usize,
    /// The folder opened by EXAMINE, with its state.
    selected: Option<(Vec<u8>, FolderState)>,
    /// Whether that state was read during this call (a kept session's is from an earlier one).
    fresh: bool,
    /// The connection failed (closed, timed out, garbled): the session cannot go on.
    broken: bool,
}

impl Imap {
    /// Connects to `server`, logs in as `user` and learns the capabilities. Literals up to
    /// `max_literal` bytes are read.
    pub fn login(
        server: &Server,
        user: &str,
        password: &str,
        max_literal: usize,
    ) -> Result<Imap, Error> {
        let security = match server.protection {
            Protection::Tls => Security::Tls,
            Protection::StartTls => Security::StarttlsImap,
            Protection::Clear => Security::Plain,
        };
        let connection = Connection::open(&server.host, server.port, security)
            .map_err(|e| connection_error(server, e))?;
        let mut imap = Imap {
            connection,
            pending: Vec::new(),
            tag: 0,
            capabilities: Vec::new(),
            max_literal,
            selected: None,
            fresh: false,
            broken: false,
        };
        let mut told = None;
        // After STARTTLS the host has read the greeting; otherwise it is the first line.
        if server.protection != Protection::StartTls {
            let (greeting, _) = imap.read_response()?;
            told = greeting
                .get(2)
                .and_then(Item::atom)
                .and_then(capabilities_in);
            match greeting.get(1).and_then(Item::atom) {
                Some(status) if status.eq_ignore_ascii_case("OK") => {}
                Some(status) if status.eq_ignore_ascii_case("PREAUTH") => {}
                _ => {
                    return Err(Error::Unavailable(format!(
                        "{}: the server's greeting was not OK: {}",
                        server,
                        describe(&greeting)
                    )));
                }
            }
        }
        imap.capabilities = match told {
            Some(told) => told,
            None => imap.capability()?,
        };
        if imap.has("LOGINDISABLED") {
            return Err(Error::InvalidConfig(format!(
                "{server}: the server does not accept a password on this connection (LOGINDISABLED)"
            )));
        }
        let login = imap.command(&[
            Part::raw("LOGIN "),
            protocol::string(user.as_bytes()),
            Part::raw(" "),
            protocol::string(password.as_bytes()),
        ]);
        let told = match login {
            Ok(answer) => answer.code.as_deref().and_then(capabilities_in),
            Err(Refusal::No(said) | Refusal::Bad(said)) => {
                return Err(Error::InvalidConfig(format!(
                    "{server}: the server refused the user name or password (it said {said:?}); check `username` and `password` (Gmail, Fastmail, iCloud and Outlook need an app password)"
                )));
            }
            Err(Refusal::Failed(e)) => return Err(e),
        };
        // Servers tell their capabilities after login in the answer; else they are asked.
        imap.capabilities = match told {
            Some(told) => told,
            None => imap.capability()?,
        };
        Ok(imap)
    }

    /// Whether the connection failed: a new session is needed.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Starts a new call of the host on a session kept from an earlier one: the open folder's
    /// state is looked at again (mail may have come meanwhile).
    pub fn new_call(&mut self) {
        self.fresh = false;
    }

    /// Whether the server has capability `name`.
    pub fn has(&self, name: &str) -> bool {
        self.capabilities
            .iter()
            .any(|c| c.eq_ignore_ascii_case(name))
    }

    /// Every folder, as `LIST "" "*"` tells.
    pub fn list(&mut self) -> Result<Vec<Folder>, Error> {
        let listed = self.run(&[Part::raw("LIST \"\" \"*\"")])?;
        Ok(listed.named("LIST").filter_map(|r| folder_of(r)).collect())
    }

    /// The subscribed folders' names, as `LSUB "" "*"` tells.
    pub fn subscribed(&mut self) -> Result<Vec<Vec<u8>>, Error> {
        let listed = self.run(&[Part::raw("LSUB \"\" \"*\"")])?;
        Ok(listed
            .named("LSUB")
            .filter_map(|r| folder_of(r).map(|f| f.name))
            .collect())
    }

    /// A folder's state without opening it (STATUS).
    pub fn status(&mut self, folder: &[u8]) -> Result<FolderState, Error> {
        let status = self.run(&[
            Part::raw("STATUS "),
            protocol::string(folder),
            Part::raw(" (UIDVALIDITY UIDNEXT MESSAGES)"),
        ])?;
        let mut state = FolderState::default();
        for response in &status.untagged {
            if let Some(pairs) = response.get(2).and_then(Item::list) {
                for pair in pairs.chunks(2) {
                    let (Some(key), Some(value)) =
                        (pair[0].atom(), pair.get(1).and_then(Item::number))
                    else {
                        continue;
                    };
                    let value = u32::try_from(value).unwrap_or(u32::MAX);
                    match key.to_ascii_uppercase().as_str() {
                        "UIDVALIDITY" => state.uid_validity = value,
                        "UIDNEXT" => state.uid_next = value,
                        "MESSAGES" => state.messages = value,
                        _ => {}
                    }
                }
            }
        }
        Ok(state)
    }

    /// Opens `folder` to read messages by UID, unless it is open already (its UIDVALIDITY
    /// stays while it is), and tells its state as it was when opened.
    pub fn open(&mut self, folder: &[u8]) -> Result<FolderState, Error> {
        match &self.selected {
            Some((open, state)) if open == folder => Ok(*state),
            _ => self.examine(folder),
        }
    }

    /// Opens `folder` read-only (EXAMINE), unless this call opened it already, and tells its
    /// state now.
    pub fn examine(&mut self, folder: &[u8]) -> Result<FolderState, Error> {
        if let Some((open, state)) = &self.selected
            && open == folder
            && self.fresh
        {
            return Ok(*state);
        }
        let examined = self.run(&[Part::raw("EXAMINE "), protocol::string(folder)])?;
        let mut state = FolderState::default();
        for response in &examined.untagged {
            let word = |i: usize| response.get(i).and_then(Item::atom);
            if word(1).is_some_and(|w| w.eq_ignore_ascii_case("EXISTS")) {
                state.messages = response[0]
                    .number()
                    .and_then(|n| u32::try_from(n).ok())
                    .unwrap_or(0);
            } else if word(0).is_some_and(|w| w.eq_ignore_ascii_case("OK"))
                && let Some(code) = word(1)
            {
                if let Some(v) = code_number(code, "UIDVALIDITY") {
                    state.uid_validity = v;
                }
                if let Some(v) = code_number(code, "UIDNEXT") {
                    state.uid_next = v;
                }
            }
        }
        self.selected = Some((folder.to_vec(), state));
        self.fresh = true;
        Ok(state)
    }

    /// The UIDs of the open folder's messages from `from` on, ascending.
    pub fn uids_from(&mut self, from: u32) -> Result<Vec<u32>, Error> {
        let found = self.run(&[Part::raw(&format!("UID SEARCH UID {}:*", from.max(1)))])?;
        let mut uids: Vec<u32> = found
            .searched()
            // `n:*` always includes the last message, even when its UID is below `n`.
            .filter(|&uid| uid >= from)
            .collect();
        uids.sort_unstable();
        uids.dedup();
        Ok(uids)
    }

    /// The UIDs of the open folder's messages whose Message-ID is `message_id`.
    pub fn search_message_id(&mut self, message_id: &str) -> Result<Vec<u32>, Error> {
        let found = self.run(&[
            Part::raw("UID SEARCH HEADER Message-ID "),
            protocol::string(message_id.as_bytes()),
        ])?;
        Ok(found.searched().collect())
    }

    /// `items` of the messages `uids` of the open folder: each FETCH response's attributes.
    pub fn fetch(&mut self, uids: &[u32], items: &str) -> Result<Vec<Vec<Item>>, Error> {
        if uids.is_empty() {
            return Ok(Vec::new());
        }
        let fetched = self.run(&[Part::raw(&format!("UID FETCH {} ({items})", uid_set(uids)))])?;
        Ok(fetched
            .untagged
            .into_iter()
            .filter(|r| {
                r.get(1)
                    .and_then(Item::atom)
                    .is_some_and(|a| a.eq_ignore_ascii_case("FETCH"))
            })
            .filter_map(|mut r| match r.pop() {
                Some(Item::List(attributes)) => Some(attributes),
                _ => None,
            })
            .collect())
    }

    /// Asks the server to tell (NOTIFY, RFC 5465) of messages arriving in or leaving the open
    /// folder and the folders `others` while the session waits in IDLE: each of them then
    /// sends a STATUS response. An error when the server refuses (a NOTIFY it cannot keep for
    /// these folders).
    pub fn notify(&mut self, others: &[&[u8]]) -> Result<(), Error> {
        let mut parts = vec![Part::raw(
            "NOTIFY SET (selected (MessageNew MessageExpunge))",
        )];
        if !others.is_empty() {
            parts.push(Part::raw(" (mailboxes ("));
            for (at, folder) in others.iter().enumerate() {
                if at > 0 {
                    parts.push(Part::raw(" "));
                }
                parts.push(protocol::string(folder));
            }
            parts.push(Part::raw(") (MessageNew MessageExpunge))"));
        }
        self.run(&parts)?;
        Ok(())
    }

    /// Waits in IDLE on the open folder, at most `max_wait_ms`, for news of a change (a new
    /// message, an expunge, changed flags; with [`Imap::notify`], another folder's STATUS).
    /// Answers whether one came.
    pub fn idle(&mut self, max_wait_ms: u32) -> Result<bool, Error> {
        self.tag += 1;
        let tag = format!("Q{}", self.tag);
        self.send(format!("{tag} IDLE\r\n").as_bytes())?;
        let (go, _) = self.read_response()?;
        if go.first().and_then(Item::atom) != Some("+") {
            return Err(Error::Unavailable(format!(
                "the server refused IDLE: {}",
                describe(&go)
            )));
        }
        let until = Instant::now() + Duration::from_millis(u64::from(max_wait_ms));
        let mut changed = false;
        loop {
            let left = until.saturating_duration_since(Instant::now()).as_millis();
            if left == 0 {
                break;
            }
            match self.read_response_within(u32::try_from(left).unwrap_or(u32::MAX)) {
                Ok((response, _)) => {
                    // `* 4 EXISTS`, `* 2 EXPUNGE`, `* 3 FETCH (FLAGS ...)`, `* VANISHED 7`,
                    // `* STATUS Work (...)`.
                    let news = response.iter().take(3).filter_map(Item::atom).any(|word| {
                        ["EXISTS", "EXPUNGE", "FETCH", "VANISHED", "STATUS"]
                            .iter()
                            .any(|news| word.eq_ignore_ascii_case(news))
                    });
                    if news {
                        changed = true;
                        break;
                    }
                }
                Err(Wait::TimedOut) => break,
                Err(Wait::Failed(e)) => {
                    self.broken = true;
                    return Err(e);
                }
            }
        }
        self.send(b"DONE\r\n")?;
        self.finish(&tag).map_err(Refusal::into_error)?;
        Ok(changed)
    }

    fn capability(&mut self) -> Result<Vec<String>, Error> {
        let answer = self.run(&[Part::raw("CAPABILITY")])?;
        Ok(answer
            .named("CAPABILITY")
            .flat_map(|r| {
                r[1..]
                    .iter()
                    .filter_map(Item::atom)
                    .map(str::to_ascii_uppercase)
            })
            .collect())
    }

    /// Runs a command that must succeed.
    fn run(&mut self, parts: &[Part]) -> Result<Response, Error> {
        self.command(parts).map_err(Refusal::into_error)
    }

    /// Sends a command (its literals after the server's go-ahead, or at once with LITERAL+) and
    /// reads its responses up to its tagged status.
    fn command(&mut self, parts: &[Part]) -> Result<Response, Refusal> {
        self.tag += 1;
        let tag = format!("Q{}", self.tag);
        let mut line = format!("{tag} ").into_bytes();
        let plus = self.has("LITERAL+");
        for part in parts {
            match part {
                Part::Text(text) => line.extend_from_slice(text),
                Part::Literal(bytes) => {
                    line.extend_from_slice(
                        format!("{{{}{}}}\r\n", bytes.len(), if plus { "+" } else { "" })
                            .as_bytes(),
                    );
                    self.send(&line).map_err(Refusal::Failed)?;
                    line.clear();
                    if !plus {
                        let (go, _) = self.read_response().map_err(Refusal::Failed)?;
                        if go.first().and_then(Item::atom) != Some("+") {
                            return Err(Refusal::Bad(describe(&go)));
                        }
                    }
                    line.extend_from_slice(bytes);
                }
            }
        }
        line.extend_from_slice(b"\r\n");
        self.send(&line).map_err(Refusal::Failed)?;
        self.finish(&tag)
    }

    /// Reads responses up to the one tagged `tag`.
    fn finish(&mut self, tag: &str) -> Result<Response, Refusal> {
        let mut untagged = Vec::new();
        loop {
            let (mut response, _) = self.read_response().map_err(Refusal::Failed)?;
            match response.first().and_then(Item::atom) {
                Some("*") => {
                    if untagged.len() == MAX_UNTAGGED {
                        return Err(Refusal::Failed(Error::Unavailable(format!(
                            "the server sent more than {MAX_UNTAGGED} responses to one command"
                        ))));
                    }
                    if response
                        .get(1)
                        .and_then(Item::atom)
                        .is_some_and(|w| w.eq_ignore_ascii_case("BYE"))
                    {
                        self.broken = true;
                        return Err(Refusal::Failed(Error::Unavailable(format!(
                            "the server closed the session: {}",
                            describe(&response)
                        ))));
                    }
                    response.remove(0);
                    untagged.push(response);
                }
                Some(t) if t == tag => {
                    let status = response
                        .get(1)
                        .and_then(Item::atom)
                        .unwrap_or("")
                        .to_ascii_uppercase();
                    let text = describe(&response[2.min(response.len())..]);
                    return match status.as_str() {
                        "OK" => Ok(Response {
                            untagged,
                            code: response.get(2).and_then(Item::atom).map(str::to_owned),
                        }),
                        "NO" => Err(Refusal::No(text)),
                        _ => Err(Refusal::Bad(text)),
                    };
                }
                // A continuation or another tag's answer: not ours to act on.
                _ => {}
            }
        }
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let sent = self.connection.write_all(bytes);
        self.broken |= sent.is_err();
        sent.map_err(|e| {
            Error::Unavailable(format!(
                "the connection to the server failed: {}",
                in_words(&e)
            ))
        })
    }

    fn read_response(&mut self) -> Result<(Vec<Item>, usize), Error> {
        let read = self.read_response_within(READ_TIMEOUT_MS);
        // A response not read whole leaves the session out of step with the server.
        self.broken |= read.is_err();
        read.map_err(|e| match e {
            Wait::TimedOut => Error::Unavailable(format!(
                "the server sent nothing for {} s",
                READ_TIMEOUT_MS / 1000
            )),
            Wait::Failed(e) => e,
        })
    }

    /// One whole response, its literals read into it: its items and its size in bytes.
    fn read_response_within(&mut self, timeout_ms: u32) -> Result<(Vec<Item>, usize), Wait> {
        let mut line = Vec::new();
        let mut literals = Vec::new();
        let mut size = 0;
        loop {
            let segment = self.read_line(timeout_ms)?;
            size += segment.len();
            if line.len() + segment.len() > MAX_LINE {
                return Err(Wait::Failed(Error::Unavailable(format!(
                    "the server sent a response line longer than {MAX_LINE} bytes"
                ))));
            }
            let literal = literal_size(&segment);
            line.extend_from_slice(&segment);
            let Some(n) = literal else { break };
            if n > self.max_literal {
                return Err(Wait::Failed(Error::Other(format!(
                    "the server sent a literal of {n} bytes, over this connector's limit of {} (max_message_mb)",
                    self.max_literal
                ))));
            }
            literals.push(self.read_exact(n, timeout_ms)?);
            size += n;
        }
        let mut literals = literals.into_iter();
        let items = protocol::parse(&line, &mut literals).map_err(|e| {
            Wait::Failed(Error::Unavailable(format!(
                "the server's answer does not parse: {e}"
            )))
        })?;
        Ok((items, size))
    }

    /// A line without its CRLF.
    fn read_line(&mut self, timeout_ms: u32) -> Result<Vec<u8>, Wait> {
        let mut searched = 0;
        loop {
            if let Some(at) = self.pending[searched..]
                .windows(2)
                .position(|w| w == b"\r\n")
            {
                let end = searched + at;
                let line = self.pending[..end].to_vec();
                self.pending.drain(..end + 2);
                return Ok(line);
            }
            searched = self.pending.len().saturating_sub(1);
            if self.pending.len() > MAX_LINE {
                return Err(Wait::Failed(Error::Unavailable(format!(
                    "the server sent a line longer than {MAX_LINE} bytes"
                ))));
            }
            self.fill(timeout_ms)?;
        }
    }

    fn read_exact(&mut self, n: usize, timeout_ms: u32) -> Result<Vec<u8>, Wait> {
        while self.pending.len() < n {
            self.fill(timeout_ms)?;
        }
        Ok(self.pending.drain(..n).collect())
    }

    fn fill(&mut self, timeout_ms: u32) -> Result<(), Wait> {
        match self.connection.read(256 << 10, timeout_ms) {
            Ok(bytes) if bytes.is_empty() => Err(Wait::Failed(Error::Unavailable(
                "the server closed the connection".into(),
            ))),
            Ok(bytes) => {
                self.pending.extend_from_slice(&bytes);
                Ok(())
            }
            Err(ConnectionError::TimedOut) => Err(Wait::TimedOut),
            Err(e) => Err(Wait::Failed(Error::Unavailable(format!(
                "the connection to the server failed: {}",
                in_words(&e)
            )))),
        }
    }
}

/// Why a read ended without a response.
enum Wait {
    TimedOut,
    Failed(Error),
}

/// How a command failed.
enum Refusal {
    /// The server answered NO.
    No(String),
    /// The server answered BAD (or something else).
    Bad(String),
    /// The connection or the answer failed.
    Failed(Error),
}

impl Refusal {
    fn into_error(self) -> Error {
        match self {
            Refusal::No(said) => Error::Other(format!("the server refused: {said}")),
            Refusal::Bad(said) => Error::Other(format!("the server did not understand: {said}")),
            Refusal::Failed(e) => e,
        }
    }
}

/// The capabilities a response code lists (`[CAPABILITY IMAP4rev1 IDLE ...]`), upper-cased.
fn capabilities_in(code: &str) -> Option<Vec<String>> {
    let inner = code.strip_prefix('[')?.strip_suffix(']')?;
    let (key, list) = inner.split_once(' ')?;
    key.eq_ignore_ascii_case("CAPABILITY").then(|| {
        list.split_whitespace()
            .map(str::to_ascii_uppercase)
            .collect()
    })
}

/// The number in response code `code` (`[UIDNEXT 42]`) named `name`.
fn code_number(code: &str, name: &str) -> Option<u32> {
    let inner = code.strip_prefix('[')?.strip_suffix(']')?;
    let (key, value) = inner.split_once(' ')?;
    key.eq_ignore_ascii_case(name)
        .then(|| value.trim().parse().ok())?
}

/// The size of the literal a line ends with (`{123}` or `{123+}`).
fn literal_size(line: &[u8]) -> Option<usize> {
    let body = line.strip_suffix(b"}")?;
    let open = body.iter().rposition(|&b| b == b'{')?;
    let digits = &body[open + 1..];
    let digits = digits.strip_suffix(b"+").unwrap_or(digits);
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// A UID set (`1:5,9,12:13`) of ascending `uids`.
fn uid_set(uids: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < uids.len() {
        let start = uids[i];
        let mut end = start;
        while i + 1 < uids.len() && uids[i + 1] == end + 1 {
            i += 1;
            end = uids[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        if start == end {
            out.push_str(&start.to_string());
        } else {
            out.push_str(&format!("{start}:{end}"));
        }
        i += 1;
    }
    out
}

/// The folder of a LIST or LSUB response (`LIST (flags) "/" name`).
fn folder_of(response: &[Item]) -> Option<Folder> {
    let flags = response
        .get(1)?
        .list()?
        .iter()
        .filter_map(Item::atom)
        .map(str::to_ascii_lowercase)
        .collect();
    let name = response.get(3)?.bytes()?.to_vec();
    let display = crate::utf7::decode(&name);
    Some(Folder {
        name,
        display,
        flags,
    })
}

/// A response in words, for an error message (its atoms and strings, cut short).
fn describe(items: &[Item]) -> String {
    let words: Vec<String> = items
        .iter()
        .map(|item| match item {
            Item::List(_) => "(...)".to_owned(),
            Item::Nil => "NIL".to_owned(),
            other => other.text().unwrap_or_default(),
        })
        .collect();
    words.join(" ").chars().take(300).collect()
}

/// A failed connection in words that name the fix.
fn connection_error(server: &Server, error: ConnectionError) -> Error {
    match error {
        ConnectionError::Tls(m) => Error::InvalidConfig(format!(
            "{server}: {m}{}",
            if m.contains("certificate") {
                " (the `ca_file` setting names a private CA's PEM file)"
            } else {
                ""
            }
        )),
        ConnectionError::Denied(m) => Error::InvalidConfig(format!("{server}: {m}")),
        other => Error::Unavailable(format!("{server}: {}", in_words(&other))),
    }
}

/// A connection's failure in words.
fn in_words(error: &ConnectionError) -> String {
    match error {
        ConnectionError::Denied(m)
        | ConnectionError::Unreachable(m)
        | ConnectionError::Tls(m)
        | ConnectionError::Limit(m)
        | ConnectionError::Other(m) => m.clone(),
        ConnectionError::TimedOut => {
            "the server did not answer in time (it may be down or overloaded)".to_owned()
        }
        ConnectionError::Closed => "the server closed the connection".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_sets_join_runs() {
        assert_eq!(uid_set(&[1, 2, 3, 5, 7, 8]), "1:3,5,7:8");
        assert_eq!(uid_set(&[4]), "4");
    }

    #[test]
    fn literal_markers_and_codes() {
        assert_eq!(literal_size(b"* 1 FETCH (BODY[] {42}"), Some(42));
        assert_eq!(literal_size(b"a {7+}"), Some(7));
        assert_eq!(literal_size(b"* OK done"), None);
        assert_eq!(code_number("[UIDNEXT 42]", "UIDNEXT"), Some(42));
        assert_eq!(code_number("[UIDNEXT 42]", "UIDVALIDITY"), None);
    }
}
