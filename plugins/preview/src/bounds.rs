//! The renderer's own bounds on what it draws, whatever the host asks (the host bounds its time
//! and memory besides).

use crate::bindings::exports::quarry::preview::render::RenderError;

/// The widest image drawn, in pixels.
pub(crate) const MAX_WIDTH: u32 = 2400;
/// The tallest image drawn, as a multiple of its width (a page of a strange shape is drawn
/// narrower).
pub(crate) const MAX_TALLNESS: f32 = 4.0;

/// The width asked for, checked.
pub(crate) fn width(asked: u32) -> Result<u32, RenderError> {
    if (1..=MAX_WIDTH).contains(&asked) {
        Ok(asked)
    } else {
        Err(RenderError::TooLarge(format!(
            "a preview is 1 to {MAX_WIDTH} pixels wide, not {asked}"
        )))
    }
}

/// The scale that draws a `w` by `h` page (in its own units) at most `width` pixels wide and
/// [`MAX_TALLNESS`] times that tall; `None` for a page without a size.
pub(crate) fn scale(w: f32, h: f32, width: u32) -> Option<f32> {
    if !(w.is_finite() && h.is_finite() && w >= 1.0 && h >= 1.0) {
        return None;
    }
    let width = width as f32;
    Some((width / w).min(width * MAX_TALLNESS / h))
}

/// 8-bit gray of `rgba` pixels (drawn on white, so opaque).
pub(crate) fn gray(rgba: &[u8]) -> Vec<u8> {
    rgba.chunks_exact(4)
        .map(|p| {
            let [r, g, b] = [p[0], p[1], p[2]].map(u32::from);
            ((299 * r + 587 * g + 114 * b) / 1000) as u8
        })
        .collect()
}
