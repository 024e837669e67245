//! Presentations, spreadsheets, OpenDocument text, RTF, Word, e-books and mail through the real
//! server, on files written
//! by real producers (`tests/fixtures/office/make_fixtures.py`: pandoc and LibreOffice): the
//! words of each file agree with a reference extraction (recall and precision at least 0.98), a
//! slide or a sheet is a page (a word of slide 7 is found on page 7, and pages 7 to 7 are that
//! slide with its speaker notes), and titles and authors come from the files' own metadata.

use std::collections::HashMap;
use std::path::Path;

use quarry_tests::corpus::{FixtureFile, MARCH_2026_MS};
use quarry_tests::quarry::Quarry;
use serde_json::{Value, json};

/// The decks: PowerPoint written by pandoc, OpenDocument by LibreOffice, and PowerPoint written
/// back by LibreOffice.
const DECKS: [&str; 3] = ["deck.pptx", "deck.odp", "deck-libreoffice.pptx"];

/// The workbooks: OpenDocument and Excel, both written by LibreOffice.
const BOOKS: [&str; 2] = ["book.ods", "book.xlsx"];

/// A file of the test folders, last modified in March 2026.
fn march(path: &'static str, bytes: Vec<u8>) -> FixtureFile {
    FixtureFile {
        path,
        bytes,
        mtime_ms: MARCH_2026_MS,
    }
}

/// A server (without the embedding model) serving the folder `name` of `files`, and the
/// folder's connector id.
fn serving(name: &str, files: Vec<FixtureFile>) -> (Quarry, String) {
    let mut q = Quarry::new();
    q.without_model();
    let connector = q.serve_folders(&[(name, files)]).remove(0);
    (q, connector)
}

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/office")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn fixture_text(name: &str) -> String {
    String::from_utf8(fixture(name)).expect("UTF-8")
}

/// Words, lowercased, as multiset counts (letters and digits; typographic apostrophes count as
/// apostrophes, so `person's` is one word in every extractor).
fn words(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    let normalised = text.replace('\u{2019}', "'");
    for word in normalised
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
    {
        *counts.entry(word.to_lowercase()).or_insert(0) += 1;
    }
    counts
}

/// Word recall and precision of `got` against `reference`.
fn recall_precision(got: &str, reference: &str) -> (f64, f64) {
    let (got, reference) = (words(got), words(reference));
    let common: usize = reference
        .iter()
        .map(|(w, n)| (*n).min(got.get(w).copied().unwrap_or(0)))
        .sum();
    let total = |m: &HashMap<String, usize>| m.values().sum::<usize>().max(1) as f64;
    (
        common as f64 / total(&reference),
        common as f64 / total(&got),
    )
}

struct Office {
    q: Quarry,
    key: String,
    connector: String,
}

fn office() -> Office {
    let file = |path: &'static str| march(path, fixture(path));
    let mut files: Vec<FixtureFile> = DECKS.iter().chain(&BOOKS).map(|d| file(d)).collect();
    files.push(file("report.odt"));
    files.push(file("novel.epub"));
    files.push(file("mail.eml"));
    files.push(file("report.rtf"));
    files.push(file("report-pandoc.rtf"));
    files.push(file("report.docx"));
    let (q, connector) = serving("Office", files);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    Office { q, key, connector }
}

impl Office {
    fn hits(&self, query: &str) -> Vec<Value> {
        let body = self.q.search_ok(
            &self.key,
            json!({"query": query, "semantic_search": false, "limit": 20}),
        );
        body["results"].as_array().cloned().unwrap_or_default()
    }

    fn doc_id(&self, path: &str) -> String {
        let status = self
            .q
            .cli_json(&["connector", "status", "Office", "--json"]);
        assert_eq!(status["failed_documents"], json!([]), "{status}");
        self.hits(path.split('.').next().unwrap_or(path))
            .iter()
            .find(|h| h["path"] == path)
            .and_then(|h| h["doc_id"].as_str())
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("{path} is indexed"))
    }

    fn doc(&self, path: &str, query: &str) -> Value {
        let id = self.doc_id(path);
        let url = format!("/api/v1/connectors/{}/docs/{id}{query}", self.connector);
        let response = self.q.request("GET", &url, Some(&self.key), None);
        assert_eq!(response.status, 200, "{}", response.text());
        response.json()
    }
}

/// The pages of a reference file (separated by form feeds).
fn reference_pages(name: &str) -> Vec<String> {
    fixture_text(name)
        .split('\u{c}')
        .map(str::to_owned)
        .collect()
}

