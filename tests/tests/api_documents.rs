//! `GET .../docs/{doc_id}` and `GET .../docs/{doc_id}/file`, and `GET /connectors`, against the
//! real server: pages and character limits, streamed downloads with ranges and validators.

use std::io::Write;

use quarry_tests::corpus;
use quarry_tests::quarry::Quarry;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

struct World {
    q: Quarry,
    key: String,
    notes: String,
    folder: std::path::PathBuf,
}

fn world() -> World {
    let mut q = Quarry::new();
    let notes = q.serve_folders(&[("Notes", corpus::notes())]).remove(0);
    let folder = q.scratch("notes");
    let key = q.integration("Reader", "all", &["--quota", "unlimited"]);
    World {
        q,
        key,
        notes,
        folder,
    }
}

impl World {
    /// The doc id of the document at `path` (found through search).
    fn id(&self, query: &str, path: &str) -> String {
        let body = self
            .q
            .search(&self.key, json!({"query": query, "limit": 100}))
            .json();
        body["results"]
            .as_array()
            .expect("results")
            .iter()
            .find(|r| r["path"] == path)
            .and_then(|r| r["doc_id"].as_str())
            .unwrap_or_else(|| panic!("{path} found by {query}: {body}"))
            .to_owned()
    }

    fn doc(&self, id: &str, query: &str) -> (u16, Value) {
        let path = format!("/api/v1/connectors/{}/docs/{id}{query}", self.notes);
        let response = self.q.request("GET", &path, Some(&self.key), None);
        (response.status, response.json())
    }

    fn file(&self, id: &str, headers: &[(&str, &str)]) -> quarry_tests::http::Response {
        let path = format!("/api/v1/connectors/{}/docs/{id}/file", self.notes);
        self.q
            .request_with("GET", &path, Some(&self.key), None, headers)
    }
}

#[test]
fn a_search_result_names_the_page_to_read() {
    let w = world();
    let hit = |query: &str, path: &str| -> Value {
        let body =
            w.q.search_ok(&w.key, json!({"query": query, "semantic_search": false}));
        body["results"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["path"] == path).cloned())
            .unwrap_or_else(|| panic!("{path} found by {query}: {body}"))
    };
    for (query, page, words) in [
        ("revenue", 1, "Quarterly revenue grew"),
        ("spring", 2, "Costs fell sharply"),
        ("outlook", 3, "The outlook remains bright"),
    ] {
        let result = hit(query, "report.pdf");
        assert_eq!(result["page"], page, "{query}: {result}");
        let id = result["doc_id"].as_str().expect("doc_id");
        let (status, doc) = w.doc(id, &format!("?page_start={page}&page_end={page}"));
        assert_eq!(status, 200, "{doc}");
        let content = doc["content"].as_str().expect("content");
        assert!(content.contains(words), "page {page}: {content}");
    }
    let menu = hit("croissant", "café menu.txt");
    assert_eq!(
        menu["page"],
        Value::Null,
        "a text file has no pages: {menu}"
    );
}

#[test]
fn documents_come_whole_or_by_pages_and_characters() {
    let w = world();
    let report = w.id("revenue", "report.pdf");
    let (status, doc) = w.doc(&report, "");
    assert_eq!(status, 200, "{doc}");
    assert_eq!(doc["connector_id"], w.notes.as_str());
    assert_eq!(doc["doc_id"], report.as_str());
    assert_eq!(doc["title"], "report.pdf");
    assert_eq!(doc["mime_type"], "application/pdf");
    assert_eq!(doc["update_time"], "2026-03-01T00:00:00Z");
    assert_eq!(doc["page_count"], 3);
    assert_eq!(
        (doc["page_start"].clone(), doc["page_end"].clone()),
        (json!(1), json!(3))
    );
    assert_eq!(doc["truncated"], false);
    assert_eq!(doc["metadata"]["title"], "Quarterly Report");
    assert_eq!(doc["metadata"]["page_count"], "3");
    let content = doc["content"].as_str().expect("content");
    for words in [
        "Quarterly revenue grew",
        "Costs fell sharply",
        "outlook remains bright",
    ] {
        assert!(content.contains(words), "{content}");
    }

    let (_, page2) = w.doc(&report, "?page_start=2&page_end=2");
    let text = page2["content"].as_str().expect("content");
    assert!(
        text.contains("Costs fell") && !text.contains("revenue") && !text.contains("outlook"),
        "{text}"
    );
    assert_eq!(
        (page2["page_start"].clone(), page2["page_end"].clone()),
        (json!(2), json!(2))
    );
    let (_, tail) = w.doc(&report, "?page_start=2&page_end=99");
    assert_eq!(
        tail["page_end"], 3,
        "page_end past the last page means the last"
    );
    let (_, cut) = w.doc(&report, "?max_chars=9");
    assert_eq!(cut["content"], "Quarterly");
    assert_eq!(cut["truncated"], true);
    assert!(cut["total_chars"].as_u64().unwrap_or(0) > 9);

    let menu = w.id("croissant", "café menu.txt");
    let (_, menu_doc) = w.doc(&menu, "?max_chars=13");
    assert_eq!(
        menu_doc["content"], "Croissant and",
        "characters, not bytes"
    );
    assert_eq!(
        menu_doc["page_count"], 1,
        "a document without pages is one page"
    );

    for (query, field) in [
        ("?page_start=0", "page_start"),
        ("?page_start=x", "page_start"),
        ("?page_start=3&page_end=2", "page_end"),
        ("?max_chars=-1", "max_chars"),
        ("?pages=1", "pages"),
        ("?page_start=1&page_start=2", "page_start"),
        ("?page_start=4", "page_start"),
    ] {
        let (status, body) = w.doc(&report, query);
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(
            body["error"]["details"][0]["field"], field,
            "{query}: {body}"
        );
    }
    let (status, body) = w.doc("f_unknown", "");
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (404, json!("RESOURCE_NOT_FOUND"))
    );
    let missing_connector = w.q.request(
        "GET",
        &format!("/api/v1/connectors/cn_gone/docs/{report}"),
        Some(&w.key),
        None,
    );
    assert_eq!(missing_connector.status, 404);
}

