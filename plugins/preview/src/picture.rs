//! An image, decoded within bounds and scaled down.

use std::io::Cursor;

use image::imageops::FilterType;
use image::{ImageFormat, ImageReader, Limits};

use crate::bindings::exports::quarry::preview::render::{PageImage, RenderError};
use crate::bounds;

/// The largest image decoded, in pixels each way.
const MAX_SIDE: u32 = 20_000;
/// The most memory a decoder may ask for.
const MAX_ALLOC: u64 = 512 << 20;

/// Draws `bytes`, an image, at most `width` pixels wide (never wider than it is), with its
/// pixels in gray when `gray`.
pub(crate) fn render(bytes: &[u8], width: u32, gray: bool) -> Result<PageImage, RenderError> {
    let malformed = |e: image::ImageError| RenderError::Malformed(format!("the image: {e}"));
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| RenderError::Malformed(format!("the image: {e}")))?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_ALLOC);
    reader.limits(limits);
    let image = reader.decode().map_err(malformed)?;
    let (w, h) = (image.width(), image.height());
    let scale = bounds::scale(w as f32, h as f32, width.min(w))
        .ok_or_else(|| RenderError::Malformed(format!("the image has no size ({w} by {h})")))?;
    let (tw, th) = (
        ((w as f32 * scale).round() as u32).max(1),
        ((h as f32 * scale).round() as u32).max(1),
    );
    let scaled = image.resize_exact(tw, th, FilterType::Triangle);
    let gray = if gray {
        scaled.to_luma8().into_raw()
    } else {
        Vec::new()
    };
    let mut png = Vec::new();
    scaled
        .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
        .map_err(malformed)?;
    Ok(PageImage {
        png,
        width: tw,
        height: th,
        page_count: 1,
        words: Vec::new(),
        gray,
    })
}
