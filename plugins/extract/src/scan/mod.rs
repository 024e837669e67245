//! Pages without text read by the host's OCR (`read-scans`, WIT 0.4.0): images, and the
//! scanned pages of PDFs. Every image is decoded here, inside the sandbox and within bounds
//! (`limits.rs`), and only its gray pixels reach the host.

mod ascii;
mod bilevel;
mod color;
mod compressed;
mod image_file;
mod indexed;
mod jpx;
mod limits;
mod pdf_images;
mod png_predictor;

use std::time::{Duration, Instant};

use quarry_sdk::ocr::{self, GrayImage, OcrError};
use quarry_sdk::{Error, LogLevel, ScannedPage};

use crate::Kind;

/// Pages read per call stop once this much time has passed (the call's limit is 30 s, and a
/// page takes one to a few seconds): the host asks again for the rest.
const CALL_BUDGET: Duration = Duration::from_secs(12);

/// Reads by OCR the `pages` of a file of `kind` whose bytes are `bytes` (the file at `name`,
/// for the log).
///
/// A page of a PDF of several pages whose image cannot be read (broken, past a bound, or the
/// models failed on it) is answered empty, and the log says why: the other pages are read. The
/// only page of a PDF, or an image, fails its document with the reason instead, and so does
/// what ends the call for every page (the host's OCR gone, or the call's time spent) before
/// a page is read; after one, the pages read are answered and the host asks again for the rest.
pub fn read(
    kind: Kind,
    bytes: &[u8],
    pages: &[u32],
    name: &str,
) -> Result<Vec<ScannedPage>, Error> {
    let started = Instant::now();
    if kind == Kind::Pdf {
        let pdf = pdf_images::Pdf::load(bytes)?;
        let alone = pdf.page_count() == 1;
        let mut read = Vec::new();
        for &page in pages {
            if !read.is_empty() && started.elapsed() > CALL_BUDGET {
                break;
            }
            let text = match pdf.page_image(page).and_then(|image| {
                image.map(recognize).transpose().map_err(|e| match e {
                    Error::Other(why) => Error::Other(format!("page {page}: {why}")),
                    other => other,
                })
            }) {
                Ok(text) => text.unwrap_or_default(),
                Err(Error::Other(why)) if !alone => {
                    quarry_sdk::log(
                        LogLevel::Warn,
                        &format!("{name}: {why}; the page is left unread, the others are read"),
                    );
                    (String::new(), 0.0)
                }
                // The call's time is spent: the host asks again for the rest.
                Err(Error::Unavailable(_)) if !read.is_empty() => break,
                Err(e) => return Err(e),
            };
            read.push(ScannedPage {
                page,
                text: text.0,
                confidence: text.1,
            });
        }
        return Ok(read);
    }
    if pages.first() != Some(&1) {
        return Err(Error::Other("an image has one page, page 1".to_owned()));
    }
    let (text, confidence) = recognize(image_file::decode(bytes)?)?;
    Ok(vec![ScannedPage {
        page: 1,
        text,
        confidence,
    }])
}

/// The text in `image` (scaled to the host's limit first) and its confidence. An image too
/// small to hold a legible word (a spacer, a dot) is not sent.
fn recognize(image: GrayImage) -> Result<(String, f32), Error> {
    if image.width.min(image.height) < limits::MIN_SIDE {
        return Ok((String::new(), 0.0));
    }
    let image = ocr::fit(image, limits::OCR_PIXELS);
    let read = ocr::recognize_text(&image).map_err(|e| match e {
        // Not about this image: the call ends, and the host asks again later.
        OcrError::Unavailable(why) => Error::Unavailable(format!("OCR: {why}")),
        OcrError::TooLarge(why) | OcrError::Invalid(why) | OcrError::Failed(why) => {
            Error::Other(format!("OCR: {why}"))
        }
    })?;
    Ok((read.text, read.confidence))
}
