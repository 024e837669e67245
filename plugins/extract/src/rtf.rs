//! Rich Text Format to text: the document's text with its paragraphs, tabs and line breaks;
//! title, author and creation date from its `\info` group. Characters are read as RTF writes
//! them: `\uN` (with its fallback characters skipped as `\ucN` says) and `\'hh` bytes in the
//! document's code page (`\ansicpgN`). Tables of fonts, colours and styles, pictures, objects and
//! the instructions of fields are left out; a field's result is kept.
//!
//! Written here rather than taken from a crate: the one RTF crate found panics on a lone
//! surrogate (which would stop the plugin), ignores the code page and reads no `\info`.

use encoding_rs::Encoding;
use quarry_sdk::{Content, Error};

/// Groups open at once, at most.
const MAX_DEPTH: usize = 512;

/// Destinations whose text is not the document's (RTF 1.9.1's tables and binary objects).
const SKIPPED: &[&str] = &[
    "fonttbl",
    "colortbl",
    "stylesheet",
    "listtable",
    "listoverridetable",
    "revtbl",
    "rsidtbl",
    "pict",
    "object",
    "fldinst",
    "datastore",
    "themedata",
    "colorschememapping",
    "latentstyles",
    "xmlnstbl",
    "generator",
    "filetbl",
    "header",
    "headerl",
    "headerr",
    "headerf",
    "footer",
    "footerl",
    "footerr",
    "footerf",
];

/// Where a group's text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Destination {
    Text,
    Skip,
    Title,
    Author,
    Created,
}

/// The state a group starts with and restores when it ends.
#[derive(Debug, Clone, Copy)]
struct Group {
    destination: Destination,
    /// Fallback characters after a `\uN` (`\ucN`).
    fallback: usize,
}

/// Text being written: the document and its metadata.
struct Output {
    text: String,
    title: String,
    author: String,
    created: [i64; 5],
    encoding: &'static Encoding,
    /// `\'hh` bytes not yet decoded (a character of a multi-byte code page spans several).
    bytes: Vec<u8>,
}

impl Output {
    /// The text read, with the title, author and creation time of the `\info` group.
    fn into_content(self) -> Content {
        let mut content = Content::text(quarry_sdk::text::tidy(&self.text));
        for (key, value) in [("title", &self.title), ("author", &self.author)] {
            if !value.trim().is_empty() {
                content = content.with_meta(key, value.trim());
            }
        }
        let [year, month, day, hour, minute] = self.created;
        if year > 0 {
            content = content.with_meta(
                "created",
                format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:00"),
            );
        }
        content
    }

    fn target(&mut self, destination: Destination) -> Option<&mut String> {
        match destination {
            Destination::Text => Some(&mut self.text),
            Destination::Title => Some(&mut self.title),
            Destination::Author => Some(&mut self.author),
            Destination::Skip | Destination::Created => None,
        }
    }

    fn push(&mut self, destination: Destination, c: char) {
        self.flush(destination);
        if let Some(out) = self.target(destination) {
            out.push(c);
        }
    }

    /// Decodes the pending `\'hh` bytes into `destination`.
    fn flush(&mut self, destination: Destination) {
        if self.bytes.is_empty() {
            return;
        }
        let bytes = std::mem::take(&mut self.bytes);
        let (decoded, _, _) = self.encoding.decode(&bytes);
        let decoded = decoded.into_owned();
        if let Some(out) = self.target(destination) {
            out.push_str(&decoded);
        }
    }
}

