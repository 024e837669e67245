//! What Office Open XML packages (Word, PowerPoint) share: the relationships between their parts,
//! and their core properties (title, author, dates).

use std::io::{Read, Seek};

use quarry_sdk::Error;
use quick_xml::events::Event;

use super::package::{Package, attribute, resolve};

/// A relationship of a part to another part of the package.
pub struct Relationship {
    /// Its id, which the part's XML refers to (`rId2`).
    pub id: String,
    /// The last segment of its type (`slide`, `notesSlide`, `officeDocument`).
    pub kind: String,
    /// The path of the part it targets, from the package's root.
    pub target: String,
}

/// The relationships of part `from` (from `dir/_rels/name.rels`) that target parts of the
/// package (external links are left out); empty when it has none.
pub fn relationships<R: Read + Seek>(
    package: &mut Package<R>,
    from: &str,
) -> Result<Vec<Relationship>, Error> {
    let (dir, name) = from.rsplit_once('/').unwrap_or(("", from));
    let rels = if dir.is_empty() {
        format!("_rels/{name}.rels")
    } else {
        format!("{dir}/_rels/{name}.rels")
    };
    let Some(mut part) = package.xml(&rels)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    loop {
        match part.next()? {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"Relationship" => {
                if attribute(&e, "TargetMode").is_some_and(|m| m == "External") {
                    continue;
                }
                let (Some(id), Some(kind), Some(target)) = (
                    attribute(&e, "Id"),
                    attribute(&e, "Type"),
                    attribute(&e, "Target"),
                ) else {
                    continue;
                };
                out.push(Relationship {
                    id,
                    kind: kind.rsplit('/').next().unwrap_or_default().to_owned(),
                    target: resolve(from, &target),
                });
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Title, author, and creation and modification dates from `docProps/core.xml`.
pub fn core_properties<R: Read + Seek>(
    package: &mut Package<R>,
) -> Result<Vec<(&'static str, String)>, Error> {
    package.fields(
        "docProps/core.xml",
        &[
            (b"dc:title", "title"),
            (b"dc:creator", "author"),
            (b"dcterms:created", "created"),
            (b"dcterms:modified", "modified"),
        ],
    )
}
