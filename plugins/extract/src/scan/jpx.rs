//! A scanned PDF page's JPEG 2000 image (`JPXDecode`, as archives and some scanners write
//! them), decoded to gray pixels. The decoder holds each sample as a float while it works, four
//! times an 8-bit image's memory, so a large image is decoded at a lower resolution level (JPEG
//! 2000 stores halvings of the image) until it fits [`MAX_SAMPLES`].

use hayro_jpeg2000::{DecodeSettings, DecoderContext, Image};
use quarry_sdk::ocr::GrayImage;

use super::{color, limits};

/// The most samples (pixels times components) decoded from one JPEG 2000 image: a gray page
/// at about 380 dpi, or a colour one at about 220, enough for OCR, in about 150 MiB of the
/// connector's memory.
pub const MAX_SAMPLES: u64 = 12_000_000;

/// The gray pixels of a JPEG 2000 image or codestream.
pub fn decode(data: &[u8]) -> Result<GrayImage, String> {
    let unreadable =
        |e: hayro_jpeg2000::DecodeError| format!("its JPEG 2000 image is not readable: {e}");
    let settings = DecodeSettings::default();
    let image = Image::new(data, &settings).map_err(unreadable)?;
    let (width, height) = (u64::from(image.width()), u64::from(image.height()));
    limits::check(width, height)?;
    let samples = |w: u64, h: u64, image: &Image<'_>| {
        w * h * (u64::from(image.color_space().num_channels()) + u64::from(image.has_alpha()))
    };
    // The fewest halvings that bring the image within the bound.
    let mut halvings = 0;
    while samples(width >> halvings, height >> halvings, &image) > MAX_SAMPLES && halvings < 16 {
        halvings += 1;
    }
    let image = if halvings == 0 {
        image
    } else {
        let smaller = DecodeSettings {
            target_resolution: Some((
                u32::try_from(width >> halvings).unwrap_or(1).max(1),
                u32::try_from(height >> halvings).unwrap_or(1).max(1),
            )),
            ..settings
        };
        Image::new(data, &smaller).map_err(unreadable)?
    };
    let (width, height) = (image.width(), image.height());
    if samples(u64::from(width), u64::from(height), &image) > MAX_SAMPLES {
        return Err(format!(
            "its JPEG 2000 image of {width}x{height} pixels stores no resolution small enough to \
             decode (at most {MAX_SAMPLES} samples)"
        ));
    }
    let channels = usize::from(image.color_space().num_channels());
    let stride = channels + usize::from(image.has_alpha());
    let mut context = DecoderContext::default();
    let samples = image.decode(&mut context).map_err(unreadable)?.data_u8();
    let pixels: Vec<u8> = samples
        .chunks_exact(stride.max(1))
        .map(|p| color::gray(&p[..channels.min(p.len())]))
        .collect();
    if pixels.len() != width as usize * height as usize {
        return Err(format!(
            "its JPEG 2000 image decoded to {} pixels, not {width}x{height}",
            pixels.len()
        ));
    }
    Ok(GrayImage {
        width,
        height,
        pixels,
    })
}

#[cfg(test)]
mod tests {
    use super::decode;

    /// The main header of a one-component JPEG 2000 codestream of `width x height` pixels in
    /// one tile (SOC, SIZ, COD with 5 decompositions, QCD without quantization), and the tile
    /// without a coded byte (SOT, SOD, EOC): every sample is mid-gray.
    fn codestream(width: u32, height: u32) -> Vec<u8> {
        let mut out = vec![0xff, 0x4f, 0xff, 0x51, 0, 41, 0, 0];
        for field in [width, height, 0, 0, width, height, 0, 0] {
            out.extend_from_slice(&field.to_be_bytes());
        }
        out.extend_from_slice(&[0, 1, 7, 1, 1]);
        out.extend_from_slice(&[0xff, 0x52, 0, 12, 0, 0, 0, 1, 0, 5, 4, 4, 0, 1]);
        out.extend_from_slice(&[0xff, 0x5c, 0, 19, 0x40]);
        out.extend_from_slice(&[0x48; 16]);
        out.extend_from_slice(&[0xff, 0x90, 0, 10, 0, 0, 0, 0, 0, 14, 0, 1, 0xff, 0x93]);
        out.extend_from_slice(&[0xff, 0xd9]);
        out
    }

    #[test]
    fn a_jpeg_2000_image_over_the_bounds_is_refused_by_its_header() {
        let refused = decode(&codestream(100_000, 100_000)).expect_err("refused");
        assert!(refused.contains("over the bounds"), "{refused}");
    }

    #[test]
    fn a_large_jpeg_2000_image_is_decoded_at_a_smaller_resolution_level() {
        let image = decode(&codestream(6_000, 4_000)).expect("decoded");
        assert_eq!((image.width, image.height), (3_000, 2_000));
    }
}
