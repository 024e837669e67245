//! `make eval`, OCR part: Quarry's OCR engine beside tesseract (Debian's, the same pages, the
//! same run, 2 threads each). Pages are made from known text, Debian's manual pages (rendered to
//! text by `scripts/manpages.sh`) in English, Chinese (simplified) and Japanese, by real
//! producers (`pages.rs`): printed by Chromium, by LibreOffice, and as pandoc's Word documents
//! exported by LibreOffice (these two rendered by pdftoppm), at 150 and 300 dpi, the 300 dpi
//! ones also degraded as scans are (turned 1 degree, blurred, noise, JPEG at quality 50); and
//! screenshots of the text laid out as a web page, at 1x and 2x; and printed by Chromium in two
//! columns under a title, read in order only if the columns are. Prints per set the character
//! error rate (edit distance over the reference's length, whitespace ignored for Chinese and
//! Japanese and collapsed for English), word recall (English words; characters for Chinese and
//! Japanese) and pages per second; for the image-only PDFs the real server read, also its
//! peak and resident memory.
//!
//! `cargo run --release -p quarry-tests --example eval_ocr -- [DIR] [--pages N] [--models M]
//! [--languages L] [--producers P]` (DIR: the rendered manual pages, default
//! `$QUARRY_MANPAGES` or `~/.cache/quarry/eval/manpages`; N documents per set, default 3; M:
//! another models folder, default `$QUARRY_OCR_MODELS` or `models/ppocr-v6`; L: some of
//! `en,zh_CN,ja`, P: some of `chromium,libreoffice,pandoc,web,columns`, comma separated,
//! default all). Needs tesseract with `eng`, `chi_sim` and `jpn`, LibreOffice,
//! pandoc, pdftoppm and the fonts
//! (`scripts/ocr-eval-tools.sh`, which `make eval` runs). `QUARRY_OCR_EVAL_DUMP=DIR` writes
//! every page read there as a PNG, to look at.

mod pages;
mod score;
mod served;

use std::path::{Path, PathBuf};
use std::process::Command;

use image::GrayImage;
use quarry_core::ocr::{GrayImage as Pixels, TextRecognizer};
use quarry_tests::scans::png;

use pages::{Page, Producer, scanned};
use score::{Score, score, scored};
use served::{Encoding, read_as_pdfs};

