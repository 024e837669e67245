//! A PDF page's text layer: the words its content draws (visible or not, as an OCR'd scan's
//! invisible text is), each character with its box in pixels of the image, found by running
//! hayro's interpreter into a device that keeps the glyphs and draws nothing.

use hayro::hayro_interpret::font::{Glyph, GlyphRun};
use hayro::hayro_interpret::hayro_cmap::BfString;
use hayro::hayro_interpret::{
    BlendMode, ClipPath, Context, Device, DrawMode, DrawProps, Image, ImageDrawProps,
    InterpreterCache, InterpreterSettings, SoftMask, interpret_page,
};
use hayro::hayro_syntax::page::Page;
use hayro::kurbo::{Affine, BezPath, Point, Rect};

use crate::bindings::exports::quarry::preview::render::{PixelBox, Word};

/// The most characters kept of one page (a page of a dense table has a few thousand).
const MAX_CHARS: usize = 50_000;
/// A glyph's box in its own space, in thousandths of an em: the advance across, from the
/// descender's depth to the ascender's height.
const DESCENT: f64 = -220.0;
const ASCENT: f64 = 780.0;
/// The gap between two glyphs, as a share of their height, past which they are two words.
const WORD_GAP: f64 = 0.2;

/// The words page `page` draws, with their characters' boxes in a `width` by `height` image
/// that `transform` maps the page onto.
pub(crate) fn words(page: &Page<'_>, transform: Affine, width: u32, height: u32) -> Vec<Word> {
    let image = Rect::new(0.0, 0.0, f64::from(width), f64::from(height));
    let cache = InterpreterCache::new();
    let mut context = Context::new(
        transform,
        image,
        &cache,
        page.xref(),
        InterpreterSettings::default(),
    );
    let mut layer = TextLayer {
        image,
        words: Vec::new(),
        current: None,
        chars: 0,
    };
    interpret_page(page, &mut context, &mut layer);
    layer.finish();
    layer.words
}

/// The word being read: its text and boxes, and the last glyph's box in floating pixels.
struct Open {
    word: Word,
    last: Rect,
}

struct TextLayer {
    image: Rect,
    words: Vec<Word>,
    current: Option<Open>,
    chars: usize,
}

impl TextLayer {
    /// Adds the characters `text` of a glyph drawn in `area` (pixels): to the open word when it
    /// follows on, else as a new word; a space ends the word.
    fn glyph(&mut self, text: &str, area: Rect) {
        // A glyph may stand for a long string (a font's own mapping): the page's characters
        // stay within the bound whatever it says.
        let room = MAX_CHARS.saturating_sub(self.chars);
        let chars: Vec<char> = text.chars().take(room).collect();
        if chars.is_empty() {
            return;
        }
        if chars.iter().all(|c| c.is_whitespace()) {
            self.finish();
            return;
        }
        if !self.follows_on(area) {
            self.finish();
        }
        // A ligature (`ﬁ` as "fi") shares its box among its characters.
        let count = chars.len();
        let share = area.width() / count as f64;
        let open = self.current.get_or_insert_with(|| Open {
            word: Word {
                text: String::new(),
                boxes: Vec::new(),
            },
            last: area,
        });
        for (i, c) in chars.into_iter().enumerate() {
            let part = Rect::new(
                area.x0 + share * i as f64,
                area.y0,
                area.x0 + share * (i + 1) as f64,
                area.y1,
            );
            open.word.text.push(c);
            open.word.boxes.push(pixel_box(part, self.image));
        }
        open.last = area;
        self.chars += count;
    }

    /// Whether a glyph drawn in `area` continues the open word: on its line, just after it.
    fn follows_on(&self, area: Rect) -> bool {
        let Some(open) = &self.current else {
            return false;
        };
        let last = open.last;
        let height = last.height().max(area.height()).max(1.0);
        let same_line = (last.center().y - area.center().y).abs() < height / 2.0;
        let gap = area.x0 - last.x1;
        same_line && gap < height * WORD_GAP && gap > -height
    }

    /// Ends the open word.
    fn finish(&mut self) {
        if let Some(open) = self.current.take()
            && !open.word.text.is_empty()
        {
            self.words.push(open.word);
        }
    }
}

/// `area` clipped to `image`, in whole pixels.
fn pixel_box(area: Rect, image: Rect) -> PixelBox {
    let clipped = area.intersect(image);
    let (x0, y0) = (clipped.x0.floor().max(0.0), clipped.y0.floor().max(0.0));
    let (x1, y1) = (clipped.x1.ceil().max(x0), clipped.y1.ceil().max(y0));
    PixelBox {
        x: x0 as u32,
        y: y0 as u32,
        w: (x1 - x0) as u32,
        h: (y1 - y0) as u32,
    }
}

/// The box (pixels) of an outline glyph advancing `advance` thousandths of an em, placed by
/// `transform`.
fn glyph_area(transform: Affine, advance: f64) -> Rect {
    let corners = [
        Point::new(0.0, DESCENT),
        Point::new(advance, DESCENT),
        Point::new(0.0, ASCENT),
        Point::new(advance, ASCENT),
    ]
    .map(|p| transform * p);
    corners
        .iter()
        .skip(1)
        .fold(Rect::from_points(corners[0], corners[0]), |r, p| {
            r.union_pt(*p)
        })
}

impl<'a> Device<'a> for TextLayer {
    fn draw_glyph_run(&mut self, run: &GlyphRun<'_, 'a>, props: DrawProps<'a>, _: &DrawMode) {
        for glyph in run.glyphs() {
            // A glyph drawn by drawing instructions (Type 3) has no advance to box: it ends the
            // word it is in.
            let Glyph::Outline(outline) = &**glyph else {
                self.finish();
                continue;
            };
            let text = match glyph.as_unicode() {
                Some(BfString::Char(c)) => c.to_string(),
                Some(BfString::String(s)) => s,
                None => {
                    self.finish();
                    continue;
                }
            };
            let advance = f64::from(outline.advance_width().unwrap_or(500.0));
            let area = glyph_area(props.transform * glyph.transform(), advance);
            if area.is_finite() && area.overlaps(self.image) {
                self.glyph(&text, area);
            } else {
                self.finish();
            }
        }
    }

    fn draw_path(&mut self, _: &BezPath, _: DrawProps<'a>, _: &DrawMode) {}
    fn push_clip_path(&mut self, _: &ClipPath) {}
    fn push_transparency_group(&mut self, _: f32, _: Option<SoftMask<'a>>, _: BlendMode) {}
    fn draw_image(&mut self, _: Image<'a, '_>, _: ImageDrawProps<'a>) {}
    fn pop_clip(&mut self) {}
    fn pop_transparency_group(&mut self) {}
}
