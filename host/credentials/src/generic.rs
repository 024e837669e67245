//! The generic rule: a value given to a name that says it is secret (`password = ...`,
//! `DB_PASSWORD=...`, `"api_key": "..."`, `Password: ...` in a note), as gitleaks' generic rule
//! and detect-secrets' keyword detector find them. What makes it a secret is what the value looks
//! like: random enough, not a placeholder, not a reference to where a secret is kept, and in
//! source code a quoted literal (an unquoted value there is an expression).

use crate::Rule;
use crate::entropy::{classes, shannon};
use crate::placeholder::{is_placeholder, is_reference, is_stand_in_password, names_a_secret};
use crate::tokens::{Check, Matcher, TokenRule};

/// The rule.
pub(crate) const RULE: Rule = Rule {
    id: "password-assignment",
    what: "a password or secret given a value",
};

/// Keywords that announce the rule.
pub(crate) const KEYWORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "api-key",
    "access_key",
    "accesskey",
    "private_key",
    "auth_key",
    "credential",
];

/// The pattern: a name holding a keyword, an assignment, a value on the same line.
pub(crate) const PATTERN: &str = r#"(?P<key>[A-Za-z0-9_.-]{0,40}(?i:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth[_-]?key|credentials?)[A-Za-z0-9_.-]{0,24})["'\]]{0,2}[ \t]{0,8}(?::=|=>|=|:)[ \t]{0,8}(?P<quote>["'`]?)(?P<secret>[^\s"'`,;]{1,200})"#;
/// How far before its keyword a match may start, and how far after it it may end.
pub(crate) const BACK: usize = 41;
pub(crate) const REACH: usize = 270;

/// The rule as the engine runs it.
pub(crate) const TOKEN_RULE: TokenRule = TokenRule {
    rule: RULE,
    keywords: KEYWORDS,
    matcher: Matcher::Pattern {
        pattern: PATTERN,
        back: BACK,
        reach: REACH,
    },
    min_entropy: 0.0,
    check: Check::Assignment,
    bounded: false,
    whole_file: false,
};

/// Endings of a name that make its value something other than a secret (`token_url`,
/// `password_file`, `secret_name`, `token_ttl`).
const NOT_SECRET_ENDINGS: &[&str] = &[
    "url",
    "uri",
    "path",
    "file",
    "dir",
    "name",
    "type",
    "length",
    "len",
    "size",
    "count",
    "max",
    "min",
    "policy",
    "prompt",
    "field",
    "label",
    "header",
    "endpoint",
    "expiry",
    "expires",
    "expiration",
    "ttl",
    "timeout",
    "format",
    "kind",
    "mode",
    "env",
    "var",
    "hint",
    "regex",
    "pattern",
    "version",
    "provider",
    "source",
    "store",
    "manager",
    "strategy",
    "required",
    "enabled",
    "rotation",
    "reset",
    "id",
    "ref",
    "hash_algorithm",
];

/// Values that are words of a language, not secrets.
const WORDS: &[&str] = &[
    "true",
    "false",
    "null",
    "none",
    "nil",
    "undefined",
    "empty",
    "required",
    "optional",
    "string",
    "boolean",
    "integer",
    "number",
    "object",
    "secret",
    "password",
    "token",
    "hidden",
    "masked",
    "unset",
    "default",
    "disabled",
    "enabled",
];

/// Extensions of a file name given as a value (`secret.txt`, `key.pem`): a place, not a secret.
const FILE_EXTENSIONS: &[&str] = &[
    "txt", "json", "pem", "key", "yaml", "yml", "toml", "env", "cfg", "conf", "ini", "crt", "der",
    "p12", "pfx", "jks", "gpg", "asc", "enc", "age", "db", "sqlite", "csv", "xml", "md", "rs",
    "py", "js", "ts", "go", "rb", "sh",
];

/// Whether the assignment of `value` (quoted with `quote`, possibly empty) to the name `key`
/// is a secret; `code` when the text is source code. Gives the value's length once trailing
/// brackets and punctuation are cut.
pub(crate) fn secret_len(key: &str, quote: &str, value: &str, code: bool) -> Option<usize> {
    let value = value.trim_end_matches([')', ']', '}', '>', '.', ':', '\\']);
    // `token::Abstract`: a path in code, not an assignment.
    if value.len() < 6 || value.starts_with(':') || !name_says_secret(key) {
        return None;
    }
    if code && quote.is_empty() {
        return None; // an expression, not a literal
    }
    if is_placeholder(value) || is_reference(value) || is_word(value) || is_place(value) {
        return None;
    }
    if is_stand_in_password(value) || names_a_secret(value) {
        return None; // a fixture's value (`refresh-token`, `test-secret`), or documentation's
    }
    if value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Spaces belong to passphrases; a token's or a key's value never holds one (`unexpected
    // token: "[year] [month]"` is a message, not a token).
    if value.contains(' ') && !names_a_password(key) {
        return None;
    }
    if quote.is_empty() && looks_like_code(value) {
        return None;
    }
    random_enough(value).then_some(value.len())
}

