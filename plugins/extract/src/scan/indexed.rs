//! Images in an indexed colour space (`[/Indexed base hival lookup]`): each sample (1, 2, 4 or
//! 8 bits) picks a colour of the lookup table, in the base colour space. Palette scans (a few
//! colours of a scanner's colour reduction) and palette PNGs made into PDFs by img2pdf are
//! written so.

use lopdf::{Document, Object};
use quarry_sdk::ocr::GrayImage;

use super::color;

/// The gray of each colour of an indexed colour space.
#[derive(Debug, PartialEq)]
pub struct Palette(Vec<u8>);

impl Palette {
    /// The palette of an image's `/ColorSpace` when it is indexed; `None` for another colour
    /// space, an error for an indexed one that is not well formed.
    pub fn of(doc: &Document, space: &Object) -> Result<Option<Palette>, String> {
        let Ok([name, base, hival, lookup]) = <&[Object; 4]>::try_from(
            resolve(doc, space)
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default(),
        ) else {
            return Ok(None);
        };
        if !matches!(resolve(doc, name).as_name(), Ok(b"Indexed" | b"I")) {
            return Ok(None);
        }
        let components = components(doc, base)?;
        let colours = resolve(doc, hival)
            .as_i64()
            .ok()
            .filter(|h| (0..=255).contains(h))
            .ok_or("its indexed colour space's highest index is not 0 to 255")?
            as usize
            + 1;
        let table = match resolve(doc, lookup) {
            Object::String(bytes, _) => bytes.clone(),
            Object::Stream(stream) => match stream.filters().unwrap_or_default().as_slice() {
                [] => stream.content.clone(),
                // A table of at most 256 colours of 4 samples: within a 16 x 16 image's bound.
                [b"FlateDecode"] => super::compressed::inflate(&stream.content, 16, 16)?,
                _ => return Err("its colour table is encoded in a way not read here".into()),
            },
            _ => return Err("its indexed colour space has no colour table".into()),
        };
        if table.len() < colours * components {
            return Err(format!(
                "its colour table holds {} bytes, too few for {colours} colours",
                table.len()
            ));
        }
        Ok(Some(Palette(
            table
                .chunks_exact(components)
                .take(colours)
                .map(color::gray)
                .collect(),
        )))
    }

    /// The palette an image with the `/Decode` array `[hival 0]` reads through: sample `s`
    /// picks colour `hival - s`.
    pub fn reversed(mut self) -> Palette {
        self.0.reverse();
        self
    }

    /// The gray pixels of `w x h` samples of `bits` each, rows padded to whole bytes; an index
    /// past the table takes its last colour, as viewers do.
    pub fn gray(&self, raw: &[u8], w: usize, h: usize, bits: usize) -> Result<GrayImage, String> {
        if !matches!(bits, 1 | 2 | 4 | 8) {
            return Err(format!("{bits}-bit colour indexes are not read here"));
        }
        let row = (w * bits).div_ceil(8);
        if raw.len() < row * h {
            return Err(format!(
                "its image data holds {} bytes, too few for {w}x{h}",
                raw.len()
            ));
        }
        let last = self.0.len().saturating_sub(1);
        let mask = ((1u16 << bits) - 1) as u8;
        let pixels = raw
            .chunks_exact(row)
            .take(h)
            .flat_map(|line| {
                (0..w).map(move |x| {
                    let bit = x * bits;
                    let index = line[bit / 8] >> (8 - bits - bit % 8) & mask;
                    self.0[usize::from(index).min(last)]
                })
            })
            .collect();
        Ok(GrayImage {
            width: u32::try_from(w).map_err(|e| e.to_string())?,
            height: u32::try_from(h).map_err(|e| e.to_string())?,
            pixels,
        })
    }
}

/// An object, its reference followed (once: a colour space is never a reference to one).
fn resolve<'a>(doc: &'a Document, object: &'a Object) -> &'a Object {
    match object {
        Object::Reference(id) => doc.get_object(*id).unwrap_or(object),
        other => other,
    }
}

