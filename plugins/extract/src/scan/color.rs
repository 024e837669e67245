//! One pixel's colour samples as the gray OCR reads.

/// The gray of one pixel's 8-bit samples: gray as it is, RGB weighed as the eye does, CMYK as
/// ink taken from white; another count of samples by its first.
pub fn gray(pixel: &[u8]) -> u8 {
    match pixel {
        [g] => *g,
        [r, g, b] => {
            ((299 * u32::from(*r) + 587 * u32::from(*g) + 114 * u32::from(*b)) / 1000) as u8
        }
        [c, m, y, k] => {
            let ink = (30 * u32::from(*c) + 59 * u32::from(*m) + 11 * u32::from(*y)) / 100
                + u32::from(*k);
            255 - ink.min(255) as u8
        }
        [first, ..] => *first,
        [] => 255,
    }
}
