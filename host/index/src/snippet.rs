//! Snippets: the best fragment of a text for the query, whitespace tidied, with the query's words
//! highlighted as character offsets into the snippet.

use std::ops::Range;

use tantivy::snippet::SnippetGenerator;
use tantivy::tokenizer::TextAnalyzer;

use quarry_core::script::is_cjk;

use crate::schema::words;
use crate::tokenizer::{is_line_space, wraps_without_space};

/// Characters of a snippet, about.
pub(crate) const SNIPPET_CHARS: usize = 240;

/// A snippet and its highlights (character offsets, end exclusive).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snippet {
    /// The text.
    pub text: String,
    /// Highlighted ranges, in characters.
    pub highlights: Vec<(usize, usize)>,
}

/// A snippet and where in the text it was cut from.
pub(crate) struct Located {
    /// The snippet.
    pub snippet: Snippet,
    /// The byte offset in the text of the first query word the snippet highlights; `None` when
    /// no query word is in the text (the snippet is then its start).
    pub found_at: Option<usize>,
}

/// What a snippet highlights: the generator's terms, and a CJK word (the pairs of characters
/// it is looked for by, [`crate::keyword::Compiled::cjk_words`]) only where it is whole.
pub(crate) struct Highlighter<'a> {
    pub generator: &'a SnippetGenerator,
    pub cjk_words: &'a [Vec<String>],
    /// The query analyzer, to read a highlighted range as a query would.
    pub analyzer: TextAnalyzer,
}

/// The best fragment of `text` for the query; the start of the text when no query word is in
/// it. A search passes the first part of a long text (`text_parts`) or a passage.
pub(crate) fn make(highlighter: &mut Highlighter<'_>, text: &str) -> Located {
    let snippet = highlighter.generator.snippet(text);
    let fragment = snippet.fragment();
    let ranges: Vec<Range<usize>> = merged(snippet.highlighted())
        .into_iter()
        .filter(|r| highlighter.is_whole(fragment.get(r.clone()).unwrap_or_default()))
        .collect();
    if !fragment.is_empty() && !ranges.is_empty() {
        return Located {
            snippet: tidy(fragment, &ranges),
            // The fragment is a slice of `text`, copied: its first occurrence is where it lies
            // (an identical earlier copy would have been as good a fragment).
            found_at: text
                .find(fragment)
                .zip(ranges.first())
                .map(|(at, word)| at + word.start),
        };
    }
    let head = &text[..text.floor_char_boundary(SNIPPET_CHARS * 4)];
    let mut start = tidy(head, &[]);
    if start.text.chars().count() > SNIPPET_CHARS {
        let cut: String = start.text.chars().take(SNIPPET_CHARS).collect();
        start.text = match cut.rfind(' ') {
            Some(space) if space > SNIPPET_CHARS / 2 => cut[..space].to_owned(),
            _ => cut,
        };
    }
    Located {
        snippet: start,
        found_at: None,
    }
}

impl Highlighter<'_> {
    /// Whether the highlighted `range` (its text) is worth showing ([`holds_whole_cjk_word`]:
    /// not `索引` alone, for the query `搜索引擎`).
    fn is_whole(&mut self, range: &str) -> bool {
        holds_whole_cjk_word(&mut self.analyzer, self.cjk_words, range)
    }
}

/// Whether a marked `range` of text is worth showing: any text without CJK characters (a word
/// the query has), and CJK text that holds one of `cjk_words` (each as its pairs of characters)
/// whole. `analyzer` is the query analyzer.
pub(crate) fn holds_whole_cjk_word(
    analyzer: &mut TextAnalyzer,
    cjk_words: &[Vec<String>],
    range: &str,
) -> bool {
    if !range.chars().any(is_cjk) {
        return true;
    }
    let tokens = words(analyzer, range);
    cjk_words.iter().any(|word| {
        !word.is_empty()
            && tokens
                .windows(word.len())
                .any(|window| window == word.as_slice())
    })
}

