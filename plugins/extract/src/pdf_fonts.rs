//! A PDF's fonts made safe for pdf-extract before it reads them. pdf-extract 0.12 panics on font
//! data it does not expect, and a panic ends the plugin's call: the whole document would go
//! unread (6 of the 166 PDFs of Debian's `texlive-latex-recommended-doc` and
//! `texlive-fonts-recommended-doc`, among them the 234-page beamer user guide). Each rule rewrites
//! what it would panic on into the form it reads, or leaves out the part it cannot read:
//! - a ToUnicode map it would panic on is written again from what can be read of it (entries of
//!   whole UTF-16); one it reads is kept as it is;
//! - an encoding name it does not know is left out, as are `Differences` entries past code 255
//!   or of another type; a glyph name it maps to half a UTF-16 pair (TeX's `capitalcompwordmark`,
//!   `FFsmall`...) becomes `.notdef`;
//! - a compact (Type1C) font program that does not parse, or names such a glyph, is left out
//!   (its font still reads by its ToUnicode map or encoding).

use std::collections::{BTreeMap, HashSet};

use lopdf::{Dictionary, Document, Object, ObjectId, Stream};

/// The encoding names pdf-extract knows (it panics on any other).
const ENCODINGS: [&[u8]; 3] = [
    b"WinAnsiEncoding",
    b"MacRomanEncoding",
    b"MacExpertEncoding",
];
/// Glyph names pdf-extract 0.12's extended glyph list maps to a lone UTF-16 surrogate: turning
/// one into text panics.
const HALF_PAIR_NAMES: [&str; 13] = [
    "FFIsmall",
    "FFLsmall",
    "FFsmall",
    "FIsmall",
    "FLsmall",
    "Germandblssmall",
    "SSsmall",
    "altselector",
    "ascendercompwordmark",
    "capitalcompwordmark",
    "emptyslot",
    "interrobangdown",
    "ringfitted",
];
/// Codes one ToUnicode map may give: a CID font has at most 65,536; a range past the bound is
/// read only up to it (a range of 2^32 codes would be a bomb).
const MOST_CODES: usize = 1 << 17;

/// Rewrites `doc`'s font dictionaries (those that are objects of their own) by the rules above.
pub(super) fn made_safe(doc: &mut Document) {
    let fonts: Vec<ObjectId> = doc
        .objects
        .iter()
        .filter(|(_, object)| {
            object.as_dict().is_ok_and(|d| {
                d.get(b"Type")
                    .and_then(Object::as_name)
                    .is_ok_and(|t| t == b"Font")
            })
        })
        .map(|(&id, _)| id)
        .collect();
    let mut maps_done = HashSet::new();
    for id in fonts {
        let Ok(mut font) = doc.get_dictionary(id).cloned() else {
            continue;
        };
        safe_to_unicode(doc, &mut font, &mut maps_done);
        let simple = font
            .get(b"Subtype")
            .and_then(Object::as_name)
            .is_ok_and(|s| s != b"Type0" && !s.starts_with(b"CIDFont"));
        if simple {
            safe_encoding(doc, &mut font);
            if let Ok(descriptor) = font.get(b"FontDescriptor").and_then(Object::as_reference) {
                safe_font_program(doc, descriptor);
            }
        }
        if let Ok(object) = doc.get_object_mut(id) {
            *object = Object::Dictionary(font);
        }
    }
}

/// A ToUnicode entry pdf-extract reads: a stream (written again by [`tidy_cmap`] unless it
/// [`reads_as_is`]) or the name
/// `Identity-H`; any other is left out.
fn safe_to_unicode(doc: &mut Document, font: &mut Dictionary, done: &mut HashSet<ObjectId>) {
    let keep = match font.get(b"ToUnicode") {
        Err(_) => return,
        Ok(Object::Name(name)) => name == b"Identity-H",
        Ok(Object::Reference(id)) => {
            let id = *id;
            match doc.get_object_mut(id) {
                Ok(Object::Stream(stream)) => {
                    if done.insert(id) {
                        let read = content_of(stream);
                        if !reads_as_is(&read) {
                            stream.set_plain_content(tidy_cmap(&read));
                        }
                    }
                    true
                }
                Ok(Object::Name(name)) => name == b"Identity-H",
                _ => false,
            }
        }
        Ok(_) => false,
    };
    if !keep {
        font.remove(b"ToUnicode");
    }
}

