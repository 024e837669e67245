//! The OCR slice of an instance's state: `recognize-text` reads text in the pixels a plugin
//! hands over with the host's engine, only during `read-scans` (so a sync's extraction never
//! waits for OCR), one image at a time, each checked against its size and the pixel limit
//! before the engine sees it.

use std::sync::Arc;

use quarry_core::ocr::{GrayImage, OcrRefusal, Recognized, TextRecognizer};

/// Whether and with what an instance may read text in images.
#[derive(Default)]
pub(crate) struct OcrGate {
    engine: Option<Arc<dyn TextRecognizer>>,
    /// True while a `read-scans` call runs.
    open: bool,
    /// Images read by this instance.
    pub(crate) images: u64,
}

impl OcrGate {
    /// A gate over `engine`, closed; `None` when the host has no OCR models.
    pub(crate) fn new(engine: Option<Arc<dyn TextRecognizer>>) -> OcrGate {
        OcrGate {
            engine,
            open: false,
            images: 0,
        }
    }

    /// Opens the gate for a `read-scans` call, or closes it after.
    pub(crate) fn set_open(&mut self, open: bool) {
        self.open = open;
    }

    /// The text in `image`, or why it is not read.
    pub(crate) fn recognize(&mut self, image: &GrayImage) -> Result<Recognized, OcrRefusal> {
        let Some(engine) = &self.engine else {
            return Err(OcrRefusal::Unavailable(
                "this host has no OCR models (run `make setup`, or see docs/ocr.md)".to_owned(),
            ));
        };
        if !self.open {
            return Err(OcrRefusal::Unavailable(
                "the host reads text in images only during read-scans".to_owned(),
            ));
        }
        image.check()?;
        self.images += 1;
        engine.recognize(image)
    }
}
