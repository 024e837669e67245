//! The XML parts of a ZIP package (a Word document; the other Office and OpenDocument formats
//! are the same kind of file), read within bounds. An archive bomb, a part that claims a huge
//! size, or XML nested without end stops with an error that names the bound, so the document
//! fails with that reason and the sync goes on; the sandbox's memory and time limits stay the
//! backstop behind these.

use std::io::{BufReader, Read, Seek};

use quarry_sdk::Error;
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use zip::ZipArchive;
use zip::read::ZipFile;

/// Entries an archive may list, at most (a long book has a few hundred).
const MAX_ENTRIES: usize = 10_000;
/// Uncompressed bytes of one part, at most.
const MAX_PART_BYTES: u64 = 64 << 20;
/// Uncompressed bytes of all the parts read from one archive, at most.
const MAX_TOTAL_BYTES: u64 = 256 << 20;
/// Uncompressed bytes per compressed byte, at most, for a part larger than
/// [`RATIO_FREE_BYTES`]: XML compresses 5 to 30 times, an archive bomb a thousand times.
const MAX_RATIO: u64 = 200;
/// Parts up to this size are read whatever they compress to.
const RATIO_FREE_BYTES: u64 = 1 << 20;
/// Elements open at once in a part, at most.
const MAX_DEPTH: usize = 512;

/// An opened package of `kind` (`DOCX`...), and how many bytes it may still expand to.
pub struct Package<R> {
    zip: ZipArchive<R>,
    kind: &'static str,
    budget: u64,
}

impl<R: Read + Seek> Package<R> {
    /// Opens `file` as a package of `kind`, which names it in errors.
    pub fn open(file: R, kind: &'static str) -> Result<Self, Error> {
        let zip = ZipArchive::new(file)
            .map_err(|e| Error::Other(format!("not a readable {kind}: {e}")))?;
        if zip.len() > MAX_ENTRIES {
            return Err(Error::Other(format!(
                "not read: this {kind} lists {} entries, more than {MAX_ENTRIES}",
                zip.len()
            )));
        }
        Ok(Package {
            zip,
            kind,
            budget: MAX_TOTAL_BYTES,
        })
    }

    /// Checks every entry against the bounds parts are read within (its declared size, the
    /// package's total, its expansion), for a package another library reads whole.
    pub fn check_all(&mut self) -> Result<(), Error> {
        let kind = self.kind;
        let mut total = 0u64;
        for index in 0..self.zip.len() {
            let entry = self
                .zip
                .by_index_raw(index)
                .map_err(|e| Error::Other(format!("cannot read this {kind}: {e}")))?;
            let name = entry
                .name()
                .map_or_else(|_| format!("entry {index}"), |n| n.to_string());
            let size = entry.size();
            check_part(
                kind,
                &name,
                size,
                entry.compressed_size(),
                MAX_TOTAL_BYTES - total,
            )?;
            total += size;
        }
        Ok(())
    }

    /// The file, for a library that reads the package itself (after [`Package::check_all`]).
    pub fn into_inner(self) -> R {
        self.zip.into_inner()
    }

    /// Part `name`, or `None` when the package has no such part. Refused when the part claims
    /// more than [`MAX_PART_BYTES`], more than the package has left, or expands more than
    /// [`MAX_RATIO`] times; the reader cannot read past the size the part claims.
    fn part(&mut self, name: &str) -> Result<Option<ZipFile<'_, R>>, Error> {
        let kind = self.kind;
        let part = match self.zip.by_name(name) {
            Ok(part) => part,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(unreadable(kind, name, &e)),
        };
        let size = part.size();
        check_part(kind, name, size, part.compressed_size(), self.budget)?;
        self.budget -= size;
        Ok(Some(part))
    }

    /// The bytes of part `name` (within the bounds of [`Package::xml`]), or `None` when the
    /// package has no such part.
    pub fn bytes(&mut self, name: &str) -> Result<Option<Vec<u8>>, Error> {
        let kind = self.kind;
        let Some(mut part) = self.part(name)? else {
            return Ok(None);
        };
        let mut bytes = Vec::with_capacity(usize::try_from(part.size()).unwrap_or(0));
        part.read_to_end(&mut bytes)
            .map_err(|e| unreadable(kind, name, &e))?;
        Ok(Some(bytes))
    }

    /// Part `name` as XML events, or `None` when the package has no such part; within the
    /// bounds of [`Package::part`].
    pub fn xml(&mut self, name: &str) -> Result<Option<XmlPart<'_, R>>, Error> {
        let kind = self.kind;
        let Some(part) = self.part(name)? else {
            return Ok(None);
        };
        Ok(Some(XmlPart {
            reader: Reader::from_reader(BufReader::new(part)),
            buf: Vec::new(),
            depth: 0,
            name: name.to_owned(),
            kind,
        }))
    }
}

