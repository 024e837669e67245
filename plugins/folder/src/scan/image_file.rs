//! Image files (PNG, JPEG, WebP, TIFF, BMP, GIF's first frame) decoded to gray pixels, within
//! the bounds of `limits.rs`: the size the header declares is checked before any pixel is
//! decoded, and the decoder may not allocate more than its share.

use std::io::Cursor;

use image::{ImageError, ImageFormat, ImageReader, Limits};
use quarry_sdk::Error;
use quarry_sdk::ocr::GrayImage;

use super::limits;

/// The decoder's bounds.
fn bounds() -> Limits {
    let mut bounds = Limits::default();
    bounds.max_image_width = Some(limits::MAX_SIDE);
    bounds.max_image_height = Some(limits::MAX_SIDE);
    bounds.max_alloc = Some(limits::MAX_DECODE_BYTES);
    bounds
}

/// What a decoder's error says: past a bound, which bounds.
fn why(error: ImageError) -> String {
    match error {
        ImageError::Limits(limit) => format!(
            "over the bounds of OCR ({} pixels a side, {} MiB to decode): {limit}",
            limits::MAX_SIDE,
            limits::MAX_DECODE_BYTES >> 20
        ),
        other => other.to_string(),
    }
}

/// The gray pixels of an image file.
pub fn decode(bytes: &[u8]) -> Result<GrayImage, Error> {
    let fail = |what: String| Error::Other(format!("image not read: {what}"));
    let reader = || {
        ImageReader::new(Cursor::new(bytes))
            .with_guessed_format()
            .map_err(|e| fail(e.to_string()))
    };
    // The declared size first, from the header alone (nothing is allocated for the pixels):
    // a bomb is refused by it.
    let mut header = reader()?;
    header.no_limits();
    let (width, height) = header.into_dimensions().map_err(|e| fail(why(e)))?;
    limits::check(u64::from(width), u64::from(height)).map_err(fail)?;
    let mut reader = reader()?;
    reader.limits(bounds());
    gray(reader, "image not read")
}

/// The gray pixels of a JPEG (a PDF's `DCTDecode` image), within the same bounds.
pub fn decode_jpeg(bytes: &[u8]) -> Result<GrayImage, Error> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), ImageFormat::Jpeg);
    reader.limits(bounds());
    gray(reader, "a page's JPEG image not read")
}

fn gray(reader: ImageReader<Cursor<&[u8]>>, what: &str) -> Result<GrayImage, Error> {
    let image = reader
        .decode()
        .map_err(|e| Error::Other(format!("{what}: {}", why(e))))?;
    let gray = image.into_luma8();
    Ok(GrayImage {
        width: gray.width(),
        height: gray.height(),
        pixels: gray.into_raw(),
    })
}