/// A simple font's `Encoding` as pdf-extract reads it without panicking.
fn safe_encoding(doc: &mut Document, font: &mut Dictionary) {
    let (target, encoding) = match font.get(b"Encoding") {
        Err(_) => return,
        Ok(Object::Reference(id)) => (Some(*id), doc.get_object(*id).ok().cloned()),
        Ok(direct) => (None, Some(direct.clone())),
    };
    let safe = match encoding {
        Some(Object::Name(name)) if ENCODINGS.contains(&name.as_slice()) => {
            Some(Object::Name(name))
        }
        Some(Object::Dictionary(mut dict)) => {
            safe_differences(doc, &mut dict);
            Some(Object::Dictionary(dict))
        }
        _ => None,
    };
    match (safe, target) {
        (None, _) => {
            font.remove(b"Encoding");
        }
        (Some(object), Some(id)) => {
            if let Ok(slot) = doc.get_object_mut(id) {
                *slot = object;
            }
        }
        (Some(object), None) => font.set("Encoding", object),
    }
}

/// An encoding dictionary's `BaseEncoding` (a known name, or none) and `Differences` (codes 0
/// to 255 and glyph names pdf-extract can turn into text), written as direct objects.
fn safe_differences(doc: &Document, dict: &mut Dictionary) {
    let base = dict
        .get_deref(b"BaseEncoding", doc)
        .and_then(Object::as_name)
        .is_ok_and(|name| ENCODINGS.contains(&name));
    if !base {
        dict.remove(b"BaseEncoding");
    }
    let Ok(differences) = dict
        .get_deref(b"Differences", doc)
        .and_then(Object::as_array)
    else {
        dict.remove(b"Differences");
        return;
    };
    let mut kept = Vec::with_capacity(differences.len());
    // The code the next name is given; `None` after a code out of 0 to 255, until the next one.
    let mut code: Option<i64> = None;
    for item in differences {
        let item = match item {
            Object::Reference(id) => doc.get_object(*id).unwrap_or(&Object::Null),
            direct => direct,
        };
        match item {
            Object::Integer(i) => {
                code = (0..=255).contains(i).then_some(*i);
                if code.is_some() {
                    kept.push(Object::Integer(*i));
                }
            }
            Object::Name(name) => {
                let Some(at) = code.filter(|&c| c <= 255) else {
                    continue;
                };
                let half_pair =
                    std::str::from_utf8(name).is_ok_and(|n| HALF_PAIR_NAMES.contains(&n));
                kept.push(Object::Name(if half_pair {
                    b".notdef".to_vec()
                } else {
                    name.clone()
                }));
                code = Some(at + 1);
            }
            _ => {}
        }
    }
    dict.set("Differences", Object::Array(kept));
}

/// Leaves out a descriptor's compact font program (`FontFile3`) that pdf-extract would panic on:
/// one without a subtype name, or a Type1C program that does not parse or names a glyph of
/// [`HALF_PAIR_NAMES`] (or one without a name).
fn safe_font_program(doc: &mut Document, descriptor: ObjectId) {
    let Ok(dict) = doc.get_dictionary(descriptor) else {
        return;
    };
    let Ok(program) = dict.get(b"FontFile3") else {
        return;
    };
    let safe = match program {
        Object::Reference(id) => match doc.get_object(*id) {
            Ok(Object::Stream(stream)) => {
                match stream.dict.get(b"Subtype").and_then(Object::as_name) {
                    Ok(b"Type1C") => compact_program_reads(&content_of(stream)),
                    Ok(_) => true,
                    Err(_) => false,
                }
            }
            _ => true,
        },
        _ => true,
    };
    if !safe && let Ok(dict) = doc.get_dictionary_mut(descriptor) {
        dict.remove(b"FontFile3");
    }
}

/// True when pdf-extract reads the Type1C program `bytes` without panicking: it parses, and
/// every glyph its encoding names has a name that is not half a UTF-16 pair.
fn compact_program_reads(bytes: &[u8]) -> bool {
    let Some(table) = cff_parser::Table::parse(bytes) else {
        return false;
    };
    table
        .encoding
        .get_code_to_sid_table(&table.charset)
        .into_values()
        .all(|sid| {
            cff_parser::string_by_id(&table, sid)
                .is_some_and(|name| !HALF_PAIR_NAMES.contains(&name))
        })
}

