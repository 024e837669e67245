//! The bounds of decoding images for OCR. A file past one fails its own document with the
//! reason; nothing else waits for it.

/// The widest or tallest image decoded, in pixels (a page at 600 dpi is about 5,000 x 7,000).
pub const MAX_SIDE: u32 = 12_000;
/// The most pixels of one decoded image (before it is scaled down for OCR).
pub const MAX_PIXELS: u64 = 80_000_000;
/// Memory the image decoder may take for one image, in bytes.
pub const MAX_DECODE_BYTES: u64 = 160 << 20;
/// Images narrower or lower than this hold no legible word, and are not read.
pub const MIN_SIDE: u32 = 16;
/// The pixels an image is scaled down to at most before the host reads it: 24 million keeps
/// a page at 400 dpi as it is.
pub const OCR_PIXELS: u64 = 24_000_000;

/// Checks an image's declared size against the bounds, before anything is decoded.
pub fn check(width: u64, height: u64) -> Result<(), String> {
    if width == 0 || height == 0 {
        return Err(format!(
            "an image of {width}x{height} pixels has nothing to read"
        ));
    }
    if width > u64::from(MAX_SIDE) || height > u64::from(MAX_SIDE) || width * height > MAX_PIXELS {
        return Err(format!(
            "an image of {width}x{height} pixels is over the bounds of OCR ({MAX_SIDE} pixels a side, {MAX_PIXELS} in all)"
        ));
    }
    Ok(())
}
