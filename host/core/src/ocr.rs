//! Text read from images (OCR): what a connector hands the host, what the host answers, and the
//! seam between the runtime, which takes pixels from a sandboxed plugin, and the engine that
//! reads them (`quarry-ocr`).

use std::fmt;

/// The most pixels one image handed to the OCR engine may have (about 6,000 x 6,000): a page
/// scanned at 600 dpi fits. A connector scales larger images down first.
pub const MAX_OCR_PIXELS: u64 = 36_000_000;

/// An 8-bit grayscale image, rows top to bottom, `width * height` bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct GrayImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The pixels, row by row; 0 is black.
    pub pixels: Vec<u8>,
}

impl fmt::Debug for GrayImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GrayImage({}x{})", self.width, self.height)
    }
}

impl GrayImage {
    /// Checks that the image is what it says and within [`MAX_OCR_PIXELS`].
    pub fn check(&self) -> Result<(), OcrRefusal> {
        let pixels = u64::from(self.width) * u64::from(self.height);
        if self.width == 0 || self.height == 0 || self.pixels.len() as u64 != pixels {
            return Err(OcrRefusal::Invalid(format!(
                "an image of {}x{} pixels needs {pixels} bytes, not {}",
                self.width,
                self.height,
                self.pixels.len()
            )));
        }
        if pixels > MAX_OCR_PIXELS {
            return Err(OcrRefusal::TooLarge(format!(
                "{}x{} pixels is over the {MAX_OCR_PIXELS} an image may have; scale it down",
                self.width, self.height
            )));
        }
        Ok(())
    }
}

/// A line of text found in an image.
#[derive(Debug, Clone, PartialEq)]
pub struct TextLine {
    /// The text.
    pub text: String,
    /// How sure the engine is, 0 to 1 (the mean of its characters' probabilities).
    pub confidence: f32,
    /// Where it is in the image turned upright (see [`Recognized::turned`]): left, top, width,
    /// height.
    pub bounds: [u32; 4],
    /// Where each character of `text` (Unicode scalar values, in order) is across the line:
    /// its left and right edges, in the same pixels as `bounds` (as the recognizer placed it:
    /// about right, not to the pixel).
    pub spans: Vec<[u32; 2]>,
}

/// What the engine read in an image.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Recognized {
    /// The text in reading order: lines of a row joined by spaces, rows by line breaks, blocks
    /// separated by a blank line.
    pub text: String,
    /// The lines it is made of, in reading order.
    pub lines: Vec<TextLine>,
    /// Mean confidence over the characters read, 0 to 1 (0 when nothing was read).
    pub confidence: f32,
    /// Degrees the image was turned clockwise to read it upright: 0, 90, 180 or 270.
    pub turned: u32,
}

/// Why the engine did not read an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OcrRefusal {
    /// No OCR engine is loaded (the models are not installed, or OCR is off).
    Unavailable(String),
    /// The image is over [`MAX_OCR_PIXELS`].
    TooLarge(String),
    /// The pixel buffer does not match its size.
    Invalid(String),
    /// The engine failed.
    Failed(String),
}

impl fmt::Display for OcrRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OcrRefusal::Unavailable(m) => write!(f, "OCR is unavailable: {m}"),
            OcrRefusal::TooLarge(m) => write!(f, "image too large for OCR: {m}"),
            OcrRefusal::Invalid(m) => write!(f, "not a valid image: {m}"),
            OcrRefusal::Failed(m) => write!(f, "OCR failed: {m}"),
        }
    }
}

/// Reads text in images: the engine behind the connectors' `recognize-text`.
pub trait TextRecognizer: Send + Sync {
    /// The text in `image`, which has passed [`GrayImage::check`].
    fn recognize(&self, image: &GrayImage) -> Result<Recognized, OcrRefusal>;

    /// A short name of the models, kept with each result (`ppocr-v6-small-int8-det`).
    fn models(&self) -> &str;

    /// Lets go of the models' memory until the next image, when there is nothing to read.
    fn release(&self) {}
}

/// The text OCR found on one page of a document, as a connector answers `read-scans`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScannedPage {
    /// The page, counted from 1 (an image is page 1).
    pub page: u32,
    /// Its text; empty when none was found.
    pub text: String,
    /// The mean confidence of that text, 0 to 1.
    pub confidence: f32,
}
