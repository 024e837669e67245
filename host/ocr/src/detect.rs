//! Text detection (PP-OCR's DB model): where the lines of text are. The model answers, for each
//! pixel of the page scaled to a multiple of 32, how likely it is to be text; lines are the
//! connected regions of likely pixels, each grown by the margin the model was trained to leave
//! out (DB's "unclip").

use ort::session::Session;

use crate::onnx::{run, settle};
use crate::raster::{Raster, bilinear, inside, normalized_channels, rotated_grid};

/// The shorter side a page is scaled up to at least before detection (PP-OCR's default).
const MIN_SIDE: usize = 736;
/// The longer side a page is scaled down to at most before detection (a letter page at about
/// 145 dpi; lines are then read from the page at its own resolution). Measured with `make
/// eval`: as accurate as 2,000 or 2,400 on pages at 150 and 300 dpi, clean or scanned, and
/// faster (docs/ocr.md).
const MAX_SIDE: usize = 1600;
/// A pixel is text when the model says so with this probability.
const PIXEL_THRESHOLD: f32 = 0.3;
/// A region is a line when its pixels' mean probability is at least this.
const REGION_THRESHOLD: f32 = 0.5;
/// How far a region is grown: its area times this, over its perimeter (DB's unclip ratio).
const UNCLIP_RATIO: f32 = 1.6;
/// Regions considered per page at most.
const MAX_REGIONS: usize = 5000;
/// How far a pixel's gray value must be from the page's background to be ink.
const INK_CONTRAST: f32 = 32.0;
/// The blank margin kept around a page's ink when only that part of it is detected.
const CONTENT_MARGIN: usize = 64;

/// A line's box in the raster's pixels: left, top, width, height.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineBox {
    pub left: usize,
    pub top: usize,
    pub width: usize,
    pub height: usize,
}

/// The size the model sees a `width x height` page at: sides multiples of 32.
fn detection_size(width: usize, height: usize) -> (usize, usize) {
    let (short, long) = (width.min(height) as f32, width.max(height) as f32);
    let mut scale = if short < MIN_SIDE as f32 {
        MIN_SIDE as f32 / short
    } else {
        1.0
    };
    if long * scale > MAX_SIDE as f32 {
        scale = MAX_SIDE as f32 / long;
    }
    let round = |side: usize| (((side as f32 * scale) / 32.0).round() as usize).max(1) * 32;
    (round(width), round(height))
}

/// What detection saw of a page: for each pixel of the page scaled to `width x height`, how
/// likely it is to be text.
pub(crate) struct TextMap {
    probs: Vec<f32>,
    width: usize,
    height: usize,
    page_width: usize,
    page_height: usize,
}

/// The text map of `page`: one run of the detection model on the part of the scaled page that
/// holds ink (a letter page's margins are a third of it), none on a blank page.
pub(crate) fn text_map(session: &mut Session, page: &Raster) -> Result<TextMap, String> {
    let (w, h) = detection_size(page.width, page.height);
    let scaled = page.scaled_region((0, 0, page.width, page.height), w, h);
    let mut map = TextMap {
        probs: vec![0.0; w * h],
        width: w,
        height: h,
        page_width: page.width,
        page_height: page.height,
    };
    let Some((left, top, cw, ch)) = content(&scaled, w, h) else {
        return Ok(map);
    };
    let mut input = Vec::with_capacity(3 * cw * ch);
    let rows: Vec<f32> = scaled
        .chunks_exact(w)
        .skip(top)
        .take(ch)
        .flat_map(|row| &row[left..left + cw])
        .copied()
        .collect();
    drop(scaled);
    normalized_channels(&rows, &mut input);
    drop(rows);
    run(session, [1, 3, ch, cw], input, |shape, probs| {
        if probs.len() != cw * ch {
            return Err(format!(
                "the detection model answered {shape:?} for a {cw}x{ch} input"
            ));
        }
        for (row, values) in probs.chunks_exact(cw).enumerate() {
            let start = (top + row) * w + left;
            map.probs[start..start + cw].copy_from_slice(values);
        }
        Ok(())
    })??;
    settle(session, [1, 3, 32, 32])?;
    Ok(map)
}

