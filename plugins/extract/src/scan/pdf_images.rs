//! The image of a scanned PDF page: the largest image the page draws, decoded within the
//! bounds of `limits.rs`. JPEG (`DCTDecode`), JPEG 2000 (`JPXDecode`), CCITT fax and JBIG2
//! (`bilevel.rs`), Flate, LZW and run-length (`compressed.rs`, Flate and LZW with or without
//! PNG predictors) and uncompressed images in gray, RGB or CMYK at 8 bits, 1-bit gray, and
//! indexed colours of 1 to 8 bits (`indexed.rs`) are read, behind ASCII85 or ASCIIHex text
//! encodings or not (`ascii.rs`); a page whose image is in another encoding or colour space is
//! left unread, and says so in the log.

use std::borrow::Cow;
use std::collections::BTreeMap;

use lopdf::xobject::PdfImage;
use lopdf::{Document, Object, ObjectId};
use quarry_sdk::ocr::GrayImage;
use quarry_sdk::{Error, LogLevel};

use super::compressed::{inflate, unlzw, unrun};
use super::indexed::Palette;
use super::{ascii, bilevel, color, image_file, jpx, limits, png_predictor};

/// A PDF opened to read its pages' images.
pub struct Pdf {
    doc: Document,
    pages: BTreeMap<u32, ObjectId>,
}

impl Pdf {
    /// Opens the PDF in `bytes` (decrypted with the empty password, as text extraction does).
    pub fn load(bytes: &[u8]) -> Result<Pdf, Error> {
        let mut doc = Document::load_mem(bytes)
            .map_err(|e| Error::Other(format!("not a readable PDF: {e}")))?;
        if doc.is_encrypted() {
            doc.decrypt("")
                .map_err(|e| Error::Other(format!("PDF is password-protected: {e}")))?;
        }
        let pages = doc.get_pages();
        Ok(Pdf { doc, pages })
    }

    /// How many pages the PDF has.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// The gray pixels of the largest image page `page` draws; `None` when it draws none that
    /// can be read here.
    pub fn page_image(&self, page: u32) -> Result<Option<GrayImage>, Error> {
        let Some(&id) = self.pages.get(&page) else {
            return Err(Error::NotFound(format!(
                "the PDF has no page {page} (it has {})",
                self.pages.len()
            )));
        };
        let images = self.doc.get_page_images(id).unwrap_or_default();
        let Some(largest) = images
            .iter()
            .max_by_key(|i| i.width.max(0).saturating_mul(i.height.max(0)))
        else {
            return Ok(None);
        };
        decode(&self.doc, largest).map_err(|e| Error::Other(format!("page {page}: {e}")))
    }
}

/// The gray pixels of `image` of `doc`, or `None` for an encoding not read here.
fn decode(doc: &Document, image: &PdfImage<'_>) -> Result<Option<GrayImage>, String> {
    let (w, h) = (
        u64::try_from(image.width).unwrap_or(0),
        u64::try_from(image.height).unwrap_or(0),
    );
    limits::check(w, h)?;
    let filters = image.filters.clone().unwrap_or_default();
    let (content, filters) = without_text_encodings(image.content, &filters)?;
    let data: &[u8] = &content;
    let raw = match filters.as_slice() {
        ["DCTDecode"] => {
            return image_file::decode_jpeg(data)
                .map(Some)
                .map_err(|e| format!("{e:?}"));
        }
        ["JPXDecode"] => return jpx::decode(data).map(Some),
        ["CCITTFaxDecode"] => {
            let params = fax_params(image.origin_dict);
            let (w, h) = (w as u32, h as u32); // within limits::MAX_SIDE
            return bilevel::fax(data, params, w, h, inverted(image.origin_dict)).map(Some);
        }
        ["JBIG2Decode"] => {
            let globals = decode_params(image.origin_dict)
                .and_then(|p| p.get(b"JBIG2Globals").ok())
                .and_then(|g| g.as_reference().ok())
                .and_then(|id| doc.get_object(id).ok())
                .and_then(|g| g.as_stream().ok())
                .map(|g| globals(g, w, h))
                .transpose()?;
            let (w, h) = (w as u32, h as u32); // within limits::MAX_SIDE
            return bilevel::jbig2(data, globals.as_deref(), w, h, inverted(image.origin_dict))
                .map(Some);
        }
        ["FlateDecode"] => inflate(data, w, h)?,
        ["LZWDecode"] => unlzw(data, w, h, early_change(image.origin_dict))?,
        ["RunLengthDecode"] => unrun(data, w, h)?,
        [] => data.to_vec(),
        other => {
            quarry_sdk::log(
                LogLevel::Info,
                &format!("a page image encoded {other:?} is not read by OCR here"),
            );
            return Ok(None);
        }
    };
    let bits = image.bits_per_component.unwrap_or(8);
    let palette = match image.origin_dict.get(b"ColorSpace") {
        Ok(space) => Palette::of(doc, space)?,
        Err(_) => None,
    };
    let components = match image.color_space.as_deref() {
        _ if palette.is_some() => 1,
        Some("DeviceGray" | "CalGray") => 1,
        Some("DeviceRGB" | "CalRGB") => 3,
        Some("DeviceCMYK") => 4,
        Some("ICCBased") | None => 0, // told from the data's length below
        Some(_) => return Ok(None),   // indexed and other colour spaces
    };
    let (w, h, bits) = (w as usize, h as usize, usize::try_from(bits).unwrap_or(0));
    let predicted = predictor(image.origin_dict).is_some();
    // An ICC-based colour space's number of components, told from the data's length.
    let components = match components {
        0 if predicted => (raw.len() / h.max(1)).saturating_sub(1) * 8 / (w * bits).max(1),
        0 => raw.len() * 8 / (w * h * bits).max(1),
        n => n,
    };
    let raw = if predicted {
        let row = (w * components * bits).div_ceil(8);
        png_predictor::unfilter(&raw, row, (components * bits / 8).max(1))?
    } else {
        raw
    };
    if let Some(palette) = palette {
        let palette = if inverted(image.origin_dict) {
            palette.reversed()
        } else {
            palette
        };
        return palette.gray(&raw, w, h, bits).map(Some);
    }
    let mut gray = to_gray(&raw, w, h, bits, components)?;
    // A 1-bit image (or a stencil mask) turned over by its `/Decode` array, as viewers show it.
    if bits == 1 && inverted(image.origin_dict) {
        gray.pixels.iter_mut().for_each(|p| *p = 255 - *p);
    }
    Ok(Some(gray))
}

