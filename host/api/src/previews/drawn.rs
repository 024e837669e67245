//! A page drawn: what the cache keeps and the answer sends.

use quarry_runtime::{PageImage, PageWord};

/// A page drawn: the PNG and what the renderer said of it, and the page's words.
#[derive(Debug)]
pub(crate) struct Drawn {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub page_count: u32,
    /// The page's words with their characters' boxes: its text layer, or what OCR read on it.
    pub words: Vec<PageWord>,
    /// Whether OCR was asked to read the page (a page without a text layer, drawn for a query).
    pub read: bool,
}

impl Drawn {
    /// `image` with the words OCR `read` on it, if it was read.
    pub(crate) fn of(image: PageImage, read: Option<Vec<PageWord>>) -> Drawn {
        Drawn {
            png: image.png,
            width: image.width,
            height: image.height,
            page_count: image.page_count,
            read: read.is_some(),
            words: read.unwrap_or(image.words),
        }
    }

    /// About the memory it holds.
    pub(crate) fn bytes(&self) -> usize {
        let words: usize = self
            .words
            .iter()
            .map(|w| w.text.len() + 16 * w.boxes.len() + 48)
            .sum();
        self.png.len() + words
    }

    /// Whether it has what a query's marks need: a text layer, or a reading by OCR (even an
    /// empty one) when OCR is on (`can_read`).
    pub(crate) fn can_mark(&self, can_read: bool) -> bool {
        !self.words.is_empty() || self.read || !can_read
    }
}
