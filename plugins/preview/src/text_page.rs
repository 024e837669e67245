//! A document's text drawn as a page (a text file, an office document, a slide, a mail, as the
//! host hands over the text of one of its pages): laid out in Courier, a standard font, on a
//! letter-sized page, written as a one-page PDF and drawn as any PDF page is, so it has a text
//! layer too. What does not fit on the page is left out; a character Courier's Western
//! European set lacks is drawn as `?`.

use crate::bindings::exports::quarry::preview::render::{PageImage, RenderError};
use crate::pdf;

/// The page, in points: US letter.
const PAGE_WIDTH: usize = 612;
const PAGE_HEIGHT: usize = 792;
/// The margin on every side, in points.
const MARGIN: usize = 54;
/// Courier at 10 points: every character is 6 points wide.
const FONT_SIZE: usize = 10;
const CHAR_WIDTH: usize = 6;
/// From one baseline to the next, in points.
const LEADING: usize = 12;
/// Characters on a line, and lines on the page.
const COLUMNS: usize = (PAGE_WIDTH - 2 * MARGIN) / CHAR_WIDTH;
const LINES: usize = (PAGE_HEIGHT - 2 * MARGIN) / LEADING;
/// A tab's width in spaces.
const TAB: &str = "    ";

/// Draws `bytes`, UTF-8 text, as a page at most `width` pixels wide, with its pixels in gray
/// when `gray`.
pub(crate) fn render(bytes: &[u8], width: u32, gray: bool) -> Result<PageImage, RenderError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| RenderError::Malformed(format!("the text is not UTF-8: {e}")))?;
    pdf::render(one_page_pdf(&lines(text)), 1, width, gray)
}

/// The first [`LINES`] lines of `text` laid out [`COLUMNS`] wide: long lines wrapped at a space
/// where there is one, tabs as spaces, control characters left out.
fn lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for source in text.lines() {
        let expanded = source.replace('\t', TAB);
        let mut rest: Vec<char> = expanded.chars().filter(|c| !c.is_control()).collect();
        loop {
            if out.len() == LINES {
                return out;
            }
            if rest.len() <= COLUMNS {
                out.push(rest.iter().collect());
                break;
            }
            let cut = rest[..=COLUMNS]
                .iter()
                .rposition(|c| *c == ' ')
                .filter(|&at| at > 0)
                .unwrap_or(COLUMNS);
            out.push(rest[..cut].iter().collect());
            let skip = usize::from(rest.get(cut) == Some(&' '));
            rest.drain(..cut + skip);
        }
    }
    out
}

/// `c` in the font's encoding (WinAnsi): Latin-1 and the common typographic marks; `?` for the
/// rest.
fn win_ansi(c: char) -> u8 {
    match c {
        ' '..='~' | '\u{a0}'..='\u{ff}' => c as u8,
        '\u{20ac}' => 0x80,
        '\u{2026}' => 0x85,
        '\u{2018}' => 0x91,
        '\u{2019}' => 0x92,
        '\u{201c}' => 0x93,
        '\u{201d}' => 0x94,
        '\u{2022}' => 0x95,
        '\u{2013}' => 0x96,
        '\u{2014}' => 0x97,
        _ => b'?',
    }
}

/// A PDF of one page showing `lines`.
fn one_page_pdf(lines: &[String]) -> Vec<u8> {
    let mut content = format!(
        "BT /F1 {FONT_SIZE} Tf {LEADING} TL {MARGIN} {} Td\n",
        PAGE_HEIGHT - MARGIN - FONT_SIZE
    )
    .into_bytes();
    for line in lines {
        content.push(b'(');
        for byte in line.chars().map(win_ansi) {
            if matches!(byte, b'(' | b')' | b'\\') {
                content.push(b'\\');
            }
            content.push(byte);
        }
        content.extend_from_slice(b") Tj T*\n");
    }
    content.extend_from_slice(b"ET\n");
    let mut stream = format!("<< /Length {} >>\nstream\n", content.len()).into_bytes();
    stream.extend_from_slice(&content);
    stream.extend_from_slice(b"\nendstream");
    let objects: [Vec<u8>; 5] = [
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>".to_vec(),
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {PAGE_WIDTH} {PAGE_HEIGHT}] \
             /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>"
        )
        .into_bytes(),
        stream,
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(b"xref\n0 6\n0000000000 65535 f \n");
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_wrap_at_a_space_and_the_page_holds_what_fits() {
        let long = "word ".repeat(40);
        let laid = lines(&format!("Title\n\n{long}\nend"));
        assert_eq!(laid[0], "Title");
        assert_eq!(laid[1], "");
        assert!(laid[2].len() <= COLUMNS && laid[2].ends_with("word"));
        assert!(laid[3].starts_with("word"));
        let unbroken = "x".repeat(COLUMNS * 2 + 3);
        assert_eq!(
            lines(&unbroken).iter().map(String::len).collect::<Vec<_>>(),
            [COLUMNS, COLUMNS, 3]
        );
        assert_eq!(lines(&"line\n".repeat(500)).len(), LINES);
        assert_eq!(lines("a\tb\u{7}c"), ["a    bc"]);
    }

    #[test]
    fn characters_outside_the_fonts_set_are_drawn_as_question_marks() {
        assert_eq!(win_ansi('é'), 0xe9);
        assert_eq!(win_ansi('—'), 0x97);
        assert_eq!(win_ansi('索'), b'?');
    }
}