#[test]
fn files_stream_with_ranges_validators_and_names() {
    let w = world();
    let report = w.id("revenue", "report.pdf");
    let on_disk = std::fs::read(w.folder.join("report.pdf")).expect("read fixture");
    let whole = w.file(&report, &[]);
    assert_eq!(whole.status, 200);
    assert_eq!(whole.body, on_disk);
    assert_eq!(whole.header("content-type"), Some("application/pdf"));
    assert_eq!(
        whole.header("content-length"),
        Some(on_disk.len().to_string().as_str())
    );
    assert_eq!(
        whole.header("content-disposition"),
        Some("attachment; filename*=UTF-8''report.pdf")
    );
    assert_eq!(
        whole.header("last-modified"),
        Some("Sun, 01 Mar 2026 00:00:00 GMT")
    );
    assert_eq!(whole.header("accept-ranges"), Some("bytes"));
    let etag = whole.header("etag").expect("ETag").to_owned();
    assert!(etag.starts_with('"') && etag.ends_with('"'));
    assert!(whole.header("x-quota-remaining").is_some());

    let n = on_disk.len();
    for (range, first, last) in [
        ("bytes=0-9", 0, 9),
        ("bytes=10-", 10, n - 1),
        ("bytes=-7", n - 7, n - 1),
        ("bytes=5-999999", 5, n - 1),
    ] {
        let part = w.file(&report, &[("Range", range)]);
        assert_eq!(part.status, 206, "{range}");
        assert_eq!(part.body, on_disk[first..=last], "{range}");
        assert_eq!(
            part.header("content-range"),
            Some(format!("bytes {first}-{last}/{n}").as_str())
        );
        assert_eq!(
            part.header("content-length"),
            Some((last - first + 1).to_string().as_str())
        );
    }
    let unsatisfiable = w.file(&report, &[("Range", &format!("bytes={n}-"))]);
    assert_eq!(unsatisfiable.status, 416);
    assert_eq!(
        unsatisfiable.json()["error"]["code"],
        "REQUEST_VALIDATION_FAILED"
    );
    assert_eq!(
        unsatisfiable.header("content-range"),
        Some(format!("bytes */{n}").as_str())
    );
    let several = w.file(&report, &[("Range", "bytes=0-1,4-5")]);
    assert_eq!(
        (several.status, several.body.len()),
        (200, n),
        "several ranges: the whole file"
    );
    let stale_if_range = w.file(&report, &[("Range", "bytes=0-1"), ("If-Range", "\"old\"")]);
    assert_eq!(stale_if_range.status, 200);

    let not_modified = w.file(&report, &[("If-None-Match", &etag)]);
    assert_eq!(not_modified.status, 304);
    assert!(not_modified.body.is_empty());
    assert_eq!(
        w.file(&report, &[("If-None-Match", "\"other\"")]).status,
        200
    );

    let menu = w.id("croissant", "café menu.txt");
    let menu_file = w.file(&menu, &[]);
    assert_eq!(
        menu_file.header("content-disposition"),
        Some("attachment; filename*=UTF-8''caf%C3%A9%20menu.txt")
    );

    // The source lost the file since the last sync.
    std::fs::remove_file(w.folder.join("todo.txt")).expect("remove");
    let todo = w.id("milk", "todo.txt");
    let gone = w.file(&todo, &[]);
    assert_eq!(gone.status, 404);
    assert_eq!(gone.json()["error"]["code"], "RESOURCE_NOT_FOUND");
}