/// Extracts the text of an RTF file.
pub fn to_content(bytes: &[u8]) -> Result<Content, Error> {
    if !bytes.starts_with(b"{\\rtf") {
        return Err(Error::Other(
            "not an RTF file: it does not start with {\\rtf".into(),
        ));
    }
    let mut out = Output {
        text: String::new(),
        title: String::new(),
        author: String::new(),
        created: [0; 5],
        encoding: encoding_rs::WINDOWS_1252,
        bytes: Vec::new(),
    };
    let mut stack: Vec<Group> = Vec::new();
    let mut group = Group {
        destination: Destination::Text,
        fallback: 1,
    };
    // Fallback characters still to skip after a `\uN`; a high surrogate waiting for its low one.
    let (mut to_skip, mut high): (usize, Option<u32>) = (0, None);
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        at += 1;
        match byte {
            b'{' => {
                if stack.len() == MAX_DEPTH {
                    return Err(Error::Other(format!(
                        "not read: this RTF file nests groups deeper than {MAX_DEPTH}"
                    )));
                }
                out.flush(group.destination);
                stack.push(group);
                to_skip = 0;
            }
            b'}' => {
                out.flush(group.destination);
                group = stack.pop().unwrap_or(group);
                to_skip = 0;
            }
            b'\\' => {
                let (control, next) = control(bytes, at);
                at = next;
                // A control word ends the fallback of a `\uN`, but a `\'hh` is one of its
                // characters.
                if to_skip > 0 && matches!(control, Control::Hex(_)) {
                    to_skip -= 1;
                    continue;
                }
                to_skip = 0;
                match control {
                    Control::Hex(b) => {
                        if group.destination != Destination::Skip {
                            out.bytes.push(b);
                        }
                    }
                    Control::Symbol(c) => out.push(group.destination, c),
                    Control::Nothing => {}
                    Control::Ignorable => {
                        // `{\*\name ...}`: a destination this reader need not know.
                        if group.destination == Destination::Text {
                            group.destination = Destination::Skip;
                        }
                    }
                    Control::Binary(n) => at = at.saturating_add(n).min(bytes.len()),
                    Control::Word(word, param) => {
                        word_control(word, param, &mut group, &mut out, &mut to_skip, &mut high);
                    }
                }
            }
            b'\r' | b'\n' => {}
            _ => {
                if to_skip > 0 {
                    to_skip -= 1;
                    continue;
                }
                if byte < 0x80 {
                    out.push(group.destination, char::from(byte));
                } else if group.destination != Destination::Skip {
                    // Raw 8-bit text (not what RTF writers write): read in the code page.
                    out.bytes.push(byte);
                }
            }
        }
    }
    out.flush(group.destination);
    Ok(out.into_content())
}

/// What follows a backslash.
enum Control<'a> {
    /// A control word and its numeric parameter.
    Word(&'a str, Option<i64>),
    /// `\'hh`: a byte in the document's code page.
    Hex(u8),
    /// An escaped or special character (`\\`, `\{`, `\~`...).
    Symbol(char),
    /// A symbol that stands for nothing in plain text (`\-`, an optional hyphen; unknown ones).
    Nothing,
    /// `\*`: the group is a destination that may be skipped.
    Ignorable,
    /// `\binN`: N bytes of binary data to skip.
    Binary(usize),
}

/// The control starting at `at` (just after its backslash), and where reading goes on.
fn control(bytes: &[u8], at: usize) -> (Control<'_>, usize) {
    let Some(&first) = bytes.get(at) else {
        return (Control::Nothing, at);
    };
    if !first.is_ascii_alphabetic() {
        return match first {
            b'\'' => {
                let hex = bytes
                    .get(at + 1..at + 3)
                    .and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => (Control::Hex(b), at + 3),
                    None => (Control::Nothing, at + 1),
                }
            }
            b'*' => (Control::Ignorable, at + 1),
            b'~' => (Control::Symbol('\u{a0}'), at + 1),
            b'_' => (Control::Symbol('-'), at + 1),
            b'\n' | b'\r' => (Control::Word("par", None), at + 1),
            b'\\' | b'{' | b'}' => (Control::Symbol(char::from(first)), at + 1),
            _ => (Control::Nothing, at + 1),
        };
    }
    let mut end = at;
    while end < bytes.len() && bytes[end].is_ascii_alphabetic() && end - at < 32 {
        end += 1;
    }
    let word = std::str::from_utf8(&bytes[at..end]).unwrap_or_default();
    let mut number_end = end;
    if bytes.get(number_end) == Some(&b'-') {
        number_end += 1;
    }
    while number_end < bytes.len() && bytes[number_end].is_ascii_digit() && number_end - end < 11 {
        number_end += 1;
    }
    let param = std::str::from_utf8(&bytes[end..number_end])
        .ok()
        .and_then(|n| n.parse::<i64>().ok());
    let mut next = if param.is_some() { number_end } else { end };
    if bytes.get(next) == Some(&b' ') {
        next += 1;
    }
    if word == "bin" {
        let n = param.and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
        return (Control::Binary(n), next);
    }
    (Control::Word(word, param), next)
}

