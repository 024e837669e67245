//! Convenience constructors for the WIT records.

use crate::{Batch, Content, Coverage, DocMeta};

impl Batch {
    /// The final batch of a listing.
    pub fn last(upserts: Vec<DocMeta>, coverage: Coverage) -> Self {
        Batch {
            upserts,
            deletes: Vec::new(),
            checkpoint: String::new(),
            more: false,
            coverage,
        }
    }
}

impl Content {
    /// Text without pages or metadata.
    pub fn text(text: impl Into<String>) -> Self {
        Content {
            text: text.into(),
            page_starts: Vec::new(),
            metadata: Vec::new(),
        }
    }

    /// Text made of pages, joined with blank lines; `page_starts` is filled in.
    pub fn pages<S: AsRef<str>>(pages: impl IntoIterator<Item = S>) -> Self {
        let mut text = String::new();
        let mut page_starts = Vec::new();
        for page in pages {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            page_starts.push(u32::try_from(text.len()).unwrap_or(u32::MAX));
            text.push_str(page.as_ref());
        }
        Content {
            text,
            page_starts,
            metadata: Vec::new(),
        }
    }

    /// Adds a metadata entry.
    pub fn with_meta(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.push((key.into(), value.into()));
        self
    }
}
