//! Finds credentials in documents before Quarry indexes them.
//!
//! Two kinds of finding, as the field's scanners (gitleaks, detect-secrets) make them:
//!
//! - **A credential file**: the whole file is a credential (a private key, a keystore, a
//!   password manager's database, a browser's password export, a service account's key, a
//!   kubeconfig with a client key...). Known by its name or by what it holds (`files`).
//! - **Secrets in text**: provider tokens by their documented forms (GitHub, GitLab, Slack,
//!   Stripe, OpenAI, Anthropic, Google, AWS...), passwords in connection strings and in
//!   assignments, signed JWTs (`tokens`, `generic`). Each rule has keywords: one pass of an
//!   Aho-Corasick automaton over the text finds them, and only the text around a keyword is
//!   matched against the rule's pattern, then checked for randomness (entropy) and for the marks
//!   of a placeholder (`placeholder`). Public certificates and keys, placeholders and prose about
//!   keys are not findings.
//!
//! A scan is bounded in time ([`Detector::scan`] takes a budget); one that runs out says so, and
//! the caller holds the document back. [`redact`] replaces what was found with a marker.

mod archive;
mod carried;
mod encoded;
mod entropy;
mod files;
mod generic;
mod gunzip;
mod judge;
mod literals;
mod pem;
mod placeholder;
mod quotes;
mod redact;
mod scan;
mod stream;
mod tables;
mod tar;
mod tokens;
mod view;
mod views;

pub use archive::is_archive;
pub use judge::judge_archive;
pub use redact::{MARKER, redact};
pub use scan::Detector;
pub use stream::FileScan;

use std::ops::Range;
use std::time::{Duration, Instant};

/// Time a scan of a text of `bytes` may take: a quarter of a second, and 50 ms per MiB.
pub fn budget(bytes: usize) -> Duration {
    Duration::from_millis(250 + 50 * (bytes as u64 >> 20))
}

/// A rule of the detector: its stable id (`github-token`) and what it finds, in words for the
/// user ("a GitHub token").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Stable id, lowercase with dashes.
    pub id: &'static str,
    /// What it finds, for people: "a GitHub token".
    pub what: &'static str,
}

/// What is scanned: a document's path (or title, for the name rules and to tell code from prose)
/// and its text.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// Its path relative to the source, or its title when it has none.
    pub path: &'a str,
    /// Its extracted text (empty when it has none).
    pub text: &'a str,
}

/// A secret found in a text: which rule found it, and where its value lies (byte offsets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// The rule that found it.
    pub rule: Rule,
    /// The secret's bytes in the text.
    pub span: Range<usize>,
}

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// The rule by which the whole file is a credential, if it is one.
    pub credential_file: Option<Rule>,
    /// Secrets found in the text, in order (none when the file is a credential by its name).
    pub secrets: Vec<Secret>,
    /// False when the scan ran out of time or findings before the end of the text: the text may
    /// hold more than was found, and should be treated as a credential.
    pub complete: bool,
    /// Why a part of it, in another form, could not be read to judge it (an encoded archive
    /// too long to open in place, an encrypted member): the text is judged, the file it comes
    /// from is not.
    pub unread: Option<String>,
}

impl Scan {
    /// True when nothing was found in a complete scan.
    pub fn is_clear(&self) -> bool {
        self.complete && self.credential_file.is_none() && self.secrets.is_empty()
    }

    /// The distinct rules of the secrets found, in the order first found.
    pub fn rules(&self) -> Vec<Rule> {
        let mut rules: Vec<Rule> = Vec::new();
        for secret in &self.secrets {
            if !rules.contains(&secret.rule) {
                rules.push(secret.rule);
            }
        }
        rules
    }
}

/// What judging a file's bytes found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// The rule by which the file (or a file inside it) is a credential as a whole.
    pub credential_file: Option<Rule>,
    /// The rules of the secrets found, in the order first found.
    pub rules: Vec<Rule>,
    /// False when a scan ran out of time before anything was found.
    pub complete: bool,
    /// Why a part of it could not be read to judge it (a format Quarry does not open, an
    /// encrypted archive member, an archive that expands past its bound), for the user.
    pub unread: Option<String>,
}

impl Findings {
    /// Nothing found yet, every byte judged so far.
    pub(crate) fn clear() -> Findings {
        Findings {
            complete: true,
            ..Findings::default()
        }
    }

    /// Nothing found, and why a part could not be read.
    pub(crate) fn unread(why: String) -> Findings {
        Findings {
            unread: Some(why),
            ..Findings::clear()
        }
    }

    /// True when something in it is a credential.
    pub fn found(&self) -> bool {
        self.credential_file.is_some() || !self.rules.is_empty()
    }

    /// True when every byte was read and judged, and nothing was found.
    pub fn is_clear(&self) -> bool {
        self.complete && self.unread.is_none() && !self.found()
    }

    /// Adds what `other` found.
    pub(crate) fn absorb(&mut self, other: Findings) {
        self.credential_file = self.credential_file.or(other.credential_file);
        for rule in other.rules {
            if !self.rules.contains(&rule) {
                self.rules.push(rule);
            }
        }
        self.complete &= other.complete;
        self.unread = self.unread.take().or(other.unread);
    }
}

/// How texts and the files found in them are read, for the parts that find them (views, a
/// file's windows) without reaching up to the judge that ties them together.
#[derive(Clone, Copy)]
pub(crate) struct Readers {
    /// Scans a text (the detector's rules, then its views).
    pub text: fn(&Subject<'_>, Within) -> Scan,
    /// Judges the bytes of a file found inside another, by its name.
    pub file: fn(&str, &[u8], Within) -> Findings,
}

/// How many times a text may be read in another form inside another (a base64 attachment of
/// a quoted mail inside an archive...).
pub(crate) const MAX_DEPTH: u8 = 3;

/// The bounds a scan runs within: when it must be done, and how deep in views it is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Within {
    /// When the scan must be done.
    pub deadline: Instant,
    /// How many views deep the text is (0: the document's own text).
    pub depth: u8,
}

impl Within {
    /// No deadline but each window's own (a file judged on its own), at `depth`.
    pub(crate) fn untimed(depth: u8) -> Within {
        Within {
            deadline: Instant::now() + Duration::from_secs(365 * 24 * 3600),
            depth,
        }
    }

    /// The bounds of a view of the text scanned within these.
    pub(crate) fn deeper(self) -> Within {
        Within {
            depth: self.depth + 1,
            ..self
        }
    }
}
