//! Images of text for the OCR tests, made by a real producer: Debian's Chromium renders HTML
//! and takes a screenshot, which is then turned, compressed as a scanner would (JPEG, CCITT
//! Group 4 by pdf-rs's `fax` encoder, JBIG2 around the same data, JPEG 2000 by OpenJPEG's
//! `opj_compress`, LZW by `weezl`'s encoder, run-length as hex digits, or in indexed
//! colours), or put in an image-only PDF page ([`crate::pdf::scanned`]).

use std::io::Cursor;
use std::path::Path;
use std::process::Command;

use image::{DynamicImage, GrayImage, ImageFormat};

/// A screenshot, in gray, of `html` rendered by Chromium in a `width x height` window.
pub fn screenshot(html: &str, width: u32, height: u32) -> GrayImage {
    screenshot_at(html, width, height, 1)
}

/// A screenshot of `html` in a `width x height` window (CSS pixels) at `scale` device pixels
/// per CSS pixel: 1 gives a page at about 150 dpi for a window of 1275 x 1650, 2 at 300 dpi.
pub fn screenshot_at(html: &str, width: u32, height: u32, scale: u32) -> GrayImage {
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("page.html");
    let shot = dir.path().join("shot.png");
    std::fs::write(&page, html).expect("write the page");
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).is_file(),
        "{chromium} is missing: run `make setup` (Debian's chromium)"
    );
    let out = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--force-device-scale-factor={scale}"))
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(
        shot.is_file(),
        "chromium took no screenshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    image::open(&shot)
        .expect("read the screenshot")
        .into_luma8()
}

/// A page of text as HTML: a title and paragraphs, in a serif font at the size of print.
pub fn page_html(title: &str, paragraphs: &[&str]) -> String {
    let body: String = paragraphs.iter().map(|p| format!("<p>{p}</p>")).collect();
    format!(
        "<!doctype html><html><body style=\"font: 22px serif; margin: 60px; background: #fff\">\
         <h1>{title}</h1>{body}</body></html>"
    )
}

/// `image` as a JPEG of `quality`, as scanners and cameras write them.
pub fn jpeg(image: &GrayImage, quality: u8) -> Vec<u8> {
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(image)
        .expect("encode a JPEG");
    out
}

/// `image` as a PNG.
pub fn png(image: &GrayImage) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    DynamicImage::ImageLuma8(image.clone())
        .write_to(&mut out, ImageFormat::Png)
        .expect("encode a PNG");
    out.into_inner()
}

/// `image` in black and white (gray under 128 is black), CCITT Group 4 encoded: a PDF's
/// `CCITTFaxDecode` data with `/K -1 /Columns` the image's width.
pub fn group4(image: &GrayImage) -> Vec<u8> {
    use fax::{Color, VecWriter, encoder::Encoder};
    let width = u16::try_from(image.width()).expect("a fax line is at most 65,535 pixels");
    let mut encoder = Encoder::new(VecWriter::new());
    for row in image.rows() {
        let pels = row.map(|p| {
            if p.0[0] < 128 {
                Color::Black
            } else {
                Color::White
            }
        });
        encoder.encode_line(pels, width).expect("writing to memory");
    }
    encoder.finish().expect("writing to memory").finish()
}

/// `image`'s 8-bit samples as a PDF's `LZWDecode` data (codes of 9 to 12 bits, most
/// significant bit first, growing a code early: `/EarlyChange 1`, the default).
pub fn lzw(image: &GrayImage) -> Vec<u8> {
    weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
        .encode(image.as_raw())
        .expect("8-bit samples are LZW codes")
}

/// `image`'s 8-bit samples as a PDF's `RunLengthDecode` data, written as hex digits
/// (`/Filter [/ASCIIHexDecode /RunLengthDecode]`, as producers that write only text do): a run
/// of 2 to 128 equal bytes as a repeat, the rest as copies of at most 128.
pub fn run_length_hex(image: &GrayImage) -> Vec<u8> {
    let samples = image.as_raw();
    let mut out = Vec::new();
    let mut literal: Vec<u8> = Vec::new();
    let flush = |literal: &mut Vec<u8>, out: &mut Vec<u8>| {
        for chunk in literal.chunks(128) {
            out.push(chunk.len() as u8 - 1);
            out.extend_from_slice(chunk);
        }
        literal.clear();
    };
    let mut at = 0;
    while let Some(&byte) = samples.get(at) {
        let run = samples[at..]
            .iter()
            .take(128)
            .take_while(|&&b| b == byte)
            .count();
        if run >= 2 {
            flush(&mut literal, &mut out);
            out.extend([(257 - run) as u8, byte]);
        } else {
            literal.push(byte);
        }
        at += run;
    }
    flush(&mut literal, &mut out);
    out.push(128);
    let mut hex: Vec<u8> = out
        .iter()
        .flat_map(|b| format!("{b:02x}").into_bytes())
        .collect();
    hex.push(b'>');
    hex
}

