//! A scanned PDF page's black-and-white image: CCITT fax (`CCITTFaxDecode`, Group 3 and 4, as
//! office scanners and fax software write them) and JBIG2 (`JBIG2Decode`, as Acrobat's and
//! archives' scans are compressed), decoded to gray pixels of the size the image dictionary
//! declares (already checked against `limits.rs`). Rows past that size are not kept.

use hayro_ccitt::{DecodeSettings, DecoderContext, EncodingMode};
use hayro_jbig2::{Globals, Page};
use quarry_sdk::ocr::GrayImage;

use super::limits;

/// Gray pixels being written row by row: black 0, white 255 (a PDF's default for a 1-bit gray
/// image or a stencil mask, after the image's `/Decode` array).
struct Rows {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
    /// The pixels of the current row written so far.
    column: usize,
    row: usize,
    /// The gray of a pixel the encoding calls black (255 when `/Decode [1 0]` or
    /// `/BlackIs1 true` turns the image over).
    black: u8,
}

impl Rows {
    fn new(width: usize, height: usize, black: u8) -> Rows {
        Rows {
            width,
            height,
            // White until a row says otherwise, so a truncated image keeps its rows read.
            pixels: vec![255 - black; width * height],
            column: 0,
            row: 0,
            black,
        }
    }

    /// The row being written, when it is within the image.
    fn current(&mut self) -> Option<&mut [u8]> {
        (self.row < self.height)
            .then(|| &mut self.pixels[self.row * self.width..(self.row + 1) * self.width])
    }

    fn image(self) -> Result<GrayImage, String> {
        if self.row == 0 {
            return Err("its bi-level image holds no row".to_owned());
        }
        Ok(GrayImage {
            width: u32::try_from(self.width).map_err(|e| e.to_string())?,
            height: u32::try_from(self.height).map_err(|e| e.to_string())?,
            pixels: self.pixels,
        })
    }
}

impl hayro_ccitt::Decoder for Rows {
    fn push_row(&mut self, changes: &[u32]) {
        let (width, black) = (self.width, self.black);
        if let Some(row) = self.current() {
            // Pixels from changes[0] to changes[1] are black, from changes[2] to changes[3]…
            for run in changes.chunks(2) {
                let start = (run[0] as usize).min(width);
                let end = run.get(1).map_or(width, |&e| (e as usize).min(width));
                row[start..end.max(start)].fill(black);
            }
        }
        self.row += 1;
    }
}

impl hayro_jbig2::Decoder for Rows {
    fn push_pixel(&mut self, black: bool) {
        let (column, gray) = (self.column, self.black);
        if black && let Some(pixel) = self.current().and_then(|row| row.get_mut(column)) {
            *pixel = gray;
        }
        self.column += 1;
    }

    fn push_pixel_chunk(&mut self, black: bool, chunk_count: u32) {
        let (start, gray) = (self.column, self.black);
        let end = start.saturating_add(8 * chunk_count as usize);
        if black && let Some(row) = self.current() {
            let (start, end) = (start.min(row.len()), end.min(row.len()));
            row[start..end].fill(gray);
        }
        self.column = end;
    }

    fn next_line(&mut self) {
        self.row += 1;
        self.column = 0;
    }
}

/// The parameters of a `CCITTFaxDecode` image (PDF 32000-1, table 11), with their defaults.
#[derive(Debug, Clone, Copy)]
pub struct Fax {
    /// `/K`: negative for Group 4, 0 for Group 3 one-dimensional, positive for mixed.
    pub k: i64,
    /// `/Columns`.
    pub columns: u32,
    /// `/EndOfLine`.
    pub end_of_line: bool,
    /// `/EncodedByteAlign`.
    pub byte_aligned: bool,
    /// `/EndOfBlock`.
    pub end_of_block: bool,
    /// `/BlackIs1`.
    pub black_is_1: bool,
}

impl Default for Fax {
    fn default() -> Fax {
        Fax {
            k: 0,
            columns: 1728,
            end_of_line: false,
            byte_aligned: false,
            end_of_block: true,
            black_is_1: false,
        }
    }
}

/// The gray pixels of a `width x height` CCITT fax image; `inverted` when its `/Decode` array
/// is `[1 0]`.
pub fn fax(
    data: &[u8],
    params: Fax,
    width: u32,
    height: u32,
    inverted: bool,
) -> Result<GrayImage, String> {
    if params.columns == 0 || params.columns > limits::MAX_SIDE {
        return Err(format!(
            "its CCITT fax image declares {} columns (at most {} are read)",
            params.columns,
            limits::MAX_SIDE
        ));
    }
    let settings = DecodeSettings {
        columns: params.columns,
        rows: height,
        end_of_block: params.end_of_block,
        end_of_line: params.end_of_line,
        rows_are_byte_aligned: params.byte_aligned,
        encoding: match params.k {
            k if k < 0 => EncodingMode::Group4,
            0 => EncodingMode::Group3_1D,
            _ => EncodingMode::Group3_2D,
        },
        strict: false,
    };
    // A fax pixel's sample is 0 when black unless /BlackIs1; a 0 sample is black unless the
    // /Decode array turns it over.
    let black = if params.black_is_1 != inverted {
        255
    } else {
        0
    };
    let mut rows = Rows::new(width as usize, height as usize, black);
    let decoded = hayro_ccitt::decode(data, &mut rows, &mut DecoderContext::new(settings));
    match decoded {
        // A damaged stream keeps the rows read before the damage, as viewers show them.
        Err(e) if rows.row == 0 => Err(format!("its CCITT fax image is not readable: {e:?}")),
        _ => rows.image(),
    }
}