/// Applies control word `word` (with `param`) to the group and the output.
fn word_control(
    word: &str,
    param: Option<i64>,
    group: &mut Group,
    out: &mut Output,
    to_skip: &mut usize,
    high: &mut Option<u32>,
) {
    let destination = group.destination;
    match word {
        "par" | "line" | "sect" | "page" | "row" => out.push(destination, '\n'),
        "cell" | "tab" => out.push(destination, '\t'),
        "emdash" => out.push(destination, '\u{2014}'),
        "endash" => out.push(destination, '\u{2013}'),
        "bullet" => out.push(destination, '\u{2022}'),
        "lquote" => out.push(destination, '\u{2018}'),
        "rquote" => out.push(destination, '\u{2019}'),
        "ldblquote" => out.push(destination, '\u{201c}'),
        "rdblquote" => out.push(destination, '\u{201d}'),
        "uc" => {
            group.fallback = param
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(1)
                .min(8)
        }
        "u" => {
            let unit = u32::from(param.unwrap_or(0) as i16 as u16);
            match (unit, high.take()) {
                (0xD800..=0xDBFF, _) => *high = Some(unit),
                (0xDC00..=0xDFFF, Some(h)) => {
                    let c = 0x10000 + ((h - 0xD800) << 10) + (unit - 0xDC00);
                    out.push(destination, char::from_u32(c).unwrap_or('\u{fffd}'));
                }
                (unit, _) => out.push(destination, char::from_u32(unit).unwrap_or('\u{fffd}')),
            }
            *to_skip = group.fallback;
        }
        "ansicpg" => {
            if let Some(encoding) = param.and_then(code_page) {
                out.encoding = encoding;
            }
        }
        "info" => group.destination = Destination::Skip,
        "title" if destination == Destination::Skip => group.destination = Destination::Title,
        "author" if destination == Destination::Skip => group.destination = Destination::Author,
        "creatim" => group.destination = Destination::Created,
        "yr" | "mo" | "dy" | "hr" | "min" if destination == Destination::Created => {
            let slot = ["yr", "mo", "dy", "hr", "min"]
                .iter()
                .position(|w| *w == word);
            if let (Some(slot), Some(value)) = (slot, param) {
                out.created[slot] = value;
            }
        }
        _ if SKIPPED.contains(&word) => group.destination = Destination::Skip,
        _ => {}
    }
}

/// The encoding of Windows code page `n`.
fn code_page(n: i64) -> Option<&'static Encoding> {
    let label = match n {
        437 | 850 | 1252 => "windows-1252",
        874 => "windows-874",
        932 => "shift_jis",
        936 => "gbk",
        949 => "euc-kr",
        950 => "big5",
        1250..=1258 => return Encoding::for_label(format!("windows-{n}").as_bytes()),
        10000 => "macintosh",
        65001 => "utf-8",
        _ => return None,
    };
    Encoding::for_label(label.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(rtf: &str) -> String {
        to_content(rtf.as_bytes())
            .map(|c| c.text)
            .unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn text_paragraphs_and_escapes_are_read_and_tables_skipped() {
        let rtf = r"{\rtf1\ansi{\fonttbl{\f0 Times;}}{\colortbl;\red0;}\f0 Caf\'e9 \{ok\}\par sec\-ond\tab cell\line end}";
        assert_eq!(text(rtf), "Café {ok}\nsecond\tcell\nend");
    }

    #[test]
    fn unicode_escapes_skip_their_fallbacks_and_pair_surrogates() {
        assert_eq!(text(r"{\rtf1\uc1\u26085?\u26412?}"), "日本");
        assert_eq!(text(r"{\rtf1\uc2\u26085\'93\'fa x}"), "日 x");
        assert_eq!(text(r"{\rtf1\u-10179?\u-8704?}"), "😀");
        assert_eq!(
            text(r"{\rtf1 a\u-10179? b}"),
            "a b",
            "a lone surrogate is dropped, never a panic"
        );
    }

    #[test]
    fn the_code_page_decodes_bytes() {
        assert_eq!(text(r"{\rtf1\ansi\ansicpg932 \'93\'fa\'96\'7b}"), "日本");
        assert_eq!(text(r"{\rtf1\ansi\ansicpg1251 \'cf\'f0\'e8}"), "При");
    }

    #[test]
    fn info_gives_title_author_and_date_and_is_not_text() {
        let rtf = r"{\rtf1{\info{\title The Ledger}{\author Ada Example}{\creatim\yr2026\mo3\dy1\hr9\min30}}Body}";
        let content = to_content(rtf.as_bytes()).expect("reads");
        assert_eq!(content.text, "Body");
        let meta: Vec<(&str, &str)> = content
            .metadata
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            meta,
            [
                ("title", "The Ledger"),
                ("author", "Ada Example"),
                ("created", "2026-03-01T09:30:00")
            ]
        );
    }

    #[test]
    fn ignorable_destinations_fields_and_binary_are_skipped() {
        let rtf = r"{\rtf1{\*\generator Writer;}{\field{\*\fldinst HYPERLINK x}{\fldrslt shown}} {\pict\bin3 {{{}after}";
        assert_eq!(text(rtf), "shown after");
    }

    #[test]
    fn groups_nested_without_end_are_refused() {
        let deep = format!(r"{{\rtf1 {}x{}}}", "{".repeat(100_000), "}".repeat(100_000));
        assert!(text(&deep).contains("deeper than 512"));
        assert!(text("plain text").contains("not an RTF file"));
    }
}
