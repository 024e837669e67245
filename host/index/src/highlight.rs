//! The query's words in a whole text, for a person reading a document page by page: every place
//! a word or phrase of the query matches as the index reads words (case, accents and full-width
//! forms folded; Chinese, Japanese and Korean words by their pairs of characters), as character
//! offsets. Excluded words are not highlighted. Snippets highlight the same words
//! (`snippet.rs`); this marks all of them, not the best fragment's.

use std::collections::HashSet;

use tantivy::tokenizer::TextAnalyzer;

use crate::keyword::cjk_sequences;
use crate::query_syntax::{Part, parse};
use crate::schema::{analyzer, positioned_words, query_analyzer};
use crate::snippet::holds_whole_cjk_word;

/// The most ranges given for one text: a page of one repeated word stays cheap to show.
const MAX_RANGES: usize = 10_000;

/// The query's words, ready to find in texts.
pub struct QueryWords {
    words: HashSet<String>,
    /// Its Chinese, Japanese and Korean words, each as its pairs of characters: marked only
    /// where whole (`索引` alone is not `搜索引擎`).
    cjk_words: Vec<Vec<String>>,
    analyzer: TextAnalyzer,
}

impl QueryWords {
    /// The words of `query` (its words and phrases; not what it excludes).
    pub fn new(query: &str) -> QueryWords {
        let mut analyzer = query_analyzer();
        let units: Vec<Vec<(usize, String)>> = parse(query)
            .into_iter()
            .filter_map(|part| match part {
                Part::Word(text) | Part::Phrase(text) => Some(text),
                Part::Exclude(_) => None,
            })
            .map(|text| positioned_words(&mut analyzer, &text))
            .collect();
        QueryWords {
            words: units.iter().flatten().map(|(_, w)| w.clone()).collect(),
            cjk_words: cjk_sequences(units.iter()),
            analyzer,
        }
    }

    /// Where the query's words are in `text`, as `(start, end)` character offsets in order
    /// (overlapping ones joined), at most [`MAX_RANGES`].
    pub fn ranges(&mut self, text: &str) -> Vec<(usize, usize)> {
        if self.words.is_empty() {
            return Vec::new();
        }
        let mut analyzer = analyzer();
        let mut stream = analyzer.token_stream(text);
        let mut bytes: Vec<(usize, usize)> = Vec::new();
        while let Some(token) = stream.next() {
            if !self.words.contains(&token.text) {
                continue;
            }
            let (start, end) = (token.offset_from, token.offset_to);
            let full = bytes.len() == MAX_RANGES;
            match bytes.last_mut() {
                Some(last) if start < last.1 => last.1 = last.1.max(end),
                _ if full => break,
                _ => bytes.push((start, end)),
            }
        }
        bytes.retain(|&(start, end)| {
            holds_whole_cjk_word(
                &mut self.analyzer,
                &self.cjk_words,
                text.get(start..end).unwrap_or_default(),
            )
        });
        to_chars(text, &bytes)
    }
}

/// Byte ranges of `text` (in order) as character ranges.
fn to_chars(text: &str, bytes: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(bytes.len());
    let (mut byte, mut chars) = (0usize, 0usize);
    let mut advance = |to: usize| {
        let to = text.floor_char_boundary(to.min(text.len()));
        if to > byte {
            chars += text[byte..to].chars().count();
            byte = to;
        }
        chars
    };
    for &(start, end) in bytes {
        let s = advance(start);
        let e = advance(end);
        if e > s {
            out.push((s, e));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(query: &str, text: &str) -> Vec<String> {
        QueryWords::new(query)
            .ranges(text)
            .into_iter()
            .map(|(s, e)| text.chars().skip(s).take(e - s).collect())
            .collect()
    }

    #[test]
    fn marks_every_occurrence_folding_case_and_accents() {
        assert_eq!(
            marked("cafe report", "Le Café, the REPORT and a café report."),
            ["Café", "REPORT", "café", "report"]
        );
    }

    #[test]
    fn phrases_mark_their_words_and_exclusions_nothing() {
        assert_eq!(
            marked(
                "\"quarterly report\" -draft",
                "A draft of the quarterly report."
            ),
            ["quarterly", "report"]
        );
    }

    #[test]
    fn offsets_are_characters_after_multibyte_text() {
        let text = "Ünïcödé first, then budget";
        let ranges = QueryWords::new("budget").ranges(text);
        assert_eq!(ranges, [(20, 26)]);
    }

    #[test]
    fn a_cjk_word_is_marked_whole_by_its_pairs() {
        assert_eq!(marked("搜索引擎", "一个搜索引擎的索引"), ["搜索引擎"]);
    }

    #[test]
    fn a_page_of_one_repeated_word_gets_at_most_the_bound_of_marks() {
        let text = "word ".repeat(MAX_RANGES + 500);
        let ranges = QueryWords::new("word").ranges(&text);
        assert_eq!(ranges.len(), MAX_RANGES);
        assert_eq!(
            ranges.last(),
            Some(&(5 * (MAX_RANGES - 1), 5 * MAX_RANGES - 1))
        );
    }

    #[test]
    fn an_empty_query_marks_nothing() {
        assert!(QueryWords::new("  ").ranges("anything").is_empty());
    }
}
