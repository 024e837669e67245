//! OCR end to end (docs/ocr.md): the real server with the OCR models, the folder connector
//! decoding images and scanned PDF pages in its sandbox, and the text found by search on the
//! right page. Images come from a real producer: Chromium's screenshots of HTML pages.

use std::time::Duration;

use quarry_tests::corpus::FixtureFile;
use quarry_tests::pdf::{ScanPage, scanned};
use quarry_tests::quarry::Quarry;
use quarry_tests::scans::{
    group4, indexed, jbig2, jpeg, jpeg2000, lzw, page_html, png, run_length_hex, screenshot,
    turned_quarter,
};
use serde_json::{Value, json};

const MARCH_2026_MS: i64 = 1_773_000_000_000;

fn file(path: &'static str, bytes: Vec<u8>) -> FixtureFile {
    FixtureFile {
        path,
        bytes,
        mtime_ms: MARCH_2026_MS,
    }
}

/// A server with the OCR models (and no embedding model) on a folder `name` of `files`, with
/// an integration's key, once OCR has read everything.
fn read_by_ocr(name: &'static str, files: Vec<FixtureFile>) -> (Quarry, String) {
    let mut q = Quarry::new();
    q.without_model();
    q.with_ocr();
    q.serve_folders(&[(name, files)]);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    q.wait_for_ocr();
    (q, key)
}

/// A screenshot of a one-line page under `title`, 1000 x 500 pixels.
fn page(title: &str, line: &str) -> image::GrayImage {
    screenshot(&page_html(title, &[line]), 1000, 500)
}

/// A scanned page of `shot`'s size whose image is `data`, with the other `entries` of its
/// dictionary (colour space, bits, filter).
fn image_page<'a>(shot: &image::GrayImage, data: &'a [u8], entries: &'a str) -> ScanPage<'a> {
    ScanPage::Image {
        data,
        width: shot.width(),
        height: shot.height(),
        entries,
    }
}

