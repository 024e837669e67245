//! Page previews through the real API (docs/api.md, "Page previews"): a PDF page, an image and
//! a note's page of text from a real folder drawn by the page renderer in its sandbox, as a PNG or as JSON, counted
//! against the integration's quota like a document read, validated by version; nothing for a
//! document whose file is not served; the search page's twin only with the settings session; the
//! query's words boxed on a text-layer page and on a scanned one, through the API and in the
//! document view in real Chromium. One server for the file.

use std::sync::OnceLock;

use base64::Engine;
use quarry_tests::admin::sign_in;
use quarry_tests::browser::{assert_screenshots, run_script};
use quarry_tests::found;
use quarry_tests::http::Response;
use quarry_tests::pdf::{ScanPage, pdf, scanned};
use quarry_tests::quarry::Quarry;
use quarry_tests::scans;
use serde_json::Value;

/// A GitHub token: the PDF that holds it is indexed with it redacted, and its file not served.
const GITHUB_TOKEN: &str = "ghp_R8x2kLq9ZtW4mN7vB3cY6dH1fJ5sA0gE2uPo";

struct Shared {
    quarry: Quarry,
    connector: String,
    /// A connector that indexes files with credentials redacted (`credentials redact`).
    redacting: String,
    key: String,
}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| {
        let mut quarry = Quarry::new();
        quarry.without_model();
        // An image's file is served (and so previewed) once OCR has read it for credentials.
        quarry.with_ocr();
        let folder = quarry.scratch("notes");
        let report = pdf(
            "Report",
            &[
                &["Annual report"],
                &["The lighthouse keeper retired in spring."],
                &["Outlook"],
            ],
            true,
        );
        std::fs::write(folder.join("report.pdf"), report).expect("write");
        let secret = pdf(
            "Deploy",
            &[&[&format!("deploy token {GITHUB_TOKEN}")]],
            true,
        );
        std::fs::write(folder.join("deploy.pdf"), secret).expect("write");
        let mut photo = image::GrayImage::from_pixel(800, 600, image::Luma([255]));
        for x in 100..700 {
            for y in 280..320 {
                photo.put_pixel(x, y, image::Luma([0]));
            }
        }
        std::fs::write(folder.join("harbour.png"), scans::png(&photo)).expect("write");
        // A scanned letter: one page that is a picture of text, no text layer.
        let letter = scans::screenshot(
            &scans::page_html(
                "Invoice",
                &[
                    "The harbour master sent the mooring invoice.",
                    "Payment is due in March.",
                ],
            ),
            850,
            1100,
        );
        let scan = scanned(&[ScanPage::Jpeg {
            data: &scans::jpeg(&letter, 85),
            width: 850,
            height: 1100,
        }]);
        std::fs::write(folder.join("scan.pdf"), scan).expect("write");
        let deck =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/office/deck.pptx");
        std::fs::copy(deck, folder.join("deck.pptx")).expect("copy the slide deck");
        std::fs::write(folder.join("notes.md"), "# Notes\n\nThe lighthouse tour.\n")
            .expect("write");
        let connector = quarry.add_folder("Notes", &folder);
        let kept = quarry.scratch("kept");
        std::fs::copy(folder.join("deploy.pdf"), kept.join("deploy.pdf")).expect("copy");
        let redacting = quarry.add_folder("Kept", &kept);
        quarry.cli_ok(&["connector", "credentials", "Kept", "redact", "--yes"]);
        let key = quarry.integration("agent", "all", &[]);
        quarry.start();
        quarry.wait_synced();
        quarry.wait_for_ocr();
        Shared {
            quarry,
            connector,
            redacting,
            key,
        }
    })
}

/// The id of the document at `path`, found by `query`.
fn doc_id(s: &Shared, query: &str, path: &str) -> String {
    found::doc_id(&s.quarry, &s.key, query, path)
}

fn preview(s: &Shared, key: &str, doc: &str, tail: &str, headers: &[(&str, &str)]) -> Response {
    let path = format!("/api/v1/connectors/{}/docs/{doc}/pages/{tail}", s.connector);
    s.quarry
        .request_with("GET", &path, Some(key), None, headers)
}

