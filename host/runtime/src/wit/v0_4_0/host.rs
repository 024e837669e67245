//! The host interface of 0.4.0 (`quarry:connector/host`): 0.3.0's, and `recognize-text`
//! (`sandbox/ocr.rs`), on the version-independent [`HostState`].

use quarry_core::ocr::{GrayImage, OcrRefusal};

use super::bindings::quarry::connector::{host, types};
use super::convert;
use crate::sandbox::files::bulk::{EntryKind, ReadError};
use crate::sandbox::instance::HostState;

impl types::Host for HostState {}

impl host::Host for HostState {
    host_calls_since_0_1_0!();
    host_calls_since_0_3_0!();

    fn recognize_text(
        &mut self,
        image: types::GrayImage,
    ) -> Result<types::Recognized, types::OcrError> {
        let image = GrayImage {
            width: image.width,
            height: image.height,
            pixels: image.pixels,
        };
        let read = self
            .ocr
            .recognize(&image)
            .map_err(|refusal| match refusal {
                OcrRefusal::Unavailable(m) => types::OcrError::Unavailable(m),
                OcrRefusal::TooLarge(m) => types::OcrError::TooLarge(m),
                OcrRefusal::Invalid(m) => types::OcrError::Invalid(m),
                OcrRefusal::Failed(m) => types::OcrError::Failed(m),
            })?;
        Ok(types::Recognized {
            text: read.text,
            lines: read
                .lines
                .into_iter()
                .map(|line| types::TextLine {
                    text: line.text,
                    confidence: line.confidence,
                    left: line.bounds[0],
                    top: line.bounds[1],
                    width: line.bounds[2],
                    height: line.bounds[3],
                })
                .collect(),
            confidence: read.confidence,
            turned: read.turned,
        })
    }
}
