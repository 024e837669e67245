//! Quarry's page renderer (`wit/preview@0.1.0`): draws one page of a PDF file, or an image, as a
//! PNG of a bounded size (or a page of text, laid out), with a PDF page's text layer (each character's box) and, when asked,
//! the pixels in gray for the host's OCR. It runs in a sandbox of its own with no grant at all: the host hands it
//! the file's bytes, bounds its time and memory, and never parses the file itself.

mod bounds;
mod pdf;
mod picture;
mod text_layer;
mod text_page;

/// Bindings generated from `wit/preview@0.1.0` (generated code carries no docs).
#[allow(missing_docs)]
mod bindings {
    wit_bindgen::generate!({
        path: "../../wit/preview@0.1.0",
        world: "previewer",
    });
}

use bindings::exports::quarry::preview::render::{Guest, PageImage, RenderError};

struct Previewer;

impl Guest for Previewer {
    fn render(
        bytes: Vec<u8>,
        mime_type: String,
        page: u32,
        width: u32,
        gray: bool,
    ) -> Result<PageImage, RenderError> {
        let width = bounds::width(width)?;
        match mime_type.as_str() {
            "application/pdf" => pdf::render(bytes, page, width, gray),
            m if m.starts_with("image/") && page == 1 => picture::render(&bytes, width, gray),
            m if m.starts_with("image/") => Err(RenderError::NoSuchPage(1)),
            // A page of a document's text, as the host hands it over.
            "text/plain" if page == 1 => text_page::render(&bytes, width, gray),
            "text/plain" => Err(RenderError::NoSuchPage(1)),
            other => Err(RenderError::Unsupported(format!(
                "{other} is not drawn: previews are drawn for PDF files, images and text"
            ))),
        }
    }
}

bindings::export!(Previewer with_types_in bindings);