/// The samples a colour of base colour space `base` has.
fn components(doc: &Document, base: &Object) -> Result<usize, String> {
    let base = resolve(doc, base);
    let family = match base {
        Object::Array(parts) => parts.first().map(|p| resolve(doc, p)),
        other => Some(other),
    }
    .and_then(|name| name.as_name().ok());
    match family {
        Some(b"DeviceGray" | b"CalGray" | b"G") => Ok(1),
        Some(b"DeviceRGB" | b"CalRGB" | b"RGB" | b"Lab") => Ok(3),
        Some(b"DeviceCMYK" | b"CMYK") => Ok(4),
        // An ICC profile says how many samples a colour has (`/N`).
        Some(b"ICCBased") => base
            .as_array()
            .ok()
            .and_then(|parts| parts.get(1))
            .and_then(|profile| resolve(doc, profile).as_stream().ok())
            .and_then(|profile| profile.dict.get(b"N").and_then(Object::as_i64).ok())
            .filter(|n| matches!(n, 1 | 3 | 4))
            .map(|n| n as usize)
            .ok_or_else(|| {
                "its indexed colours' ICC profile does not say 1, 3 or 4 samples".into()
            }),
        _ => Err("its indexed colours are in a base colour space not read here".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::{Dictionary, Stream, StringFormat};

    fn space(base: Object, hival: i64, table: &[u8]) -> Object {
        Object::Array(vec![
            Object::Name(b"Indexed".to_vec()),
            base,
            hival.into(),
            Object::String(table.to_vec(), StringFormat::Hexadecimal),
        ])
    }

    #[test]
    fn an_rgb_palette_becomes_the_gray_of_each_colour() {
        let doc = Document::new();
        let rgb = Object::Name(b"DeviceRGB".to_vec());
        let palette = Palette::of(&doc, &space(rgb, 1, &[255, 255, 255, 0, 0, 0]))
            .expect("read")
            .expect("indexed");
        assert_eq!(palette, Palette(vec![255, 0]));
        // Four 1-bit samples a row, padded to a byte: 1 0 0 1, then 0 1 1 0.
        let image = palette
            .gray(&[0b1001_0000, 0b0110_0000], 4, 2, 1)
            .expect("gray");
        assert_eq!(image.pixels, vec![0, 255, 255, 0, 255, 0, 0, 255]);
        // Read through `/Decode [1 0]`, each sample picks the other colour.
        let turned = palette
            .reversed()
            .gray(&[0b1001_0000], 4, 1, 1)
            .expect("gray");
        assert_eq!(turned.pixels, vec![255, 0, 0, 255]);
    }

    #[test]
    fn samples_of_two_four_and_eight_bits_pick_their_colours() {
        let doc = Document::new();
        let gray = Object::Name(b"DeviceGray".to_vec());
        let table: Vec<u8> = (0..16).map(|i| i * 17).collect();
        let palette = Palette::of(&doc, &space(gray, 15, &table))
            .expect("read")
            .expect("indexed");
        let two = palette.gray(&[0b0001_1011], 4, 1, 2).expect("2 bits");
        assert_eq!(two.pixels, vec![0, 17, 34, 51]);
        let four = palette.gray(&[0x0f, 0x70], 3, 1, 4).expect("4 bits");
        assert_eq!(four.pixels, vec![0, 255, 119]);
        // Index 200 is past the table: its last colour.
        let eight = palette.gray(&[3, 200], 2, 1, 8).expect("8 bits");
        assert_eq!(eight.pixels, vec![51, 255]);
    }

    #[test]
    fn a_short_table_or_another_colour_space_is_told_apart() {
        let doc = Document::new();
        let rgb = Object::Name(b"DeviceRGB".to_vec());
        let short = Palette::of(&doc, &space(rgb, 3, &[0; 6])).expect_err("too few");
        assert!(short.contains("too few for 4 colours"), "{short}");
        let plain = Object::Name(b"DeviceRGB".to_vec());
        assert_eq!(Palette::of(&doc, &plain), Ok(None));
    }

    #[test]
    fn a_colour_table_stream_inflating_past_256_colours_is_refused() {
        use std::io::Write;
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&vec![0u8; 1 << 20]).expect("write");
        let mut dict = Dictionary::new();
        dict.set("Filter", Object::Name(b"FlateDecode".to_vec()));
        let bomb = Stream::new(dict, encoder.finish().expect("finish"));
        let space = Object::Array(vec![
            Object::Name(b"Indexed".to_vec()),
            Object::Name(b"DeviceRGB".to_vec()),
            255.into(),
            Object::Stream(bomb),
        ]);
        let refused = Palette::of(&Document::new(), &space).expect_err("refused");
        assert!(refused.contains("expands past"), "{refused}");
    }
}
