//! What a file is, from its extension (and, when that says nothing, its first bytes).

use std::io;
use std::path::Path;

/// How the text of a file is extracted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Plain text, Markdown, source code, configuration: decoded as is.
    Text,
    /// HTML: tags removed, entities decoded.
    Html,
    /// JSON: keys and values as lines.
    Json,
    /// Comma- or tab-separated values: cells separated by tabs.
    Delimited(u8),
    /// PDF: text per page.
    Pdf,
    /// Word document (Office Open XML).
    Docx,
    /// PowerPoint presentation (Office Open XML): a page per slide.
    Pptx,
    /// OpenDocument text (LibreOffice Writer).
    Odt,
    /// OpenDocument presentation (LibreOffice Impress): a page per slide.
    Odp,
    /// Excel workbook (Office Open XML): a page per sheet.
    Xlsx,
    /// OpenDocument spreadsheet (LibreOffice Calc): a page per sheet.
    Ods,
    /// E-book: a page per chapter.
    Epub,
    /// A mail message (RFC 5322, `.eml`): headers, body, attachments' text.
    Eml,
    /// Rich Text Format.
    Rtf,
    /// No text to extract (images, archives, media, executables).
    Binary,
}

impl Kind {
    /// Whether files of this kind are ZIP packages, read part by part through the file.
    pub fn is_package(self) -> bool {
        matches!(
            self,
            Kind::Docx | Kind::Pptx | Kind::Odt | Kind::Odp | Kind::Xlsx | Kind::Ods | Kind::Epub
        )
    }
}