/// True when pdf-extract (through adobe-cmap-parser) reads the ToUnicode CMap `cmap` without
/// panicking: every `bfchar` and `bfrange` section has the count it states, each destination is
/// whole UTF-16 that decodes (or one half of a pair, which it skips), a range's string starts
/// with one code unit or two and stays UTF-16 throughout, an array holds one destination per
/// code, and no range passes [`MOST_CODES`]. A well-formed map is kept as it is; another is
/// written again by [`tidy_cmap`].
fn reads_as_is(cmap: &[u8]) -> bool {
    let (tokens, clean) = tokens(cmap);
    if !clean {
        return false;
    }
    let destination = |t: &[u8]| utf16_reads(t) || (t.len() == 2 && (0xD8..=0xDF).contains(&t[0]));
    // The codes of the ranges so far: past the bound, the map is written again within it.
    let mut codes_in_ranges = 0;
    let mut i = 0;
    while i < tokens.len() {
        let (per_entry, end) = match &tokens[i] {
            Token::Word(w) if w == b"beginbfchar" => (2, b"endbfchar".as_slice()),
            Token::Word(w) if w == b"beginbfrange" => (3, b"endbfrange".as_slice()),
            _ => {
                i += 1;
                continue;
            }
        };
        let count = match i.checked_sub(1).map(|p| &tokens[p]) {
            Some(Token::Word(n)) => std::str::from_utf8(n)
                .ok()
                .and_then(|n| n.parse::<usize>().ok()),
            _ => None,
        };
        let Some(count) = count else {
            return false;
        };
        let Some(after) = count
            .checked_mul(per_entry)
            .and_then(|n| n.checked_add(i + 1))
        else {
            return false;
        };
        let Some(entries) = tokens.get(i + 1..after) else {
            return false;
        };
        if !tokens.get(after).is_some_and(|t| t.is_word(end)) {
            return false;
        }
        for entry in entries.chunks(per_entry) {
            let fits = match entry {
                [Token::Hex(_), Token::Hex(target)] => destination(target),
                [Token::Hex(low), Token::Hex(high), target]
                    if code_reads(low) && code_reads(high) =>
                {
                    let (from, to) = (number(low), number(high));
                    let codes = (to + 1).saturating_sub(from);
                    codes_in_ranges += codes;
                    codes_in_ranges <= MOST_CODES as u64
                        && match target {
                            Token::Hex(first) if first.len() == 2 => true,
                            Token::Hex(first) if first.len() == 4 => (0..codes).all(|step| {
                                counted_up(first, step).is_some_and(|t| utf16_reads(&t))
                            }),
                            Token::Array(targets) => {
                                from <= to
                                    && targets.len() as u64 == codes
                                    && targets.iter().all(|t| destination(t))
                            }
                            _ => false,
                        }
                }
                _ => false,
            };
            if !fits {
                return false;
            }
        }
        i = after;
    }
    true
}

/// A ToUnicode CMap written again from `cmap`: its `bfchar` and `bfrange` entries that read
/// (codes of 1 to 4 bytes, destinations of whole UTF-16 code units that decode), at most
/// [`MOST_CODES`] of them, a later entry for a code replacing an earlier one; what does not read
/// is left out. Runs of codes to consecutive characters are written as ranges, since
/// pdf-extract reads the map again for every page.
fn tidy_cmap(cmap: &[u8]) -> Vec<u8> {
    let mut by_code = BTreeMap::new();
    for (code, target) in cmap_entries(cmap) {
        by_code.insert((code.len(), number(&code)), target);
    }
    let mut ranges: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = Vec::new();
    let mut singles: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut run: Option<Run> = None;
    for ((len, code), target) in by_code {
        let unit = (target.len() == 2).then(|| u16::from_be_bytes([target[0], target[1]]));
        let extends = run.zip(unit).is_some_and(|((l, from, to, first), unit)| {
            l == len
                && code == to + 1
                && code & 0xFF != 0
                && u64::from(unit) == u64::from(first) + (code - from)
        });
        if let (true, Some(r)) = (extends, run.as_mut()) {
            r.2 = code;
            continue;
        }
        close_run(run.take(), &mut ranges, &mut singles);
        match unit {
            Some(unit) => run = Some((len, code, code, unit)),
            None => singles.push((code_bytes(code, len), target)),
        }
    }
    close_run(run, &mut ranges, &mut singles);
    let mut out = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
         1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    for chunk in singles.chunks(100) {
        out.push_str(&format!("{} beginbfchar\n", chunk.len()));
        for (code, target) in chunk {
            out.push_str(&format!("<{}> <{}>\n", hex(code), hex(target)));
        }
        out.push_str("endbfchar\n");
    }
    for chunk in ranges.chunks(100) {
        out.push_str(&format!("{} beginbfrange\n", chunk.len()));
        for (from, to, target) in chunk {
            out.push_str(&format!(
                "<{}> <{}> <{}>\n",
                hex(from),
                hex(to),
                hex(target)
            ));
        }
        out.push_str("endbfrange\n");
    }
    out.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    out.into_bytes()
}