/// An image's data with the text encodings before its codec (ASCII85, ASCIIHex) taken off, and
/// the filters left.
fn without_text_encodings<'a>(
    data: &'a [u8],
    filters: &'a [String],
) -> Result<(Cow<'a, [u8]>, Vec<&'a str>), String> {
    let mut content = Cow::Borrowed(data);
    let mut left = filters;
    while let [first, rest @ ..] = left {
        content = match first.as_str() {
            "ASCIIHexDecode" | "AHx" => ascii::unhex(&content)?.into(),
            "ASCII85Decode" | "A85" => ascii::un85(&content)?.into(),
            _ => break,
        };
        left = rest;
    }
    Ok((content, left.iter().map(String::as_str).collect()))
}

/// The shared segments of a JBIG2 image of `w x h` pixels: its `/JBIG2Globals` stream as it is,
/// or inflated within the image's bound (symbol dictionaries are smaller than the page).
fn globals(stream: &lopdf::Stream, w: u64, h: u64) -> Result<Vec<u8>, String> {
    match stream.filters().unwrap_or_default().as_slice() {
        [] => Ok(stream.content.clone()),
        [b"FlateDecode"] => inflate(&stream.content, w, h),
        other => Err(format!(
            "its JBIG2 globals are encoded {:?}, not read here",
            other
                .iter()
                .map(|f| String::from_utf8_lossy(f))
                .collect::<Vec<_>>()
        )),
    }
}

/// An image's `/DecodeParms`: its codec's, the last of a chain of filters (the text
/// encodings before it take none).
fn decode_params(dict: &lopdf::Dictionary) -> Option<&lopdf::Dictionary> {
    match dict.get(b"DecodeParms").ok()? {
        Object::Dictionary(d) => Some(d),
        Object::Array(a) => a.last()?.as_dict().ok(),
        _ => None,
    }
}

/// Whether an image's `/Decode` array turns its samples over (`[1 0]`).
fn inverted(dict: &lopdf::Dictionary) -> bool {
    dict.get(b"Decode")
        .and_then(Object::as_array)
        .ok()
        .and_then(|d| d.first())
        .and_then(|first| first.as_float().ok())
        .is_some_and(|first| first >= 0.5)
}