#[test]
fn spreadsheets_are_a_page_per_sheet_matching_libreoffices_own_export() {
    let o = office();
    let sheets = reference_pages("book.sheets.txt");
    for book in BOOKS {
        let doc = o.doc(book, "");
        let text = doc["content"].as_str().unwrap_or_default();
        let (recall, precision) = recall_precision(text, &sheets.concat());
        eprintln!("{book}: recall {recall:.3}, precision {precision:.3}");
        assert!(
            recall >= 0.98 && precision >= 0.98,
            "{book}: recall {recall:.3}, precision {precision:.3}\n{text}"
        );
        assert_eq!(doc["page_count"], sheets.len(), "{book}: a page per sheet");
        assert_eq!(
            doc["metadata"]["sheet_count"],
            sheets.len().to_string(),
            "{book}"
        );
        assert_eq!(doc["metadata"]["author"], "Ada Example", "{book}: {doc}");
        for (n, expected) in sheets.iter().enumerate() {
            let one = o.doc(book, &format!("?page_start={0}&page_end={0}", n + 1));
            let got = one["content"].as_str().unwrap_or_default();
            assert_eq!(
                recall_precision(got, expected),
                (1.0, 1.0),
                "{book} sheet {}: {got}",
                n + 1
            );
        }
    }
    let hits = o.hits("Calvino");
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(hits.iter().all(|h| h["page"] == 3), "{hits:?}");
}

#[test]
fn presentations_and_opendocument_text_match_their_reference_text() {
    let o = office();
    let pages = reference_pages("deck.pages.txt");
    for deck in DECKS {
        let doc = o.doc(deck, "");
        let text = doc["content"].as_str().unwrap_or_default();
        let (recall, precision) = recall_precision(text, &pages.concat());
        eprintln!("{deck}: recall {recall:.3}, precision {precision:.3}");
        assert!(
            recall >= 0.98 && precision >= 0.98,
            "{deck}: recall {recall:.3}, precision {precision:.3}\n{text}"
        );
        assert_eq!(doc["page_count"], pages.len(), "{deck}: a page per slide");
        assert_eq!(
            doc["metadata"]["title"], "Quarry field notes",
            "{deck}: {doc}"
        );
        assert_eq!(
            doc["metadata"]["slide_count"],
            pages.len().to_string(),
            "{deck}"
        );
        // Every slide's page is that slide: its words, its notes, no other slide's.
        for (n, expected) in pages.iter().enumerate() {
            let one = o.doc(deck, &format!("?page_start={0}&page_end={0}", n + 1));
            let got = one["content"].as_str().unwrap_or_default();
            let (recall, precision) = recall_precision(got, expected);
            assert!(
                recall >= 0.98 && precision >= 0.98,
                "{deck} page {}: recall {recall:.3}, precision {precision:.3}\n{got}\n--- expected ---\n{expected}",
                n + 1
            );
        }
    }

    let report = o.doc("report.odt", "");
    let text = report["content"].as_str().unwrap_or_default();
    let (recall, precision) = recall_precision(text, &fixture_text("report.reference.txt"));
    eprintln!("report.odt: recall {recall:.3}, precision {precision:.3}");
    assert!(
        recall >= 0.98 && precision >= 0.98,
        "report.odt: recall {recall:.3}, precision {precision:.3}\n{text}"
    );
    assert_eq!(
        report["metadata"]["title"], "Quarry field notes report",
        "{report}"
    );
    assert_eq!(report["metadata"]["author"], "Ada Example", "{report}");
    assert!(
        report["metadata"]["created"]
            .as_str()
            .is_some_and(|d| d.starts_with("20")),
        "{report}"
    );
}

#[test]
fn a_word_of_slide_7_is_found_on_page_7_with_its_speaker_notes() {
    let o = office();
    for (query, words_on_page) in [
        ("marmalade", "Marmalade quarterly"),
        ("heliotrope", "heliotrope example"),
    ] {
        let hits: Vec<Value> = o
            .hits(query)
            .into_iter()
            .filter(|h| DECKS.iter().any(|d| h["path"] == *d))
            .collect();
        assert_eq!(hits.len(), DECKS.len(), "{query}: {hits:?}");
        for hit in &hits {
            assert_eq!(hit["page"], 7, "{query} in {}: {hit}", hit["path"]);
            let slide = o.doc(
                hit["path"].as_str().unwrap_or_default(),
                "?page_start=7&page_end=7",
            );
            let text = slide["content"].as_str().unwrap_or_default();
            assert!(text.contains(words_on_page), "{text}");
            assert!(
                !text.contains("Chapters of a book"),
                "slide 8 is not on page 7: {text}"
            );
        }
    }
}

