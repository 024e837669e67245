//! Cutting a document's text into passages for embedding: about [`TARGET_WORDS`] words each
//! (200-300 tokens of MiniLM's vocabulary), never across a page, whole paragraphs where they fit,
//! long paragraphs in overlapping windows. A Chinese, Japanese or Korean character counts as a
//! word (those scripts put no spaces between words, and a model's vocabulary holds about one
//! token per character), so a paragraph of them is cut like any other, not truncated by the model.

use std::ops::Range;

use quarry_core::script::is_cjk;

/// Words a passage aims at.
pub const TARGET_WORDS: usize = 180;
/// Words shared by consecutive windows of one long paragraph; also the longest paragraph that is
/// repeated at the start of the next passage.
const OVERLAP_WORDS: usize = 40;
/// Passages embedded per document at most (about 46,000 words); the rest of a very long
/// document is still found by keyword.
pub const MAX_PASSAGES: usize = 256;
/// Bytes of a text looked at, at most: far more than [`MAX_PASSAGES`] passages of ordinary
/// text need, so a huge document costs no more than that.
const MAX_SCAN_BYTES: usize = 4 << 20;

/// A passage: a byte range of the document's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    /// Where it starts, in bytes.
    pub start: usize,
    /// Where it ends (exclusive), in bytes.
    pub end: usize,
}

/// The passages of `text`, whose pages start at the byte offsets `page_starts` (empty when it
/// has no pages). Empty for a text without words.
pub fn chunk(text: &str, page_starts: &[u32]) -> Vec<Passage> {
    let end = text.floor_char_boundary(MAX_SCAN_BYTES);
    let mut bounds: Vec<usize> = page_starts
        .iter()
        .filter_map(|&p| usize::try_from(p).ok())
        .filter(|&p| p > 0 && p < end && text.is_char_boundary(p))
        .collect();
    bounds.sort_unstable();
    bounds.dedup();
    bounds.insert(0, 0);
    bounds.push(end);
    let mut out = Vec::new();
    for page in bounds.windows(2) {
        chunk_page(text, page[0]..page[1], &mut out);
        if out.len() >= MAX_PASSAGES {
            out.truncate(MAX_PASSAGES);
            break;
        }
    }
    out
}

/// A paragraph: its words' byte ranges.
struct Paragraph {
    words: Vec<Range<usize>>,
}

fn chunk_page(text: &str, page: Range<usize>, out: &mut Vec<Passage>) {
    let paragraphs = paragraphs(text, page);
    let mut current: Vec<&Paragraph> = Vec::new();
    let mut words = 0usize;
    // Paragraphs of `current` that no passage holds yet (the others were carried over).
    let mut fresh = 0usize;
    for p in &paragraphs {
        if p.words.len() > TARGET_WORDS {
            if fresh > 0 {
                push_passage(&current, out);
            }
            (current, words, fresh) = (Vec::new(), 0, 0);
            windows(p, out);
            continue;
        }
        if words + p.words.len() > TARGET_WORDS {
            // A short last paragraph (a heading, a linking sentence) opens the next one too.
            let carry = current
                .last()
                .copied()
                .filter(|last| fresh > 0 && current.len() > 1 && last.words.len() <= OVERLAP_WORDS);
            if fresh > 0 {
                push_passage(&current, out);
            }
            (current, words, fresh) = (Vec::new(), 0, 0);
            if let Some(last) = carry {
                current.push(last);
                words = last.words.len();
            }
        }
        current.push(p);
        words += p.words.len();
        fresh += 1;
    }
    if fresh > 0 {
        push_passage(&current, out);
    }
}

/// The passage from the first word of `paragraphs` to the last.
fn push_passage(paragraphs: &[&Paragraph], out: &mut Vec<Passage>) {
    let first = paragraphs.first().and_then(|p| p.words.first());
    let last = paragraphs.last().and_then(|p| p.words.last());
    if let (Some(a), Some(b)) = (first, last) {
        out.push(Passage {
            start: a.start,
            end: b.end,
        });
    }
}

/// Overlapping windows of one long paragraph.
fn windows(p: &Paragraph, out: &mut Vec<Passage>) {
    let mut first = 0usize;
    loop {
        let last = (first + TARGET_WORDS).min(p.words.len());
        out.push(Passage {
            start: p.words[first].start,
            end: p.words[last - 1].end,
        });
        if last == p.words.len() {
            break;
        }
        first = last - OVERLAP_WORDS;
    }
}

