//! Word documents (Office Open XML) to text: paragraphs of the body, then footnotes; title,
//! author and dates from the core properties.

use std::io::{Read, Seek};

use quarry_sdk::{Content, Error};
use quick_xml::events::Event;

use super::package::{Package, append_text};

/// Extracts the text of a `.docx` file read from `file`, which is never read whole into memory;
/// its parts are read within the bounds of [`Package`].
pub fn to_content(file: impl Read + Seek) -> Result<Content, Error> {
    let mut package = Package::open(file, "DOCX")?;
    let mut text = part_text(&mut package, "word/document.xml")?
        .ok_or_else(|| Error::Other("not a Word document: word/document.xml is missing".into()))?;
    if let Some(notes) = part_text(&mut package, "word/footnotes.xml")?
        && !notes.is_empty()
    {
        text.push_str("\n\n");
        text.push_str(&notes);
    }
    let mut content = Content::text(quarry_sdk::text::tidy(&text));
    // Properties that cannot be read are left out; the text stands without them.
    for (key, value) in super::ooxml::core_properties(&mut package).unwrap_or_default() {
        content = content.with_meta(key, value);
    }
    Ok(content)
}

/// The text runs of one part (`w:t`), with paragraphs, tabs and breaks; `None` if it is absent.
fn part_text<R: Read + Seek>(
    package: &mut Package<R>,
    name: &str,
) -> Result<Option<String>, Error> {
    let Some(mut part) = package.xml(name)? else {
        return Ok(None);
    };
    let mut out = String::new();
    let mut in_text = false;
    loop {
        match part.next()? {
            Event::Start(e) if e.name().as_ref() == b"w:t" => in_text = true,
            Event::End(e) => match e.name().as_ref() {
                b"w:t" => in_text = false,
                b"w:p" => out.push_str("\n\n"),
                _ => {}
            },
            Event::Empty(e) => match e.name().as_ref() {
                b"w:tab" => out.push('\t'),
                b"w:br" | b"w:cr" => out.push('\n'),
                _ => {}
            },
            Event::Eof => break,
            event if in_text => {
                append_text(&event, &mut out)?;
            }
            _ => {}
        }
    }
    Ok(Some(out))
}