/// Ranges in order, overlapping ones joined: the pairs of characters a CJK word is found by
/// overlap (`ab`, `bc` of `abc`), and are highlighted as the one word. Ranges that only touch
/// (two words next to each other) stay apart.
fn merged(ranges: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut sorted = ranges.to_vec();
    sorted.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<usize>> = Vec::with_capacity(sorted.len());
    for range in sorted {
        match out.last_mut() {
            Some(last) if range.start < last.end => last.end = last.end.max(range.end),
            _ => out.push(range),
        }
    }
    out
}

/// Collapses whitespace runs to one space and trims, mapping byte ranges of `fragment` to
/// character offsets of the result. A line break inside Chinese or Japanese text (a wrapped
/// line) is removed, not made a space, as the index reads it.
fn tidy(fragment: &str, ranges: &[Range<usize>]) -> Snippet {
    let mut text = String::with_capacity(fragment.len());
    // For each byte offset of `fragment` that starts a character: its character offset in `text`.
    let mut char_at = vec![0usize; fragment.len() + 1];
    let mut chars = 0usize;
    // Whitespace seen since the last character kept, and its line breaks.
    let (mut pending_space, mut line_breaks) = (false, 0);
    let mut last: Option<char> = None;
    for (byte, c) in fragment.char_indices() {
        if c.is_whitespace() {
            // A highlight ending here ends before the space that may be inserted.
            pending_space = !text.is_empty();
            if c == '\n' {
                line_breaks += 1;
            } else if !is_line_space(c) {
                // Not a wrapped line (a form feed, a no-break space...): a space stays.
                line_breaks += 2;
            }
            char_at[byte] = chars;
            continue;
        }
        let wrapped = line_breaks == 1 && joins_lines(c) && last.is_some_and(joins_lines);
        if pending_space && !wrapped {
            text.push(' ');
            chars += 1;
        }
        (pending_space, line_breaks) = (false, 0);
        char_at[byte] = chars;
        text.push(c);
        last = Some(c);
        chars += 1;
    }
    char_at[fragment.len()] = chars;
    let highlights = ranges
        .iter()
        .filter(|r| r.start < r.end && r.end <= fragment.len())
        .map(|r| (char_at[r.start], char_at[r.end].min(chars)))
        .filter(|(s, e)| s < e)
        .collect();
    Snippet { text, highlights }
}

/// Whether a wrapped line between two such characters joins without a space in a snippet:
/// Chinese and Japanese characters and punctuation (`。`, `，`, `「`...).
fn joins_lines(c: char) -> bool {
    wraps_without_space(c)
        || matches!(c, '\u{3001}'..='\u{303F}' | '\u{FF01}'..='\u{FF0F}'
            | '\u{FF1A}'..='\u{FF1F}' | '\u{FF5B}'..='\u{FF65}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidies_whitespace_and_maps_highlights_to_characters() {
        let fragment = "  Café\n\n  crème   brûlée ";
        let cafe = 2..7; // "Café" is 5 bytes
        let brulee = fragment.find("brûlée").expect("present");
        let s = tidy(fragment, &[cafe, brulee..brulee + "brûlée".len()]);
        assert_eq!(s.text, "Café crème brûlée");
        assert_eq!(s.highlights, vec![(0, 4), (11, 17)]);
        let chars: Vec<char> = s.text.chars().collect();
        assert_eq!(chars[11..17].iter().collect::<String>(), "brûlée");
    }

    #[test]
    fn a_wrapped_chinese_line_is_joined_without_a_space() {
        let fragment = "中文分词问\n   题。\n下周 Next\nline, 한국\n어 中\u{a0}\n文";
        let at = fragment.find("分").expect("present");
        let end = fragment.find('题').expect("present") + '题'.len_utf8();
        let word = at..end;
        let s = tidy(fragment, std::slice::from_ref(&word));
        assert_eq!(s.text, "中文分词问题。下周 Next line, 한국 어 中 文");
        assert_eq!(s.highlights, vec![(2, 6)]);
    }

    #[test]
    fn overlapping_highlights_are_joined() {
        assert_eq!(merged(&[6..12, 0..3, 2..9, 20..22]), vec![0..12, 20..22]);
        // Touching ranges are two words.
        assert_eq!(merged(&[0..3, 3..6]), vec![0..3, 3..6]);
    }
}
