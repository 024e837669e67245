//! A document's stored text, in parts of at most [`PART_BYTES`]: the first part lives in the
//! document itself, the others in part documents beside it (not searchable, found by key). A
//! search hit loads its document (metadata and the first part) and at most the two parts its
//! best passage spans, whatever the length of the text; reading a whole document loads every
//! part. Keyword snippets come from the first part, as they always came from the first
//! megabyte.

use std::ops::Range;

use tantivy::collector::TopDocs;
use tantivy::query::TermQuery;
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{Searcher, TantivyDocument, Term};

use crate::IndexError;
use crate::schema::Fields;

/// The longest part of a stored text, in bytes.
pub(crate) const PART_BYTES: usize = 1 << 20;

/// Where the parts after the first start: byte offsets on character boundaries, each part at
/// most [`PART_BYTES`] long.
pub(crate) fn split(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0;
    while text.len() - at > PART_BYTES {
        let next = text.floor_char_boundary(at + PART_BYTES);
        starts.push(next);
        at = next;
    }
    starts
}

/// The key of part `n` (1 is the second part) of the document keyed `key`.
pub(crate) fn part_key(key: &str, n: usize) -> String {
    format!("{key}#{n}")
}

/// A stored document's text as far as it is loaded: its first part, and where the others start.
pub(crate) struct StoredText<'a> {
    /// The document's index key.
    pub key: &'a str,
    /// The first part.
    pub head: &'a str,
    /// Byte offsets where the other parts start.
    pub starts: &'a [u32],
}

impl StoredText<'_> {
    /// The whole text: every part loaded.
    pub(crate) fn whole(&self, searcher: &Searcher, f: &Fields) -> Result<String, IndexError> {
        let mut text = self.head.to_owned();
        for n in 1..=self.starts.len() {
            text.push_str(&load_part(searcher, f, self.key, n)?);
        }
        Ok(text)
    }

    /// The text of `range` (byte offsets), loading only the parts it lies in; `None` when the
    /// range is not one of this text.
    pub(crate) fn range(
        &self,
        searcher: &Searcher,
        f: &Fields,
        range: Range<usize>,
    ) -> Result<Option<String>, IndexError> {
        if let Some(text) = self.head.get(range.clone()) {
            return Ok(Some(text.to_owned()));
        }
        // Part n covers [start(n), start(n + 1)); part 0 starts at 0.
        let start_of = |n: usize| {
            if n == 0 {
                0
            } else {
                self.starts.get(n - 1).map_or(usize::MAX, |&s| s as usize)
            }
        };
        let first = (0..=self.starts.len())
            .rev()
            .find(|&n| start_of(n) <= range.start)
            .unwrap_or(0);
        let mut text = String::new();
        let mut n = first;
        while n <= self.starts.len() && start_of(n) < range.end {
            if n == 0 {
                text.push_str(self.head);
            } else {
                text.push_str(&load_part(searcher, f, self.key, n)?);
            }
            n += 1;
        }
        let offset = start_of(first);
        Ok(text
            .get(range.start - offset..range.end.saturating_sub(offset))
            .map(str::to_owned))
    }
}

/// Part `n` of the document keyed `key`.
fn load_part(searcher: &Searcher, f: &Fields, key: &str, n: usize) -> Result<String, IndexError> {
    let query = TermQuery::new(
        Term::from_field_text(f.part_key, &part_key(key, n)),
        IndexRecordOption::Basic,
    );
    let found = searcher.search(&query, &TopDocs::with_limit(1).order_by_score())?;
    let Some((_, address)) = found.first() else {
        return Err(IndexError::Damaged(format!(
            "part {n} of the text of {key} is missing"
        )));
    };
    let doc: TantivyDocument = searcher.doc(*address)?;
    Ok(doc
        .get_first(f.text)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_at_most_a_part_long_and_split_on_characters() {
        assert!(split("short").is_empty());
        let text = "é".repeat(PART_BYTES); // two bytes each
        let starts = split(&text);
        assert_eq!(starts.len(), 1);
        assert!(starts.iter().all(|&s| text.is_char_boundary(s)));
        let mut previous = 0;
        for &start in starts.iter().chain(std::iter::once(&text.len())) {
            assert!(start - previous <= PART_BYTES);
            previous = start;
        }
        let odd = format!("a{}", "é".repeat(PART_BYTES / 2));
        let starts = split(&odd);
        assert_eq!(
            starts,
            [PART_BYTES - 1],
            "the boundary moves back to a character"
        );
    }
}