/// Paragraphs of `text[range]`: separated by a blank line; their words are runs of
/// non-whitespace, and each CJK character is a word of its own.
fn paragraphs(text: &str, range: Range<usize>) -> Vec<Paragraph> {
    let mut out = Vec::new();
    let mut words = Vec::new();
    let mut word_start: Option<usize> = None;
    let mut newlines = 0usize;
    for (i, c) in text[range.clone()].char_indices() {
        let at = range.start + i;
        if c.is_whitespace() {
            if let Some(s) = word_start.take() {
                words.push(s..at);
            }
            if c == '\n' {
                newlines += 1;
                if newlines == 2 && !words.is_empty() {
                    out.push(Paragraph {
                        words: std::mem::take(&mut words),
                    });
                }
            }
        } else if is_cjk(c) {
            newlines = 0;
            if let Some(s) = word_start.take() {
                words.push(s..at);
            }
            words.push(at..at + c.len_utf8());
        } else {
            newlines = 0;
            word_start.get_or_insert(at);
        }
    }
    if let Some(s) = word_start {
        words.push(s..range.end);
    }
    if !words.is_empty() {
        out.push(Paragraph { words });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(n: usize, tag: &str) -> String {
        (0..n)
            .map(|i| format!("{tag}{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn texts<'a>(text: &'a str, passages: &[Passage]) -> Vec<&'a str> {
        passages.iter().map(|p| &text[p.start..p.end]).collect()
    }

    #[test]
    fn short_paragraphs_are_packed_and_pages_are_never_crossed() {
        let page1 = format!("{}\n\n{}", words(50, "a"), words(50, "b"));
        let text = format!("{page1}\n{}", words(30, "c"));
        let passages = chunk(&text, &[0, u32::try_from(page1.len() + 1).unwrap_or(0)]);
        let got = texts(&text, &passages);
        assert_eq!(got, vec![page1.as_str(), words(30, "c").as_str()]);
    }

    #[test]
    fn long_paragraphs_are_cut_into_overlapping_windows() {
        let text = words(400, "w");
        let passages = chunk(&text, &[]);
        let got = texts(&text, &passages);
        assert_eq!(got.len(), 3);
        assert!(got[0].starts_with("w0 ") && got[0].ends_with(" w179"));
        assert!(got[1].starts_with("w140 ") && got[1].ends_with(" w319"));
        assert!(got[2].starts_with("w280 ") && got[2].ends_with(" w399"));
    }

    #[test]
    fn a_passage_fills_up_to_the_target_then_starts_anew() {
        let paragraphs: Vec<String> = (0..6).map(|i| words(70, &format!("p{i}x"))).collect();
        let text = paragraphs.join("\n\n");
        let got = texts(&text, &chunk(&text, &[]));
        assert_eq!(got.len(), 3);
        assert!(
            got.iter()
                .all(|p| p.split_whitespace().count() <= TARGET_WORDS)
        );
        assert_eq!(got[0], format!("{}\n\n{}", paragraphs[0], paragraphs[1]));
    }

    #[test]
    fn a_short_paragraph_between_passages_is_carried_into_the_next() {
        let (a, heading, b) = (words(150, "a"), words(10, "h"), words(100, "b"));
        let text = format!("{a}\n\n{heading}\n\n{b}");
        let got = texts(&text, &chunk(&text, &[]));
        assert_eq!(
            got,
            vec![format!("{a}\n\n{heading}"), format!("{heading}\n\n{b}")]
        );
    }

    #[test]
    fn cjk_characters_count_as_words_so_long_cjk_paragraphs_are_windowed() {
        let sentence = "搜索引擎把文件里的每一个词都放进索引。";
        let text = format!("Quarry {}", sentence.repeat(30));
        let got = texts(&text, &chunk(&text, &[]));
        assert!(got.len() >= 3, "{} passages", got.len());
        assert!(
            got.iter()
                .all(|p| p.chars().filter(|&c| is_cjk(c)).count() <= TARGET_WORDS)
        );
        assert!(got[0].starts_with("Quarry 搜索"));
        assert!(got.last().is_some_and(|p| p.ends_with("索引。")));
        // Consecutive windows share their overlap, character for character.
        let tail: String = got[0].chars().rev().take(OVERLAP_WORDS).collect();
        let tail: String = tail.chars().rev().collect();
        assert!(got[1].starts_with(&tail));
    }

    #[test]
    fn empty_and_huge_texts_are_bounded() {
        assert!(chunk("  \n\n ", &[]).is_empty());
        let text = words(TARGET_WORDS * (MAX_PASSAGES + 50), "z");
        assert_eq!(chunk(&text, &[]).len(), MAX_PASSAGES);
    }
}