/// `image` in 16 colours, as a scanner's colour reduction writes a page: 4-bit indexes into a
/// table of sepia tones (`/Indexed /DeviceRGB 15`), Flate-compressed, and the table as a PDF
/// hex string.
pub fn indexed(image: &GrayImage) -> (Vec<u8>, String) {
    use std::io::Write;
    let table: String = (0..16u32)
        .map(|i| {
            let tone = i * 17;
            format!("{:02x}{:02x}{:02x}", tone, tone * 9 / 10, tone * 7 / 10)
        })
        .collect();
    let mut packed = Vec::new();
    for row in image.rows() {
        let indexes: Vec<u8> = row.map(|p| p.0[0] / 16).collect();
        packed.extend(
            indexes
                .chunks(2)
                .map(|pair| pair[0] << 4 | pair.get(1).unwrap_or(&0)),
        );
    }
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(&packed).expect("writing to memory");
    (
        encoder.finish().expect("writing to memory"),
        format!("<{table}>"),
    )
}

/// `image` in black and white as a PDF's `JBIG2Decode` data (ITU-T T.88, the embedded
/// organization): a page information segment and one immediate generic region coded with MMR,
/// whose data is [`group4`]'s.
pub fn jbig2(image: &GrayImage) -> Vec<u8> {
    let (width, height) = (image.width(), image.height());
    // Segment header: number, flags (type; one-byte page association), no referred-to
    // segments, page 1, data length.
    let segment = |number: u32, kind: u8, data: &[u8]| {
        let mut out = number.to_be_bytes().to_vec();
        out.extend_from_slice(&[kind, 0, 1]);
        out.extend_from_slice(&u32::try_from(data.len()).expect("small").to_be_bytes());
        out.extend_from_slice(data);
        out
    };
    // Page information (48): size, 300 dpi, lossless, white by default, not striped.
    let mut page = Vec::new();
    for field in [width, height, 11_811, 11_811] {
        page.extend_from_slice(&field.to_be_bytes());
    }
    page.extend_from_slice(&[0b0000_0001, 0, 0]);
    // Immediate lossless generic region (39): the whole page at (0, 0), OR, MMR.
    let mut region = Vec::new();
    for field in [width, height, 0, 0] {
        region.extend_from_slice(&field.to_be_bytes());
    }
    region.extend_from_slice(&[0, 0b0000_0001]);
    region.extend_from_slice(&group4(image));
    let mut out = segment(0, 48, &page);
    out.extend_from_slice(&segment(1, 39, &region));
    out
}

/// `image` as a JPEG 2000 file (JP2) compressed 20 to 1, written by OpenJPEG's `opj_compress`.
pub fn jpeg2000(image: &GrayImage) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("temp dir");
    let (pgm, jp2) = (dir.path().join("page.pgm"), dir.path().join("page.jp2"));
    let mut netpbm = format!("P5\n{} {}\n255\n", image.width(), image.height()).into_bytes();
    netpbm.extend_from_slice(image.as_raw());
    std::fs::write(&pgm, netpbm).expect("write the page");
    let out = Command::new("opj_compress")
        .arg("-i")
        .arg(&pgm)
        .arg("-o")
        .arg(&jp2)
        .args(["-r", "20"])
        .output()
        .expect("opj_compress runs: run `make setup` (Debian's libopenjp2-tools)");
    assert!(
        out.status.success(),
        "opj_compress failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(&jp2).expect("read the JPEG 2000 file")
}

/// `image` turned clockwise a quarter.
pub fn turned_quarter(image: &GrayImage) -> GrayImage {
    image::imageops::rotate90(image)
}
