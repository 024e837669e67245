//! `make eval`, OCR part: Quarry's OCR engine beside tesseract (Debian's, the same pages, the
//! same run, 2 threads each). Pages are made from known text by a real producer: Debian's manual
//! pages (rendered to text by `scripts/manpages.sh`) laid out as HTML and rendered by Chromium at
//! 150 and 300 dpi, the 300 dpi ones also degraded as scans are (turned 1 degree, blurred,
//! noise, JPEG at quality 50); English, Chinese (simplified) and Japanese. Prints per set the
//! character error rate (edit distance over the reference's length, whitespace ignored for
//! Chinese and Japanese and collapsed for English), word recall (English words; characters for
//! Chinese and Japanese) and pages per second.
//!
//! `cargo run --release -p quarry-tests --example eval_ocr -- [DIR] [--pages N]` (DIR: the
//! rendered manual pages, default `~/.cache/quarry/eval/manpages`; N pages per set, default 3).
//! Needs `tesseract` with `eng`, `chi_sim` and `jpn` and a CJK font (`make eval` installs them).
//! `QUARRY_OCR_EVAL_DUMP=DIR` writes every page read there as a PNG, to look at.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use image::GrayImage;
use quarry_core::ocr::{GrayImage as Pixels, TextRecognizer};
use quarry_tests::scans::{jpeg, png, screenshot_at};

/// Characters of a manual page laid out on one page (what fits on a letter page at 15 px).
const PAGE_CHARS: [(&str, usize); 3] = [("en", 1800), ("zh_CN", 900), ("ja", 900)];

struct Page {
    image: GrayImage,
    reference: String,
}

struct Score {
    cer: f64,
    recall: f64,
    seconds: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut dir = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(".cache/quarry/eval/manpages");
    let mut per_set = 3;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--pages" => per_set = args.next().and_then(|n| n.parse().ok()).unwrap_or(per_set),
            other => dir = PathBuf::from(other),
        }
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let ocr = quarry_ocr::Ocr::load(
        &repo.join("models/ppocr-v6"),
        &repo.join("models/onnxruntime/libonnxruntime.so"),
        2,
    )?;
    println!(
        "OCR: Quarry (PP-OCRv6 small) beside tesseract 5 (LSTM), 2 threads each, {per_set} pages a set"
    );
    println!(
        "{:<22} {:>9} {:>9} {:>9}   {:>9} {:>9} {:>9}",
        "set", "CER", "recall", "pages/s", "CER", "recall", "pages/s"
    );
    println!("{:<22} {:^29}   {:^29}", "", "Quarry", "tesseract");
    for (language, chars) in PAGE_CHARS {
        let texts = page_texts(&dir.join(language), chars, per_set)?;
        for (set, scale, degraded) in [
            ("150 dpi", 1, false),
            ("300 dpi", 2, false),
            ("300 dpi scan", 2, true),
        ] {
            let pages: Vec<Page> = texts
                .iter()
                .map(|text| {
                    let image = screenshot_at(&html(text, language), 1275, 1650, scale);
                    Page {
                        image: if degraded { scanned(&image) } else { image },
                        reference: text.clone(),
                    }
                })
                .collect();
            if let Some(dump) = std::env::var_os("QUARRY_OCR_EVAL_DUMP") {
                for (i, page) in pages.iter().enumerate() {
                    let name = format!("{language}-{}-{i}.png", set.replace(' ', "-"));
                    std::fs::write(Path::new(&dump).join(name), png(&page.image))?;
                }
            }
            let cjk = language != "en";
            let quarry = score(&pages, cjk, |image| {
                let pixels = Pixels {
                    width: image.width(),
                    height: image.height(),
                    pixels: image.as_raw().clone(),
                };
                ocr.recognize(&pixels).map(|r| r.text).unwrap_or_default()
            });
            let tess_lang = match language {
                "zh_CN" => "chi_sim",
                "ja" => "jpn",
                _ => "eng",
            };
            let tesseract = score(&pages, cjk, |image| tesseract(image, tess_lang));
            println!(
                "{:<22} {:>9.3} {:>9.3} {:>9.2}   {:>9.3} {:>9.3} {:>9.2}",
                format!("{language} {set}"),
                quarry.cer,
                quarry.recall,
                pages.len() as f64 / quarry.seconds,
                tesseract.cer,
                tesseract.recall,
                pages.len() as f64 / tesseract.seconds,
            );
        }
    }
    Ok(())
}

