//! OpenDocument text and presentations (`.odt`, `.odp`, as LibreOffice writes them) to text. A
//! text document is its paragraphs and headings; a presentation is one page per slide, the
//! slide's speaker notes after its text. Title, author and dates come from `meta.xml`.

use std::io::{Read, Seek};

use quarry_sdk::{Content, Error};
use quick_xml::events::Event;

use super::package::{Package, append_text, attribute};

/// Spaces one `<text:s text:c="n"/>` may stand for, at most.
const MAX_SPACES: usize = 64;

/// Elements whose text is not part of the document as read: tracked changes (deleted text
/// among them), comments, and page-number fields (a placeholder such as `<number>` on notes
/// pages and master slides).
const SKIPPED: &[&[u8]] = &[
    b"text:tracked-changes",
    b"office:annotation",
    b"office:annotation-end",
    b"text:page-number",
    b"text:page-count",
];

/// Which kind of OpenDocument file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// A text document (`.odt`).
    Text,
    /// A presentation (`.odp`): one page per slide.
    Presentation,
}

/// Extracts the text of an OpenDocument file read from `file` (never read whole).
pub fn to_content(file: impl Read + Seek, flavour: Flavour) -> Result<Content, Error> {
    let kind = match flavour {
        Flavour::Text => "ODT",
        Flavour::Presentation => "ODP",
    };
    let mut package = Package::open(file, kind)?;
    let pages = body_pages(&mut package, flavour)?
        .ok_or_else(|| Error::Other("not an OpenDocument file: content.xml is missing".into()))?;
    let mut content = match flavour {
        Flavour::Text => Content::text(quarry_sdk::text::tidy(&pages.concat())),
        Flavour::Presentation => {
            let pages: Vec<String> = pages.iter().map(|p| quarry_sdk::text::tidy(p)).collect();
            Content::pages(&pages).with_meta("slide_count", pages.len().to_string())
        }
    };
    // Metadata that cannot be read is left out; the text stands without it.
    for (key, value) in metadata(&mut package).unwrap_or_default() {
        content = content.with_meta(key, value);
    }
    Ok(content)
}

/// The text of `content.xml`'s body: one string for a text document, one per slide (`draw:page`,
/// empty slides included, so that page n is slide n) for a presentation; `None` without
/// `content.xml`.
fn body_pages<R: Read + Seek>(
    package: &mut Package<R>,
    flavour: Flavour,
) -> Result<Option<Vec<String>>, Error> {
    let Some(mut part) = package.xml("content.xml")? else {
        return Ok(None);
    };
    let mut pages = match flavour {
        Flavour::Text => vec![String::new()],
        Flavour::Presentation => Vec::new(),
    };
    // A presentation's text outside any slide, and a slide's notes until the slide ends.
    let (mut stray, mut notes) = (String::new(), String::new());
    let (mut in_body, mut in_notes, mut skipping) = (false, false, 0usize);
    loop {
        let event = part.next()?;
        let out = match pages.last_mut() {
            _ if in_notes => &mut notes,
            Some(page) => page,
            None => &mut stray,
        };
        match &event {
            Event::Eof => break,
            Event::Start(e) if skipping > 0 || SKIPPED.contains(&e.name().as_ref()) => {
                skipping += 1;
            }
            Event::End(_) if skipping > 0 => skipping -= 1,
            _ if skipping > 0 => {}
            Event::Start(e) => match e.name().as_ref() {
                b"office:body" => in_body = true,
                b"draw:page" if flavour == Flavour::Presentation => pages.push(String::new()),
                b"presentation:notes" => in_notes = true,
                _ => {}
            },
            Event::End(e) => match e.name().as_ref() {
                b"office:body" => in_body = false,
                b"text:p" | b"text:h" if in_body => out.push_str("\n\n"),
                b"presentation:notes" => in_notes = false,
                b"draw:page" => {
                    if let Some(page) = pages.last_mut()
                        && !notes.trim().is_empty()
                    {
                        page.push_str("\n\n");
                        page.push_str(&notes);
                    }
                    notes.clear();
                }
                _ => {}
            },
            Event::Empty(e) if in_body => match e.name().as_ref() {
                b"text:tab" => out.push('\t'),
                b"text:line-break" => out.push('\n'),
                b"text:s" => {
                    let n = attribute(e, "text:c")
                        .and_then(|c| c.parse().ok())
                        .unwrap_or(1);
                    out.extend(std::iter::repeat_n(' ', usize::min(n, MAX_SPACES)));
                }
                _ => {}
            },
            event if in_body => {
                append_text(event, out)?;
            }
            _ => {}
        }
    }
    Ok(Some(pages))
}

/// Title, author, and creation and modification dates from `meta.xml`.
pub fn metadata<R: Read + Seek>(
    package: &mut Package<R>,
) -> Result<Vec<(&'static str, String)>, Error> {
    package.fields(
        "meta.xml",
        &[
            (b"dc:title", "title"),
            (b"dc:creator", "author"),
            (b"meta:initial-creator", "author"),
            (b"meta:creation-date", "created"),
            (b"dc:date", "modified"),
        ],
    )
}