/// A run of codes (their length, the first and last, the first's character): a range, or one
/// code alone.
type Run = (usize, u64, u64, u16);

/// Ends `run`: a range of `ranges`, or an entry of `singles` when it holds one code.
fn close_run(
    run: Option<Run>,
    ranges: &mut Vec<(Vec<u8>, Vec<u8>, Vec<u8>)>,
    singles: &mut Vec<(Vec<u8>, Vec<u8>)>,
) {
    let Some((len, from, to, first)) = run else {
        return;
    };
    if from == to {
        singles.push((code_bytes(from, len), first.to_be_bytes().to_vec()));
    } else {
        ranges.push((
            code_bytes(from, len),
            code_bytes(to, len),
            first.to_be_bytes().to_vec(),
        ));
    }
}

/// The (code, UTF-16BE destination) pairs of `cmap` that read, in order.
fn cmap_entries(cmap: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let (tokens, _) = tokens(cmap);
    let mut entries = Vec::new();
    // Codes that ranges may still count through: a map of many ranges of codes that do not
    // read would otherwise take as long as their sum.
    let mut budget = MOST_CODES as u64;
    let mut i = 0;
    while i < tokens.len() && entries.len() < MOST_CODES {
        match &tokens[i] {
            Token::Word(w) if w == b"beginbfchar" => {
                i += 1;
                while i + 1 < tokens.len() && !tokens[i].is_word(b"endbfchar") {
                    let (Token::Hex(code), Token::Hex(target)) = (&tokens[i], &tokens[i + 1])
                    else {
                        i += 1;
                        continue;
                    };
                    if code_reads(code) && utf16_reads(target) {
                        entries.push((code.clone(), target.clone()));
                    }
                    i += 2;
                }
            }
            Token::Word(w) if w == b"beginbfrange" => {
                i += 1;
                while i + 2 < tokens.len() && !tokens[i].is_word(b"endbfrange") {
                    let (Token::Hex(low), Token::Hex(high), Token::Hex(_) | Token::Array(_)) =
                        (&tokens[i], &tokens[i + 1], &tokens[i + 2])
                    else {
                        i += 1;
                        continue;
                    };
                    if code_reads(low) && low.len() == high.len() {
                        range_entries(low, high, &tokens[i + 2], &mut budget, &mut entries);
                    }
                    i += 3;
                }
            }
            _ => i += 1,
        }
    }
    entries.truncate(MOST_CODES);
    entries
}

/// The entries of one `bfrange` from `low` to `high`: to consecutive destinations from a
/// string (its last code unit counting up), or to an array's destinations in turn. Counts
/// through at most `budget` codes, and takes them from it.
fn range_entries(
    low: &[u8],
    high: &[u8],
    target: &Token,
    budget: &mut u64,
    entries: &mut Vec<(Vec<u8>, Vec<u8>)>,
) {
    let (from, to) = (number(low), number(high));
    if from > to {
        return;
    }
    let mut count = (to - from + 1).min(*budget);
    if let Token::Array(targets) = target {
        count = count.min(targets.len() as u64);
    }
    *budget -= count;
    for step in 0..count {
        let code = code_bytes(from + step, low.len());
        let target = match target {
            Token::Hex(first) => {
                let Some(next) = counted_up(first, step) else {
                    return;
                };
                next
            }
            Token::Array(targets) => match targets.get(step as usize) {
                Some(target) => target.clone(),
                None => return,
            },
            Token::Word(_) => return,
        };
        if utf16_reads(&target) {
            entries.push((code, target));
        }
    }
}

