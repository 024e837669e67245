//! The evaluation's pages: known text (Debian's manual pages) laid out and rendered by real
//! producers, as printed pages at 150 and 300 dpi (the 300 dpi ones also as a scanner degrades
//! them) or as screenshots of a web page.

use std::path::{Path, PathBuf};
use std::process::Command;

use image::GrayImage;
use quarry_tests::scans::{jpeg, screenshot_at};

/// A document's pages and the text they show.
pub struct Page {
    pub images: Vec<GrayImage>,
    pub reference: String,
}

/// Who lays the text out and renders it.
#[derive(Clone, Copy)]
pub enum Producer {
    /// Chromium prints it as a manual page (HTML, 15 px serif or CJK font, letter size).
    Chromium,
    /// LibreOffice opens it as a plain-text document and exports a PDF; pdftoppm renders it.
    LibreOffice,
    /// pandoc writes it as a Word document (a line a line), LibreOffice exports that to PDF,
    /// pdftoppm renders it.
    Pandoc,
    /// Chromium takes a screenshot of it laid out as a web page: a header bar, then the text
    /// in a 16 px sans-serif font.
    Web,
    /// Chromium prints it set in two columns under its first line as a title, as newsletters
    /// and papers are.
    Columns,
}

impl Producer {
    /// Its name on the command line (`--producers`).
    pub fn key(self) -> &'static str {
        match self {
            Producer::Chromium => "chromium",
            Producer::LibreOffice => "libreoffice",
            Producer::Pandoc => "pandoc",
            Producer::Web => "web",
            Producer::Columns => "columns",
        }
    }

    /// Its name in the table.
    pub fn name(self) -> &'static str {
        match self {
            Producer::Chromium => "Chromium print",
            Producer::LibreOffice => "LibreOffice",
            Producer::Pandoc => "pandoc docx",
            Producer::Web => "web page",
            Producer::Columns => "two columns",
        }
    }

    /// The sets it makes: a name, the resolution (dpi, or the screen's scale times 96) and
    /// whether the pages are degraded as scans.
    pub fn sets(self) -> &'static [(&'static str, u32, bool)] {
        match self {
            Producer::Web => &[("1x screen", 96, false), ("2x screen", 192, false)],
            _ => &[
                ("150 dpi", 150, false),
                ("300 dpi", 300, false),
                ("300 dpi scan", 300, true),
            ],
        }
    }

    /// The pages of `text` in `language` at `dpi`.
    pub fn render(self, text: &str, language: &str, dpi: u32) -> Vec<GrayImage> {
        match self {
            Producer::Chromium => vec![screenshot_at(
                &manual_page(text, language),
                1275,
                1650,
                dpi / 150,
            )],
            Producer::Web => vec![screenshot_at(
                &web_page(text, language),
                1280,
                1650,
                dpi / 96,
            )],
            Producer::Columns => vec![screenshot_at(
                &two_columns(text, language),
                1275,
                1650,
                dpi / 150,
            )],
            Producer::LibreOffice => {
                let dir = tempfile::tempdir().expect("temp dir");
                let source = dir.path().join("page.txt");
                std::fs::write(&source, text).expect("write the text");
                let font = match language {
                    "en" => "Liberation Serif",
                    _ => "WenQuanYi Zen Hei",
                };
                let pdf = office_pdf(&source, Some(&format!("Text (encoded):UTF8,LF,{font},")));
                rendered(&pdf, dpi)
            }
            Producer::Pandoc => {
                let dir = tempfile::tempdir().expect("temp dir");
                let source = dir.path().join("page.md");
                let docx = dir.path().join("page.docx");
                std::fs::write(&source, line_blocks(text)).expect("write the markdown");
                run(Command::new("pandoc")
                    .args(["-f", "markdown", "-t", "docx", "-o"])
                    .arg(&docx)
                    .arg(&source));
                let pdf = office_pdf(&docx, None);
                rendered(&pdf, dpi)
            }
        }
    }
}

