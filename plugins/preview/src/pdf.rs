//! A page of a PDF file, drawn by hayro, with its text layer.

use hayro::hayro_interpret::{InterpreterSettings, TransformExt};
use hayro::hayro_syntax::Pdf;
use hayro::kurbo::Affine;
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::{PixmapSettings, RenderCache, RenderSettings};

use crate::bindings::exports::quarry::preview::render::{PageImage, RenderError};
use crate::{bounds, text_layer};

/// Draws page `page` (1-based) of `bytes` at most `width` pixels wide, with its pixels in gray
/// when `gray`.
pub(crate) fn render(
    bytes: Vec<u8>,
    page: u32,
    width: u32,
    gray: bool,
) -> Result<PageImage, RenderError> {
    let pdf = Pdf::new(bytes)
        .map_err(|e| RenderError::Malformed(format!("not a PDF file hayro can read: {e:?}")))?;
    let pages = pdf.pages();
    let page_count = u32::try_from(pages.len()).unwrap_or(u32::MAX);
    let index = usize::try_from(page.saturating_sub(1)).unwrap_or(usize::MAX);
    let Some(drawn) = (page >= 1).then(|| pages.get(index)).flatten() else {
        return Err(RenderError::NoSuchPage(page_count));
    };
    let (w, h) = drawn.render_dimensions();
    let scale = bounds::scale(w, h, width)
        .ok_or_else(|| RenderError::Malformed(format!("page {page} has no size ({w} by {h})")))?;
    if w * scale < 1.0 || h * scale < 1.0 {
        return Err(RenderError::TooLarge(format!(
            "page {page} ({w} by {h}) is too thin to draw: it would be under a pixel across"
        )));
    }
    let transform = Affine::scale(f64::from(scale)) * drawn.initial_transform(true).to_kurbo();
    let pixmap = hayro::render(
        drawn,
        &RenderCache::new(),
        &InterpreterSettings::default(),
        &RenderSettings::default(),
        &PixmapSettings {
            x_scale: scale,
            y_scale: scale,
            bg_color: WHITE,
        },
    );
    let (width, height) = (u32::from(pixmap.width()), u32::from(pixmap.height()));
    let words = text_layer::words(drawn, transform, width, height);
    let gray = if gray {
        bounds::gray(pixmap.data_as_u8_slice())
    } else {
        Vec::new()
    };
    let png = pixmap
        .into_png()
        .map_err(|e| RenderError::Malformed(format!("the page could not be encoded: {e:?}")))?;
    Ok(PageImage {
        png,
        width,
        height,
        page_count,
        words,
        gray,
    })
}