/// The part of a `w x h` page (gray values, `w` and `h` multiples of 32) that holds ink, with
/// [`CONTENT_MARGIN`] around it, its bounds multiples of 32: `(left, top, width, height)`, or
/// `None` when the page is blank. The background is the most common gray; a pixel is ink when
/// it and its right or lower neighbour are [`INK_CONTRAST`] away from it, so a scan's specks
/// do not count.
fn content(values: &[f32], w: usize, h: usize) -> Option<(usize, usize, usize, usize)> {
    let mut histogram = [0usize; 256];
    for &v in values {
        histogram[v.clamp(0.0, 255.0) as usize] += 1;
    }
    let background = histogram
        .iter()
        .enumerate()
        .max_by_key(|&(_, &count)| count)
        .map_or(255.0, |(gray, _)| gray as f32);
    let ink = |i: usize| (values[i] - background).abs() >= INK_CONTRAST;
    let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            if ink(i) && ((x + 1 < w && ink(i + 1)) || (y + 1 < h && ink(i + w))) {
                (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x + 1), y1.max(y + 1));
            }
        }
    }
    if x0 >= x1 {
        return None;
    }
    let down = |v: usize| v.saturating_sub(CONTENT_MARGIN) / 32 * 32;
    let up = |v: usize, side: usize| ((v + CONTENT_MARGIN).div_ceil(32) * 32).min(side);
    let (left, top) = (down(x0), down(y0));
    Some((left, top, up(x1, w) - left, up(y1, h) - top))
}

impl TextMap {
    /// The page's pixels per cell of the map, wide and high.
    fn scale(&self) -> (f32, f32) {
        (
            self.page_width as f32 / self.width as f32,
            self.page_height as f32 / self.height as f32,
        )
    }

    /// The boxes of the lines of text in the page, in its pixels, and the skew of its lines in
    /// degrees.
    pub fn lines(&self) -> (Vec<LineBox>, f32) {
        let (w, h) = (self.width, self.height);
        let regions = regions(&self.probs, w, h);
        let skew = skew(&regions);
        let (sx, sy) = self.scale();
        let (page_w, page_h) = (self.page_width, self.page_height);
        let boxes = regions
            .into_iter()
            .filter_map(|r| r.unclipped(w, h))
            .map(|(x0, y0, x1, y1)| {
                let left = ((x0 as f32 * sx).floor() as usize).min(page_w - 1);
                let top = ((y0 as f32 * sy).floor() as usize).min(page_h - 1);
                let right = ((x1 as f32 * sx).ceil() as usize).clamp(left + 1, page_w);
                let bottom = ((y1 as f32 * sy).ceil() as usize).clamp(top + 1, page_h);
                LineBox {
                    left,
                    top,
                    width: right - left,
                    height: bottom - top,
                }
            })
            .collect();
        (boxes, skew)
    }

    /// The map of the page turned by `degrees` about its centre (as [`Raster::rotated`] turns
    /// it): what detection would see of the straightened page, without running the model again.
    pub fn rotated(&self, degrees: f32) -> TextMap {
        let (w, h) = (self.width, self.height);
        let probs = rotated_grid(w, h, self.scale(), degrees, |x, y| {
            if inside(w, h, x, y) {
                bilinear(w, h, x, y, |i| self.probs[i])
            } else {
                0.0
            }
        });
        TextMap { probs, ..*self }
    }
}

/// A connected region of likely pixels: its bounds (inclusive), its pixels' mean probability,
/// and the angle of its main axis, in degrees (positive: descending to the right).
struct Region {
    x0: usize,
    y0: usize,
    x1: usize,
    y1: usize,
    score: f32,
    angle: f32,
}

impl Region {
    /// The region grown by DB's margin, within `w x h`, as `(x0, y0, x1, y1)` (exclusive ends);
    /// `None` for a region too thin to be text.
    fn unclipped(&self, w: usize, h: usize) -> Option<(usize, usize, usize, usize)> {
        let (rw, rh) = (
            (self.x1 - self.x0 + 1) as f32,
            (self.y1 - self.y0 + 1) as f32,
        );
        if rw.min(rh) < 3.0 || self.score < REGION_THRESHOLD {
            return None;
        }
        let grow = rw * rh * UNCLIP_RATIO / (2.0 * (rw + rh));
        let x0 = (self.x0 as f32 - grow).max(0.0) as usize;
        let y0 = (self.y0 as f32 - grow).max(0.0) as usize;
        let x1 = ((self.x1 as f32 + 1.0 + grow).ceil() as usize).min(w);
        let y1 = ((self.y1 as f32 + 1.0 + grow).ceil() as usize).min(h);
        ((x1 - x0).min(y1 - y0) >= 5).then_some((x0, y0, x1, y1))
    }
}

