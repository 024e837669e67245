//! What a document is, as the embedding queue orders its work: people ask for prose by meaning
//! (documents, notes, mail, PDFs, web pages, slides, and the text of scans) far more than for
//! code, data or logs, so prose gets its vectors first. A document's kind comes from its type
//! and extension, which the index keeps as terms, so the queue asks for each kind with a query
//! and no field is added to the index.

use tantivy::Term;
use tantivy::query::{BooleanQuery, Occur, Query, TermSetQuery};
use tantivy::schema::Field;

use crate::document::documents;
use crate::schema::Fields;

/// A document's kind, in the order the embedding queue takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DocKind {
    /// Documents, notes (`.txt`, Markdown, Org...), mail, PDFs, web pages, slides, calendars
    /// and contacts, images (their text is what OCR read: letters, receipts, scans).
    Prose,
    /// Source code and style sheets.
    Code,
    /// Anything not named otherwise: archives and media (mostly a title), plain text of no
    /// known extension (in a source tree: test expectations, generated files), types a plugin
    /// made up.
    Other,
    /// Structured data and configuration: JSON, CSV, XML, YAML, TOML, spreadsheets.
    Data,
    /// Log files.
    Logs,
}

impl DocKind {
    /// Every kind, in the order the embedding queue takes them.
    pub const ALL: [DocKind; 5] = [
        DocKind::Prose,
        DocKind::Code,
        DocKind::Other,
        DocKind::Data,
        DocKind::Logs,
    ];

    /// The kind's name in answers and in the CLI.
    pub fn name(self) -> &'static str {
        match self {
            DocKind::Prose => "prose",
            DocKind::Other => "other",
            DocKind::Code => "code",
            DocKind::Data => "data",
            DocKind::Logs => "logs",
        }
    }

    /// The kind of a document of MIME type `mime` and extension `ext` (lowercase, no dot):
    /// an extension listed below decides; else the type; else [`DocKind::Other`].
    pub fn of(mime: &str, ext: &str) -> DocKind {
        if let Some(kind) = by_extension(ext) {
            return kind;
        }
        TYPES
            .iter()
            .find(|(_, types)| types.contains(&mime))
            .map_or(DocKind::Other, |(kind, _)| *kind)
    }

    /// The index's documents of this kind.
    pub(crate) fn query(self, f: &Fields) -> Box<dyn Query> {
        if self == DocKind::Other {
            let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, documents())];
            for kind in DocKind::ALL.into_iter().filter(|k| *k != DocKind::Other) {
                clauses.push((Occur::MustNot, kind.query(f)));
            }
            return Box::new(BooleanQuery::new(clauses));
        }
        let own_extensions = EXTENSIONS
            .iter()
            .filter(|(_, kind)| *kind == self)
            .map(|(ext, _)| *ext);
        let types = TYPES
            .iter()
            .filter(|(kind, _)| *kind == self)
            .flat_map(|(_, types)| types.iter().copied());
        let by_type: Box<dyn Query> = Box::new(BooleanQuery::new(vec![
            (Occur::Must, terms(f.mime, types)),
            // An extension listed decides over the type.
            (
                Occur::MustNot,
                terms(f.ext, EXTENSIONS.iter().map(|(ext, _)| *ext)),
            ),
        ]));
        Box::new(BooleanQuery::new(vec![
            (Occur::Should, terms(f.ext, own_extensions)),
            (Occur::Should, by_type),
        ]))
    }
}

/// Documents whose `field` is one of `values`.
fn terms<'a>(field: Field, values: impl Iterator<Item = &'a str>) -> Box<dyn Query> {
    Box::new(TermSetQuery::new(
        values.map(|v| Term::from_field_text(field, v)),
    ))
}

fn by_extension(ext: &str) -> Option<DocKind> {
    EXTENSIONS
        .iter()
        .find(|(e, _)| *e == ext)
        .map(|(_, kind)| *kind)
}

