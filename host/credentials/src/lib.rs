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

mod entropy;
mod files;
mod generic;
mod pem;
mod placeholder;
mod redact;
mod scan;
mod tokens;

pub use redact::{MARKER, redact};
pub use scan::Detector;

use std::ops::Range;

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
