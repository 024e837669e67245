//! Images of text for the OCR tests, made by a real producer: Debian's Chromium renders HTML
//! and takes a screenshot, which is then turned, compressed as a scanner would, or put in an
//! image-only PDF page ([`crate::pdf::scanned`]).

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

/// `image` turned clockwise a quarter.
pub fn turned_quarter(image: &GrayImage) -> GrayImage {
    image::imageops::rotate90(image)
}