/// Whether the name is a password's or a passphrase's (whose value may hold spaces).
fn names_a_password(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    ["pass", "pwd", "secret"].iter().any(|w| lower.contains(w))
}

/// Whether the name's words after its keyword leave it naming a secret.
fn name_says_secret(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    // Public keys, counts of tokens, and tokens that only mark a place (pages, progress,
    // cancellation, protection against forged requests).
    if [
        "public",
        "publishable",
        "tokeniz",
        "tokens",
        "csrf",
        "xsrf",
        "progress",
        "page",
        "next",
        "continuation",
        "cursor",
        "sync",
        "cancel",
        "resume",
        "idempotency",
    ]
    .iter()
    .any(|w| lower.contains(w))
    {
        return false;
    }
    let last_word = lower
        .rsplit(['_', '-', '.'])
        .next()
        .unwrap_or(lower.as_str());
    !NOT_SECRET_ENDINGS
        .iter()
        .any(|ending| last_word == *ending || (last_word.len() > 8 && last_word.ends_with(ending)))
}

/// Whether the name at `key_at` is a query parameter of a status badge's URL (Codecov's and
/// shields.io's graph tokens are public by design: READMEs carry them).
pub(crate) fn in_public_badge(text: &str, key_at: usize) -> bool {
    if !text[..key_at].ends_with(['?', '&']) {
        return false;
    }
    let line_start = text[..key_at].rfind('\n').map_or(0, |i| i + 1);
    let from = text.floor_char_boundary(line_start.max(key_at.saturating_sub(300)));
    let before = &text[from..key_at];
    ["codecov.io", "shields.io", "badge"]
        .iter()
        .any(|host| before.contains(host))
}

fn is_word(value: &str) -> bool {
    WORDS.iter().any(|w| value.eq_ignore_ascii_case(w))
}

/// A path, a URL or a file's name.
fn is_place(value: &str) -> bool {
    if value.starts_with(['/', '~']) || value.starts_with("./") || value.starts_with("../") {
        return true;
    }
    if value.contains("://") {
        return true;
    }
    match value.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty() && FILE_EXTENSIONS.iter().any(|e| ext.eq_ignore_ascii_case(e))
        }
        None => false,
    }
}

/// An unquoted value that reads as code: a call, an index, a member or type path
/// (`self.token`, `config.auth.password`, `aes::InitToken`).
fn looks_like_code(value: &str) -> bool {
    if value.contains(['(', '[', '{']) || value.contains("::") || value.contains("->") {
        return true;
    }
    let parts: Vec<&str> = value.split('.').collect();
    parts.len() > 1
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !p.as_bytes()[0].is_ascii_digit()
        })
}

/// Whether a value is random enough to be a secret: short ones mix three classes of character;
/// ones of letters alone are long passphrases; the rest have some entropy.
fn random_enough(value: &str) -> bool {
    let mix = classes(value);
    if value.len() < 8 {
        return mix >= 3;
    }
    let letters_only = value.chars().all(char::is_alphabetic);
    if letters_only {
        return value.len() >= 12 && shannon(value) >= 3.2;
    }
    shannon(value) >= 2.8 && mix >= 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_secrets_given_to_secret_names_are_secrets() {
        for (key, quote, value, code) in [
            ("password", "\"", "Tr0ub4dor&3x", true),
            ("DB_PASSWORD", "", "s3cr3t-P4ssw0rd!", false),
            ("api_key", "'", "a8f3e2b1c9d04e5f", true),
            ("Password", "", "Winter2026!", false),
            ("client_secret", "\"", "x9Kq2mWv8Lp4Rt6Y", true),
            ("passphrase", "", "violetriverlanternmarble", false),
        ] {
            assert!(
                secret_len(key, quote, value, code).is_some(),
                "{key} = {value}"
            );
        }
    }

    #[test]
    fn expressions_placeholders_places_and_words_are_not() {
        for (key, quote, value, code) in [
            ("password", "", "get_password()", true),
            ("password", "", "s3cr3t-P4ssw0rd!", true),
            ("token", "", "self.token", false),
            ("password", "\"", "<your password>", true),
            ("api_key", "\"", "YOUR_API_KEY", true),
            ("password", "", "${DB_PASSWORD}", false),
            ("token_url", "", "https://example.com/token", false),
            ("password_file", "", "/etc/secret.txt", false),
            ("secret", "", "secret.txt", false),
            ("token_ttl", "", "3600000", false),
            ("max_tokens", "", "4096000", false),
            ("password", "", "rotated", false),
            ("public_key", "\"", "c29tZXRoaW5nIHB1YmxpYw", true),
            ("Password", "", "Optional", false),
            ("token", "", "1234567890", false),
            ("csrf_token", "\"", "a8f3e2b1c9d04e5f", true),
        ] {
            assert!(
                secret_len(key, quote, value, code).is_none(),
                "{key} = {value}"
            );
        }
    }
}