/// The CCITT fax parameters of an image's `/DecodeParms`, each missing one at its default.
fn fax_params(dict: &lopdf::Dictionary) -> bilevel::Fax {
    let mut fax = bilevel::Fax::default();
    let Some(params) = decode_params(dict) else {
        return fax;
    };
    let int = |key: &[u8]| params.get(key).and_then(Object::as_i64).ok();
    let flag =
        |key: &[u8], default: bool| params.get(key).and_then(Object::as_bool).unwrap_or(default);
    fax.k = int(b"K").unwrap_or(fax.k);
    fax.columns = int(b"Columns")
        .and_then(|c| u32::try_from(c).ok())
        .unwrap_or(fax.columns);
    fax.end_of_line = flag(b"EndOfLine", fax.end_of_line);
    fax.byte_aligned = flag(b"EncodedByteAlign", fax.byte_aligned);
    fax.end_of_block = flag(b"EndOfBlock", fax.end_of_block);
    fax.black_is_1 = flag(b"BlackIs1", fax.black_is_1);
    fax
}

/// Whether an LZW image's code width grows a code early (`/EarlyChange`, 1 unless set to 0).
fn early_change(dict: &lopdf::Dictionary) -> bool {
    decode_params(dict).and_then(|p| p.get(b"EarlyChange").and_then(Object::as_i64).ok()) != Some(0)
}

/// The `/Predictor` of an image's `/DecodeParms`, when it uses PNG's (10 and above).
fn predictor(dict: &lopdf::Dictionary) -> Option<i64> {
    decode_params(dict)?
        .get(b"Predictor")
        .and_then(Object::as_i64)
        .ok()
        .filter(|&p| p >= 10)
}

/// Gray pixels of raw samples: 1-bit gray, or 8-bit with `components` a pixel.
fn to_gray(
    raw: &[u8],
    w: usize,
    h: usize,
    bits: usize,
    components: usize,
) -> Result<GrayImage, String> {
    let short = || {
        format!(
            "its image data holds {} bytes, too few for {w}x{h}",
            raw.len()
        )
    };
    let pixels: Vec<u8> = match bits {
        1 => {
            let row = w.div_ceil(8);
            if raw.len() < row * h {
                return Err(short());
            }
            (0..h)
                .flat_map(|y| (0..w).map(move |x| (y, x)))
                .map(|(y, x)| {
                    let bit = raw[y * row + x / 8] >> (7 - x % 8) & 1;
                    if bit == 1 { 255 } else { 0 }
                })
                .collect()
        }
        8 => {
            if components == 0 || raw.len() < w * h * components {
                return Err(short());
            }
            raw.chunks_exact(components)
                .take(w * h)
                .map(color::gray)
                .collect()
        }
        other => return Err(format!("{other} bits a sample are not read here")),
    };
    Ok(GrayImage {
        width: u32::try_from(w).map_err(|e| e.to_string())?,
        height: u32::try_from(h).map_err(|e| e.to_string())?,
        pixels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bit_rows_are_padded_to_bytes_and_one_is_white() {
        let image = to_gray(&[0b1010_0000, 0b0100_0000], 3, 2, 1, 1).expect("gray");
        assert_eq!(image.pixels, vec![255, 0, 255, 0, 255, 0]);
    }

    #[test]
    fn a_decode_array_of_1_0_turns_an_image_over_and_no_other_does() {
        let dict = |decode: Option<Vec<Object>>| {
            let mut dict = lopdf::Dictionary::new();
            if let Some(decode) = decode {
                dict.set("Decode", Object::Array(decode));
            }
            dict
        };
        assert!(inverted(&dict(Some(vec![1.into(), 0.into()]))));
        assert!(inverted(&dict(Some(vec![
            Object::Real(1.0),
            Object::Real(0.0)
        ]))));
        assert!(!inverted(&dict(Some(vec![0.into(), 1.into()]))));
        assert!(!inverted(&dict(None)));
    }

    #[test]
    fn rgb_and_cmyk_become_gray() {
        let rgb = to_gray(&[255, 255, 255, 0, 0, 0], 2, 1, 8, 3).expect("rgb");
        assert_eq!(rgb.pixels, vec![255, 0]);
        let cmyk = to_gray(&[0, 0, 0, 0, 0, 0, 0, 255], 2, 1, 8, 4).expect("cmyk");
        assert_eq!(cmyk.pixels, vec![255, 0]);
    }

    #[test]
    fn jbig2_globals_inflate_within_the_bound_of_their_image() {
        use std::io::Write;
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&vec![0u8; 1 << 20]).expect("write");
        let mut dict = lopdf::Dictionary::new();
        dict.set("Filter", Object::Name(b"FlateDecode".to_vec()));
        let bomb = lopdf::Stream::new(dict, encoder.finish().expect("finish"));
        let refused = globals(&bomb, 10, 10).expect_err("refused");
        assert!(refused.contains("expands past"), "{refused}");
        let plain = lopdf::Stream::new(lopdf::Dictionary::new(), vec![1, 2, 3]);
        assert_eq!(globals(&plain, 10, 10), Ok(vec![1, 2, 3]));
    }
}
