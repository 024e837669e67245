//! The engine: one pass of an Aho-Corasick automaton finds every rule's keywords; a rule is
//! matched only in a window around a keyword it has not yet covered, so the work stays linear
//! in the text's length whatever it holds, and the scan checks its time budget as it goes.

use std::ops::Range;
use std::sync::LazyLock;
use std::time::Instant;

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use regex::{Captures, Regex};

use crate::entropy::shannon;
use crate::placeholder::{is_placeholder, is_reference, is_stand_in_password, names_a_secret};
use crate::tokens::{Check, Matcher, PRIVATE_KEY, TokenRule, is_user_password, jwt_at};
use crate::{
    MAX_DEPTH, Readers, Rule, Scan, Secret, Subject, Within, files, generic, pem, tables, views,
};

/// How far past a keyword a rule's window reaches (besides the rule's own reach): matches whose
/// keyword lies in it are found in one go, and the rule's keywords there are passed over.
const STRIDE: usize = 4096;
/// Secrets one text may hold; a text with more is not scanned further (and counts as
/// incomplete: the caller holds it back).
const MAX_SECRETS: usize = 10_000;
/// How many windows are matched between two looks at the clock.
const CLOCK_EVERY: usize = 64;

/// Extensions of source code: there an unquoted value is an expression, not a literal.
const CODE_EXTENSIONS: &[&str] = &[
    "rs", "py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "tsx", "go", "java", "kt", "kts", "scala",
    "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "rb", "php", "swift", "m", "mm", "pl", "pm",
    "lua", "dart", "r", "jl", "ex", "exs", "erl", "hs", "ml", "clj", "groovy", "vb", "fs", "zig",
    "nim", "v", "sol", "vue", "svelte",
];

/// Extensions (or none) of files that a private key fills: such a file holding a key is a key
/// file, not a note that quotes one.
const KEY_FILE_EXTENSIONS: &[&str] = &["", "pem", "key", "ppk", "asc", "gpg", "openssh", "priv"];

/// A rule ready to match.
struct Compiled {
    spec: &'static TokenRule,
    regex: Option<Regex>,
}

/// The credential detector: every rule compiled once. [`Detector::shared`] is the one to use.
pub struct Detector {
    prefilter: AhoCorasick,
    /// For each of the prefilter's keywords, the rules it announces.
    announces: Vec<Vec<usize>>,
    rules: Vec<Compiled>,
}

static SHARED: LazyLock<Detector> = LazyLock::new(Detector::new);

impl Default for Detector {
    fn default() -> Self {
        Detector::new()
    }
}