/// The gray pixels of a `width x height` JBIG2 image with the shared segments of its
/// `/JBIG2Globals` stream, if any; `inverted` when its `/Decode` array is `[1 0]`.
pub fn jbig2(
    data: &[u8],
    globals: Option<&[u8]>,
    width: u32,
    height: u32,
    inverted: bool,
) -> Result<GrayImage, String> {
    let unreadable = |e: hayro_jbig2::DecodeError| format!("its JBIG2 image is not readable: {e}");
    let settings = hayro_jbig2::DecodeSettings::default();
    let globals = globals
        .map(|g| Globals::new(g, &settings))
        .transpose()
        .map_err(unreadable)?;
    let page = Page::new_embedded(data, globals.as_ref(), &settings).map_err(unreadable)?;
    // The page's own size is what its decoder allocates: it is held to the image's, which the
    // bounds have passed (a striped page of unknown height declares 0xffffffff).
    if page.width() > width || (page.height() > height && page.height() != u32::MAX) {
        return Err(format!(
            "its JBIG2 page of {}x{} pixels is larger than the {width}x{height} image",
            page.width(),
            page.height()
        ));
    }
    // JBIG2 calls black 1, and PDF's filter hands black on as 0 (PDF 32000-1, 7.4.7).
    let black = if inverted { 255 } else { 0 };
    let mut rows = Rows::new(width as usize, height as usize, black);
    page.decode(&mut rows).map_err(unreadable)?;
    rows.image()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bits` ("0" and "1") packed into bytes, the last padded with zeros.
    fn packed(bits: &str) -> Vec<u8> {
        let mut bytes = vec![0u8; bits.len().div_ceil(8)];
        for (i, b) in bits.bytes().enumerate() {
            if b == b'1' {
                bytes[i / 8] |= 0x80 >> (i % 8);
            }
        }
        bytes
    }

    /// Group 4 rows of an 8-pixel image: a white row (a vertical-0 code against the white
    /// row above), then a row black from column 2 to 6 (horizontal mode: white 2, black 4,
    /// then vertical-0 to the row's end), then the end of the block.
    fn group4_rows() -> Vec<u8> {
        // V0 | H (001) white 2 (0111) black 4 (011) | V0 | EOFB (000000000001 x 2)
        packed(&["1", "001", "0111", "011", "1", "000000000001000000000001"].concat())
    }

    #[test]
    fn a_group_4_image_is_black_where_the_fax_says_and_white_elsewhere() {
        let params = group4_params();
        let image = fax(&group4_rows(), params, 8, 2, false).expect("decoded");
        assert_eq!(&image.pixels[..8], &[255; 8]);
        assert_eq!(&image.pixels[8..], &[255, 255, 0, 0, 0, 0, 255, 255]);
    }

    /// The parameters of [`group4_rows`]: Group 4, 8 columns.
    fn group4_params() -> Fax {
        Fax {
            k: -1,
            columns: 8,
            ..Fax::default()
        }
    }

    #[test]
    fn a_group_3_image_coded_one_row_at_a_time_is_read_as_well() {
        // White 8 (10011); white 2 (0111), black 4 (011), white 2 (0111).
        let rows = packed(&["10011", "0111", "011", "0111"].concat());
        let params = Fax {
            columns: 8,
            ..Fax::default()
        };
        let image = fax(&rows, params, 8, 2, false).expect("decoded");
        assert_eq!(&image.pixels[..8], &[255; 8]);
        assert_eq!(&image.pixels[8..], &[255, 255, 0, 0, 0, 0, 255, 255]);
    }

    #[test]
    fn black_is_1_or_a_decode_array_turns_a_fax_image_over_and_both_turn_it_back() {
        let group4 = group4_params();
        let black_is_1 = Fax {
            black_is_1: true,
            ..group4
        };
        let turned = fax(&group4_rows(), black_is_1, 8, 2, false).expect("decoded");
        assert_eq!(&turned.pixels[8..], &[0, 0, 255, 255, 255, 255, 0, 0]);
        let inverted = fax(&group4_rows(), group4, 8, 2, true).expect("decoded");
        assert_eq!(inverted.pixels, turned.pixels);
        let both = fax(&group4_rows(), black_is_1, 8, 2, true).expect("decoded");
        assert_eq!(&both.pixels[8..], &[255, 255, 0, 0, 0, 0, 255, 255]);
    }

    #[test]
    fn rows_past_the_declared_height_are_not_kept_and_garbage_is_refused() {
        let params = group4_params();
        let image = fax(&group4_rows(), params, 8, 1, false).expect("decoded");
        assert_eq!(image.pixels, vec![255; 8]);
        assert!(fax(&[0, 0, 0, 0], params, 8, 2, false).is_err());
        assert!(jbig2(&[0xff; 16], None, 8, 2, false).is_err());
    }

    #[test]
    fn a_jbig2_page_larger_than_its_image_is_refused_before_it_is_decoded() {
        // A page information segment (number 0, type 48, page 1, 19 bytes) of 10,000 x
        // 10,000 pixels, in an image dictionary of 8 x 2.
        let mut page = vec![0, 0, 0, 0, 48, 0, 1, 0, 0, 0, 19];
        for field in [10_000u32, 10_000, 0, 0] {
            page.extend_from_slice(&field.to_be_bytes());
        }
        page.extend_from_slice(&[1, 0, 0]);
        let refused = jbig2(&page, None, 8, 2, false).expect_err("refused");
        assert!(refused.contains("larger than the 8x2 image"), "{refused}");
    }
}
