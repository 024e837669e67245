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
    while let Some(found) = bytes[at..].iter().position(|b| is_quote(*b)) {
        let start = at + found;
        let mut joined = String::new();
        let mut literals = 0;
        let mut end = start;
        while let Some((after, content)) = literal(text, end) {
            joined.push_str(&content);
            literals += 1;
            end = after;
            let next = skip_joiners(bytes, end);
            if next - start > MAX_RUN || !bytes.get(next).is_some_and(|b| is_quote(*b)) {
                break;
            }
            end = next;
        }
        if literals >= MIN_LITERALS {
            views.push(View {
                text: joined,
                origin: start..end,
                pieces: Vec::new(),
            });
        }
        at = if literals == 0 { start + 1 } else { end };
    }
    views
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

/// The literal whose opening quote is at `start`: where it ends (after its closing quote) and
/// what it holds, escapes read; `None` when it does not close on its line.
fn literal(text: &str, start: usize) -> Option<(usize, String)> {
    let quote = text[start..].chars().next()?;
    let mut content = String::new();
    let mut chars = text[start + 1..].char_indices();
    while let Some((at, c)) = chars.next() {
        if at > MAX_LITERAL || c == '\n' {
            return None;
        }
        match c {
            '\\' => match chars.next() {
                Some((_, 'n')) => content.push('\n'),
                Some((_, 't')) => content.push('\t'),
                Some((_, 'r')) => content.push('\r'),
                Some((_, other)) => content.push(other),
                None => return None,
            },
            c if c == quote => return Some((start + 1 + at + 1, content)),
            c => content.push(c),
        }
    }
    None
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
