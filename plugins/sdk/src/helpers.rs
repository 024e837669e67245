//! Convenience constructors for the WIT records.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::{Batch, Content, Coverage, DocMeta};

/// A stable, valid document id for the source item named by `key` (a path, a message id, a
/// URL): `prefix` and 128 bits of the key's SHA-256, URL-safe (24 characters with a two-letter
/// prefix). The same key always gives the same id.
pub fn stable_id(prefix: &str, key: &str) -> String {
    let digest = Sha256::digest(key.as_bytes());
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(&digest[..16]))
}

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

    /// Text made of pages, joined with blank lines; `page_starts` is filled in. Empty pages keep
    /// their place (a blank slide is still a page), so the starts always increase.
    pub fn pages<S: AsRef<str>>(pages: impl IntoIterator<Item = S>) -> Self {
        let mut text = String::new();
        let mut page_starts = Vec::new();
        for page in pages {
            if !page_starts.is_empty() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_pages_keep_their_place_and_starts_increase() {
        let content = Content::pages(["", "two", ""]);
        assert_eq!(content.text, "\n\ntwo\n\n");
        assert_eq!(content.page_starts, [0, 2, 7]);
        let one = Content::pages(["only"]);
        assert_eq!(
            (one.text.as_str(), one.page_starts.as_slice()),
            ("only", &[0u32][..])
        );
    }
}
