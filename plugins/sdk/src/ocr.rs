//! The host's OCR: text read in a grayscale image (`host.recognize-text`), answered only
//! during [`crate::Connector::read_scans`].

use crate::bindings::quarry::connector::host;
pub use crate::bindings::quarry::connector::types::{GrayImage, OcrError, Recognized, TextLine};

/// The most pixels one image may have; [`fit`] scales larger ones down.
pub const MAX_PIXELS: u64 = 36_000_000;

/// Reads the text in `image` with the host's models.
pub fn recognize_text(image: &GrayImage) -> Result<Recognized, OcrError> {
    host::recognize_text(image)
}

/// `image` scaled down (each pixel the mean of those it covers) to at most `max_pixels`
/// pixels; unchanged when it already fits.
pub fn fit(image: GrayImage, max_pixels: u64) -> GrayImage {
    let (w, h) = (u64::from(image.width), u64::from(image.height));
    if w * h <= max_pixels || w == 0 || h == 0 {
        return image;
    }
    let scale = ((max_pixels as f64) / (w * h) as f64).sqrt();
    let out_w = ((w as f64 * scale) as u32).max(1);
    let out_h = ((h as f64 * scale) as u32).max(1);
    let (sx, sy) = (w as f64 / f64::from(out_w), h as f64 / f64::from(out_h));
    let mut pixels = Vec::with_capacity(out_w as usize * out_h as usize);
    for oy in 0..out_h {
        let y0 = (f64::from(oy) * sy) as u64;
        let y1 = ((f64::from(oy + 1) * sy).ceil() as u64).clamp(y0 + 1, h);
        for ox in 0..out_w {
            let x0 = (f64::from(ox) * sx) as u64;
            let x1 = ((f64::from(ox + 1) * sx).ceil() as u64).clamp(x0 + 1, w);
            let mut sum = 0u64;
            for y in y0..y1 {
                let row = (y * w) as usize;
                sum += image.pixels[row + x0 as usize..row + x1 as usize]
                    .iter()
                    .map(|&p| u64::from(p))
                    .sum::<u64>();
            }
            pixels.push((sum / ((x1 - x0) * (y1 - y0))) as u8);
        }
    }
    GrayImage {
        width: out_w,
        height: out_h,
        pixels,
    }
}
