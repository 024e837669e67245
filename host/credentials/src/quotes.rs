//! Lines quoted in a reply (`> `, `>> `, `| `) or commented out (`# `, `// `, `; `), read
//! as the text they quote: a key quoted line by line in a reply, or commented out in a script,
//! is a key again once its markers are gone. What fits on one line is found in the quoted text
//! itself, markers and all; so a quoted block is read again only when it holds the start of a
//! key that spans lines (a PEM, SSH2 or PuTTY header), and a text without one costs a single
//! pass of an automaton.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind};

use crate::pem;
use crate::view::View;

/// Finds the headers of keys that span lines, whatever their case.
static SPANS_LINES: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .kind(Some(AhoCorasickKind::DFA))
        .build(pem::KEYWORDS)
        .expect("the key headers build an automaton")
});

/// Whether `text` holds the header of a key that spans lines.
fn holds_a_key_header(text: &str) -> bool {
    SPANS_LINES.is_match(text)
}

/// Markers that quote a line, longest first.
const MARKERS: &[&str] = &["//", ">", "|", "#", ";"];

/// Lines a quoted block holds at least to be read as one.
const MIN_LINES: usize = 2;

/// The quoted blocks of `text` (runs of at least [`MIN_LINES`] quoted lines), each read without
/// its markers.
pub(crate) fn views(text: &str) -> Vec<View> {
    let mut views = Vec::new();
    if !holds_a_key_header(text) {
        return views;
    }
    let mut block: Option<Block> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        match unquoted(line) {
            Some(skip) => block
                .get_or_insert_with(|| Block::new(at))
                .push(line, at, skip),
            None => {
                if let Some(done) = block.take() {
                    views.extend(done.into_view(at));
                }
            }
        }
        at += line.len();
    }
    if let Some(done) = block.take() {
        views.extend(done.into_view(at));
    }
    views
}

/// A run of quoted lines being read.
struct Block {
    start: usize,
    lines: usize,
    text: String,
    pieces: Vec<(usize, usize)>,
}

impl Block {
    fn new(start: usize) -> Block {
        Block {
            start,
            lines: 0,
            text: String::new(),
            pieces: Vec::new(),
        }
    }

    fn push(&mut self, line: &str, at: usize, skip: usize) {
        self.pieces.push((self.text.len(), at + skip));
        self.text.push_str(&line[skip..]);
        self.lines += 1;
    }

    fn into_view(self, end: usize) -> Option<View> {
        (self.lines >= MIN_LINES && holds_a_key_header(&self.text)).then_some(View {
            text: self.text,
            origin: self.start..end,
            pieces: self.pieces,
        })
    }
}

/// Bytes of quote markers (each with the space after it) that start `line` after its indent,
/// when it is quoted.
fn unquoted(line: &str) -> Option<usize> {
    let trimmed = line.trim();
    if trimmed.len() > 1 && trimmed.starts_with('|') && trimmed.ends_with('|') {
        // A row of a Markdown table, not a quote.
        return None;
    }
    let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
    let mut at = indent;
    loop {
        let rest = &line[at..];
        let Some(marker) = MARKERS.iter().find(|m| rest.starts_with(**m)) else {
            break;
        };
        at += marker.len();
        if line[at..].starts_with([' ', '\t']) {
            at += 1;
        }
    }
    (at > indent).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_and_comments_are_read_without_their_markers() {
        let text = "Hi,\n> > -----BEGIN KEY-----\n> > abc\n>> def\nthanks\n# -----BEGIN X\n#two\n// x\n# one\n";
        let views = views(text);
        let texts: Vec<&str> = views.iter().map(|v| v.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "-----BEGIN KEY-----\nabc\ndef\n",
                "-----BEGIN X\ntwo\nx\none\n"
            ]
        );
        let first = &views[0];
        assert_eq!(
            &text[first.origin.clone()],
            "> > -----BEGIN KEY-----\n> > abc\n>> def\n"
        );
    }

    #[test]
    fn a_single_quoted_line_plain_text_and_quotes_without_a_key_are_not_views() {
        assert!(views("> -----BEGIN just one\nplain\n").is_empty());
        assert!(views("no quotes here\nnor here\n").is_empty());
        assert!(views("> a reply\n> with no key\n-----BEGIN elsewhere\n").is_empty());
    }
}