impl Detector {
    /// The process's detector, compiled at first use.
    pub fn shared() -> &'static Detector {
        &SHARED
    }

    /// A detector with every rule compiled.
    pub fn new() -> Detector {
        let specs: Vec<&'static TokenRule> = crate::tokens::RULES
            .iter()
            .chain(std::iter::once(&generic::TOKEN_RULE))
            .collect();
        let mut keywords: Vec<&'static str> = Vec::new();
        let mut announces: Vec<Vec<usize>> = Vec::new();
        for (index, spec) in specs.iter().enumerate() {
            for &keyword in spec.keywords {
                match keywords
                    .iter()
                    .position(|k| k.eq_ignore_ascii_case(keyword))
                {
                    Some(at) => announces[at].push(index),
                    None => {
                        keywords.push(keyword);
                        announces.push(vec![index]);
                    }
                }
            }
        }
        let prefilter = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&keywords)
            .expect("the rules' keywords build an automaton");
        let rules = specs
            .into_iter()
            .map(|spec: &'static TokenRule| {
                let regex = match spec.matcher {
                    Matcher::Pattern { pattern, .. } => Some(
                        Regex::new(pattern)
                            .unwrap_or_else(|e| panic!("rule {}: {e}", spec.rule.id)),
                    ),
                    Matcher::PrivateKey | Matcher::Jwt => None,
                };
                Compiled { spec, regex }
            })
            .collect();
        Detector {
            prefilter,
            announces,
            rules,
        }
    }

    /// Every rule, for reports and documentation: file rules first, then rules for text.
    pub fn rules(&self) -> Vec<Rule> {
        let mut all = files::rules();
        all.extend(self.rules.iter().map(|c| c.spec.rule));
        all.push(tables::RULE);
        all
    }

    /// Scans `subject` within `within`: whether it is a credential file, and the secrets its
    /// text holds, also in other forms (quoted, joined, encoded: read by `readers`) while the
    /// depth allows. A scan that runs out of time, or finds more than it keeps, is incomplete.
    pub(crate) fn scan_within(
        &self,
        subject: &Subject<'_>,
        within: Within,
        readers: Readers,
    ) -> Scan {
        if let Some(rule) = files::by_name(subject.path) {
            return Scan {
                credential_file: Some(rule),
                secrets: Vec::new(),
                complete: true,
                unread: None,
            };
        }
        let text = subject.text;
        if files::is_password_export(text) {
            return Scan {
                credential_file: Some(files::PASSWORD_EXPORT),
                secrets: Vec::new(),
                complete: true,
                unread: None,
            };
        }
        let extension = extension(subject.path);
        let code = CODE_EXTENSIONS.contains(&extension.as_str());
        let (mut secrets, mut complete) = self.secrets(text, code, within.deadline);
        secrets.extend(tables::password_cells(text));
        let mut unread = None;
        if complete && within.depth < MAX_DEPTH {
            let seen = views::scan(readers, text, within);
            secrets.extend(seen.secrets);
            complete = seen.complete;
            unread = seen.unread;
        }
        let secrets = merged(secrets);
        let credential_file = self.whole_file_rule(&secrets, text, &extension);
        Scan {
            credential_file,
            secrets,
            complete,
            unread,
        }
    }

    /// The secrets of `text`, and whether the scan reached its end.
    fn secrets(&self, text: &str, code: bool, deadline: Instant) -> (Vec<Secret>, bool) {
        let mut covered = vec![0usize; self.rules.len()];
        let mut found_until = vec![0usize; self.rules.len()];
        let mut secrets = Vec::new();
        let mut matched = 0usize;
        for hit in self.prefilter.find_overlapping_iter(text) {
            let pos = hit.start();
            for &index in &self.announces[hit.pattern().as_usize()] {
                if pos < covered[index] {
                    continue;
                }
                matched += 1;
                if matched.is_multiple_of(CLOCK_EVERY) && Instant::now() > deadline {
                    return (secrets, false);
                }
                let rule = &self.rules[index];
                let before = secrets.len();
                covered[index] =
                    self.match_at(rule, text, pos, code, found_until[index], &mut secrets);
                if let Some(last) = secrets[before..].last() {
                    found_until[index] = last.span.end;
                }
                if secrets.len() > MAX_SECRETS {
                    return (secrets, false);
                }
            }
        }
        (secrets, true)
    }

    /// Matches `rule` around its keyword at `pos`, adding what it finds (past `found_until`) to
    /// `secrets`. Returns the position up to which the rule's keywords need no other look.
    fn match_at(
        &self,
        rule: &Compiled,
        text: &str,
        pos: usize,
        code: bool,
        found_until: usize,
        secrets: &mut Vec<Secret>,
    ) -> usize {
        let spec = rule.spec;
        let found = |span: Range<usize>| Secret {
            rule: spec.rule,
            span,
        };
        match (&spec.matcher, &rule.regex) {
            (Matcher::Pattern { back, reach, .. }, Some(regex)) => {
                let start = text.floor_char_boundary(pos.saturating_sub(*back));
                let end = text.ceil_char_boundary(text.len().min(pos + STRIDE + reach));
                for captures in regex.captures_iter(&text[start..end]) {
                    let Some(value) = captures.name("secret") else {
                        continue;
                    };
                    let span = start + value.start()..start + value.end();
                    if span.start < found_until {
                        continue;
                    }
                    if let Some(span) = accept(spec, text, span, &captures, code) {
                        secrets.push(found(span));
                    }
                }
                pos + STRIDE
            }
            (Matcher::PrivateKey, _) => match pem::private_key_at(text, pos) {
                Some(span) => {
                    let end = span.end;
                    secrets.push(found(span));
                    end
                }
                None => pos + 1,
            },
            (Matcher::Jwt, _) => match jwt_at(text, pos)
                .filter(|s| shannon(&text[s.clone()]) >= spec.min_entropy && stands_apart(text, s))
            {
                Some(span) => {
                    let end = span.end;
                    secrets.push(found(span));
                    end
                }
                None => pos + 1,
            },
            (Matcher::Pattern { .. }, None) => pos + 1,
        }
    }

    /// The rule by which the whole file is a credential, given its secrets: a rule that says so
    /// (a service account's key), or private keys that fill it (a key file, not a note).
    fn whole_file_rule(&self, secrets: &[Secret], text: &str, extension: &str) -> Option<Rule> {
        if let Some(secret) = secrets.iter().find(|s| {
            self.rules
                .iter()
                .any(|r| r.spec.rule == s.rule && r.spec.whole_file)
        }) {
            return Some(secret.rule);
        }
        let keys: Vec<&Secret> = secrets.iter().filter(|s| s.rule == PRIVATE_KEY).collect();
        if keys.is_empty() {
            return None;
        }
        if KEY_FILE_EXTENSIONS.contains(&extension) {
            return Some(PRIVATE_KEY);
        }
        let visible = |s: &str| s.bytes().filter(|b| !b.is_ascii_whitespace()).count();
        let in_keys: usize = keys.iter().map(|k| visible(&text[k.span.clone()])).sum();
        (in_keys * 2 >= visible(text)).then_some(PRIVATE_KEY)
    }
}

