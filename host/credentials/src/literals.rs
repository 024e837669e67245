//! String literals joined in code, read as the one string they make: a key written as
//! `"-----BEGIN RSA PRIVATE KEY-----\n" + "MIIE..."`, as Python's or C's adjacent literals, or a
//! token cut in two (`"ghp_abc" + "def..."`). Escapes (`\n`, `\t`, `\"`) are read as what they
//! stand for.

use crate::view::View;

/// Literals a run holds at least to be read as one string.
const MIN_LITERALS: usize = 2;
/// Bytes one literal may hold (it must close on its line).
const MAX_LITERAL: usize = 16 << 10;
/// Bytes a run may span.
const MAX_RUN: usize = 256 << 10;

/// The runs of joined literals in `text`, each read as the string it makes.
pub(crate) fn views(text: &str) -> Vec<View> {
    let bytes = text.as_bytes();
    let mut views = Vec::new();
    let mut at = 0;
    while let Some(found) = memchr::memchr3(b'"', b'\'', b'`', &bytes[at..]) {
        let start = at + found;
        let Some(first) = literal_end(bytes, start) else {
            at = start + 1;
            continue;
        };
        // Most literals stand alone: a run is read (and allocated) only when one follows.
        let mut literals = 1;
        let mut end = first;
        loop {
            let next = skip_joiners(bytes, end);
            if next - start > MAX_RUN || !bytes.get(next).is_some_and(|b| is_quote(*b)) {
                break;
            }
            let Some(after) = literal_end(bytes, next) else {
                break;
            };
            literals += 1;
            end = after;
        }
        if literals >= MIN_LITERALS {
            views.push(View {
                text: joined(text, start, end),
                origin: start..end,
                pieces: Vec::new(),
            });
        }
        at = end;
    }
    views
}

/// What the run of literals from `start` to `end` says, escapes read.
fn joined(text: &str, start: usize, end: usize) -> String {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut at = start;
    while at < end {
        let Some(after) = literal_end(bytes, at) else {
            break;
        };
        out.push_str(&unescaped(&text[at + 1..after - 1]));
        at = skip_joiners(bytes, after);
    }
    out
}

fn is_quote(b: u8) -> bool {
    matches!(b, b'"' | b'\'' | b'`')
}

/// What may stand between two joined literals: spaces, line ends, and the operators and
/// continuations of languages that join strings (`+`, `.`, `..`, `&`, `\`, `(`).
fn skip_joiners(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| b.is_ascii_whitespace() || matches!(b, b'+' | b'.' | b'&' | b'\\' | b'('))
    {
        at += 1;
    }
    at
}

/// Where the literal whose opening quote is at `start` ends (after its closing quote); `None`
/// when it does not close on its line within [`MAX_LITERAL`] bytes.
fn literal_end(bytes: &[u8], start: usize) -> Option<usize> {
    let quote = *bytes.get(start)?;
    let mut at = start + 1;
    while at < bytes.len() && at - start <= MAX_LITERAL {
        match bytes[at] {
            b'\\' => at += 2,
            b'\n' => return None,
            b if b == quote => return Some(at + 1),
            _ => at += 1,
        }
    }
    None
}

/// A literal's content with its escapes read (`\n`, `\t`, `\r`, `\"`...).
fn unescaped(content: &str) -> String {
    let mut out = String::with_capacity(content.len());
    let mut chars = content.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some(other) => out.push(other),
                None => {}
            },
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_literals_are_read_as_one_string_with_escapes() {
        let text = "key = (\"-----BEGIN\\n\"\n       \"abc\\n\" +\n 'def')\nother = \"x\"";
        let views = views(text);
        assert_eq!(views.len(), 1);
        assert_eq!(views[0].text, "-----BEGIN\nabc\ndef");
        assert!(text[views[0].origin.clone()].ends_with("'def'"));
    }

    #[test]
    fn lone_literals_lists_and_prose_are_not_joined() {
        for text in [
            "a = \"one\"\nb = \"two\"",
            "[\"ab\", \"cd\"]",
            "He said \"hi\" and \"bye\".",
            "don't stop, it isn't over",
        ] {
            assert!(views(text).is_empty(), "{text}");
        }
    }
}