/// The paths of the documents a keyword search for `query` finds, with their pages.
fn found(q: &Quarry, key: &str, query: &str) -> Vec<(String, Value)> {
    let answer = q.search_ok(key, json!({"query": query, "semantic_search": false}));
    answer["results"]
        .as_array()
        .map(|hits| {
            hits.iter()
                .map(|h| {
                    (
                        h["path"].as_str().unwrap_or("").to_owned(),
                        h["page"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A document's answer from `GET /connectors/{c}/docs/{d}`, found by its path.
fn doc(q: &Quarry, key: &str, query: &str, path: &str) -> Value {
    let answer = q.search_ok(key, json!({"query": query, "semantic_search": false}));
    let hit = answer["results"]
        .as_array()
        .and_then(|hits| hits.iter().find(|h| h["path"] == path))
        .unwrap_or_else(|| panic!("{path} is found by {query:?}: {answer}"))
        .clone();
    let url = format!(
        "/api/v1/connectors/{}/docs/{}",
        hit["connector_id"].as_str().unwrap_or(""),
        hit["doc_id"].as_str().unwrap_or("")
    );
    let response = q.request("GET", &url, Some(key), None);
    assert_eq!(response.status, 200, "{}", response.text());
    response.json()
}

#[test]
fn a_word_only_in_a_scanned_page_a_screenshot_or_a_turned_scan_is_found() {
    let letter = screenshot(
        &page_html(
            "Quarterly report",
            &[
                "The warehouse in Rotterdam shipped 4,213 pallets of marmalade in the third quarter.",
                "Check the invoice numbered QX-7781 before December.",
            ],
        ),
        1000,
        600,
    );
    let receipt = screenshot(
        &page_html(
            "Receipt",
            &["Two tickets for the zeppelin museum, paid in cash."],
        ),
        900,
        400,
    );
    let screen = screenshot(
        &page_html("Settings", &["The haulier contract renews every October."]),
        900,
        400,
    );
    let scan = scanned(&[
        ScanPage::Text(&["Typed cover page"]),
        ScanPage::Jpeg {
            data: &jpeg(&letter, 80),
            width: letter.width(),
            height: letter.height(),
        },
    ]);
    let turned = turned_quarter(&receipt);
    let (q, key) = read_by_ocr(
        "Scans",
        vec![
            file("letter.pdf", scan),
            file("receipt.jpg", jpeg(&turned, 85)),
            file("screenshot.png", png(&screen)),
        ],
    );

    // The scanned page's words are found on that page; the typed page keeps its own text.
    let hits = found(&q, &key, "marmalade");
    assert_eq!(hits, vec![("letter.pdf".to_owned(), json!(2))], "{hits:?}");
    assert_eq!(found(&q, &key, "QX-7781").len(), 1);
    assert_eq!(found(&q, &key, "cover")[0].1, json!(1));
    // A screenshot, and a receipt photographed a quarter turned.
    assert_eq!(found(&q, &key, "haulier")[0].0, "screenshot.png");
    assert_eq!(found(&q, &key, "zeppelin")[0].0, "receipt.jpg");

    let letter = doc(&q, &key, "marmalade", "letter.pdf");
    assert_eq!(letter["page_count"], 2, "{letter}");
    assert_eq!(
        letter["metadata"]["text_source"], "text and ocr",
        "{letter}"
    );
    let confidence: f64 = letter["metadata"]["ocr_confidence"]
        .as_str()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0.0);
    assert!(confidence > 0.8, "{letter}");
    let text = letter["content"].as_str().unwrap_or("");
    assert!(text.contains("Typed cover page"), "{text}");
    assert!(text.contains("Rotterdam shipped 4,213 pallets"), "{text}");
    let receipt = doc(&q, &key, "zeppelin", "receipt.jpg");
    assert_eq!(receipt["metadata"]["text_source"], "ocr", "{receipt}");

    // Nothing is left marked as having no text layer, and searches no longer warn.
    let status = q.cli_json(&["connector", "status", "Scans", "--json"]);
    assert_eq!(status["no_text_layer"]["count"], 0, "{status}");
    let answer = q.search_ok(&key, json!({"query": "zeppelin", "semantic_search": false}));
    assert_eq!(answer["warnings"], json!([]), "{answer}");
}

#[test]
fn scanned_pages_in_ccitt_fax_jbig2_and_jpeg_2000_are_read_on_their_pages() {
    let fax = page("Fax", "The ferryman signed the waybill in Lisbon.");
    let archive = page("Archive", "Gooseberry jam was rationed that winter.");
    let survey = page("Survey", "The lighthouse keeper counted puffins.");
    let (g4, jb2, jp2) = (group4(&fax), jbig2(&archive), jpeg2000(&survey));
    let fax_entries = format!(
        "/ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /CCITTFaxDecode \
         /DecodeParms << /K -1 /Columns {} /Rows {} >>",
        fax.width(),
        fax.height()
    );
    let pages = [
        image_page(&fax, &g4, &fax_entries),
        image_page(
            &archive,
            &jb2,
            "/ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /JBIG2Decode",
        ),
        image_page(
            &survey,
            &jp2,
            "/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /JPXDecode",
        ),
    ];
    let (q, key) = read_by_ocr("Scans", vec![file("archive.pdf", scanned(&pages))]);

    let on_page = |page: i64| vec![("archive.pdf".to_owned(), json!(page))];
    assert_eq!(found(&q, &key, "ferryman waybill"), on_page(1));
    assert_eq!(found(&q, &key, "gooseberry rationed"), on_page(2));
    assert_eq!(found(&q, &key, "lighthouse puffins"), on_page(3));
    let status = q.cli_json(&["connector", "status", "Scans", "--json"]);
    assert_eq!(status["no_text_layer"]["count"], 0, "{status}");
}

#[test]
fn scanned_pages_in_lzw_in_indexed_colours_and_in_run_length_hex_are_read_on_their_pages() {
    let older = page("Ledger", "The cooper mended seven barrels in April.");
    let reduced = page("Ledger", "A walnut wardrobe went to the auction house.");
    let typed = page("Ledger", "The blacksmith shod the grey mare twice.");
    let runs = run_length_hex(&typed);
    let (packed, table) = indexed(&reduced);
    let lzw_entries = "/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /LZWDecode";
    let indexed_entries = format!(
        "/ColorSpace [/Indexed /DeviceRGB 15 {table}] /BitsPerComponent 4 /Filter /FlateDecode"
    );
    let lzw_data = lzw(&older);
    let pages = [
        image_page(&older, &lzw_data, lzw_entries),
        image_page(&reduced, &packed, &indexed_entries),
        image_page(
            &typed,
            &runs,
            "/ColorSpace /DeviceGray /BitsPerComponent 8 \
                      /Filter [/ASCIIHexDecode /RunLengthDecode]",
        ),
    ];
    let (q, key) = read_by_ocr("Scans", vec![file("ledger.pdf", scanned(&pages))]);

    let on_page = |page: i64| vec![("ledger.pdf".to_owned(), json!(page))];
    assert_eq!(found(&q, &key, "cooper barrels"), on_page(1));
    assert_eq!(found(&q, &key, "walnut wardrobe auction"), on_page(2));
    assert_eq!(found(&q, &key, "blacksmith mare"), on_page(3));
}

#[test]
fn a_broken_page_image_leaves_that_page_unread_and_the_others_are_read() {
    let (before, after) = (
        page("Minutes", "The beekeeper renewed the orchard lease."),
        page("Minutes", "Quinces were stored in the cellar."),
    );
    let (before, after) = (jpeg(&before, 85), jpeg(&after, 85));
    let good = |data| ScanPage::Jpeg {
        data,
        width: 1000,
        height: 500,
    };
    let pages = [
        good(&before),
        // Page 2 says it is a JPEG and is not one.
        ScanPage::Image {
            data: b"a torn page, not a JPEG",
            width: 1000,
            height: 500,
            entries: "/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode",
        },
        good(&after),
    ];
    let (q, key) = read_by_ocr("Scans", vec![file("minutes.pdf", scanned(&pages))]);

    let on_page = |page: i64| vec![("minutes.pdf".to_owned(), json!(page))];
    assert_eq!(found(&q, &key, "beekeeper orchard"), on_page(1));
    assert_eq!(found(&q, &key, "quinces cellar"), on_page(3));
    let read = doc(&q, &key, "quinces", "minutes.pdf");
    assert_eq!(read["metadata"]["ocr_pages"], json!("2"), "{read}");
    let log = q.log();
    assert!(
        log.lines()
            .any(|l| l.contains("minutes.pdf: page 2:") && l.contains("left unread")),
        "the log says which page was not read and why: {log}"
    );
}

#[test]
fn bombs_broken_images_and_ten_thousand_pages_fail_alone() {
    // A PNG whose header claims 100,000 x 100,000 pixels.
    let mut bomb = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bomb.extend_from_slice(&100_000u32.to_be_bytes());
    bomb.extend_from_slice(&100_000u32.to_be_bytes());
    bomb.extend_from_slice(&[8, 0, 0, 0, 0]);
    let crc = crc32(&bomb[12..]);
    bomb.extend_from_slice(&crc.to_be_bytes());
    let words = screenshot(
        &page_html("Note", &["The glasshouse key is under the blue flowerpot."]),
        800,
        300,
    );
    let whole = jpeg(&words, 85);
    let truncated = whole[..whole.len() / 3].to_vec();
    // Ten thousand pages of a dot each.
    let dot = jpeg(&image::GrayImage::new(4, 4), 50);
    let pages: Vec<ScanPage<'_>> = (0..10_000)
        .map(|_| ScanPage::Jpeg {
            data: &dot,
            width: 4,
            height: 4,
        })
        .collect();
    let (q, key) = read_by_ocr(
        "Hostile",
        vec![
            file("bomb.png", bomb),
            file("truncated.jpg", truncated),
            file("many.pdf", scanned(&pages)),
            file("note.jpg", whole),
        ],
    );

    // The good image is read; the others failed alone, each with its reason.
    assert_eq!(found(&q, &key, "glasshouse")[0].0, "note.jpg");
    let status = q.cli_json(&["connector", "status", "Hostile", "--json"]);
    let reasons: Vec<(String, String)> = status["no_text_layer"]["documents"]
        .as_array()
        .expect("documents")
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap_or("").to_owned(),
                d["reason"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let reason = |path: &str| {
        reasons
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, r)| r.clone())
            .unwrap_or_else(|| panic!("{path} has a reason: {status}"))
    };
    assert!(reason("bomb.png").contains("over the bounds"), "{status}");
    // Ten thousand pages are more than one call may take to extract: that PDF fails alone.
    let failed = status["failed_documents"].to_string();
    assert!(
        failed.contains("many.pdf") && failed.contains("timed out"),
        "{status}"
    );
    // A truncated JPEG is read as far as it goes (the decoder fills the rest), or fails with
    // its reason: either way it is done with, and nothing waits.
    let truncated_done = reasons
        .iter()
        .any(|(p, r)| p == "truncated.jpg" && r.contains("OCR"))
        || found(&q, &key, "truncated")
            .iter()
            .any(|(p, _)| p == "truncated.jpg");
    assert!(truncated_done, "{status}");
    let connectors = q.connectors();
    assert_eq!(connectors[0]["status"], "idle", "{connectors:?}");
    assert_eq!(connectors[0]["doc_count"], 4, "{connectors:?}");
    assert_eq!(connectors[0]["ocr"]["pending"], 0, "{connectors:?}");
}

#[test]
fn a_restart_with_ocr_pending_loses_nothing() {
    let shots: Vec<image::GrayImage> = ["lighthouse", "windmill", "aqueduct"]
        .iter()
        .map(|word| {
            screenshot(
                &page_html(
                    "Postcard",
                    &[&format!("Greetings from the old {word} by the sea.")],
                ),
                800,
                300,
            )
        })
        .collect();
    let mut q = Quarry::new();
    q.without_model();
    q.with_ocr();
    let folder = q.scratch("cards");
    std::fs::create_dir_all(&folder).expect("folder");
    for (i, shot) in shots.iter().enumerate() {
        std::fs::write(folder.join(format!("card{i}.png")), png(shot)).expect("write");
    }
    // Synced with no server: the pages wait in the store.
    q.add_folder("Cards", &folder);
    q.cli_ok(&["connector", "sync", "Cards", "--wait"]);
    let pending = |q: &Quarry| q.connectors()[0]["ocr"]["pending"].as_u64();
    assert_eq!(pending(&q), Some(3));

    // A server is killed while it reads them; the next one carries on where it stopped, and
    // meanwhile searches say what still waits.
    q.start();
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    q.wait_for("OCR under way", |c| {
        c[0]["ocr"]["pending"].as_u64() < Some(3)
    });
    q.kill();
    let left = pending(&q).unwrap_or(0);
    assert!((1..3).contains(&left), "{left} left");
    q.start();
    let search = q.search_ok(&key, json!({"query": "card0"}));
    assert!(
        search["warnings"]
            .to_string()
            .contains(&format!("{left} document(s) still wait for OCR")),
        "{search}"
    );
    q.wait_for_ocr();
    for word in ["lighthouse", "windmill", "aqueduct"] {
        assert_eq!(found(&q, &key, word).len(), 1, "{word}");
    }
    // What was read is kept: a full sync of the unchanged files reads nothing again.
    q.cli_ok(&["connector", "sync", "Cards", "--full", "--wait"]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(pending(&q), Some(0));
    assert_eq!(found(&q, &key, "windmill").len(), 1);
}

/// When OCR finished reading each document, from the store.
fn ocr_done_times(q: &Quarry) -> Vec<(String, Option<i64>)> {
    let database = q.database();
    database
        .block_on(
            sqlx::query_as("SELECT doc_id, done_ms FROM ocr ORDER BY doc_id")
                .fetch_all(database.pool()),
        )
        .expect("reads")
}

#[test]
fn a_rebuild_of_the_index_does_not_read_an_unchanged_scan_again() {
    let card = screenshot(
        &page_html("Postcard", &["Greetings from the old funicular."]),
        800,
        300,
    );
    let (mut q, key) = read_by_ocr("Cards", vec![file("card.png", png(&card))]);
    let read = ocr_done_times(&q);
    assert!(read.len() == 1 && read[0].1.is_some(), "{read:?}");
    let before = found(&q, &key, "funicular");
    assert_eq!(before.len(), 1, "{before:?}");

    // An index of an older layout is rebuilt from the sources at the next start.
    q.stop();
    std::fs::remove_file(q.data_dir().join("index/quarry-format")).expect("format file");
    q.start();
    q.wait_for("the rebuilt index synced", |c| {
        c.first().is_some_and(|c| {
            c["doc_count"] == 1 && c["status"] == "idle" && c["ocr"]["pending"] == 0
        })
    });
    assert!(
        q.log().contains("rebuilding it from the sources"),
        "{}",
        q.log()
    );
    assert_eq!(found(&q, &key, "funicular"), before);
    // The text came from what was kept: OCR did not read the card again.
    assert_eq!(ocr_done_times(&q), read);
}

#[test]
fn a_password_photographed_on_a_note_is_held_back_once_read() {
    let note = screenshot(
        &page_html(
            "Bank login",
            &["User: ada.example", "Password: q7Vx9LmR2tZk4WpB"],
        ),
        900,
        400,
    );
    let (q, key) = read_by_ocr(
        "Photos",
        vec![
            file("note.png", png(&note)),
            file("shopping.txt", b"Bank holiday shopping: bread".to_vec()),
        ],
    );
    let connectors = q.connectors();
    assert_eq!(connectors[0]["held_back_count"], 1, "{connectors:?}");
    let hits = found(&q, &key, "bank");
    assert_eq!(
        hits,
        vec![("shopping.txt".to_owned(), json!(null))],
        "{hits:?}"
    );
    let status = q.cli_ok(&["connector", "status", "Photos"]);
    assert!(status.contains("note.png"), "{status}");
}

/// CRC-32 of a PNG chunk's type and data.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}