/// Extensions that say more than the type their files are given (a log or a configuration
/// file is `text/plain`, like a note). Plain text is prose in a `.txt` file; without an
/// extension or with one no rule names (`.orig`, `.stderr`, `.wat` in a source tree: files a
/// connector found to be text) it counts as other.
const EXTENSIONS: &[(&str, DocKind)] = &[
    ("txt", DocKind::Prose),
    ("text", DocKind::Prose),
    ("log", DocKind::Logs),
    ("out", DocKind::Logs),
    ("ini", DocKind::Data),
    ("cfg", DocKind::Data),
    ("conf", DocKind::Data),
    ("env", DocKind::Data),
    ("lock", DocKind::Data),
    ("ps1", DocKind::Code),
    ("bat", DocKind::Code),
    ("pl", DocKind::Code),
    ("lua", DocKind::Code),
    ("hs", DocKind::Code),
    ("el", DocKind::Code),
    ("vim", DocKind::Code),
    ("zig", DocKind::Code),
    ("dart", DocKind::Code),
];

/// MIME types of each kind (those the bundled connectors give, and their common aliases).
const TYPES: &[(DocKind, &[&str])] = &[
    (
        DocKind::Prose,
        &[
            "text/markdown",
            "text/x-markdown",
            "text/x-rst",
            "text/x-org",
            "text/asciidoc",
            "text/x-tex",
            "text/rtf",
            "application/rtf",
            "text/html",
            "application/xhtml+xml",
            "application/pdf",
            "application/epub+zip",
            "application/msword",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "application/vnd.oasis.opendocument.text",
            "application/vnd.ms-powerpoint",
            "application/vnd.openxmlformats-officedocument.presentationml.presentation",
            "application/vnd.oasis.opendocument.presentation",
            "message/rfc822",
            "text/calendar",
            "text/vcard",
            "text/uri-list",
            "image/png",
            "image/jpeg",
            "image/gif",
            "image/webp",
            "image/heic",
            "image/bmp",
            "image/tiff",
        ],
    ),
    (
        DocKind::Code,
        &[
            "text/x-rust",
            "text/x-python",
            "text/javascript",
            "application/javascript",
            "text/x-typescript",
            "text/x-go",
            "text/x-c",
            "text/x-c++",
            "text/x-java",
            "text/x-kotlin",
            "text/x-swift",
            "text/x-ruby",
            "text/x-php",
            "text/x-csharp",
            "text/x-scala",
            "text/x-shellscript",
            "text/css",
            "text/x-scss",
            "application/sql",
        ],
    ),
    (
        DocKind::Data,
        &[
            "application/json",
            "application/jsonl",
            "application/x-ndjson",
            "text/csv",
            "text/tab-separated-values",
            "application/xml",
            "text/xml",
            "application/toml",
            "application/yaml",
            "image/svg+xml",
            "application/vnd.ms-excel",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "application/vnd.oasis.opendocument.spreadsheet",
        ],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extension_listed_decides_over_the_type() {
        assert_eq!(DocKind::of("text/plain", "log"), DocKind::Logs);
        assert_eq!(DocKind::of("text/plain", "ini"), DocKind::Data);
        assert_eq!(DocKind::of("text/plain", "txt"), DocKind::Prose);
        assert_eq!(DocKind::of("text/plain", "orig"), DocKind::Other);
        assert_eq!(DocKind::of("text/plain", ""), DocKind::Other);
        assert_eq!(DocKind::of("text/x-rust", "rs"), DocKind::Code);
        assert_eq!(DocKind::of("application/pdf", "pdf"), DocKind::Prose);
        assert_eq!(DocKind::of("application/json", "json"), DocKind::Data);
        assert_eq!(DocKind::of("application/zip", "zip"), DocKind::Other);
        assert_eq!(DocKind::of("message/rfc822", ""), DocKind::Prose);
    }

    #[test]
    fn every_kind_is_named_once() {
        let mut names: Vec<&str> = DocKind::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), DocKind::ALL.len());
    }
}