#[test]
fn an_e_book_is_a_page_per_chapter_after_its_title_page() {
    let o = office();
    let doc = o.doc("novel.epub", "");
    let text = doc["content"].as_str().unwrap_or_default();
    let (recall, precision) = recall_precision(text, &fixture_text("novel.reference.txt"));
    eprintln!("novel.epub: recall {recall:.3}, precision {precision:.3}");
    assert!(
        recall >= 0.98 && precision >= 0.98,
        "novel.epub: recall {recall:.3}, precision {precision:.3}\n{text}"
    );
    assert_eq!(
        doc["page_count"], 4,
        "a title page and three chapters: {doc}"
    );
    assert_eq!(doc["metadata"]["title"], "The Ledger", "{doc}");
    assert_eq!(doc["metadata"]["author"], "Ada Example", "{doc}");
    assert_eq!(doc["metadata"]["date"], "2026-03-01", "{doc}");
    let hits = o.hits("oilcloth");
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["page"], 4, "the third chapter: {hits:?}");
    let chapter = o.doc("novel.epub", "?page_start=3&page_end=3");
    let text = chapter["content"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("The archive") && text.contains("missing ledger"),
        "{text}"
    );
    assert!(
        !text.contains("lighthouse") && !text.contains("oilcloth"),
        "{text}"
    );
}

