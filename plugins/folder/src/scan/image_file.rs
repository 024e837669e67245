//! Image files (PNG, JPEG, WebP, TIFF, BMP, GIF's first frame) decoded to gray pixels, within
//! the bounds of `limits.rs`: the size the header declares is checked before any pixel is
//! decoded, and the decoder may not allocate more than its share.

use std::io::Cursor;

use image::{ImageFormat, ImageReader, Limits};
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

/// The gray pixels of an image file.
pub fn decode(bytes: &[u8]) -> Result<GrayImage, Error> {
    let fail = |what: String| Error::Other(format!("image not read: {what}"));
    let reader = || -> Result<ImageReader<Cursor<&[u8]>>, Error> {
        let mut reader = ImageReader::new(Cursor::new(bytes))
            .with_guessed_format()
            .map_err(|e| fail(e.to_string()))?;
        reader.limits(bounds());
        Ok(reader)
    };
    // The declared size first: a bomb is refused by its header.
    let (width, height) = reader()?
        .into_dimensions()
        .map_err(|e| fail(e.to_string()))?;
    limits::check(u64::from(width), u64::from(height)).map_err(fail)?;
    gray(reader()?, "image not read")
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
        .map_err(|e| Error::Other(format!("{what}: {e}")))?;
    let gray = image.into_luma8();
    Ok(GrayImage {
        width: gray.width(),
        height: gray.height(),
        pixels: gray.into_raw(),
    })
}
