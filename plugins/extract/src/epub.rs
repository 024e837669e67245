//! E-books (EPUB 2 and 3) to text: one page per chapter in reading order (the spine), each
//! chapter's XHTML as text; title, author and date from the package document's metadata.

use std::collections::HashMap;
use std::io::{Read, Seek};

use quarry_sdk::{Content, Error};
use quick_xml::events::Event;

use super::package::{Package, attribute, resolve};

/// Where every EPUB says where its package document is.
const CONTAINER: &str = "META-INF/container.xml";

/// Extracts the text of an `.epub` file read from `file` (never read whole).
pub fn to_content(file: impl Read + Seek) -> Result<Content, Error> {
    let mut package = Package::open(file, "EPUB")?;
    let opf = package_document(&mut package)?;
    let (items, spine) = manifest_and_spine(&mut package, &opf)?;
    let mut pages = Vec::with_capacity(spine.len());
    for idref in &spine {
        let Some((href, media_type)) = items.get(idref) else {
            continue;
        };
        if !media_type.contains("html") {
            continue;
        }
        let Some(bytes) = package.bytes(&resolve(&opf, href))? else {
            continue;
        };
        let (text, _) = quarry_sdk::html::to_text(&String::from_utf8_lossy(&bytes));
        pages.push(quarry_sdk::text::tidy(&text));
    }
    let mut content = Content::pages(&pages).with_meta("chapter_count", pages.len().to_string());
    // Metadata that cannot be read is left out; the text stands without it.
    let fields: [(&[u8], &'static str); 3] = [
        (b"dc:title", "title"),
        (b"dc:creator", "author"),
        (b"dc:date", "date"),
    ];
    for (key, value) in package.fields(&opf, &fields).unwrap_or_default() {
        content = content.with_meta(key, value);
    }
    Ok(content)
}

/// The path of the package document (`.opf`), from `META-INF/container.xml`.
fn package_document<R: Read + Seek>(package: &mut Package<R>) -> Result<String, Error> {
    let missing = || {
        Error::Other(format!(
            "not an EPUB: {CONTAINER} names no package document"
        ))
    };
    let Some(mut part) = package.xml(CONTAINER)? else {
        return Err(missing());
    };
    loop {
        match part.next()? {
            Event::Eof => return Err(missing()),
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == b"rootfile" => {
                if let Some(path) = attribute(&e, "full-path") {
                    return Ok(resolve("", &path));
                }
            }
            _ => {}
        }
    }
}

/// The manifest's items (id to href and media type) and the spine's item ids, in reading order.
type ManifestAndSpine = (HashMap<String, (String, String)>, Vec<String>);

fn manifest_and_spine<R: Read + Seek>(
    package: &mut Package<R>,
    opf: &str,
) -> Result<ManifestAndSpine, Error> {
    let Some(mut part) = package.xml(opf)? else {
        return Err(Error::Other(format!("not an EPUB: {opf} is missing")));
    };
    let (mut items, mut spine) = (HashMap::new(), Vec::new());
    loop {
        match part.next()? {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                b"item" => {
                    if let (Some(id), Some(href)) = (attribute(&e, "id"), attribute(&e, "href")) {
                        let media_type = attribute(&e, "media-type").unwrap_or_default();
                        items.entry(id).or_insert((href, media_type));
                    }
                }
                b"itemref" => spine.extend(attribute(&e, "idref")),
                _ => {}
            },
            _ => {}
        }
    }
    Ok((items, spine))
}