/// The error for part `name` of a `kind` package that could not be read.
fn unreadable(kind: &str, name: &str, e: &dyn std::fmt::Display) -> Error {
    Error::Other(format!("cannot read {name} of this {kind}: {e}"))
}

impl<R: Read + Seek> Package<R> {
    /// The text of the first element of each name in `fields` in part `name`, under the key it
    /// is paired with (the first found wins for a key named twice); empty without the part.
    pub fn fields(
        &mut self,
        name: &str,
        fields: &[(&[u8], &'static str)],
    ) -> Result<Vec<(&'static str, String)>, Error> {
        let Some(mut part) = self.xml(name)? else {
            return Ok(Vec::new());
        };
        let mut found: Vec<(&'static str, String)> = Vec::new();
        let mut current: Option<(&'static str, String)> = None;
        loop {
            match part.next()? {
                Event::Eof => break,
                Event::Start(e) => {
                    current = fields
                        .iter()
                        .find(|(field, _)| *field == e.name().as_ref())
                        .map(|(_, key)| (*key, String::new()));
                }
                Event::End(_) => {
                    if let Some((key, value)) = current.take() {
                        let value = value.trim();
                        if !value.is_empty() && !found.iter().any(|(k, _)| *k == key) {
                            found.push((key, value.to_owned()));
                        }
                    }
                }
                event => {
                    if let Some((_, value)) = current.as_mut() {
                        append_text(&event, value)?;
                    }
                }
            }
        }
        Ok(found)
    }
}

/// Refuses part `name` of a `kind` package if it claims more than [`MAX_PART_BYTES`], more than
/// `budget` (what the package has left), or expands more than [`MAX_RATIO`] times.
fn check_part(
    kind: &str,
    name: &str,
    size: u64,
    compressed: u64,
    budget: u64,
) -> Result<(), Error> {
    let refuse = |why: String| {
        Err(Error::Other(format!(
            "not read: {name} of this {kind} {why}"
        )))
    };
    if size > MAX_PART_BYTES {
        return refuse(format!(
            "expands to {size} bytes, more than {MAX_PART_BYTES}"
        ));
    }
    if size > budget {
        return refuse(format!(
            "would take the package past {MAX_TOTAL_BYTES} bytes of text and markup"
        ));
    }
    let ratio = size / compressed.max(1);
    if size > RATIO_FREE_BYTES && ratio > MAX_RATIO {
        return refuse(format!(
            "expands {ratio} times (more than {MAX_RATIO}): an archive bomb"
        ));
    }
    Ok(())
}

/// The events of one XML part, its nesting bounded by [`MAX_DEPTH`].
pub struct XmlPart<'a, R: Read> {
    reader: Reader<BufReader<ZipFile<'a, R>>>,
    buf: Vec<u8>,
    depth: usize,
    name: String,
    kind: &'static str,
}

impl<R: Read> XmlPart<'_, R> {
    /// The next event; [`Event::Eof`] at the end.
    pub fn next(&mut self) -> Result<Event<'_>, Error> {
        self.buf.clear();
        let event = self.reader.read_event_into(&mut self.buf).map_err(|e| {
            Error::Other(format!(
                "malformed {} of this {}: {e}",
                self.name, self.kind
            ))
        })?;
        match &event {
            Event::Start(_) if self.depth == MAX_DEPTH => {
                return Err(Error::Other(format!(
                    "not read: {} of this {} nests elements deeper than {MAX_DEPTH}",
                    self.name, self.kind
                )));
            }
            Event::Start(_) => self.depth += 1,
            Event::End(_) => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
        Ok(event)
    }
}

/// Appends the text `event` holds to `out` (character data, and the entity it names: only XML's
/// own five and numeric references mean anything, so a document's entity definitions are never
/// expanded). Returns whether it held text.
pub fn append_text(event: &Event<'_>, out: &mut String) -> Result<bool, Error> {
    match event {
        Event::Text(t) => {
            let text = t
                .xml_content()
                .map_err(|e| Error::Other(format!("malformed XML text: {e}")))?;
            out.push_str(&text);
            Ok(true)
        }
        Event::CData(t) => {
            out.push_str(&String::from_utf8_lossy(t));
            Ok(true)
        }
        Event::GeneralRef(r) => {
            out.push_str(&quarry_sdk::html::resolve_xml_entity(
                &r.decode().unwrap_or_default(),
            ));
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// The value of attribute `name` of `element`, if it has one that can be read.
pub fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    let value = element
        .try_get_attribute(name)
        .ok()??
        .unescape_value()
        .ok()?;
    Some(value.into_owned())
}

/// The path of a part that a relationship of part `from` targets: relative to `from`'s folder,
/// or from the package's root when it starts with `/`. `..` climbs; none climbs out of the root.
pub fn resolve(from: &str, target: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if !target.starts_with('/') {
        parts.extend(from.split('/'));
        parts.pop(); // `from`'s own name
    }
    for piece in target.split('/') {
        match piece {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(piece),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Write};

    use zip::ZipWriter;
    use zip::write::SimpleFileOptions;

    use super::*;

    fn zip_of(parts: &[(&str, &[u8])], options: SimpleFileOptions) -> Vec<u8> {
        let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
        for (name, bytes) in parts {
            zip.start_file(*name, options).expect("in memory");
            zip.write_all(bytes).expect("in memory");
        }
        zip.finish().expect("in memory").into_inner()
    }

    fn deflated() -> SimpleFileOptions {
        SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated)
    }

    /// All the text of part `name`, or the error that stopped it.
    fn text_of(bytes: Vec<u8>, name: &str) -> Result<String, String> {
        let mut package = Package::open(Cursor::new(bytes), "DOCX").map_err(|e| e.to_string())?;
        let mut part = package
            .xml(name)
            .map_err(|e| e.to_string())?
            .ok_or("no such part")?;
        let mut out = String::new();
        loop {
            let event = part.next().map_err(|e| e.to_string())?;
            if matches!(event, Event::Eof) {
                return Ok(out);
            }
            append_text(&event, &mut out).map_err(|e| e.to_string())?;
        }
    }

    #[test]
    fn relationship_targets_resolve_from_their_parts_folder() {
        assert_eq!(
            resolve("ppt/presentation.xml", "slides/slide1.xml"),
            "ppt/slides/slide1.xml"
        );
        assert_eq!(
            resolve("ppt/slides/slide1.xml", "../notesSlides/notesSlide1.xml"),
            "ppt/notesSlides/notesSlide1.xml"
        );
        assert_eq!(
            resolve("ppt/presentation.xml", "/ppt/slides/slide2.xml"),
            "ppt/slides/slide2.xml"
        );
        assert_eq!(resolve("a.xml", "../../../etc/passwd"), "etc/passwd");
    }

    #[test]
    fn an_archive_bomb_is_refused_before_it_is_read() {
        let bomb = vec![b' '; 16 << 20];
        let bytes = zip_of(&[("word/document.xml", &bomb)], deflated());
        assert!(bytes.len() < 100_000, "{} bytes", bytes.len());
        let err = text_of(bytes, "word/document.xml")
            .err()
            .unwrap_or_default();
        assert!(
            err.contains("archive bomb") && err.contains("word/document.xml"),
            "{err}"
        );
        // An ordinary part that compresses well is read.
        let small = b"<a>hello</a>".repeat(10_000);
        let ok = text_of(zip_of(&[("p.xml", &small)], deflated()), "p.xml");
        assert_eq!(ok.map(|t| t.len()), Ok(50_000));
    }

    #[test]
    fn too_many_entries_are_refused() {
        let names: Vec<String> = (0..=MAX_ENTRIES).map(|i| format!("e{i}")).collect();
        let parts: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
        let bytes = zip_of(&parts, SimpleFileOptions::default());
        let err = text_of(bytes, "e0").err().unwrap_or_default();
        assert!(err.contains("10001 entries"), "{err}");
    }

    #[test]
    fn xml_nested_without_end_is_refused_at_the_bound() {
        let depth = 100_000;
        let deep = format!("{}x{}", "<a>".repeat(depth), "</a>".repeat(depth));
        let bytes = zip_of(&[("p.xml", deep.as_bytes())], deflated());
        let err = text_of(bytes, "p.xml").err().unwrap_or_default();
        assert!(err.contains("deeper than 512"), "{err}");
        let fine = format!("{}x{}", "<a>".repeat(MAX_DEPTH), "</a>".repeat(MAX_DEPTH));
        let bytes = zip_of(&[("p.xml", fine.as_bytes())], deflated());
        assert_eq!(text_of(bytes, "p.xml"), Ok("x".to_owned()));
    }

    #[test]
    fn entity_definitions_are_never_expanded() {
        let laughs = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<a>&lol3; &amp; &#x41;</a>"#;
        let bytes = zip_of(&[("p.xml", laughs.as_bytes())], deflated());
        assert_eq!(
            text_of(bytes, "p.xml").map(|t| t.trim().to_owned()),
            Ok("& A".to_owned())
        );
    }
}
