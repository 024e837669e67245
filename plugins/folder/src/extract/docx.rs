//! Word documents (Office Open XML) to text: paragraphs of the body, then footnotes.

use std::io::{BufReader, Read, Seek};

use quarry_sdk::{Content, Error};
use quick_xml::Reader;
use quick_xml::events::Event;
use zip::ZipArchive;

/// Uncompressed XML read from one part at most; guards against archive bombs.
const MAX_PART_BYTES: u64 = 64 << 20;

/// Extracts the text of a `.docx` file read from `file`, which is never read whole into memory.
pub fn to_content(file: impl Read + Seek) -> Result<Content, Error> {
    let mut zip =
        ZipArchive::new(file).map_err(|e| Error::Other(format!("not a readable DOCX: {e}")))?;
    let mut text = part_text(&mut zip, "word/document.xml")?
        .ok_or_else(|| Error::Other("not a Word document: word/document.xml is missing".into()))?;
    if let Some(notes) = part_text(&mut zip, "word/footnotes.xml")?
        && !notes.is_empty()
    {
        text.push_str("\n\n");
        text.push_str(&notes);
    }
    let mut content = Content::text(quarry_sdk::text::tidy(&text));
    if let Some(title) = core_title(&mut zip) {
        content = content.with_meta("title", title);
    }
    Ok(content)
}

/// The text runs of one part (`w:t`), with paragraphs, tabs and breaks; `None` if it is absent.
fn part_text<R: Read + Seek>(zip: &mut ZipArchive<R>, name: &str) -> Result<Option<String>, Error> {
    let part = match zip.by_name(name) {
        Ok(part) => part,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(Error::Other(format!("cannot read {name}: {e}"))),
    };
    let mut reader = Reader::from_reader(BufReader::new(part.take(MAX_PART_BYTES)));
    let mut buf = Vec::new();
    let mut out = String::new();
    let mut in_text = false;
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| Error::Other(format!("malformed {name}: {e}")))?;
        match event {
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
            Event::Text(t) if in_text => {
                let decoded = t
                    .xml_content()
                    .map_err(|e| Error::Other(format!("malformed {name}: {e}")))?;
                out.push_str(&decoded);
            }
            Event::GeneralRef(r) if in_text => {
                out.push_str(&quarry_sdk::html::resolve_xml_entity(
                    &r.decode().unwrap_or_default(),
                ));
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    Ok(Some(out))
}

/// `dc:title` from `docProps/core.xml`, if set.
fn core_title<R: Read + Seek>(zip: &mut ZipArchive<R>) -> Option<String> {
    let part = zip.by_name("docProps/core.xml").ok()?;
    let mut reader = Reader::from_reader(BufReader::new(part.take(1 << 20)));
    let mut buf = Vec::new();
    let mut in_title = false;
    let mut title = String::new();
    loop {
        match reader.read_event_into(&mut buf).ok()? {
            Event::Start(e) if e.name().as_ref() == b"dc:title" => in_title = true,
            Event::End(e) if e.name().as_ref() == b"dc:title" => break,
            Event::Text(t) if in_title => title.push_str(&t.xml_content().ok()?),
            Event::GeneralRef(r) if in_title => {
                title.push_str(&quarry_sdk::html::resolve_xml_entity(&r.decode().ok()?))
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    let title = title.trim();
    (!title.is_empty()).then(|| title.to_owned())
}
