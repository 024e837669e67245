//! PowerPoint presentations (Office Open XML, `.pptx`) to text: one page per slide, in the
//! presentation's order, each slide's speaker notes after its text; title, author and dates
//! from the core properties.

use std::collections::HashMap;
use std::io::{Read, Seek};

use quarry_sdk::{Content, Error};
use quick_xml::events::Event;

use super::ooxml::{core_properties, relationships};
use super::package::{Package, append_text, attribute};

/// The presentation part, where the slides' order is.
const PRESENTATION: &str = "ppt/presentation.xml";

/// Extracts the text of a `.pptx` file read from `file` (never read whole).
pub fn to_content(file: impl Read + Seek) -> Result<Content, Error> {
    let mut package = Package::open(file, "PPTX")?;
    let slides = slide_parts(&mut package)?;
    let mut pages = Vec::with_capacity(slides.len());
    for slide in &slides {
        let mut page = shapes_text(&mut package, slide, false)?;
        let notes = relationships(&mut package, slide)?
            .into_iter()
            .find(|r| r.kind == "notesSlide");
        if let Some(notes) = notes {
            let notes = shapes_text(&mut package, &notes.target, true)?;
            if !notes.trim().is_empty() {
                page.push_str("\n\n");
                page.push_str(&notes);
            }
        }
        pages.push(quarry_sdk::text::tidy(&page));
    }
    let mut content = Content::pages(&pages).with_meta("slide_count", pages.len().to_string());
    // Properties that cannot be read are left out; the text stands without them.
    for (key, value) in core_properties(&mut package).unwrap_or_default() {
        content = content.with_meta(key, value);
    }
    Ok(content)
}

/// The slides' parts in the order `ppt/presentation.xml` lists them.
fn slide_parts<R: Read + Seek>(package: &mut Package<R>) -> Result<Vec<String>, Error> {
    let mut ids = Vec::new();
    {
        let Some(mut part) = package.xml(PRESENTATION)? else {
            return Err(Error::Other(format!(
                "not a PowerPoint presentation: {PRESENTATION} is missing"
            )));
        };
        loop {
            match part.next()? {
                Event::Eof => break,
                Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"p:sldId" => {
                    ids.extend(attribute(&e, "r:id"));
                }
                _ => {}
            }
        }
    }
    let slides: HashMap<String, String> = relationships(package, PRESENTATION)?
        .into_iter()
        .filter(|r| r.kind == "slide")
        .map(|r| (r.id, r.target))
        .collect();
    Ok(ids
        .iter()
        .filter_map(|id| slides.get(id).cloned())
        .collect())
}

/// The text of a slide's shapes and tables, a paragraph per line; with `notes_only`, only the
/// text of the notes page's body placeholder (not its slide image, number or date).
fn shapes_text<R: Read + Seek>(
    package: &mut Package<R>,
    name: &str,
    notes_only: bool,
) -> Result<String, Error> {
    let Some(mut part) = package.xml(name)? else {
        return Ok(String::new());
    };
    let mut out = String::new();
    // With `notes_only`: the current shape's text, and whether it is the body placeholder.
    let (mut shape, mut is_body) = (String::new(), false);
    let mut in_text = false;
    loop {
        let event = part.next()?;
        let target = if notes_only { &mut shape } else { &mut out };
        match &event {
            Event::Eof => break,
            Event::Start(e) if e.name().as_ref() == b"a:t" => in_text = true,
            Event::Start(e) if e.name().as_ref() == b"p:sp" => {
                shape.clear();
                is_body = false;
            }
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"p:ph" => {
                is_body = attribute(e, "type").is_some_and(|t| t == "body");
            }
            Event::Empty(e) if e.name().as_ref() == b"a:br" => target.push('\n'),
            Event::End(e) => match e.name().as_ref() {
                b"a:t" => in_text = false,
                b"a:p" => target.push('\n'),
                b"p:sp" if notes_only && is_body => {
                    out.push_str(&shape);
                    out.push('\n');
                }
                _ => {}
            },
            event if in_text => {
                append_text(event, target)?;
            }
            _ => {}
        }
    }
    Ok(out)
}
