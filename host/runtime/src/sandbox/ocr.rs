//! The OCR slice of an instance's state: `recognize-text` reads text in the pixels a plugin
//! hands over with the host's engine, only during `read-scans` (so a sync's extraction never
//! waits for OCR), one image at a time, each checked against its size and the pixel limit
//! before the engine sees it, and none once the call's deadline has passed.

use std::sync::Arc;

use quarry_core::ocr::{GrayImage, OcrRefusal, Recognized, TextRecognizer};

use crate::policy::deadline::CallDeadline;

/// Whether and with what an instance may read text in images.
#[derive(Default)]
pub(crate) struct OcrGate {
    engine: Option<Arc<dyn TextRecognizer>>,
    /// True while a `read-scans` call runs.
    open: bool,
    /// When the running call must end: no image is read after it (reading one is not
    /// interrupted, so a call ends at most one image past its deadline).
    deadline: CallDeadline,
}

impl OcrGate {
    /// A gate over `engine`, closed; `None` when the host has no OCR models.
    pub(crate) fn new(engine: Option<Arc<dyn TextRecognizer>>) -> OcrGate {
        OcrGate {
            engine,
            open: false,
            deadline: CallDeadline::default(),
        }
    }

    /// The running call's deadline.
    pub(crate) fn set_deadline(&mut self, deadline: CallDeadline) {
        self.deadline = deadline;
    }

    /// Opens the gate for a `read-scans` call, or closes it after.
    pub(crate) fn set_open(&mut self, open: bool) {
        self.open = open;
    }

    /// The text in `image`, or why it is not read.
    pub(crate) fn recognize(&mut self, image: &GrayImage) -> Result<Recognized, OcrRefusal> {
        if !self.open {
            return Err(OcrRefusal::Unavailable(
                "the host reads text in images only during read-scans".to_owned(),
            ));
        }
        if self.deadline.left().is_zero() {
            return Err(OcrRefusal::Unavailable(
                "the call's time limit is reached".to_owned(),
            ));
        }
        image.check()?;
        let Some(engine) = &self.engine else {
            return Err(OcrRefusal::Unavailable(
                "this host has no OCR models (run `make setup`, or see docs/ocr.md)".to_owned(),
            ));
        };
        engine.recognize(image)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn image(width: u32, height: u32) -> GrayImage {
        GrayImage {
            width,
            height,
            pixels: vec![255; (width * height) as usize],
        }
    }

    fn refusal(gate: &mut OcrGate, image: &GrayImage) -> OcrRefusal {
        gate.recognize(image).expect_err("refused")
    }

    #[test]
    fn images_are_read_only_during_read_scans_before_the_deadline_and_within_bounds() {
        let mut gate = OcrGate::new(None);
        let page = image(100, 50);
        let closed = refusal(&mut gate, &page);
        assert!(
            closed.to_string().contains("only during read-scans"),
            "{closed}"
        );
        gate.set_open(true);
        let late = refusal(&mut gate, &page);
        assert!(late.to_string().contains("time limit"), "{late}");
        gate.set_deadline(CallDeadline::starting_now(Duration::from_secs(30)));
        let short = GrayImage {
            pixels: vec![0; 10],
            ..image(100, 50)
        };
        assert!(matches!(refusal(&mut gate, &short), OcrRefusal::Invalid(_)));
        let huge = GrayImage {
            width: 7000,
            height: 7000,
            pixels: Vec::new(),
        };
        assert!(matches!(refusal(&mut gate, &huge), OcrRefusal::Invalid(_)));
        assert!(matches!(
            refusal(&mut gate, &image(6001, 6000)),
            OcrRefusal::TooLarge(_)
        ));
        let no_models = refusal(&mut gate, &page);
        assert!(
            no_models.to_string().contains("no OCR models"),
            "{no_models}"
        );
        gate.set_open(false);
        assert!(
            refusal(&mut gate, &page)
                .to_string()
                .contains("only during")
        );
    }
}