/// `first` with its last UTF-16 code unit raised by `step`; `None` past the unit's range.
fn counted_up(first: &[u8], step: u64) -> Option<Vec<u8>> {
    if first.len() < 2 || !first.len().is_multiple_of(2) {
        return None;
    }
    let at = first.len() - 2;
    let last = u64::from(u16::from_be_bytes([first[at], first[at + 1]])) + step;
    let last = u16::try_from(last).ok()?;
    let mut next = first.to_vec();
    next[at..].copy_from_slice(&last.to_be_bytes());
    Some(next)
}

fn code_reads(code: &[u8]) -> bool {
    (1..=4).contains(&code.len())
}

/// True when `bytes` are whole UTF-16BE code units that decode.
fn utf16_reads(bytes: &[u8]) -> bool {
    if bytes.is_empty() || !bytes.len().is_multiple_of(2) {
        return false;
    }
    let units = bytes
        .chunks_exact(2)
        .map(|u| u16::from_be_bytes([u[0], u[1]]));
    char::decode_utf16(units).all(|c| c.is_ok())
}

fn number(code: &[u8]) -> u64 {
    code.iter().fold(0, |n, &b| (n << 8) | u64::from(b))
}

/// The `len` bytes (1 to 8) of the code `code`, as [`number`] reads them.
fn code_bytes(code: u64, len: usize) -> Vec<u8> {
    code.to_be_bytes()[8 - len..].to_vec()
}

