//! The boxes of a query's words on a page drawn, found in the page's words (its text layer, or
//! what OCR read on it) as the document view finds them in its text: as the index reads words
//! (case, accents and full-width forms folded; Chinese, Japanese and Korean words whole), so the
//! marks on the picture are the marks in the text.

use quarry_index::QueryWords;
use quarry_runtime::{PageWord, PixelBox};

/// The most boxes given for one page.
pub(crate) const MAX_HIGHLIGHTS: usize = 2_000;

/// The boxes of `query`'s words in `words`: one per word found (or per piece of a word the
/// query's word is part of), in the page's order.
pub(crate) fn highlights(words: &[PageWord], query: &str) -> Vec<PixelBox> {
    let mut finder = QueryWords::new(query);
    // The page's words as one text, a space between each, and where each starts in it.
    let mut text = String::new();
    let mut starts = Vec::with_capacity(words.len());
    for word in words {
        if !text.is_empty() {
            text.push(' ');
        }
        starts.push(text.chars().count());
        text.push_str(&word.text);
    }
    let mut boxes = Vec::new();
    for (start, end) in finder.ranges(&text) {
        let first = starts.partition_point(|&s| s <= start).saturating_sub(1);
        for (word, &at) in words.iter().zip(&starts).skip(first) {
            if at >= end || boxes.len() == MAX_HIGHLIGHTS {
                break;
            }
            let (from, to) = (start.saturating_sub(at), (end - at).min(word.boxes.len()));
            if let Some(found) = word.boxes.get(from..to).and_then(around) {
                boxes.push(found);
            }
        }
    }
    boxes
}

/// The box around `boxes`; `None` for none.
fn around(boxes: &[PixelBox]) -> Option<PixelBox> {
    let left = boxes.iter().map(|b| b.x).min()?;
    let top = boxes.iter().map(|b| b.y).min()?;
    let right = boxes.iter().map(|b| b.x + b.w).max()?;
    let bottom = boxes.iter().map(|b| b.y + b.h).max()?;
    Some(PixelBox {
        x: left,
        y: top,
        w: right - left,
        h: bottom - top,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A word of 10-pixel characters from `x` on the line at `y`.
    fn word(text: &str, x: u32, y: u32) -> PageWord {
        PageWord {
            text: text.to_owned(),
            boxes: (0..text.chars().count() as u32)
                .map(|i| PixelBox {
                    x: x + 10 * i,
                    y,
                    w: 10,
                    h: 12,
                })
                .collect(),
        }
    }

    #[test]
    fn the_querys_words_are_boxed_as_the_index_reads_words_in_order() {
        let page = [
            word("Lighthouses", 0, 0),
            word("keep", 120, 0),
            word("ships.", 0, 20),
            word("Keeper's", 70, 20),
            word("lighthouse", 0, 40),
        ];
        let boxes = highlights(&page, "LIGHTHOUSES ships");
        assert_eq!(
            boxes,
            [
                PixelBox {
                    x: 0,
                    y: 0,
                    w: 110,
                    h: 12
                },
                PixelBox {
                    x: 0,
                    y: 20,
                    w: 50,
                    h: 12
                },
            ],
            "case is folded; the full stop is left out; another word is not the word"
        );
        assert!(highlights(&page, "").is_empty());
        assert!(
            highlights(&page, "-lighthouse").is_empty(),
            "what a query excludes is not marked"
        );
        assert!(highlights(&[], "lighthouse").is_empty());
    }

    #[test]
    fn a_chinese_word_is_boxed_where_it_is_whole() {
        let page = [word("搜索引擎很快", 0, 0), word("索引", 0, 20)];
        let boxes = highlights(&page, "搜索引擎");
        assert_eq!(
            boxes,
            [PixelBox {
                x: 0,
                y: 0,
                w: 40,
                h: 12
            }]
        );
    }
}
