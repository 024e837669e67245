//! Writes minimal Word documents (Office Open XML): the parts Word itself needs to open them.

use std::io::{Cursor, Write};

use zip::ZipWriter;
use zip::write::SimpleFileOptions;

/// A `.docx` with one paragraph per entry of `paragraphs` (a tab inside a paragraph becomes
/// `<w:tab/>`), a footnote, and `title` in its core properties.
pub fn docx(title: &str, paragraphs: &[&str], footnote: &str) -> Vec<u8> {
    docx_embedding(title, paragraphs, footnote, &[])
}

/// [`docx`] with files embedded in it (`word/embeddings/...`), as Word keeps objects pasted
/// into a document.
pub fn docx_embedding(
    title: &str,
    paragraphs: &[&str],
    footnote: &str,
    embedded: &[(&str, &[u8])],
) -> Vec<u8> {
    let body: String = paragraphs
        .iter()
        .map(|p| {
            let runs: Vec<String> = p
                .split('\t')
                .map(|part| format!("<w:t xml:space=\"preserve\">{}</w:t>", xml(part)))
                .collect();
            format!("<w:p><w:r>{}</w:r></w:p>", runs.join("<w:tab/>"))
        })
        .collect();
    let parts = [
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/><Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/></Types>"#.to_owned(),
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/></Relationships>"#.to_owned(),
        ),
        (
            "word/document.xml",
            format!(
                r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>"#
            ),
        ),
        (
            "word/footnotes.xml",
            format!(
                r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:footnotes xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:footnote w:id="1"><w:p><w:r><w:t>{}</w:t></w:r></w:p></w:footnote></w:footnotes>"#,
                xml(footnote)
            ),
        ),
        (
            "docProps/core.xml",
            format!(
                r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{}</dc:title></cp:coreProperties>"#,
                xml(title)
            ),
        ),
    ];
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, content) in parts {
        zip.start_file(name, SimpleFileOptions::default())
            .expect("writing to memory");
        zip.write_all(content.as_bytes())
            .expect("writing to memory");
    }
    for (name, bytes) in embedded {
        zip.start_file(
            format!("word/embeddings/{name}"),
            SimpleFileOptions::default(),
        )
        .expect("writing to memory");
        zip.write_all(bytes).expect("writing to memory");
    }
    zip.finish().expect("writing to memory").into_inner()
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A `.docx` whose `word/document.xml` is `document` as given (compressed with deflate, as Word
/// writes it), for documents no well-behaved writer makes.
pub fn docx_with_document(document: &[u8]) -> Vec<u8> {
    package_with_parts(&[("word/document.xml", document)])
}

/// A ZIP package of `parts` (name, bytes; deflated): the parts of a hostile Word, PowerPoint,
/// Excel or OpenDocument file.
pub fn package_with_parts(parts: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let deflated =
        SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in parts {
        zip.start_file(*name, deflated).expect("writing to memory");
        zip.write_all(bytes).expect("writing to memory");
    }
    zip.finish().expect("writing to memory").into_inner()
}
