//! What connectors produce, independent of the WIT version they were built against.

use crate::DocId;

/// What describes a document to people, wherever it is kept: the listing, the index, the
/// catalog all carry these.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DocMeta {
    /// Human-readable title.
    pub title: String,
    /// Path shown to users, relative to the source.
    pub path: Option<String>,
    /// Link to the item in its own application.
    pub url: Option<String>,
    /// MIME type of the original.
    pub mime_type: String,
    /// Size of the original in bytes.
    pub size_bytes: u64,
    /// Last modification, milliseconds since the Unix epoch.
    pub update_time_ms: i64,
}

impl DocMeta {
    /// The lowercase extension of its file name (from the path, else the title), without the
    /// dot; empty when there is none.
    pub fn extension(&self) -> String {
        extension_of(self.path.as_deref().unwrap_or(&self.title))
    }
}

/// The extension of a file name: after its last dot, 1 to 16 letters or digits, lowercased.
pub fn extension_of(name: &str) -> String {
    let file = name.rsplit(['/', '\\']).next().unwrap_or(name);
    match file.rsplit_once('.') {
        Some((stem, ext))
            if !stem.is_empty()
                && (1..=16).contains(&ext.len())
                && ext.chars().all(char::is_alphanumeric) =>
        {
            ext.to_lowercase()
        }
        _ => String::new(),
    }
}

/// A document as a connector lists it (WIT `doc-meta`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceDoc {
    /// Stable id within the connector.
    pub id: DocId,
    /// Connector-private address, passed back on fetches.
    pub locator: String,
    /// What describes it.
    pub meta: DocMeta,
    /// Changes whenever the content changes.
    pub version: String,
    /// False when there is no text to fetch (metadata only).
    pub has_text: bool,
}

/// How much of the source a listing covers (WIT `coverage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// Every document appears; what does not appear is gone.
    Full,
    /// Only changes since the checkpoint.
    Changes,
}

/// One page of a listing (WIT `batch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceBatch {
    /// New or possibly changed documents.
    pub upserts: Vec<SourceDoc>,
    /// Documents that are gone.
    pub deletes: Vec<DocId>,
    /// Opaque position after this batch.
    pub checkpoint: String,
    /// More batches of this listing follow.
    pub more: bool,
    /// What the listing covers.
    pub coverage: Coverage,
}

/// The extracted text of a document (WIT `content`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExtractedText {
    /// The text, UTF-8.
    pub text: String,
    /// Byte offsets where pages start; empty when the format has no pages.
    pub page_starts: Vec<u32>,
    /// Extra facts as key-value strings.
    pub metadata: Vec<(String, String)>,
}

impl ExtractedText {
    /// The text of each page (the whole text as one page when there are none).
    pub fn pages(&self) -> Vec<&str> {
        split_pages(&self.text, &self.page_starts)
    }
}

/// Splits `text` at `page_starts` (byte offsets, the first 0); the whole text is one page when
/// there are none. Offsets out of range or off character boundaries give empty pages.
pub fn split_pages<'a>(text: &'a str, page_starts: &[u32]) -> Vec<&'a str> {
    if page_starts.is_empty() {
        return vec![text];
    }
    let mut ends: Vec<usize> = page_starts.iter().skip(1).map(|&s| s as usize).collect();
    ends.push(text.len());
    page_starts
        .iter()
        .zip(ends)
        .map(|(&start, end)| text.get(start as usize..end).unwrap_or_default())
        .collect()
}

/// The page (1-based) holding byte `offset` of a text whose pages start at `page_starts` (byte
/// offsets, the first 0); `None` when the text has no pages.
pub fn page_at(page_starts: &[u32], offset: usize) -> Option<u64> {
    if page_starts.is_empty() {
        return None;
    }
    let page = page_starts.partition_point(|&start| start as usize <= offset);
    Some(page.max(1) as u64)
}

/// A part of an original file (WIT `file-chunk`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChunk {
    /// Bytes read.
    pub data: Vec<u8>,
    /// Size of the whole file at the time of the read.
    pub total_size: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offset_lies_on_the_page_whose_start_is_the_last_at_or_before_it() {
        let starts = [0, 10, 25];
        assert_eq!(page_at(&starts, 0), Some(1));
        assert_eq!(page_at(&starts, 9), Some(1));
        assert_eq!(page_at(&starts, 10), Some(2));
        assert_eq!(page_at(&starts, 24), Some(2));
        assert_eq!(page_at(&starts, 25), Some(3));
        assert_eq!(page_at(&starts, 10_000), Some(3));
        assert_eq!(page_at(&[], 5), None);
    }

    #[test]
    fn extensions_come_from_the_file_name() {
        assert_eq!(extension_of("reports/2026/Q3 Report.PDF"), "pdf");
        assert_eq!(extension_of("notes.tar.gz"), "gz");
        assert_eq!(extension_of("Makefile"), "");
        assert_eq!(extension_of(".bashrc"), "");
        assert_eq!(extension_of("dir.d/file"), "");
        assert_eq!(extension_of("weird.ext with space"), "");
    }

    #[test]
    fn pages_split_at_page_starts() {
        let t = ExtractedText {
            text: "one\n\ntwo\n\nthree".into(),
            page_starts: vec![0, 5, 10],
            metadata: vec![],
        };
        assert_eq!(t.pages(), ["one\n\n", "two\n\n", "three"]);
        let plain = ExtractedText {
            text: "all".into(),
            ..Default::default()
        };
        assert_eq!(plain.pages(), ["all"]);
    }
}
