//! The words on a scanned page (no text layer): the page drawn again, wide enough to read and in
//! gray, read by the host's OCR engine (the one that reads connectors' scans), and its lines cut
//! into words with each character's box, in pixels of the preview.

use quarry_core::ocr::{Recognized, TextRecognizer};
use quarry_runtime::{PageImage, PageWord, PixelBox, Renderer};

/// The width a scanned page is drawn at to be read (a letter page at about 190 dpi), or the
/// preview's own width when wider.
const READ_WIDTH: u32 = 1600;

/// The words OCR reads on page `page` of `bytes` (of type `mime`), drawn as `preview`: empty
/// when the page cannot be drawn or read again (why is logged).
pub(crate) fn read(
    renderer: &Renderer,
    ocr: &dyn TextRecognizer,
    (bytes, mime, page): (&[u8], &str, u32),
    preview: &PageImage,
) -> Vec<PageWord> {
    let width = READ_WIDTH.max(preview.width);
    let gray = match renderer.render(bytes, mime, page, width, true) {
        Ok(Ok(PageImage {
            gray: Some(gray), ..
        })) => gray,
        Ok(Ok(_)) => return Vec::new(),
        Ok(Err(why)) => {
            tracing::info!(page, "a scanned page was not drawn to be read: {why}");
            return Vec::new();
        }
        Err(stopped) => {
            tracing::warn!(page, "a scanned page was not drawn to be read: {stopped}");
            return Vec::new();
        }
    };
    match ocr.recognize(&gray) {
        Ok(read) => words(
            &read,
            preview.width as f32 / gray.width as f32,
            (preview.width, preview.height),
        ),
        Err(why) => {
            tracing::info!(page, "a scanned page's preview was not read: {why}");
            Vec::new()
        }
    }
}

/// The words of `read`, each character's box scaled by `scale` into an image of `size`. A page
/// OCR turned to read has none: its boxes are on the page turned, not the page drawn.
fn words(read: &Recognized, scale: f32, (width, height): (u32, u32)) -> Vec<PageWord> {
    if read.turned != 0 {
        return Vec::new();
    }
    let mut words = Vec::new();
    for line in &read.lines {
        let chars: Vec<char> = line.text.chars().collect();
        if chars.len() != line.spans.len() {
            continue;
        }
        let [_, top, _, tall] = line.bounds;
        let (y0, y1) = (px(top, scale, height), px(top + tall, scale, height));
        let mut word: Option<PageWord> = None;
        for (c, [left, right]) in chars.into_iter().zip(&line.spans) {
            if c.is_whitespace() {
                words.extend(word.take());
                continue;
            }
            let (x0, x1) = (px(*left, scale, width), px(*right, scale, width));
            let open = word.get_or_insert_with(|| PageWord {
                text: String::new(),
                boxes: Vec::new(),
            });
            open.text.push(c);
            open.boxes.push(PixelBox {
                x: x0,
                y: y0,
                w: x1.saturating_sub(x0),
                h: y1.saturating_sub(y0),
            });
        }
        words.extend(word);
    }
    words
}

/// `v` pixels of the page read, in pixels of the preview (at most `limit`).
fn px(v: u32, scale: f32, limit: u32) -> u32 {
    ((v as f32 * scale).round() as u32).min(limit)
}

#[cfg(test)]
mod tests {
    use quarry_core::ocr::TextLine;

    use super::*;

    fn read(turned: u32) -> Recognized {
        Recognized {
            text: "Invoice 2024".to_owned(),
            lines: vec![TextLine {
                text: "Invoice 2024".to_owned(),
                confidence: 0.9,
                bounds: [100, 200, 240, 40],
                spans: (0..12).map(|i| [100 + 20 * i, 120 + 20 * i]).collect(),
            }],
            confidence: 0.9,
            turned,
        }
    }

    #[test]
    fn a_line_read_is_cut_into_words_scaled_to_the_preview() {
        let found = words(&read(0), 0.5, (800, 1000));
        let texts: Vec<&str> = found.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(texts, ["Invoice", "2024"]);
        assert_eq!(
            found[0].boxes[0],
            PixelBox {
                x: 50,
                y: 100,
                w: 10,
                h: 20
            }
        );
        assert_eq!(
            found[1].boxes[0],
            PixelBox {
                x: 130,
                y: 100,
                w: 10,
                h: 20
            }
        );
        let narrow = words(&read(0), 0.5, (120, 1000));
        assert!(
            narrow[1].boxes.iter().all(|b| b.x + b.w <= 120),
            "kept on the image"
        );
    }

    #[test]
    fn a_page_read_turned_gives_no_words() {
        assert!(words(&read(90), 1.0, (800, 1000)).is_empty());
    }
}