/// Extensions and their kind and MIME type. Extensions not listed are sniffed.
const TABLE: &[(&str, Kind, &str)] = &[
    ("txt", Kind::Text, "text/plain"),
    ("text", Kind::Text, "text/plain"),
    ("log", Kind::Text, "text/plain"),
    ("md", Kind::Text, "text/markdown"),
    ("markdown", Kind::Text, "text/markdown"),
    ("rst", Kind::Text, "text/x-rst"),
    ("org", Kind::Text, "text/x-org"),
    ("adoc", Kind::Text, "text/asciidoc"),
    ("tex", Kind::Text, "text/x-tex"),
    ("rtf", Kind::Rtf, "application/rtf"),
    ("rs", Kind::Text, "text/x-rust"),
    ("py", Kind::Text, "text/x-python"),
    ("js", Kind::Text, "text/javascript"),
    ("mjs", Kind::Text, "text/javascript"),
    ("ts", Kind::Text, "text/x-typescript"),
    ("tsx", Kind::Text, "text/x-typescript"),
    ("jsx", Kind::Text, "text/javascript"),
    ("go", Kind::Text, "text/x-go"),
    ("c", Kind::Text, "text/x-c"),
    ("h", Kind::Text, "text/x-c"),
    ("cc", Kind::Text, "text/x-c++"),
    ("cpp", Kind::Text, "text/x-c++"),
    ("hpp", Kind::Text, "text/x-c++"),
    ("java", Kind::Text, "text/x-java"),
    ("kt", Kind::Text, "text/x-kotlin"),
    ("swift", Kind::Text, "text/x-swift"),
    ("rb", Kind::Text, "text/x-ruby"),
    ("php", Kind::Text, "text/x-php"),
    ("cs", Kind::Text, "text/x-csharp"),
    ("scala", Kind::Text, "text/x-scala"),
    ("sh", Kind::Text, "text/x-shellscript"),
    ("bash", Kind::Text, "text/x-shellscript"),
    ("zsh", Kind::Text, "text/x-shellscript"),
    ("ps1", Kind::Text, "text/plain"),
    ("sql", Kind::Text, "application/sql"),
    ("css", Kind::Text, "text/css"),
    ("scss", Kind::Text, "text/x-scss"),
    ("toml", Kind::Text, "application/toml"),
    ("yaml", Kind::Text, "application/yaml"),
    ("yml", Kind::Text, "application/yaml"),
    ("ini", Kind::Text, "text/plain"),
    ("cfg", Kind::Text, "text/plain"),
    ("conf", Kind::Text, "text/plain"),
    ("env", Kind::Text, "text/plain"),
    ("xml", Kind::Text, "application/xml"),
    ("svg", Kind::Text, "image/svg+xml"),
    ("jsonl", Kind::Text, "application/jsonl"),
    ("ndjson", Kind::Text, "application/x-ndjson"),
    ("html", Kind::Html, "text/html"),
    ("htm", Kind::Html, "text/html"),
    ("xhtml", Kind::Html, "application/xhtml+xml"),
    ("json", Kind::Json, "application/json"),
    ("csv", Kind::Delimited(b','), "text/csv"),
    ("tsv", Kind::Delimited(b'\t'), "text/tab-separated-values"),
    ("pdf", Kind::Pdf, "application/pdf"),
    (
        "docx",
        Kind::Docx,
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    (
        "pptx",
        Kind::Pptx,
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ),
    ("odt", Kind::Odt, "application/vnd.oasis.opendocument.text"),
    (
        "odp",
        Kind::Odp,
        "application/vnd.oasis.opendocument.presentation",
    ),
    (
        "xlsx",
        Kind::Xlsx,
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    (
        "ods",
        Kind::Ods,
        "application/vnd.oasis.opendocument.spreadsheet",
    ),
    ("png", Kind::Binary, "image/png"),
    ("jpg", Kind::Binary, "image/jpeg"),
    ("jpeg", Kind::Binary, "image/jpeg"),
    ("gif", Kind::Binary, "image/gif"),
    ("webp", Kind::Binary, "image/webp"),
    ("heic", Kind::Binary, "image/heic"),
    ("bmp", Kind::Binary, "image/bmp"),
    ("ico", Kind::Binary, "image/vnd.microsoft.icon"),
    ("tif", Kind::Binary, "image/tiff"),
    ("tiff", Kind::Binary, "image/tiff"),
    ("mp3", Kind::Binary, "audio/mpeg"),
    ("wav", Kind::Binary, "audio/wav"),
    ("flac", Kind::Binary, "audio/flac"),
    ("ogg", Kind::Binary, "audio/ogg"),
    ("m4a", Kind::Binary, "audio/mp4"),
    ("mp4", Kind::Binary, "video/mp4"),
    ("mov", Kind::Binary, "video/quicktime"),
    ("mkv", Kind::Binary, "video/x-matroska"),
    ("webm", Kind::Binary, "video/webm"),
    ("avi", Kind::Binary, "video/x-msvideo"),
    ("zip", Kind::Binary, "application/zip"),
    ("gz", Kind::Binary, "application/gzip"),
    ("tgz", Kind::Binary, "application/gzip"),
    ("bz2", Kind::Binary, "application/x-bzip2"),
    ("xz", Kind::Binary, "application/x-xz"),
    ("zst", Kind::Binary, "application/zstd"),
    ("7z", Kind::Binary, "application/x-7z-compressed"),
    ("rar", Kind::Binary, "application/vnd.rar"),
    ("tar", Kind::Binary, "application/x-tar"),
    ("iso", Kind::Binary, "application/x-iso9660-image"),
    ("dmg", Kind::Binary, "application/x-apple-diskimage"),
    (
        "exe",
        Kind::Binary,
        "application/vnd.microsoft.portable-executable",
    ),
    (
        "dll",
        Kind::Binary,
        "application/vnd.microsoft.portable-executable",
    ),
    ("so", Kind::Binary, "application/octet-stream"),
    ("o", Kind::Binary, "application/octet-stream"),
    ("a", Kind::Binary, "application/octet-stream"),
    ("bin", Kind::Binary, "application/octet-stream"),
    ("dat", Kind::Binary, "application/octet-stream"),
    ("class", Kind::Binary, "application/java-vm"),
    ("jar", Kind::Binary, "application/java-archive"),
    ("wasm", Kind::Binary, "application/wasm"),
    ("pyc", Kind::Binary, "application/octet-stream"),
    ("sqlite", Kind::Binary, "application/vnd.sqlite3"),
    ("db", Kind::Binary, "application/octet-stream"),
    ("woff", Kind::Binary, "font/woff"),
    ("woff2", Kind::Binary, "font/woff2"),
    ("ttf", Kind::Binary, "font/ttf"),
    ("otf", Kind::Binary, "font/otf"),
    ("doc", Kind::Binary, "application/msword"),
    ("xls", Kind::Binary, "application/vnd.ms-excel"),
    ("ppt", Kind::Binary, "application/vnd.ms-powerpoint"),
    ("epub", Kind::Epub, "application/epub+zip"),
    ("eml", Kind::Eml, "message/rfc822"),
];

/// Bytes looked at to tell text from binary.
const SNIFF_BYTES: usize = 4096;

/// The kind and MIME type of the file `name`: from its extension, or, when that is unknown or
/// missing, from its first bytes: `head(n)` reads the first `n` (4 KiB), or all of a smaller file.
pub fn classify(
    name: &str,
    head: impl FnOnce(u64) -> io::Result<Vec<u8>>,
) -> io::Result<(Kind, &'static str)> {
    if let Some(known) = by_name(name) {
        return Ok(known);
    }
    Ok(by_content(&head(SNIFF_BYTES as u64)?))
}

/// The kind and MIME type of a file of unknown extension, from `head`, its first bytes (only the
/// first 4 KiB are looked at).
pub fn by_content(head: &[u8]) -> (Kind, &'static str) {
    if looks_like_text(&head[..head.len().min(SNIFF_BYTES)]) {
        (Kind::Text, "text/plain")
    } else {
        (Kind::Binary, "application/octet-stream")
    }
}

/// The kind and MIME type of the file `name` by its extension alone, if that is a known one.
pub fn by_name(name: &str) -> Option<(Kind, &'static str)> {
    by_extension(Path::new(name))
}

fn by_extension(path: &Path) -> Option<(Kind, &'static str)> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    TABLE
        .iter()
        .find(|(e, _, _)| *e == ext)
        .map(|(_, kind, mime)| (*kind, *mime))
}

/// Text has no NUL bytes and few control characters; a UTF-16 byte-order mark also counts.
pub fn looks_like_text(head: &[u8]) -> bool {
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        return true;
    }
    if head.contains(&0) {
        return false;
    }
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0C))
        .count();
    control * 100 <= head.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_are_case_insensitive() {
        assert_eq!(
            by_extension(Path::new("A/Report.PDF")),
            Some((Kind::Pdf, "application/pdf"))
        );
        assert_eq!(by_extension(Path::new("Makefile")), None);
    }

    #[test]
    fn sniffing_tells_text_from_binary() {
        assert!(looks_like_text(b"hello\nworld\t!"));
        assert!(looks_like_text(&[0xFF, 0xFE, b'h', 0]));
        assert!(!looks_like_text(b"PK\x03\x04\x00\x00"));
        assert!(!looks_like_text(&[1, 2, 3, 4, 5, 6, 7, 8]));
    }
}