/// The first `count` manual pages of `dir` (by name) with enough text, each cut to about
/// `chars` characters at a line's end.
fn page_texts(dir: &Path, chars: usize, count: usize) -> std::io::Result<Vec<String>> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    names.sort();
    let mut texts = Vec::new();
    for name in names {
        let text = std::fs::read_to_string(&name)?;
        if text.chars().count() < chars {
            continue;
        }
        let mut cut = String::new();
        for line in text.lines() {
            if cut.chars().count() + line.chars().count() > chars {
                break;
            }
            cut.push_str(line.trim_end());
            cut.push('\n');
        }
        texts.push(cut);
        if texts.len() == count {
            break;
        }
    }
    Ok(texts)
}

/// A page of `text` as a printed manual page: its lines as they are, in a serif font for English
/// and a CJK font for Chinese and Japanese.
fn html(text: &str, language: &str) -> String {
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let font = match language {
        "en" => "'DejaVu Serif', serif",
        _ => "'WenQuanYi Zen Hei', sans-serif",
    };
    format!(
        "<!doctype html><html><body style=\"margin: 72px; background: #fff\">\
         <pre style=\"font: 15px/1.35 {font}; white-space: pre-wrap\">{escaped}</pre></body></html>"
    )
}

/// `image` as a scanner makes it: turned 1 degree, blurred, with noise, stored as a JPEG of
/// quality 50.
fn scanned(image: &GrayImage) -> GrayImage {
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

/// What tesseract reads in `image` with `language`.
fn tesseract(image: &GrayImage, language: &str) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("page.png");
    std::fs::write(&path, png(image)).expect("write the page");
    let out = Command::new("tesseract")
        .arg(&path)
        .arg("stdout")
        .args(["-l", language])
        .env("OMP_THREAD_LIMIT", "2")
        .output()
        .expect("tesseract runs (make eval installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Character error rate, recall and time of `read` over `pages`.
fn score(pages: &[Page], cjk: bool, read: impl Fn(&GrayImage) -> String) -> Score {
    let (mut errors, mut length, mut found, mut wanted) = (0usize, 0usize, 0usize, 0usize);
    let mut took = Duration::ZERO;
    for page in pages {
        let started = Instant::now();
        let text = read(&page.image);
        took += started.elapsed();
        let (reference, hypothesis) = (normalized(&page.reference, cjk), normalized(&text, cjk));
        errors += edit_distance(&reference, &hypothesis);
        length += reference.len();
        let (units, read_units) = if cjk {
            (chars_of(&page.reference), chars_of(&text))
        } else {
            (words_of(&page.reference), words_of(&text))
        };
        let mut left: HashMap<String, usize> = HashMap::new();
        for unit in read_units {
            *left.entry(unit).or_default() += 1;
        }
        for unit in units {
            wanted += 1;
            if let Some(n) = left.get_mut(&unit).filter(|n| **n > 0) {
                *n -= 1;
                found += 1;
            }
        }
    }
    Score {
        cer: errors as f64 / length.max(1) as f64,
        recall: found as f64 / wanted.max(1) as f64,
        seconds: took.as_secs_f64(),
    }
}

/// The characters of `text` compared: whitespace removed (Chinese, Japanese) or collapsed to one
/// space (English).
fn normalized(text: &str, cjk: bool) -> Vec<char> {
    if cjk {
        return text.chars().filter(|c| !c.is_whitespace()).collect();
    }
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .collect()
}

/// English words: runs of letters and digits, lowercased.
fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Characters other than whitespace and punctuation.
fn chars_of(text: &str) -> Vec<String> {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .map(String::from)
        .collect()
}

/// Levenshtein distance between two character sequences.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}
