//! Base64 blocks, decoded to the bytes they stand for: a mail's attachments (MIME parts, lines
//! of 76 characters), a Kubernetes Secret's values, JSON and YAML values, data URLs. A block is
//! named where the text names it (a MIME part's `filename`, the key it is the value of), so a
//! decoded `id_ed25519` or `tls.key` is judged as that file would be.

use std::ops::Range;

use base64::Engine as _;
use base64::alphabet::STANDARD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

/// Base64 characters a block holds at least (30 bytes decoded).
const MIN_CHARS: usize = 40;
/// Characters a line must hold for the next line to continue the block (wrapped base64).
const MIN_WRAPPED_LINE: usize = 40;
/// How far before a block its name is looked for.
const NAME_REACH: usize = 1024;

/// A decoded block.
pub(crate) struct Block {
    /// Where it stands in the text.
    pub origin: Range<usize>,
    /// What it decodes to.
    pub bytes: Vec<u8>,
    /// Its name, when the text gives one.
    pub name: Option<String>,
}

/// Every base64 block of `text`, decoded.
pub(crate) fn blocks(text: &str) -> Vec<Block> {
    let bytes = text.as_bytes();
    let mut blocks = Vec::new();
    // `at` is where a run may start (the text's start, or after a byte out of the alphabet).
    let mut at = 0;
    while at + MIN_CHARS <= bytes.len() {
        // A run must fill the next MIN_CHARS bytes: the last byte out of the alphabet among
        // them is where the next one may start (most of a text is passed over this way).
        if let Some(gap) = (at..at + MIN_CHARS).rev().find(|&i| !is_base64(bytes[i])) {
            at = gap + 1;
            continue;
        }
        let (end, lines) = block_end(bytes, at);
        let origin = aligned_start(bytes, at, &lines)..end;
        at = end.max(at + 1);
        let chars = &bytes[origin.clone()];
        let count = chars.iter().filter(|b| is_base64(**b)).count();
        if count < MIN_CHARS || !looks_encoded(chars) {
            continue;
        }
        blocks.push(Block {
            bytes: decode(chars),
            name: name_before(text, origin.start),
            origin,
        });
    }
    blocks
}

/// The bytes of the standard and the URL-safe alphabets.
static ALPHABET: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_');
        b += 1;
    }
    table
};

/// A character of the standard or the URL-safe alphabet (padding aside: `=` only ends a run).
pub(crate) fn is_base64(b: u8) -> bool {
    ALPHABET[usize::from(b)]
}

/// Where the block starting at `start` ends, and where each of its lines starts: a line of at
/// least [`MIN_WRAPPED_LINE`] characters continues on the next (after its indent) when that
/// one is base64 too and not a MIME boundary (`--`).
fn block_end(bytes: &[u8], start: usize) -> (usize, Vec<usize>) {
    let mut lines = vec![start];
    let mut at = start;
    loop {
        let line_start = at;
        while at < bytes.len() && is_base64(bytes[at]) {
            at += 1;
        }
        let run = at - line_start;
        while at - line_start < run + 2 && bytes.get(at) == Some(&b'=') {
            at += 1;
        }
        let mut next = at;
        if bytes.get(next) == Some(&b'\r') {
            next += 1;
        }
        if run < MIN_WRAPPED_LINE || bytes.get(next) != Some(&b'\n') {
            return (at, lines);
        }
        next += 1;
        while bytes.get(next).is_some_and(|b| matches!(b, b' ' | b'\t')) {
            next += 1;
        }
        let continues =
            bytes.get(next).is_some_and(|b| is_base64(*b)) && !bytes[next..].starts_with(b"--");
        if !continues {
            return (at, lines);
        }
        lines.push(next);
        at = next;
    }
}

/// Where decoding starts: the block's start, or, when a window of a file began inside a
/// wrapped block (its first line shorter than the others and not a multiple of four), its
/// second line, where whole groups of four start again.
fn aligned_start(bytes: &[u8], start: usize, lines: &[usize]) -> usize {
    if start != 0 || lines.len() < 2 {
        return start;
    }
    let first = bytes[..lines[1]].iter().filter(|b| is_base64(**b)).count();
    if first.is_multiple_of(4) {
        start
    } else {
        lines[1]
    }
}

/// Whether `chars` look like encoded data rather than a word, a path or a hex digest: upper and
/// lower case letters both, and a digit or a symbol of the alphabet.
fn looks_encoded(chars: &[u8]) -> bool {
    let has = |f: fn(&u8) -> bool| chars.iter().any(f);
    has(u8::is_ascii_uppercase)
        && has(u8::is_ascii_lowercase)
        && has(|b| b.is_ascii_digit() || matches!(b, b'+' | b'/' | b'-' | b'_'))
}