/// `image` as a scanner makes it: turned 1 degree, blurred, with noise, stored as a JPEG of
/// quality 50.
pub fn scanned(image: &GrayImage) -> GrayImage {
    let (w, h) = image.dimensions();
    let (sin, cos) = 1f32.to_radians().sin_cos();
    let (cx, cy) = (w as f32 / 2.0, h as f32 / 2.0);
    let mut turned = GrayImage::from_pixel(w, h, image::Luma([255]));
    for y in 0..h {
        for x in 0..w {
            let (dx, dy) = (x as f32 - cx, y as f32 - cy);
            let (sx, sy) = (cos * dx + sin * dy + cx, -sin * dx + cos * dy + cy);
            if sx >= 0.0 && sy >= 0.0 && (sx as u32) < w && (sy as u32) < h {
                turned.put_pixel(x, y, *image.get_pixel(sx as u32, sy as u32));
            }
        }
    }
    let mut blurred = image::imageops::blur(&turned, 0.8);
    let mut state = 0x2545_f491_u32;
    for pixel in blurred.pixels_mut() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let noise = (state % 41) as i32 - 20;
        pixel.0[0] = (i32::from(pixel.0[0]) + noise).clamp(0, 255) as u8;
    }
    image::load_from_memory(&jpeg(&blurred, 50))
        .map(|i| i.into_luma8())
        .unwrap_or(blurred)
}

/// `text` with `&`, `<` and `>` escaped for HTML.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A CSS font for `language`'s text, `western` for English.
fn font(language: &str, western: &'static str) -> &'static str {
    match language {
        "en" => western,
        _ => "'WenQuanYi Zen Hei', sans-serif",
    }
}

/// A page of `text` as a printed manual page: its lines as they are.
fn manual_page(text: &str, language: &str) -> String {
    format!(
        "<!doctype html><html><body style=\"margin: 72px; background: #fff\">\
         <pre style=\"font: 15px/1.35 {}; white-space: pre-wrap\">{}</pre></body></html>",
        font(language, "'DejaVu Serif', serif"),
        escaped(text)
    )
}

/// `text` printed in two columns: its first line as a title across both, the rest flowing down
/// the left column and on down the right.
fn two_columns(text: &str, language: &str) -> String {
    let (title, body) = text.split_once('\n').unwrap_or((text, ""));
    format!(
        "<!doctype html><html><body style=\"margin: 72px; background: #fff; \
         font: 15px/1.35 {}\">\
         <h1 style=\"font-size: 22px; margin: 0 0 24px\">{}</h1>\
         <div style=\"column-count: 2; column-gap: 40px; white-space: pre-wrap\">{}</div>\
         </body></html>",
        font(language, "'DejaVu Serif', serif"),
        escaped(title.trim()),
        escaped(body)
    )
}

/// `text` as a web page: its first line in a dark header bar, the rest below in gray on white.
fn web_page(text: &str, language: &str) -> String {
    let (title, body) = text.split_once('\n').unwrap_or((text, ""));
    format!(
        "<!doctype html><html><body style=\"margin: 0; background: #fff; \
         font: 16px/1.5 {}\">\
         <header style=\"background: #1f2937; color: #f9fafb; padding: 14px 32px; \
         font-weight: 600\">{}</header>\
         <main style=\"padding: 24px 32px; color: #374151; white-space: pre-wrap\">{}</main>\
         </body></html>",
        font(language, "'DejaVu Sans', sans-serif"),
        escaped(title.trim()),
        escaped(body)
    )
}

/// `text` as pandoc markdown that keeps its lines: a line block, every ASCII punctuation mark
/// escaped so that none is read as markup.
fn line_blocks(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        out.push_str("| ");
        for c in line.chars() {
            if c.is_ascii_punctuation() {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('\n');
    }
    out
}

/// The PDF LibreOffice exports of `source` (with the import filter `filter`, if any), written
/// beside it.
fn office_pdf(source: &Path, filter: Option<&str>) -> PathBuf {
    let dir = source.parent().expect("a file in a folder");
    let mut command = Command::new("soffice");
    command
        .arg("--headless")
        .arg(format!(
            "-env:UserInstallation=file://{}",
            dir.join("profile").display()
        ))
        .args(["--convert-to", "pdf", "--outdir"])
        .arg(dir);
    if let Some(filter) = filter {
        command.arg(format!("--infilter={filter}"));
    }
    run(command.arg(source));
    let pdf = source.with_extension("pdf");
    assert!(pdf.is_file(), "LibreOffice wrote no {}", pdf.display());
    pdf
}

/// The pages of `pdf` rendered by pdftoppm at `dpi`, in gray.
fn rendered(pdf: &Path, dpi: u32) -> Vec<GrayImage> {
    let dir = tempfile::tempdir().expect("temp dir");
    run(Command::new("pdftoppm")
        .args(["-r", &dpi.to_string(), "-gray", "-png"])
        .arg(pdf)
        .arg(dir.path().join("page")));
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .expect("pdftoppm's pages")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| image::open(f).expect("a page pdftoppm wrote").into_luma8())
        .collect()
}

/// Runs `command`, which must succeed (`make eval` installs the producers).
fn run(command: &mut Command) {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?} does not run ({e}): run `make eval`"));
    assert!(
        out.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