/// `secrets` in order, each overlapping run made one (the first's rule, every byte of each):
/// a secret found in a view may cover others found in the text.
fn merged(mut secrets: Vec<Secret>) -> Vec<Secret> {
    secrets.sort_by_key(|s| (s.span.start, s.rule == generic::RULE));
    let mut kept: Vec<Secret> = Vec::with_capacity(secrets.len());
    for secret in secrets {
        match kept.last_mut() {
            Some(last) if secret.span.start < last.span.end => {
                last.span.end = last.span.end.max(secret.span.end);
            }
            _ => kept.push(secret),
        }
    }
    kept
}

/// Checks a matched value as its rule asks; gives the secret's span (an assignment's value may
/// lose trailing punctuation).
fn accept(
    spec: &TokenRule,
    text: &str,
    span: Range<usize>,
    captures: &Captures<'_>,
    code: bool,
) -> Option<Range<usize>> {
    if spec.bounded && !stands_apart(text, &span) {
        return None;
    }
    let value = &text[span.clone()];
    let group = |name: &str| captures.name(name).map_or("", |m| m.as_str());
    let random = shannon(value) >= spec.min_entropy;
    let ok = match spec.check {
        Check::Token => random && !is_placeholder(value),
        Check::Hash => random,
        Check::UserPassword => random && !is_placeholder(value) && is_user_password(value),
        Check::Password => {
            random
                && !is_placeholder(value)
                && !is_reference(value)
                && !is_stand_in_password(value)
                && !names_a_secret(value)
                && !value.contains('$')
                && !is_port(value)
        }
        Check::ServiceAccount => text.contains("\"private_key\"") && text.contains("PRIVATE KEY"),
        Check::Assignment => {
            let key_at = captures
                .name("key")
                .zip(captures.name("secret"))
                .map(|(key, secret)| span.start - (secret.start() - key.start()));
            if key_at.is_some_and(|at| generic::in_public_badge(text, at)) {
                return None;
            }
            // A quoted value runs to its closing quote, whatever it holds (`;`, `,`, spaces).
            let quote = group("quote");
            let value = quoted_value(text, span.start, quote).unwrap_or(value);
            let len = generic::secret_len(group("key"), quote, value, code)?;
            return Some(span.start..span.start + len);
        }
    };
    ok.then_some(span)
}

/// Whether a URL's "password" is a port and what follows it (`host:8080?q=a@b`, `host:443#x@y`):
/// digits up to a `?`, a `#` or the end. A password may hold `?` and `#` (people write them
/// in connection strings unencoded), but not start as a port does.
fn is_port(value: &str) -> bool {
    let digits = value.bytes().take_while(u8::is_ascii_digit).count();
    (1..=5).contains(&digits) && matches!(value.as_bytes().get(digits), None | Some(b'?' | b'#'))
}

/// Bytes a quoted value may run to its closing quote, at most.
const MAX_QUOTED: usize = 256;

/// The value quoted with `quote` that starts at `start` in `text`, up to its closing quote on
/// the same line; `None` when there is no quote, or no closing one within [`MAX_QUOTED`] bytes.
fn quoted_value<'t>(text: &'t str, start: usize, quote: &str) -> Option<&'t str> {
    let close = quote.chars().next()?;
    let rest = text.get(start..)?;
    for (at, c) in rest.char_indices() {
        if at > MAX_QUOTED || c == '\n' {
            return None;
        }
        if c == close {
            return Some(&rest[..at]);
        }
    }
    None
}

/// Whether the bytes around `span` are not letters or digits: the value is a whole token, not
/// part of a longer one.
fn stands_apart(text: &str, span: &Range<usize>) -> bool {
    let bytes = text.as_bytes();
    let before = span.start.checked_sub(1).map(|i| bytes[i]);
    let after = bytes.get(span.end).copied();
    !before.is_some_and(|b| b.is_ascii_alphanumeric())
        && !after.is_some_and(|b| b.is_ascii_alphanumeric())
}

/// The lowercase extension of the file name at the end of `path`; empty when it has none.
fn extension(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}