#[test]
fn large_files_stream_whole_and_in_parts() {
    let mut q = Quarry::new();
    let folder = q.scratch("big");
    let mut big = std::fs::File::create(folder.join("big.bin")).expect("create");
    let mut expected = Sha256::new();
    let mut state: u32 = 7;
    let block: Vec<u8> = (0..1 << 20)
        .map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (state >> 16) as u8
        })
        .collect();
    for i in 0..24u8 {
        let mut chunk = block.clone();
        chunk[0] = i;
        expected.update(&chunk);
        big.write_all(&chunk).expect("write");
    }
    drop(big);
    let connector = q.add_folder("Big", &folder);
    q.start();
    q.wait_synced();
    let key = q.integration("Reader", "all", &[]);
    let found = q.search(&key, json!({"query": "big"})).json();
    let id = found["results"][0]["doc_id"]
        .as_str()
        .expect("found by name")
        .to_owned();
    let path = format!("/api/v1/connectors/{connector}/docs/{id}/file");
    let whole = q.request("GET", &path, Some(&key), None);
    assert_eq!(whole.status, 200);
    assert_eq!(whole.body.len(), 24 << 20);
    assert_eq!(Sha256::digest(&whole.body), expected.finalize());
    let middle = q.request_with(
        "GET",
        &path,
        Some(&key),
        None,
        &[("Range", "bytes=12582912-12582919")],
    );
    assert_eq!(middle.status, 206);
    assert_eq!(middle.body[0], 12, "the 13th MiB starts with its index");
    assert_eq!(middle.body[1..], block[1..8]);
}

#[test]
fn connectors_show_their_status_and_counts() {
    let w = world();
    let response = w.q.request("GET", "/api/v1/connectors", Some(&w.key), None);
    assert_eq!(response.status, 200);
    let list = response.json();
    let c = &list["connectors"][0];
    assert_eq!(c["connector_id"], w.notes.as_str());
    assert_eq!(c["name"], "Notes");
    assert_eq!(c["plugin"], "folder@0.1.0");
    assert_eq!(c["status"], "idle");
    assert_eq!(c["doc_count"], 6);
    assert!(
        c["last_sync_time"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    assert_eq!(c["last_error"], Value::Null);
    assert_eq!(c["progress"]["listed"], 6);
    let with_query =
        w.q.request("GET", "/api/v1/connectors?x=1", Some(&w.key), None);
    assert_eq!(with_query.status, 400);
}

#[test]
fn an_internal_error_is_answered_generically_and_logged_in_full() {
    let mut w = world();
    let report = w.id("revenue", "report.pdf");
    // Restart without any plugin: the folder connector's files cannot be read any more.
    w.q.stop();
    let empty = w.q.scratch("no-plugins");
    w.q.start_with_env(&[("QUARRY_PLUGINS_DIR", &empty.to_string_lossy())]);
    let response = w.file(&report, &[]);
    assert_eq!(response.status, 500);
    let body = response.json();
    assert_eq!(body["error"]["code"], "INTERNAL_ERROR");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        !message.contains("plugin") && !message.contains("folder"),
        "{message}"
    );
    assert!(body["error"].get("details").is_none());
    let id = response.header("x-request-id").expect("id").to_owned();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let log = w.q.log();
    let line = log
        .lines()
        .find(|l| l.contains("is not installed"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(line.contains("\"folder\""), "{line}");
    assert!(log.contains(&id), "the request's id is in the log");
    // The stored text still serves: no plugin is needed for it.
    assert_eq!(w.doc(&report, "").0, 200);
}

#[test]
fn the_audit_log_records_who_read_what() {
    let w = world();
    let report = w.id("revenue", "report.pdf");
    let file = w.file(&report, &[("Range", "bytes=0-99")]);
    assert_eq!(file.status, 206);
    let (status, _) = w.doc(&report, "?max_chars=5");
    assert_eq!(status, 200);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let entries = loop {
        let entries =
            w.q.cli_json(&["activity", "--integration", "Reader", "--json"]);
        if entries.as_array().map_or(0, Vec::len) >= 3 {
            break entries;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "audit entries written: {entries}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let newest = &entries[0];
    assert_eq!(newest["integration"], "Reader");
    assert_eq!(
        newest["endpoint"],
        "GET /api/v1/connectors/{connector_id}/docs/{doc_id}"
    );
    assert_eq!(newest["connector"], "Notes");
    assert_eq!(newest["doc_id"], report.as_str());
    assert_eq!(newest["status"], 200);
    assert!(newest["bytes"].as_u64().unwrap_or(0) > 0);
    let download = &entries[1];
    assert_eq!(
        download["endpoint"],
        "GET /api/v1/connectors/{connector_id}/docs/{doc_id}/file"
    );
    assert_eq!(
        (download["status"].clone(), download["bytes"].clone()),
        (json!(206), json!(100))
    );
    assert_eq!(entries[2]["endpoint"], "POST /api/v1/search");
    let by_connector =
        w.q.cli_json(&["activity", "--connector", "notes", "--json"]);
    assert_eq!(
        by_connector.as_array().map(Vec::len),
        Some(2),
        "searches name no connector"
    );
    assert!(w.q.cli_ok(&["activity"]).contains("Reader"));
}
