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

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use image::{DynamicImage, ImageFormat, RgbImage};

    use super::decode;

    /// The formats OCR reads.
    const FORMATS: [ImageFormat; 6] = [
        ImageFormat::Png,
        ImageFormat::Jpeg,
        ImageFormat::WebP,
        ImageFormat::Tiff,
        ImageFormat::Bmp,
        ImageFormat::Gif,
    ];

    /// A 40 x 20 image, its left half black and its right half white, in `format`.
    fn encoded(format: ImageFormat) -> Vec<u8> {
        let image = RgbImage::from_fn(40, 20, |x, _| {
            let v = if x < 20 { 0 } else { 255 };
            image::Rgb([v, v, v])
        });
        let mut out = Cursor::new(Vec::new());
        DynamicImage::ImageRgb8(image)
            .write_to(&mut out, format)
            .expect("encode");
        out.into_inner()
    }

    #[test]
    fn every_format_read_for_ocr_decodes_to_its_gray_pixels() {
        for format in FORMATS {
            let gray = decode(&encoded(format)).unwrap_or_else(|e| panic!("{format:?}: {e:?}"));
            assert_eq!((gray.width, gray.height), (40, 20), "{format:?}");
            let (left, right) = (gray.pixels[10 * 40 + 5], gray.pixels[10 * 40 + 35]);
            assert!(left < 60 && right > 200, "{format:?}: {left} {right}");
        }
    }

    #[test]
    fn a_truncated_file_of_any_format_is_refused_or_read_as_far_as_it_goes() {
        for format in FORMATS {
            let whole = encoded(format);
            match decode(&whole[..whole.len() / 2]) {
                Ok(gray) => assert_eq!((gray.width, gray.height), (40, 20), "{format:?}"),
                Err(e) => assert!(
                    format!("{e:?}").contains("image not read"),
                    "{format:?}: {e:?}"
                ),
            }
        }
    }
}
