//! Image-only PDFs, as img2pdf builds them from page images, read end to end: the real server
//! with the OCR models, the folder connector taking each page's image out of the PDF in its
//! sandbox, the OCR queue, and the text `GET docs` answers.

use std::process::Command;
use std::time::Instant;

use image::GrayImage;
use quarry_tests::quarry::Quarry;
use quarry_tests::scans::{jpeg, png};
use serde_json::json;

use crate::pages::Page;

/// How a page's image is stored in its PDF.
#[derive(Clone, Copy)]
pub enum Encoding {
    /// PNG, which img2pdf stores as Flate with PNG predictors.
    Png,
    /// JPEG at quality 90, stored as it is (DCT).
    Jpeg,
}

impl Encoding {
    /// The file's bytes, and the pixels a reader of them sees.
    fn encoded(self, image: &GrayImage) -> (Vec<u8>, GrayImage, &'static str) {
        match self {
            Encoding::Png => (png(image), image.clone(), "png"),
            Encoding::Jpeg => {
                let bytes = jpeg(image, 90);
                let seen = image::load_from_memory(&bytes)
                    .map(|i| i.into_luma8())
                    .unwrap_or_else(|_| image.clone());
                (bytes, seen, "jpg")
            }
        }
    }
}

/// What the server made of pages handed to it as image-only PDFs.
pub struct Served {
    /// The pages as a reader of the files sees them (for the other engine).
    pub seen: Vec<Page>,
    /// The text `GET docs` answers for each.
    pub texts: Vec<String>,
    /// From the server's start to the last page read (the sync and the models' loading
    /// included).
    pub seconds: f64,
    /// The server's peak resident memory (`VmHWM`), MiB.
    pub peak_mib: f64,
    /// Its resident memory once every text was fetched (`VmRSS`), MiB.
    pub resident_mib: f64,
}

/// What the server (no embedding model) reads of `pages` made into image-only PDFs with
/// `encoding`.
pub fn read_as_pdfs(pages: &[Page], encoding: Encoding) -> Served {
    let mut q = Quarry::new();
    q.without_model();
    q.with_ocr();
    let folder = q.scratch("scans");
    let images = q.scratch("images");
    let mut seen = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let mut files = Vec::new();
        let mut shown = Vec::new();
        for (j, image) in page.images.iter().enumerate() {
            let (bytes, pixels, extension) = encoding.encoded(image);
            let file = images.join(format!("{i}-{j}.{extension}"));
            std::fs::write(&file, bytes).expect("write a page image");
            files.push(file);
            shown.push(pixels);
        }
        let out = Command::new("img2pdf")
            .arg("-o")
            .arg(folder.join(format!("scan{i}.pdf")))
            .args(&files)
            .output()
            .expect("img2pdf runs (make eval installs it)");
        assert!(
            out.status.success(),
            "img2pdf failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        seen.push(Page {
            images: shown,
            reference: page.reference.clone(),
        });
    }
    q.add_folder("Scans", &folder);
    let started = Instant::now();
    q.start();
    q.wait_for_ocr();
    let seconds = started.elapsed().as_secs_f64();
    let key = q.integration("Eval", "all", &["--quota", "unlimited"]);
    let texts = (0..pages.len()).map(|i| text_of(&q, &key, i)).collect();
    let pid = q.pid().expect("the server runs");
    let memory = |field| quarry_tests::bench::status_mib(pid, field).unwrap_or(f64::NAN);
    Served {
        seen,
        texts,
        seconds,
        peak_mib: memory("VmHWM:"),
        resident_mib: memory("VmRSS:"),
    }
}

/// The text `GET docs` answers for `scan{i}.pdf`, found by its name.
fn text_of(q: &Quarry, key: &str, i: usize) -> String {
    let path = format!("scan{i}.pdf");
    let answer = q.search_ok(
        key,
        json!({"query": format!("scan{i}"), "semantic_search": false}),
    );
    let Some(hit) = answer["results"]
        .as_array()
        .and_then(|hits| hits.iter().find(|h| h["path"] == path.as_str()))
    else {
        return String::new();
    };
    let url = format!(
        "/api/v1/connectors/{}/docs/{}",
        hit["connector_id"].as_str().unwrap_or(""),
        hit["doc_id"].as_str().unwrap_or("")
    );
    let response = q.request("GET", &url, Some(key), None);
    response.json()["content"].as_str().unwrap_or("").to_owned()
}