/// Characters of a manual page laid out on one page (what fits on a letter page at 15 px).
const PAGE_CHARS: [(&str, usize); 3] = [("en", 1800), ("zh_CN", 900), ("ja", 900)];
/// Who renders the pages of each language (LibreOffice's 300 dpi pages are also made into
/// image-only PDFs by img2pdf and read by the real server: `served.rs`).
const PRODUCERS: [(Producer, &[&str]); 5] = [
    (Producer::Chromium, &["en", "zh_CN", "ja"]),
    (Producer::LibreOffice, &["en", "zh_CN", "ja"]),
    (Producer::Pandoc, &["en"]),
    (Producer::Web, &["en", "zh_CN", "ja"]),
    (Producer::Columns, &["en", "zh_CN", "ja"]),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut dir = quarry_tests::manpages_dir();
    let mut models = None;
    let mut per_set = 3;
    let mut wanted: Vec<String> = PAGE_CHARS.iter().map(|(l, _)| l.to_string()).collect();
    let mut producers: Vec<String> = PRODUCERS.iter().map(|(p, _)| p.key().into()).collect();
    let list = |value: Option<String>| -> Vec<String> {
        value
            .map(|l| l.split(',').map(str::to_owned).collect())
            .unwrap_or_default()
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--pages" => per_set = args.next().and_then(|n| n.parse().ok()).unwrap_or(per_set),
            "--models" => models = args.next().map(PathBuf::from),
            "--languages" => wanted = list(args.next()),
            "--producers" => producers = list(args.next()),
            other => dir = PathBuf::from(other),
        }
    }
    if wanted.is_empty() {
        return Err("--languages: give some of en, zh_CN, ja, comma separated".into());
    }
    if let Some(unknown) = wanted
        .iter()
        .find(|w| !PAGE_CHARS.iter().any(|(l, _)| l == w))
    {
        return Err(format!("--languages: `{unknown}` is not one of en, zh_CN, ja").into());
    }
    let keys: Vec<&str> = PRODUCERS.iter().map(|(p, _)| p.key()).collect();
    if producers.is_empty() {
        return Err(format!(
            "--producers: give some of {}, comma separated",
            keys.join(", ")
        )
        .into());
    }
    if let Some(unknown) = producers.iter().find(|p| !keys.contains(&p.as_str())) {
        return Err(format!("--producers: `{unknown}` is not one of {}", keys.join(", ")).into());
    }
    let models = models.unwrap_or_else(quarry_tests::ocr_models_dir);
    let ocr = quarry_ocr::Ocr::load(&models, &quarry_tests::ort_lib(), 2)?;
    println!(
        "OCR: Quarry (PP-OCRv6 small) beside tesseract 5 (LSTM), 2 threads each, {per_set} documents a set"
    );
    println!(
        "{:<34} {:>7} {:>7} {:>7}   {:>7} {:>7} {:>7}",
        "set", "CER", "recall", "pages/s", "CER", "recall", "pages/s"
    );
    println!("{:<34} {:^23}   {:^23}", "", "Quarry", "tesseract");
    let dump = std::env::var_os("QUARRY_OCR_EVAL_DUMP").map(PathBuf::from);
    for (producer, languages) in PRODUCERS {
        if !producers.iter().any(|p| p == producer.key()) {
            continue;
        }
        for (language, chars) in PAGE_CHARS {
            if !languages.contains(&language) || !wanted.iter().any(|w| w == language) {
                continue;
            }
            let texts = page_texts(&dir.join(language), chars, per_set)?;
            for &(set, dpi, degraded) in producer.sets() {
                let name = format!("{language} {} {set}", producer.name());
                let pages: Vec<Page> = texts
                    .iter()
                    .map(|text| Page {
                        images: producer
                            .render(text, language, dpi)
                            .iter()
                            .map(|image| {
                                if degraded {
                                    scanned(image)
                                } else {
                                    image.clone()
                                }
                            })
                            .collect(),
                        reference: text.clone(),
                    })
                    .collect();
                if let Some(dump) = &dump {
                    write_pages(dump, &name, &pages)?;
                }
                let language = Language::of(language);
                let quarry = score(&pages, language.cjk, |image| read(&ocr, image));
                print_row(&name, &pages, quarry, language);
                // LibreOffice's 300 dpi pages also as image-only PDFs, read by the server.
                if matches!(producer, Producer::LibreOffice) && dpi == 300 {
                    let encoding = if degraded {
                        Encoding::Jpeg
                    } else {
                        Encoding::Png
                    };
                    let served = read_as_pdfs(&pages, encoding);
                    let quarry = scored(&served.seen, &served.texts, language.cjk, served.seconds);
                    print_row(&format!("{name} img2pdf"), &served.seen, quarry, language);
                    println!(
                        "{:<34} the server's peak {:.0} MiB, {:.0} MiB resident once read",
                        "", served.peak_mib, served.resident_mib
                    );
                }
            }
        }
    }
    Ok(())
}

/// A language of the evaluation: whether it is Chinese or Japanese, and tesseract's model.
#[derive(Clone, Copy)]
struct Language {
    cjk: bool,
    tesseract: &'static str,
}

impl Language {
    fn of(code: &str) -> Language {
        let tesseract = match code {
            "zh_CN" => "chi_sim",
            "ja" => "jpn",
            _ => "eng",
        };
        Language {
            cjk: code != "en",
            tesseract,
        }
    }
}

/// What Quarry's engine reads in `image`.
fn read(ocr: &quarry_ocr::Ocr, image: &GrayImage) -> String {
    let pixels = Pixels {
        width: image.width(),
        height: image.height(),
        pixels: image.as_raw().clone(),
    };
    ocr.recognize(&pixels).map(|r| r.text).unwrap_or_default()
}

/// Has tesseract read `pages` and prints its figures beside Quarry's.
fn print_row(name: &str, pages: &[Page], quarry: Score, language: Language) {
    let tesseract = score(pages, language.cjk, |image| {
        tesseract(image, language.tesseract)
    });
    let images: usize = pages.iter().map(|p| p.images.len()).sum();
    println!(
        "{:<34} {:>7.3} {:>7.3} {:>7.2}   {:>7.3} {:>7.3} {:>7.2}",
        name,
        quarry.cer,
        quarry.recall,
        images as f64 / quarry.seconds,
        tesseract.cer,
        tesseract.recall,
        images as f64 / tesseract.seconds,
    );
}

/// Writes the pages of the set `name` into `dir` as PNGs.
fn write_pages(dir: &Path, name: &str, pages: &[Page]) -> std::io::Result<()> {
    for (i, page) in pages.iter().enumerate() {
        for (j, image) in page.images.iter().enumerate() {
            let file = format!("{}-{i}-{j}.png", name.replace(' ', "-"));
            std::fs::write(dir.join(file), png(image))?;
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