/// The connected regions (4-neighbours) of pixels over [`PIXEL_THRESHOLD`], after a 2x2
/// dilation, largest count [`MAX_REGIONS`].
fn regions(probs: &[f32], w: usize, h: usize) -> Vec<Region> {
    let mut mask: Vec<bool> = probs.iter().map(|&p| p > PIXEL_THRESHOLD).collect();
    // Dilate with a 2x2 kernel: a pixel is set when it or its left, upper or upper-left one is.
    for y in (0..h).rev() {
        for x in (0..w).rev() {
            let i = y * w + x;
            if mask[i] {
                continue;
            }
            let left = x > 0 && mask[i - 1];
            let up = y > 0 && mask[i - w];
            let diagonal = x > 0 && y > 0 && mask[i - w - 1];
            mask[i] = left || up || diagonal;
        }
    }
    let mut seen = vec![false; w * h];
    let mut found = Vec::new();
    let mut stack = Vec::new();
    for start in 0..w * h {
        if !mask[start] || seen[start] {
            continue;
        }
        if found.len() == MAX_REGIONS {
            break;
        }
        seen[start] = true;
        stack.push(start);
        let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
        let (mut sum, mut count) = (0.0f32, 0usize);
        let mut moments = Moments::default();
        while let Some(i) = stack.pop() {
            let (x, y) = (i % w, i / w);
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            sum += probs[i];
            count += 1;
            moments.add(x as f64, y as f64);
            let mut visit = |j: usize| {
                if mask[j] && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            };
            if x > 0 {
                visit(i - 1);
            }
            if x + 1 < w {
                visit(i + 1);
            }
            if y > 0 {
                visit(i - w);
            }
            if y + 1 < h {
                visit(i + w);
            }
        }
        found.push(Region {
            x0,
            y0,
            x1,
            y1,
            score: sum / count as f32,
            angle: moments.angle(),
        });
    }
    found
}

/// Sums over a region's pixels, for the angle of its main axis.
#[derive(Default)]
struct Moments {
    n: f64,
    x: f64,
    y: f64,
    xx: f64,
    yy: f64,
    xy: f64,
}

impl Moments {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.x += x;
        self.y += y;
        self.xx += x * x;
        self.yy += y * y;
        self.xy += x * y;
    }

    /// The angle of the main axis in degrees, from the horizontal (positive: descending to the
    /// right, as image rows grow downwards).
    fn angle(&self) -> f32 {
        let (mx, my) = (self.x / self.n, self.y / self.n);
        let cxx = self.xx / self.n - mx * mx;
        let cyy = self.yy / self.n - my * my;
        let cxy = self.xy / self.n - mx * my;
        (0.5 * (2.0 * cxy).atan2(cxx - cyy)).to_degrees() as f32
    }
}