#[test]
fn a_mail_is_its_headers_and_body_then_a_page_per_readable_attachment() {
    let o = office();
    let doc = o.doc("mail.eml", "");
    let meta = &doc["metadata"];
    assert_eq!(meta["title"], "Quarterly marmalade report", "{doc}");
    assert_eq!(meta["from"], "Ada Example <ada@example.org>", "{doc}");
    assert_eq!(meta["to"], "Grace Hopper <grace@example.org>", "{doc}");
    assert_eq!(meta["message_id"], "report-2026-03@example.org", "{doc}");
    assert_eq!(meta["attachments_by_name_only"], "chart.png", "{doc}");
    let date = meta["date"].as_str().unwrap_or_default();
    assert!(date.starts_with("2026-03-02T09:30:00"), "{doc}");
    assert_eq!(
        doc["page_count"], 3,
        "the message, report.odt and visits.csv: {doc}"
    );

    let page = |n: usize| -> String {
        o.doc("mail.eml", &format!("?page_start={n}&page_end={n}"))["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let expected = format!(
        "From: Ada Example <ada@example.org>\nTo: Grace Hopper <grace@example.org>\nDate: {date}\n\
         Subject: Quarterly marmalade report\n\nHello Grace,\n\nThe quarterly marmalade figures \
         are attached, with the field report.\n\nAda"
    );
    assert_eq!(
        recall_precision(&page(1), &expected),
        (1.0, 1.0),
        "{}",
        page(1)
    );
    let report = page(2);
    assert!(report.starts_with("report.odt"), "{report}");
    let (recall, precision) = recall_precision(&report, &fixture_text("report.reference.txt"));
    eprintln!("mail.eml, report.odt attached: recall {recall:.3}, precision {precision:.3}");
    assert!(
        recall >= 0.98 && precision >= 0.98,
        "recall {recall:.3}, precision {precision:.3}\n{report}"
    );
    assert!(page(3).contains("Lisbon\t3"), "{}", page(3));

    let hits = o.hits("Porto");
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(
        (&hits[0]["path"], &hits[0]["page"]),
        (&json!("mail.eml"), &json!(3))
    );
}

#[test]
fn rtf_and_word_files_match_libreoffices_own_reading() {
    let o = office();
    for rtf in ["report.rtf", "report-pandoc.rtf", "report.docx"] {
        let doc = o.doc(rtf, "");
        let text = doc["content"].as_str().unwrap_or_default();
        let reference = fixture_text(&format!("{rtf}.reference.txt"));
        let (recall, precision) = recall_precision(text, &reference);
        eprintln!("{rtf}: recall {recall:.3}, precision {precision:.3}");
        assert!(
            recall >= 0.98 && precision >= 0.98,
            "{rtf}: recall {recall:.3}, precision {precision:.3}\n{text}"
        );
        assert!(
            text.contains("Café notes: a naïve résumé, 東京 in spring, Ελληνικά and Русский."),
            "{text}"
        );
    }
    let doc = o.doc("report.rtf", "");
    assert_eq!(
        doc["metadata"]["title"], "Quarry field notes report",
        "{doc}"
    );
    assert_eq!(doc["metadata"]["author"], "Ada Example", "{doc}");
}

#[test]
fn scanned_pages_and_images_are_marked_no_text_layer_in_connector_status() {
    let (q, _) = serving(
        "Scans",
        vec![
            // A scanner's PDF: pages, and no text on any of them.
            march(
                "scan.pdf",
                quarry_tests::pdf::pdf("Scan", &[&[], &[]], false),
            ),
            march("photo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec()),
            march(
                "mixed.pdf",
                quarry_tests::pdf::pdf("Mixed", &[&["typed words"], &[]], false),
            ),
            march("notes.txt", b"plain words".to_vec()),
        ],
    );
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);

    let status = q.cli_json(&["connector", "status", "Scans", "--json"]);
    assert_eq!(status["failed_documents"], json!([]), "{status}");
    let no_text = &status["no_text_layer"];
    assert_eq!(no_text["count"], 2, "{status}");
    let reasons: Vec<(&str, &str)> = no_text["documents"]
        .as_array()
        .expect("documents")
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap_or_default(),
                d["reason"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(reasons.len(), 2, "{status}");
    assert_eq!(reasons[0].0, "photo.png");
    assert!(reasons[0].1.contains("image"), "{status}");
    assert_eq!(reasons[1].0, "scan.pdf");
    assert!(
        reasons[1].1.contains("no page has a text layer"),
        "{status}"
    );
    let text = q.cli_ok(&["connector", "status", "Scans"]);
    assert!(
        text.contains("no text layer, found by title and path only (2;"),
        "{text}"
    );

    // Found by name; a PDF with some text says how many pages have none.
    let found = |query: &str| -> Vec<String> {
        q.search_ok(&key, json!({"query": query, "semantic_search": false}))["results"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|h| h["path"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(found("scan"), ["scan.pdf"]);
    assert_eq!(found("photo"), ["photo.png"]);
    let mixed = found("typed");
    assert_eq!(mixed, ["mixed.pdf"]);
}

#[test]
fn pdfs_whose_fonts_pdf_extract_cannot_read_are_found_by_their_words() {
    let cmap = |sections: &str| {
        format!(
            "/CIDInit /ProcSet findresource begin 12 dict begin begincmap \
             1 begincodespacerange <00> <FF> endcodespacerange {sections} endcmap end end"
        )
        .into_bytes()
    };
    // A ToUnicode range to three characters (a ligature), which adobe-cmap-parser panics on.
    let ligatures = cmap("1 beginbfrange <01> <02> <006600660069> endbfrange");
    // A map of the letter h alone: a font that has one, as TeX's do.
    let letter = cmap("1 beginbfchar <68> <0068> endbfchar");
    let helvetica = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica";
    let (q, _) = serving(
        "Papers",
        vec![
            march(
                "ligatures.pdf",
                quarry_tests::pdf::in_font(
                    &format!("{helvetica} /ToUnicode 6 0 R >>"),
                    &[&ligatures],
                    "lighthouse keeper",
                ),
            ),
            march(
                "standard.pdf",
                quarry_tests::pdf::in_font(
                    &format!("{helvetica} /Encoding /StandardEncoding >>"),
                    &[],
                    "harbour pilot",
                ),
            ),
            // TeX's glyph name for a small-capital ff, which pdf-extract maps to half a UTF-16
            // pair.
            march(
                "smallcaps.pdf",
                quarry_tests::pdf::in_font(
                    &format!(
                        "{helvetica} /ToUnicode 6 0 R /Encoding << /Differences [23 /FFsmall] >> >>"
                    ),
                    &[&letter],
                    "ferry timetable",
                ),
            ),
        ],
    );
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);

    let status = q.cli_json(&["connector", "status", "Papers", "--json"]);
    assert_eq!(status["failed_documents"], json!([]), "{status}");
    for (word, path) in [
        ("lighthouse", "ligatures.pdf"),
        ("pilot", "standard.pdf"),
        ("timetable", "smallcaps.pdf"),
    ] {
        let found = q.search_ok(&key, json!({"query": word, "semantic_search": false}));
        let hits = found["results"].as_array().expect("results");
        assert_eq!(hits.len(), 1, "{word}: {found}");
        assert_eq!(hits[0]["path"], path, "{found}");
        assert_eq!(hits[0]["page"], 1, "{found}");
    }
}