/// Waits until the document's file is served (judged for credentials, its scan read).
fn wait_served(s: &Shared, doc: &str) {
    let path = format!("/api/v1/connectors/{}/docs/{doc}", s.connector);
    let started = std::time::Instant::now();
    loop {
        let answer = s.quarry.request("GET", &path, Some(&s.key), None).json();
        if answer["file"]["served"] == true {
            return;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "{doc} is served: {answer}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// The preview as JSON, with `q`.
fn boxes(s: &Shared, doc: &str, page: u32, query: &str) -> (Vec<Value>, image::GrayImage) {
    let tail = format!(
        "{page}/preview?width=600&q={}",
        query.replace(' ', "%20").replace('-', "%2D")
    );
    let answer = preview(s, &s.key, doc, &tail, &[("Accept", "application/json")]);
    assert_eq!(answer.status, 200, "{}", answer.text());
    let body = answer.json();
    let png = base64::engine::general_purpose::STANDARD
        .decode(body["image"].as_str().expect("image"))
        .expect("base64");
    let image = image::load_from_memory(&png).expect("a PNG").to_luma8();
    let found = body["highlights"].as_array().cloned().expect("highlights");
    (found, image)
}

/// The share of dark pixels of `image` under `b`, a highlight.
fn ink_under(image: &image::GrayImage, b: &Value) -> f64 {
    let at = |k: &str| b[k].as_u64().expect("a pixel count") as u32;
    let (x, y, w, h) = (at("x"), at("y"), at("w"), at("h"));
    assert!(
        x + w <= image.width() && y + h <= image.height(),
        "{b} on the image"
    );
    let dark = (y..y + h)
        .flat_map(|py| (x..x + w).map(move |px| (px, py)))
        .filter(|&(px, py)| image.get_pixel(px, py).0[0] < 128)
        .count();
    dark as f64 / f64::from((w * h).max(1))
}

fn size_of(png: &[u8]) -> (u32, u32) {
    let image = image::load_from_memory(png).expect("a PNG");
    (image.width(), image.height())
}

#[test]
fn a_pdf_page_and_an_image_are_previewed_as_png_or_as_json() {
    let s = shared();
    let report = doc_id(s, "lighthouse keeper", "report.pdf");
    let page = preview(s, &s.key, &report, "2/preview?width=400", &[]);
    assert_eq!(page.status, 200, "{}", page.text());
    assert_eq!(page.header("content-type"), Some("image/png"));
    assert_eq!(page.header("quarry-page-count"), Some("3"));
    assert_eq!(size_of(&page.body), (400, 517));

    let as_json = preview(
        s,
        &s.key,
        &report,
        "2/preview?width=400",
        &[("Accept", "application/json")],
    );
    assert_eq!(as_json.status, 200, "{}", as_json.text());
    let body = as_json.json();
    assert_eq!(
        (
            &body["page"],
            &body["page_count"],
            &body["width"],
            &body["height"]
        ),
        (
            &Value::from(2),
            &Value::from(3),
            &Value::from(400),
            &Value::from(517)
        )
    );
    assert_eq!(body["mime_type"], "image/png");
    let image = base64::engine::general_purpose::STANDARD
        .decode(body["image"].as_str().expect("image"))
        .expect("base64");
    assert_eq!(image, page.body, "the same PNG either way");

    // The same page again: the client's copy is still good.
    let etag = page.header("etag").expect("an ETag").to_owned();
    let again = preview(
        s,
        &s.key,
        &report,
        "2/preview?width=400",
        &[("If-None-Match", &etag)],
    );
    assert_eq!(again.status, 304);
    let default_width = preview(s, &s.key, &report, "1/preview", &[]);
    assert_eq!(size_of(&default_width.body), (800, 1035));

    let photo = doc_id(s, "harbour", "harbour.png");
    wait_served(s, &photo);
    let drawn = preview(s, &s.key, &photo, "1/preview?width=200", &[]);
    assert_eq!(drawn.status, 200, "{}", drawn.text());
    assert_eq!(size_of(&drawn.body), (200, 150));
    assert_eq!(drawn.header("quarry-page-count"), Some("1"));
}

#[test]
fn a_preview_is_counted_against_the_quota_like_a_document_read() {
    let s = shared();
    let report = doc_id(s, "lighthouse keeper", "report.pdf");
    let key = s.quarry.integration("counted", "all", &["--quota", "2"]);
    for _ in 0..2 {
        let page = preview(s, &key, &report, "1/preview?width=300", &[]);
        assert_eq!(page.status, 200, "{}", page.text());
    }
    let over = preview(s, &key, &report, "1/preview?width=300", &[]);
    assert_eq!(over.status, 429, "{}", over.text());
    assert_eq!(over.json()["error"]["code"], "QUOTA_EXCEEDED");
}

#[test]
fn what_has_no_preview_says_why() {
    let s = shared();
    let report = doc_id(s, "lighthouse keeper", "report.pdf");
    let notes = doc_id(s, "tour", "notes.md");
    let code = |r: &Response| {
        r.json()["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };

    let past_text = preview(s, &s.key, &notes, "2/preview", &[]);
    assert_eq!(past_text.status, 400, "{}", past_text.text());
    assert!(
        past_text.text().contains("1 page(s)"),
        "{}",
        past_text.text()
    );

    let past = preview(s, &s.key, &report, "9/preview", &[]);
    assert_eq!(past.status, 400, "{}", past.text());
    assert!(
        past.text().contains("this document has 3 page(s)"),
        "{}",
        past.text()
    );

    for (tail, field) in [
        ("0/preview", "page"),
        ("two/preview", "page"),
        ("1/preview?width=5000", "width"),
        ("1/preview?height=10", "height"),
    ] {
        let refused = preview(s, &s.key, &report, tail, &[]);
        assert_eq!(refused.status, 400, "{tail}: {}", refused.text());
        assert!(refused.text().contains(field), "{tail}: {}", refused.text());
    }

    // The PDF that holds a credential is held back: for an integration it does not exist, nor
    // do its pages.
    let status = s
        .quarry
        .cli_json(&["connector", "status", "Notes", "--json"]);
    let deploy = status["held_back"]["documents"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["path"] == "deploy.pdf")
        .and_then(|d| d["doc_id"].as_str())
        .unwrap_or_else(|| panic!("deploy.pdf is held back: {status}"));
    let refused = preview(s, &s.key, deploy, "1/preview", &[]);
    assert_eq!(
        (refused.status, code(&refused)),
        (404, "RESOURCE_NOT_FOUND".to_owned())
    );
    assert!(!refused.text().contains(GITHUB_TOKEN) && !refused.text().contains("deploy"));
    // Where credentials are redacted, the document is found, but its file and pages are not
    // served.
    let found = s.quarry.keyword_search(&s.key, "deploy token", 20);
    let redacted = found["results"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["connector_id"] == s.redacting.as_str())
        .and_then(|r| r["doc_id"].as_str())
        .unwrap_or_else(|| panic!("the redacted deploy.pdf is found: {found}"));
    let path = format!(
        "/api/v1/connectors/{}/docs/{redacted}/pages/1/preview",
        s.redacting
    );
    let refused = s.quarry.request("GET", &path, Some(&s.key), None);
    assert_eq!(refused.status, 404, "{}", refused.text());
    assert!(
        refused.text().contains("it holds credentials"),
        "{}",
        refused.text()
    );
    // A connector not shared with the integration: refused before anything is read.
    let kept_only = s.quarry.integration("kept-only", "Kept", &[]);
    let not_shared = preview(s, &kept_only, &report, "1/preview", &[]);
    assert_eq!(not_shared.status, 403, "{}", not_shared.text());
    assert_eq!(code(&not_shared), "DATA_SHARING_DECLINED");
    let unknown = preview(s, &s.key, "d_nothing", "1/preview", &[]);
    assert_eq!(unknown.status, 404);

    let without_key = s.quarry.request(
        "GET",
        &format!(
            "/api/v1/connectors/{}/docs/{report}/pages/1/preview",
            s.connector
        ),
        None,
        None,
    );
    assert_eq!(without_key.status, 401);
}

#[test]
fn the_search_page_previews_only_with_the_settings_session() {
    let s = shared();
    let report = doc_id(s, "lighthouse keeper", "report.pdf");
    let path = format!(
        "/admin/v1/connectors/{}/docs/{report}/pages/2/preview?width=300",
        s.connector
    );
    let admin = sign_in(&s.quarry);
    let page = admin.call(&s.quarry, "GET", &path, None);
    assert_eq!(page.status, 200, "{}", page.text());
    assert_eq!(size_of(&page.body), (300, 388));
    let with_key = s.quarry.request("GET", &path, Some(&s.key), None);
    assert_eq!(
        with_key.status, 401,
        "an integration key opens nothing there"
    );
}

#[test]
fn a_querys_words_are_boxed_on_a_text_layer_page_a_scanned_one_and_a_page_of_text() {
    let s = shared();
    let report = doc_id(s, "lighthouse keeper", "report.pdf");
    // The text layer: "lighthouse" on page 2, set at 72 points from the left with its baseline
    // 72 from the top, drawn 600 pixels wide (0.98 pixels a point).
    let (found, image) = boxes(s, &report, 2, "LIGHTHOUSE");
    assert_eq!(found.len(), 1, "case is folded: {found:?}");
    let b = &found[0];
    assert!(
        (88..=100).contains(&b["x"].as_u64().unwrap_or(0)),
        "after \"The \": {b}"
    );
    assert!((55..=65).contains(&b["y"].as_u64().unwrap_or(0)), "{b}");
    assert!(ink_under(&image, b) > 0.1, "over the word's ink: {b}");
    assert!(
        boxes(s, &report, 2, "-lighthouse keeper").0.len() == 1,
        "only keeper"
    );
    assert!(boxes(s, &report, 2, "zebra").0.is_empty());
    assert!(
        boxes(s, &report, 1, "lighthouse").0.is_empty(),
        "not on page 1"
    );
    let plain = preview(
        s,
        &s.key,
        &report,
        "2/preview?width=600",
        &[("Accept", "application/json")],
    );
    assert_eq!(
        plain.json()["highlights"],
        serde_json::json!([]),
        "none without q"
    );

    // The scan: read by OCR on the page drawn again, its boxes scaled to the preview.
    let scan = doc_id(s, "mooring invoice", "scan.pdf");
    wait_served(s, &scan);
    let (found, image) = boxes(s, &scan, 1, "mooring march");
    assert_eq!(found.len(), 2, "both words, in the page's order: {found:?}");
    let (mooring, march) = (&found[0], &found[1]);
    assert!(
        mooring["y"].as_u64() < march["y"].as_u64(),
        "March is on the line below: {found:?}"
    );
    for b in &found {
        let ink = ink_under(&image, b);
        assert!(ink > 0.05 && ink < 0.9, "over the word's ink ({ink}): {b}");
    }
    assert!(boxes(s, &scan, 1, "zebra").0.is_empty());

    // A Markdown note: its text laid out as a page, with a text layer of its own.
    let notes = doc_id(s, "tour", "notes.md");
    let (found, image) = boxes(s, &notes, 1, "tour");
    assert_eq!(
        (image.width(), image.height()),
        (600, 776),
        "a letter-sized page"
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(ink_under(&image, &found[0]) > 0.05, "{found:?}");
    let drawn = preview(s, &s.key, &notes, "1/preview?width=300", &[]);
    assert_eq!(drawn.header("quarry-page-count"), Some("1"));

    // A slide deck: each slide is a page of text.
    let deck = doc_id(s, "sandboxed plugins", "deck.pptx");
    let (found, image) = boxes(s, &deck, 3, "sandboxed");
    assert_eq!(found.len(), 1, "the third slide's word: {found:?}");
    assert!(ink_under(&image, &found[0]) > 0.05, "{found:?}");
    assert!(
        boxes(s, &deck, 2, "sandboxed").0.is_empty(),
        "not on the second slide"
    );
    let slide = preview(s, &s.key, &deck, "3/preview?width=300", &[]);
    assert!(
        slide.header("quarry-page-count").is_some_and(|n| n != "1"),
        "a page per slide"
    );
}

#[test]
fn the_document_view_shows_the_page_with_the_words_boxed_on_it() {
    let s = shared();
    let report = doc_id(s, "lighthouse keeper", "report.pdf");
    let scan = doc_id(s, "mooring invoice", "scan.pdf");
    wait_served(s, &scan);
    let view = |doc: &str, q: &str, page: u32| {
        format!("/search/docs/{}/{doc}?q={q}&page={page}", s.connector)
    };
    let pages = serde_json::json!([
        {"name": "text-layer", "path": view(&report, "lighthouse", 2), "word": "lighthouse"},
        {"name": "scanned", "path": view(&scan, "mooring", 1), "word": "mooring"},
    ]);
    let seen = run_script(
        "page-marks.mjs",
        &s.quarry,
        &[("PAGES", std::ffi::OsStr::new(&pages.to_string()))],
    );
    assert_eq!(seen["text-layer"]["marks"], 1, "{seen}");
    assert_eq!(seen["scanned"]["marks"], 1, "{seen}");
    assert_screenshots("page-marks", &["text-layer", "scanned"]);
}