/// A stream's content decoded by its filters, or as stored when they do not decode (as
/// pdf-extract reads it).
fn content_of(stream: &Stream) -> Vec<u8> {
    stream
        .decompressed_content()
        .unwrap_or_else(|_| stream.content.clone())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// What a CMap's text is read as here: hex strings, arrays of them, and every other word.
#[derive(Debug, Clone)]
enum Token {
    Hex(Vec<u8>),
    Array(Vec<Vec<u8>>),
    Word(Vec<u8>),
}

impl Token {
    fn is_word(&self, word: &[u8]) -> bool {
        matches!(self, Token::Word(w) if w == word)
    }
}

/// The tokens of `text` (comments, literal strings and dictionaries' brackets skipped), and
/// whether adobe-cmap-parser's lexer reads all of it: hex strings of pairs of digits, balanced
/// literal strings, arrays not nested, names, numbers and words of letters alone, and something
/// to read. Where it is not, the map is written again.
fn tokens(text: &[u8]) -> (Vec<Token>, bool) {
    let mut tokens = Vec::new();
    let mut clean = true;
    let mut array: Option<Vec<Vec<u8>>> = None;
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'%' => {
                while i < text.len() && text[i] != b'\n' && text[i] != b'\r' {
                    i += 1;
                }
            }
            b'<' if text.get(i + 1) == Some(&b'<') => i += 2,
            b'>' if text.get(i + 1) == Some(&b'>') => i += 2,
            b'<' => {
                let end = text[i..]
                    .iter()
                    .position(|&b| b == b'>')
                    .map_or(text.len(), |p| i + p);
                let digits = &text[i + 1..end];
                clean &= end < text.len()
                    && digits.len().is_multiple_of(2)
                    && digits.iter().all(u8::is_ascii_hexdigit);
                let bytes = unhex(digits);
                match array.as_mut() {
                    Some(items) => items.push(bytes),
                    None => tokens.push(Token::Hex(bytes)),
                }
                i = end + 1;
            }
            b'[' => {
                clean &= array.is_none();
                array = Some(Vec::new());
                i += 1;
            }
            b']' => {
                clean &= array.is_some();
                tokens.push(Token::Array(array.take().unwrap_or_default()));
                i += 1;
            }
            b'(' => {
                let mut depth = 0usize;
                while i < text.len() {
                    match text[i] {
                        b'\\' => i += 1,
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                clean &= depth == 0;
                i += 1;
            }
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => i += 1,
            _ => {
                let start = i;
                while i < text.len() && !b"<>[]()% \t\r\n\x0c\0".contains(&text[i]) {
                    i += 1;
                }
                if i == start {
                    clean = false;
                    i += 1;
                    continue;
                }
                let word = &text[start..i];
                clean &= word_reads(word);
                if array.is_none() {
                    tokens.push(Token::Word(word.to_vec()));
                }
            }
        }
    }
    clean &= array.is_none() && !tokens.is_empty();
    (tokens, clean)
}

/// True when adobe-cmap-parser's lexer reads `word` as one token: a name, a number, or letters
/// (and the quote and star operators).
fn word_reads(word: &[u8]) -> bool {
    if word.contains(&b'{') || word.contains(&b'}') {
        return false;
    }
    if word.starts_with(b"/") {
        return !word[1..].contains(&b'/') && !word.contains(&b'#');
    }
    let digits = word
        .strip_prefix(b"+")
        .or_else(|| word.strip_prefix(b"-"))
        .unwrap_or(word);
    let number = !digits.is_empty()
        && digits.iter().filter(|&&b| b == b'.').count() <= 1
        && digits.iter().any(u8::is_ascii_digit)
        && digits.iter().all(|&b| b.is_ascii_digit() || b == b'.');
    number
        || word
            .iter()
            .all(|&b| b.is_ascii_alphabetic() || b"*'\"".contains(&b))
}

/// The bytes of a hex string's digits (others skipped; an odd last digit is followed by 0).
fn unhex(digits: &[u8]) -> Vec<u8> {
    let nibbles: Vec<u8> = digits
        .iter()
        .filter_map(|&d| (d as char).to_digit(16))
        .map(|d| d as u8)
        .collect();
    nibbles
        .chunks(2)
        .map(|pair| (pair[0] << 4) | pair.get(1).copied().unwrap_or(0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdf::{one_page, to_content};
    use lopdf::{Stream, dictionary};

    /// A ToUnicode map of `sections` (CMap text between `begincmap` and `endcmap`).
    fn cmap(sections: &str) -> Vec<u8> {
        format!(
            "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
             /CMapName /Adobe-Identity-UCS def\n1 begincodespacerange\n<00> <FF>\n\
             endcodespacerange\n{sections}\nendcmap\nend\nend\n"
        )
        .into_bytes()
    }

    /// The text of a one-page PDF that writes "harbourmaster" in Helvetica with `font`'s
    /// entries added (`objects` makes the objects they name).
    fn text_in_font(font: impl FnOnce(&mut Document) -> Dictionary) -> String {
        let mut doc = Document::with_version("1.5");
        let mut dict = dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        };
        dict.extend(&font(&mut doc));
        let font = doc.add_object(dict);
        let resources = dictionary! { "Font" => dictionary! { "F1" => font } };
        let bytes = one_page(
            doc,
            "BT /F1 12 Tf 72 720 Td (harbourmaster) Tj ET",
            resources,
        );
        to_content(&bytes).expect("the PDF reads").text
    }

    /// A ToUnicode entry naming a stream of `cmap`, for [`text_in_font`].
    fn to_unicode(doc: &mut Document, cmap: Vec<u8>) -> Dictionary {
        let stream = doc.add_object(Stream::new(Dictionary::new(), cmap));
        dictionary! { "ToUnicode" => stream }
    }

    #[test]
    fn a_tounicode_range_to_three_characters_is_read_instead_of_ending_the_call() {
        let text = text_in_font(|doc| {
            to_unicode(
                doc,
                cmap(
                    "1 beginbfchar\n<68> <0068>\nendbfchar\n1 beginbfrange\n<01> <02> <006600660069>\nendbfrange",
                ),
            )
        });
        assert!(text.contains("harbourmaster"), "{text}");
    }

    #[test]
    fn a_tounicode_map_that_does_not_parse_is_read_as_far_as_it_goes() {
        let text =
            text_in_font(|doc| to_unicode(doc, cmap("2 beginbfchar\n<68> <00680068>\nendbfchar")));
        assert!(text.contains("harbourmaster"), "{text}");
    }

    #[test]
    fn a_glyph_name_read_as_half_a_utf16_pair_is_left_unnamed() {
        let text = text_in_font(|doc| {
            let mut font = to_unicode(doc, cmap("1 beginbfchar\n<68> <0068>\nendbfchar"));
            let differences = vec![23.into(), Object::Name(b"FFsmall".to_vec())];
            font.set("Encoding", dictionary! { "Differences" => differences });
            font
        });
        assert!(text.contains("harbourmaster"), "{text}");
    }

    #[test]
    fn an_encoding_name_pdf_extract_does_not_know_is_left_out() {
        let text = text_in_font(|_| dictionary! { "Encoding" => "StandardEncoding" });
        assert!(text.contains("harbourmaster"), "{text}");
    }

    #[test]
    fn a_compact_font_program_that_does_not_parse_is_left_out() {
        let text = text_in_font(|doc| {
            let program = doc.add_object(Stream::new(
                dictionary! { "Subtype" => "Type1C" },
                b"not a font program".to_vec(),
            ));
            let descriptor = doc.add_object(dictionary! {
                "Type" => "FontDescriptor", "FontName" => "Helvetica", "FontFile3" => program,
            });
            dictionary! { "FontDescriptor" => descriptor }
        });
        assert!(text.contains("harbourmaster"), "{text}");
    }

    #[test]
    fn a_well_formed_map_is_kept_as_it_is() {
        let map = cmap(
            "2 beginbfchar\n<01> <0066>\n<02> <D835DC00>\nendbfchar\n\
             2 beginbfrange\n<41> <5A> <0041>\n<61> <63> [<0061> <0062> <00660069>]\nendbfrange",
        );
        assert!(reads_as_is(&map));
    }

    #[test]
    fn a_map_its_lexer_would_stop_in_or_with_an_impossible_count_is_written_again() {
        for map in [
            Vec::new(),
            cmap("1 beginbfchar\n<41> <004>\nendbfchar"),
            cmap("1 beginbfchar\n<41> <00 41>\nendbfchar"),
            cmap("{ 1 beginbfchar\n<41> <0041>\nendbfchar"),
            cmap("18446744073709551615 beginbfchar\n<41> <0041>\nendbfchar"),
            cmap("9223372036854775808 beginbfrange\n<41> <42> <0041>\nendbfrange"),
        ] {
            assert!(!reads_as_is(&map), "{}", String::from_utf8_lossy(&map));
            let tidy = tidy_cmap(&map);
            assert!(reads_as_is(&tidy), "{}", String::from_utf8_lossy(&tidy));
        }
    }

    #[test]
    fn a_map_is_written_again_with_what_reads_and_runs_as_ranges() {
        let map = cmap(
            "4 beginbfchar\n<01> <0066>\n<02> <00661>\n<03> <DC00D835>\n<0405060708> <0041>\nendbfchar\n\
             2 beginbfrange\n<41> <43> <0041>\n<61> <62> <006600660069>\nendbfrange",
        );
        assert!(!reads_as_is(&map));
        let tidy = tidy_cmap(&map);
        assert!(reads_as_is(&tidy), "{}", String::from_utf8_lossy(&tidy));
        let entries = cmap_entries(&tidy);
        let hex_of = |code: &[u8]| entries.iter().find(|(c, _)| c == code).map(|(_, t)| hex(t));
        assert_eq!(hex_of(&[1]).as_deref(), Some("0066"));
        assert_eq!(hex_of(&[2]), None, "an odd byte is not UTF-16");
        assert_eq!(
            hex_of(&[3]),
            None,
            "a pair in the wrong order does not decode"
        );
        assert_eq!(hex_of(&[0x42]).as_deref(), Some("0042"));
        assert_eq!(hex_of(&[0x62]).as_deref(), Some("00660066006A"));
        assert_eq!(entries.len(), 6, "{entries:?}");
        let text = String::from_utf8_lossy(&tidy);
        assert!(
            text.contains("<41> <43> <0041>"),
            "a run is a range: {text}"
        );
    }

    #[test]
    fn a_range_of_four_billion_codes_is_read_up_to_the_bound() {
        let map = cmap(
            "1 beginbfrange\n<00000000> <FFFFFFFF> [<0041>]\nendbfrange\n1 beginbfrange\n<00000000> <FFFFFFFF> <0041>\nendbfrange",
        );
        assert!(!reads_as_is(&map));
        let entries = cmap_entries(&tidy_cmap(&map));
        assert!(entries.len() <= MOST_CODES, "{}", entries.len());
        // The string's codes (the array's one code is the string's first), up to U+FFFF, less
        // the 2,048 halves of UTF-16 pairs on the way.
        assert_eq!(entries.len(), 0xFFFF - 0x41 + 1 - 0x800);
    }

    #[test]
    fn garbage_maps_never_panic_and_are_written_again_to_maps_that_read() {
        let mut state = 0x9E37_79B9_7F4A_7C15;
        for round in 0..2_000 {
            let mut map = cmap("3 beginbfrange\n<20> <7E> <0020>\nendbfrange");
            let noise = crate::tests_support::garbage(&mut state, 1 + round % 300);
            let at = (round * 7) % map.len();
            map.splice(at..at, noise);
            let tidy = tidy_cmap(&map);
            assert!(reads_as_is(&tidy), "{}", String::from_utf8_lossy(&tidy));
        }
    }
}