/// The skew of a page's text in degrees (positive: lines descend to the right): the median
/// angle of its long lines, or 0 when it has too few to tell.
fn skew(regions: &[Region]) -> f32 {
    let mut angles: Vec<f32> = regions
        .iter()
        .filter(|r| r.score >= REGION_THRESHOLD && r.x1 - r.x0 >= 32)
        .filter(|r| r.x1 - r.x0 > 4 * (r.y1 - r.y0 + 1))
        .map(|r| r.angle)
        .collect();
    if angles.len() < 3 {
        return 0.0;
    }
    angles.sort_by(f32::total_cmp);
    angles[angles.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_seen_at_multiples_of_32_neither_tiny_nor_huge() {
        assert_eq!(detection_size(1654, 2339), (1120, 1600));
        let (w, h) = detection_size(400, 300);
        assert_eq!((w % 32, h % 32), (0, 0));
        assert!(h >= MIN_SIDE - 16, "{h}");
        let (w, h) = detection_size(10_000, 5_000);
        assert!(w <= MAX_SIDE && h <= MAX_SIDE, "{w}x{h}");
    }

    #[test]
    fn only_the_inked_part_of_a_page_and_a_margin_is_detected() {
        let (w, h) = (640, 960);
        let mut page = vec![250.0; w * h];
        // A line of gray text from (200, 300) to (420, 330); specks of one pixel elsewhere.
        for y in 300..330 {
            for x in 200..420 {
                page[y * w + x] = 120.0;
            }
        }
        for (x, y) in [(10, 10), (600, 900), (5, 700)] {
            page[y * w + x] = 0.0;
        }
        let (left, top, width, height) = content(&page, w, h).expect("ink");
        assert_eq!([left, top, width, height].map(|v| v % 32), [0; 4]);
        assert!(left + CONTENT_MARGIN <= 200 && top + CONTENT_MARGIN <= 300);
        assert!(left + width >= 420 + CONTENT_MARGIN && top + height >= 330 + CONTENT_MARGIN);
        assert!(width * height * 4 < w * h, "{width}x{height} of {w}x{h}");
    }

    #[test]
    fn a_blank_or_specked_page_has_nothing_to_detect() {
        let (w, h) = (320, 320);
        let mut page = vec![255.0; w * h];
        assert_eq!(content(&page, w, h), None);
        for i in (0..w * h).step_by(997) {
            page[i] = 0.0;
        }
        assert_eq!(content(&page, w, h), None);
    }

    #[test]
    fn light_text_on_a_dark_page_is_ink_too() {
        let (w, h) = (320, 320);
        let mut page = vec![20.0; w * h];
        for x in 100..140 {
            page[160 * w + x] = 200.0;
            page[161 * w + x] = 200.0;
        }
        let (left, top, width, height) = content(&page, w, h).expect("ink");
        assert!(left <= 100 && top <= 160 && left + width >= 140 && top + height >= 162);
    }

    #[test]
    fn two_separate_blobs_are_two_regions_grown_by_the_margin() {
        let (w, h) = (40, 20);
        let mut probs = vec![0.0; w * h];
        for y in 5..10 {
            for x in 2..15 {
                probs[y * w + x] = 0.9;
            }
            for x in 25..38 {
                probs[y * w + x] = 0.9;
            }
        }
        let found = regions(&probs, w, h);
        assert_eq!(found.len(), 2);
        let (x0, y0, x1, y1) = found[0].unclipped(w, h).expect("a line");
        assert!(
            x0 < 2 && y0 < 5 && x1 > 15 && y1 > 10,
            "{x0} {y0} {x1} {y1}"
        );
    }

    #[test]
    fn the_skew_of_tilted_lines_is_their_angle() {
        let (w, h) = (200, 120);
        let mut probs = vec![0.0; w * h];
        // Three lines descending 10 pixels over 180: about 3.2 degrees.
        for top in [10usize, 45, 80] {
            for x in 10..190 {
                let y = top + (x - 10) / 18;
                for dy in 0..6 {
                    probs[(y + dy) * w + x] = 0.9;
                }
            }
        }
        let found = regions(&probs, w, h);
        assert_eq!(found.len(), 3);
        let angle = skew(&found);
        assert!((angle - 3.2).abs() < 0.5, "{angle}");
    }

    #[test]
    fn a_text_map_turned_by_its_skew_finds_the_straight_lines_of_the_straightened_page() {
        let (w, h) = (200, 120);
        let mut probs = vec![0.0; w * h];
        // Three lines descending 18 cells over 180: about 5.7 degrees.
        for top in [10usize, 45, 80] {
            for x in 10..190 {
                let y = top + (x - 10) / 10;
                for dy in 0..6 {
                    probs[(y + dy) * w + x] = 0.9;
                }
            }
        }
        // The page is twice the map's size.
        let map = TextMap {
            probs,
            width: w,
            height: h,
            page_width: 2 * w,
            page_height: 2 * h,
        };
        let (tilted, skew) = map.lines();
        let (straight, left) = map.rotated(-skew).lines();
        assert_eq!((tilted.len(), straight.len()), (3, 3));
        assert!(
            left.abs() < 0.3,
            "{left} degrees left after turning by {skew}"
        );
        let highest = |boxes: &[LineBox]| boxes.iter().map(|b| b.height).max().unwrap_or(0);
        assert!(
            2 * highest(&straight) < highest(&tilted),
            "{straight:?} against {tilted:?}"
        );
        assert!(straight.iter().all(|b| b.width >= 300), "{straight:?}");
    }

    #[test]
    fn faint_or_thin_regions_are_not_lines() {
        let (w, h) = (20, 20);
        let mut probs = vec![0.0; w * h];
        for x in 2..18 {
            probs[5 * w + x] = 0.9; // one pixel high: 2 after dilation
        }
        for y in 10..15 {
            for x in 2..18 {
                probs[y * w + x] = 0.35; // likely, but not enough on average
            }
        }
        let found = regions(&probs, w, h);
        assert!(found.iter().all(|r| r.unclipped(w, h).is_none()));
    }
}
