//! Tables of passwords, known by their header: a row naming a password column and an account or
//! site column (`Site,User,Password`, `| Service | Login | Password |`, a browser's export), in
//! CSV, TSV, semicolon-separated or Markdown form, anywhere in a text. Each following row's
//! password cell is a secret, until the table ends (a blank line, or a row of another width).

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind};

use crate::placeholder::{is_placeholder, is_stand_in_password};
use crate::{Rule, Secret};

/// The rule.
pub(crate) const RULE: Rule = Rule {
    id: "password-table",
    what: "a table of passwords",
};

/// Names of columns that hold a password, in the exports of Chrome, Edge, Firefox, Safari,
/// Bitwarden, LastPass, 1Password, KeePass, Dashlane, Proton Pass and in tables people write.
const PASSWORD_COLUMNS: &[&str] = &[
    "password",
    "passwords",
    "login_password",
    "pass",
    "passwd",
    "pwd",
    "passphrase",
];
/// Columns that say which site or account a password opens.
const ACCOUNT_COLUMNS: &[&str] = &[
    "url",
    "username",
    "login_uri",
    "login_username",
    "login name",
    "web site",
    "website",
    "site",
    "login",
    "email",
    "user name",
    "user",
    "account",
    "service",
    "host",
    "server",
    "system",
];
/// Bytes a header line may hold.
const MAX_HEADER: usize = 2048;
/// Bytes a password cell holds at least.
const MIN_CELL: usize = 4;

/// A table's header: how its cells are separated, how many there are, and which holds the
/// password.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    separator: char,
    width: usize,
    password: usize,
}

impl Header {
    /// What separates its cells.
    pub(crate) fn separator(self) -> char {
        self.separator
    }
}

/// The header `line` is, if it heads a table of passwords.
pub(crate) fn header(line: &str) -> Option<Header> {
    if line.len() > MAX_HEADER {
        return None;
    }
    let separator = ['\t', '|', ';', ',']
        .into_iter()
        .find(|s| line.contains(*s))?;
    let columns: Vec<String> = cells(line, separator)
        .map(|(_, c)| c.trim_start_matches('\u{feff}').to_ascii_lowercase())
        .collect();
    let password = columns
        .iter()
        .position(|c| PASSWORD_COLUMNS.contains(&c.as_str()))?;
    let account = columns
        .iter()
        .any(|c| ACCOUNT_COLUMNS.contains(&c.as_str()));
    (columns.len() >= 2 && account).then_some(Header {
        separator,
        width: columns.len(),
        password,
    })
}

/// The cells of `line` split by `separator`, each trimmed of spaces and quotes, with its byte
/// offset in the line (a Markdown row's outer pipes left out).
fn cells(line: &str, separator: char) -> impl Iterator<Item = (usize, &str)> {
    let trimmed = line.trim_end_matches(['\r', '\n']);
    let (start, inner) = if separator == '|' {
        let lead = trimmed.len() - trimmed.trim_start().len();
        let inner = trimmed.trim();
        let inner = inner.strip_prefix('|').unwrap_or(inner);
        let offset = lead + usize::from(trimmed.trim_start().starts_with('|'));
        (offset, inner.strip_suffix('|').unwrap_or(inner))
    } else {
        (0, trimmed)
    };
    let mut at = start;
    inner.split(separator).map(move |cell| {
        let from = at;
        at += cell.len() + separator.len_utf8();
        let value = cell.trim_matches([' ', '\t', '"', '\'']);
        let lead = cell.len() - cell.trim_start_matches([' ', '\t', '"', '\'']).len();
        (from + lead, value)
    })
}

/// Whether `line` is a row of the table `header` heads.
pub(crate) fn is_row_of(header: Header, line: &str) -> bool {
    !line.trim().is_empty() && cells(line, header.separator).count() == header.width
}

/// Finds the words a header's password column holds, whatever their case.
static PASSWORD_WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .kind(Some(AhoCorasickKind::DFA))
        .build(["pass", "pwd"])
        .expect("two words build an automaton")
});

/// The password cells of every table of passwords in `text`: a header is looked for only on the
/// lines a password column's word is on (one pass of an automaton over the text).
pub(crate) fn password_cells(text: &str) -> Vec<Secret> {
    let mut secrets = Vec::new();
    // Where the lines already read end: a word found before it is passed over.
    let mut read_until = 0;
    for hit in PASSWORD_WORDS.find_iter(text) {
        if hit.start() < read_until {
            continue;
        }
        let start = text[..hit.start()].rfind('\n').map_or(0, |at| at + 1);
        let end = text[hit.start()..]
            .find('\n')
            .map_or(text.len(), |at| hit.start() + at + 1);
        read_until = end;
        if let Some(head) = header(&text[start..end]) {
            read_until = rows(text, end, head, &mut secrets);
        }
    }
    secrets
}

/// Reads the rows of the table `head` heads from `from`, adding each row's password cell to
/// `secrets`; where the table ends.
fn rows(text: &str, from: usize, head: Header, secrets: &mut Vec<Secret>) -> usize {
    let mut at = from;
    for line in text[from..].split_inclusive('\n') {
        if !is_rule_row(line) {
            if !is_row_of(head, line) {
                return at;
            }
            let row: Vec<(usize, &str)> = cells(line, head.separator).collect();
            let (offset, value) = row[head.password];
            if is_password(value) {
                let start = at + offset;
                secrets.push(Secret {
                    rule: RULE,
                    span: start..start + value.len(),
                });
            }
        }
        at += line.len();
    }
    at
}

/// A Markdown table's rule (`|---|:---:|`).
fn is_rule_row(line: &str) -> bool {
    let line = line.trim();
    line.starts_with('|') && line.bytes().all(|b| matches!(b, b'|' | b'-' | b':' | b' '))
}

/// Whether a cell holds a password rather than nothing, a mask or a stand-in.
fn is_password(value: &str) -> bool {
    value.len() >= MIN_CELL
        && !value.contains(char::is_whitespace)
        && !is_placeholder(value)
        && !is_stand_in_password(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<&str> {
        password_cells(text)
            .into_iter()
            .map(|s| &text[s.span])
            .collect()
    }

    #[test]
    fn password_cells_of_csv_and_markdown_tables_are_found() {
        let csv = "Notes for the move.\n\nSite,User,Password\nbank.example,me,Kx9#mQ2;vL7\nmail,me@x.org,\"Tr0ub4dor&3\"\n\nAfter the table.";
        assert_eq!(found(csv), ["Kx9#mQ2;vL7", "Tr0ub4dor&3"]);
        let markdown =
            "| Service | Login | Password |\n|---|---|---|\n| NAS | admin | p4ss-W0rd-88 |\n";
        assert_eq!(found(markdown), ["p4ss-W0rd-88"]);
    }

    #[test]
    fn masked_cells_and_tables_without_passwords_are_not_found() {
        for text in [
            "Site,User,Password\nbank,me,********\nmail,me,<your password>\n",
            "rule,min_length,requires_symbol\nstrong,12,yes\n",
            "Password policy, in short: long, unique.\nAnd more prose.",
        ] {
            assert!(found(text).is_empty(), "{text}");
        }
    }
}