/// The bytes `chars` stand for: the standard and URL-safe alphabets alike, padding optional, a
/// last partial group dropped.
pub(crate) fn decode(chars: &[u8]) -> Vec<u8> {
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::RequireNone)
            .with_decode_allow_trailing_bits(true),
    );
    let mut clean: Vec<u8> = chars
        .iter()
        .filter(|b| is_base64(**b))
        .map(|&b| match b {
            b'-' => b'+',
            b'_' => b'/',
            b => b,
        })
        .collect();
    if clean.len() % 4 == 1 {
        clean.pop();
    }
    LENIENT.decode(&clean).unwrap_or_default()
}

/// The name the text gives the block starting at `start`: a MIME part's `filename=` or
/// `name=` in the headers just before it, or the key it is the value of (`tls.key: `,
/// `"private_key": "`).
fn name_before(text: &str, start: usize) -> Option<String> {
    let from = text.floor_char_boundary(start.saturating_sub(NAME_REACH));
    let before = &text[from..start];
    if let Some(headers) = before
        .strip_suffix("\r\n\r\n")
        .or_else(|| before.strip_suffix("\n\n"))
    {
        let part = headers
            .rsplit_once("\n\n")
            .or_else(|| headers.rsplit_once("\r\n\r\n"))
            .map_or(headers, |(_, part)| part);
        return mime_name(part);
    }
    let line = before.rsplit('\n').next().unwrap_or(before);
    let key = line
        .trim_end_matches([' ', '\t', '"', '\''])
        .strip_suffix([':', '='])?;
    let key = key.trim_end_matches(['"', '\'', ' ']);
    let name = key
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        .next()?;
    (!name.is_empty()).then(|| name.to_owned())
}

/// A MIME part's file name from its headers: `filename="..."`, `filename*=utf-8''...` or
/// `name="..."`.
fn mime_name(headers: &str) -> Option<String> {
    let lower = headers.to_ascii_lowercase();
    let at = ["filename*=", "filename=", "name="]
        .iter()
        .find_map(|key| lower.find(key).map(|at| at + key.len()))?;
    let value = headers[at..].trim_start();
    let value = match value.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next().unwrap_or(quoted),
        None => value
            .split([';', '\r', '\n'])
            .next()
            .unwrap_or(value)
            .rsplit("''")
            .next()
            .unwrap_or(value),
    };
    let name = value.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::STANDARD as B64;

    fn wrapped(data: &[u8], width: usize) -> String {
        let encoded = B64.encode(data);
        encoded
            .as_bytes()
            .chunks(width)
            .map(|line| format!("{}\r\n", String::from_utf8_lossy(line)))
            .collect()
    }

    #[test]
    fn a_mime_attachment_is_decoded_whole_and_named_by_its_part() {
        let secret = b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n".repeat(3);
        let mail = format!(
            "--b1\r\nContent-Type: application/octet-stream; name=\"id_ed25519\"\r\nContent-Disposition: attachment; filename=\"id_ed25519\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{}--b1--\r\n",
            wrapped(&secret, 76)
        );
        let blocks = blocks(&mail);
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].bytes, secret);
        assert_eq!(blocks[0].name.as_deref(), Some("id_ed25519"));
    }

    #[test]
    fn a_yaml_value_is_named_by_its_key_and_a_cut_window_realigns() {
        let pem = b"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAvNlbBm7m3xQ4gJ0kYq7LzS9h1K3y0Z8v2pQdX5uT9wA1cE6r\n";
        let yaml = format!("data:\n  tls.key: {}\n", B64.encode(pem));
        let found = blocks(&yaml);
        assert_eq!(found[0].bytes, pem);
        assert_eq!(found[0].name.as_deref(), Some("tls.key"));
        let text = wrapped(&pem.repeat(4), 64);
        let cut = &text[3..];
        let decoded = &blocks(cut)[0].bytes;
        assert!(
            decoded.windows(10).any(|w| w == b"PRIVATE KE"),
            "{}",
            String::from_utf8_lossy(decoded)
        );
    }

    #[test]
    fn words_paths_and_digests_are_not_blocks() {
        for text in [
            "/usr/local/lib/python3/site-packages/something/else/here",
            "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "an_ordinary_snake_case_identifier_that_is_long_enough",
        ] {
            assert!(blocks(text).is_empty(), "{text}");
        }
    }
}
