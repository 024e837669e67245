//! Judged before served: a document's original file is downloadable only as the bytes that were
//! judged for credentials. Every byte of every original is scanned, whatever its size or type
//! and whatever became of its text; a file that could not be judged is not served (and the
//! document answer and `connector status` say why); a file changed since it was judged is
//! refused until a sync judges it again; names and paths are judged like text; a copy of
//! Quarry's own database is left out whatever its name; and documents an older Quarry indexed
//! are judged in the background at the next start.

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use quarry_tests::found::doc_id;
use quarry_tests::mcp::{Sdk, call, over_http};
use quarry_tests::quarry::{Quarry, result_paths as paths};
use serde_json::{Value, json};

const GITHUB_TOKEN: &str = "ghp_R8x2kLq9ZtW4mN7vB3cY6dH1fJ5sA0gE2uPo";
const AWS_KEY_ID: &str = "AKIAZ7QX3RM4NB2KV7TW";

/// A private key as a leaked log holds it.
fn rsa_key() -> String {
    let body: String = (0..25)
        .map(|i| {
            format!("MIIEowIBAAKCAQEA{i:02}q7Lr9XkT2mW8Zp4Vb6Nc3Hd5Jf1Gs0Qa7Re9Ty2Ui4Op6As8\n")
        })
        .collect();
    format!("-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\n")
}

/// A log of `mb` MiB of ordinary lines, then `tail`.
fn write_log(path: &Path, mb: usize, tail: &str) {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create log"));
    let mut written = 0;
    let mut n = 0u64;
    while written < mb << 20 {
        let line = format!(
            "2026-11-20T10:{:02}:{:02}Z INFO worker {n}: request served in 12 ms\n",
            n / 60 % 60,
            n % 60
        );
        file.write_all(line.as_bytes()).expect("write log");
        written += line.len();
        n += 1;
    }
    file.write_all(tail.as_bytes()).expect("write log");
    file.flush().expect("flush log");
}

/// A Quarry without the model, and its folder to share.
fn keyword_only() -> (Quarry, std::path::PathBuf) {
    let mut q = Quarry::new();
    q.without_model();
    let share = q.scratch("share");
    (q, share)
}

/// Shares `share` as the connector "Share" with an integration, starts the server and waits
/// for the first sync: the connector's id and the integration's key.
fn shared_and_synced(q: &mut Quarry, share: &Path) -> (String, String) {
    let connector = q.add_folder("Share", share);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    q.start();
    q.wait_synced();
    (connector, key)
}

/// `GET .../file` of a document, with optional headers, as an integration.
fn download(
    q: &Quarry,
    key: &str,
    connector: &str,
    doc: &str,
    headers: &[(&str, &str)],
) -> quarry_tests::http::Response {
    q.request_with(
        "GET",
        &format!("/api/v1/connectors/{connector}/docs/{doc}/file"),
        Some(key),
        None,
        headers,
    )
}

/// `GET .../docs/{doc}` as an integration, asserting a 200.
fn document(q: &Quarry, key: &str, connector: &str, doc: &str) -> Value {
    let response = q.request(
        "GET",
        &format!("/api/v1/connectors/{connector}/docs/{doc}"),
        Some(key),
        None,
    );
    assert_eq!(response.status, 200, "{}", response.text());
    response.json()
}

/// `quarry connector status NAME --json`.
fn status(q: &Quarry, name: &str) -> Value {
    q.cli_json(&["connector", "status", name, "--json"])
}

/// The entry of `path` in a list of noted documents of `status` (`held_back`, `unjudged_files`).
fn noted<'a>(status: &'a Value, list: &str, path: &str) -> Option<&'a Value> {
    status[list]["documents"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["path"] == path)
}

/// Fails when `response` is anything but a 404 that holds none of `values`.
fn refused(what: &str, response: &quarry_tests::http::Response, values: &[&str]) {
    assert_eq!(response.status, 404, "{what}: {}", response.status);
    let body = String::from_utf8_lossy(&response.body);
    for value in values {
        assert!(!body.contains(value), "{what} gave out {value}");
    }
}

#[test]
fn every_byte_of_every_original_is_judged_before_it_is_served() {
    let (mut q, share) = keyword_only();
    // Over the folder connector's 32 MiB text limit: indexed by name, never extracted.
    let key_text = rsa_key();
    write_log(
        &share.join("server.log"),
        34,
        &format!("deploy token {GITHUB_TOKEN}\n{key_text}"),
    );
    write_log(
        &share.join("archive.log"),
        33,
        "rotation finished without error\n",
    );
    // A token as a folder's name.
    let tokens = share.join("tokens").join(GITHUB_TOKEN);
    std::fs::create_dir_all(&tokens).expect("mkdir");
    std::fs::write(
        tokens.join("readme.txt"),
        "How the release pipeline signs builds.\n",
    )
    .expect("write");
    // An image nothing here reads the text of (no OCR).
    let image = image::GrayImage::from_pixel(64, 16, image::Luma([255]));
    std::fs::write(
        share.join("screenshot.png"),
        quarry_tests::scans::png(&image),
    )
    .expect("write");
    let (connector, key) = shared_and_synced(&mut q, &share);
    let secrets = [GITHUB_TOKEN, "BEGIN RSA PRIVATE KEY", "MIIEowIBAAKCAQEA00"];

    // The large log with a token at its end is held back: not found by value or by name, and
    // its file answers 404 whole and by range.
    let shown = status(&q, "Share");
    let held = noted(&shown, "held_back", "server.log").unwrap_or_else(|| panic!("{shown}"));
    assert!(
        held["reason"]
            .as_str()
            .is_some_and(|r| r.contains("GitHub token") || r.contains("private key")),
        "{held}"
    );
    let log_id = held["doc_id"].as_str().expect("doc_id");
    for range in [None, Some("bytes=-2000"), Some("bytes=35651584-")] {
        let headers: Vec<(&str, &str)> = range.map(|r| ("Range", r)).into_iter().collect();
        refused(
            "server.log",
            &download(&q, &key, &connector, log_id, &headers),
            &secrets,
        );
    }
    for query in [GITHUB_TOKEN, "server", "deploy token"] {
        let found = q.keyword_search(&key, query, 20);
        assert!(
            !paths(&found).contains(&"server.log".to_owned()),
            "{query}: {found}"
        );
        for value in secrets {
            assert!(!found.to_string().contains(value), "{query}: {found}");
        }
    }

    // The large clean log is judged whole and served, by range too.
    let archive = doc_id(&q, &key, "archive", "archive.log");
    assert_eq!(
        document(&q, &key, &connector, &archive)["file"]["served"],
        true
    );
    let tail = download(&q, &key, &connector, &archive, &[("Range", "bytes=-32")]);
    assert_eq!(tail.status, 206, "{}", tail.text());
    assert_eq!(tail.text(), "rotation finished without error\n");

    // A token in a path: the document is held back, its path nowhere.
    for query in [GITHUB_TOKEN, "release pipeline", "readme"] {
        let found = q.keyword_search(&key, query, 20);
        assert!(
            !found.to_string().contains(GITHUB_TOKEN),
            "{query}: {found}"
        );
    }
    assert!(
        noted(
            &shown,
            "held_back",
            &format!("tokens/{GITHUB_TOKEN}/readme.txt")
        )
        .is_some(),
        "{shown}"
    );

    // The image is found by name, and its file is not served: what it shows was not read.
    let screenshot = doc_id(&q, &key, "screenshot", "screenshot.png");
    let answer = document(&q, &key, &connector, &screenshot);
    assert_eq!(answer["file"]["served"], false, "{answer}");
    assert!(
        answer["file"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("could not be checked for credentials")),
        "{answer}"
    );
    let response = download(&q, &key, &connector, &screenshot, &[]);
    assert_eq!(response.status, 404);
    assert!(
        response
            .text()
            .contains("could not be checked for credentials"),
        "{}",
        response.text()
    );
    // An agent reading them over MCP is told the same, in the answer and in its text.
    let read = |doc: &str| {
        call(
            "read_document",
            json!({"connector_id": connector, "doc_id": doc}),
        )
    };
    let answers = over_http(
        Sdk::Python,
        &q,
        &key,
        json!([read(&screenshot), read(&archive)]),
    );
    assert_eq!(answers[0]["structuredContent"]["file"]["served"], false);
    let text = answers[0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("Original file: not served (this document's original file is not served: it could not be checked"),
        "{text}"
    );
    assert_eq!(answers[1]["structuredContent"]["file"]["served"], true);
    assert!(
        answers[1]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Original file: GET ")),
        "{}",
        answers[1]
    );
    let unjudged =
        noted(&shown, "unjudged_files", "screenshot.png").unwrap_or_else(|| panic!("{shown}"));
    assert!(
        unjudged["reason"]
            .as_str()
            .is_some_and(|r| r.contains("images")),
        "{unjudged}"
    );
    assert_eq!(shown["unjudged_files"]["count"], 1, "{shown}");

    // The user releases it: then it is served as it is.
    q.cli_ok(&["connector", "release", "Share", "screenshot.png"]);
    let response = download(&q, &key, &connector, &screenshot, &[]);
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.body, quarry_tests::scans::png(&image));
}

#[test]
fn a_file_changed_since_it_was_judged_is_not_served_until_a_sync_judges_it_again() {
    let (mut q, share) = keyword_only();
    let outside = q.scratch("outside");
    let note = share.join("deploy.md");
    std::fs::write(&note, "Deploy from the build host on Fridays.\n").expect("write");
    // A second name outside the watched folder: a write through it is a change the watcher
    // cannot see (as on a network file system), so no sync follows it by itself.
    std::fs::hard_link(&note, outside.join("deploy.md")).expect("hard link");
    let (connector, key) = shared_and_synced(&mut q, &share);
    let id = doc_id(&q, &key, "fridays", "deploy.md");
    let served = download(&q, &key, &connector, &id, &[]);
    assert_eq!(served.status, 200);
    assert_eq!(served.text(), "Deploy from the build host on Fridays.\n");

    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(outside.join("deploy.md"))
        .expect("open");
    writeln!(file, "GITHUB_TOKEN={GITHUB_TOKEN}").expect("append");
    drop(file);
    for range in [None, Some("bytes=-60"), Some("bytes=0-10")] {
        let headers: Vec<(&str, &str)> = range.map(|r| ("Range", r)).into_iter().collect();
        let response = download(&q, &key, &connector, &id, &headers);
        refused("the changed file", &response, &[GITHUB_TOKEN]);
        let text = response.text();
        assert!(
            text.contains("changed since it was checked") || text.contains("no document"),
            "{text}"
        );
    }
    // The refusal asked for a sync, which judges the file again: now it is held back.
    let deadline = Instant::now() + Duration::from_secs(60);
    while noted(&status(&q, "Share"), "held_back", "deploy.md").is_none() {
        assert!(Instant::now() < deadline, "{}", q.log());
        std::thread::sleep(Duration::from_millis(200));
    }
    refused(
        "the held-back file",
        &download(&q, &key, &connector, &id, &[]),
        &[GITHUB_TOKEN],
    );
}

#[test]
fn a_file_growing_while_it_is_judged_never_serves_a_byte_not_judged() {
    let (mut q, share) = keyword_only();
    let log = share.join("growing.log");
    write_log(&log, 4, "started\n");
    let (connector, key) = shared_and_synced(&mut q, &share);
    let id = doc_id(&q, &key, "growing", "growing.log");
    // A writer appends a line every millisecond for five seconds, then a token: each sync the
    // watcher asks for reads a file that grows under it.
    let writer = {
        let log = log.clone();
        std::thread::spawn(move || {
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .open(&log)
                .expect("open");
            let started = Instant::now();
            let mut n = 0;
            while started.elapsed() < Duration::from_secs(5) {
                writeln!(file, "tick {n}: the queue is empty").expect("append");
                n += 1;
                std::thread::sleep(Duration::from_millis(1));
            }
            writeln!(file, "GITHUB_TOKEN={GITHUB_TOKEN}").expect("append");
        })
    };
    let mut served = 0;
    while !writer.is_finished() {
        let response = download(&q, &key, &connector, &id, &[("Range", "bytes=-4096")]);
        assert!(matches!(response.status, 206 | 404), "{}", response.status);
        served += usize::from(response.status == 206);
        assert!(!response.text().contains(GITHUB_TOKEN));
        std::thread::sleep(Duration::from_millis(100));
    }
    writer.join().expect("writer");
    // Once it is still, a sync judges it whole: it holds the token, and is held back.
    let deadline = Instant::now() + Duration::from_secs(60);
    while noted(&status(&q, "Share"), "held_back", "growing.log").is_none() {
        assert!(Instant::now() < deadline, "{}", q.log());
        std::thread::sleep(Duration::from_millis(200));
    }
    refused(
        "the grown file",
        &download(&q, &key, &connector, &id, &[]),
        &[GITHUB_TOKEN],
    );
    println!("{served} downloads served while the file grew");
}

#[test]
fn a_copy_of_quarrys_database_is_left_out_whatever_its_name() {
    let (mut q, share) = keyword_only();
    std::fs::write(
        share.join("notes.md"),
        "Backups of the laptop run every night.\n",
    )
    .expect("write");
    let (_, key) = shared_and_synced(&mut q, &share);
    // Searches that the audit log will hold, then the database alone, as a backup copies it.
    q.keyword_search(&key, "quarterly salary review", 5);
    q.stop();
    std::fs::copy(q.data_dir().join("quarry.db"), share.join("state.bin")).expect("copy");
    std::fs::copy(
        q.data_dir().join("quarry.db"),
        share.join("quarry-backup.sqlite"),
    )
    .expect("copy");
    q.start();
    q.cli_ok(&["connector", "sync", "Share", "--wait"]);
    for query in ["quarterly salary review", "state", "backup", "sqlite"] {
        let found = q.keyword_search(&key, query, 10);
        assert!(
            paths(&found).iter().all(|p| p == "notes.md"),
            "{query}: {found}"
        );
    }
    let shown = status(&q, "Share");
    for copy in ["state.bin", "quarry-backup.sqlite"] {
        let held = noted(&shown, "held_back", copy).unwrap_or_else(|| panic!("{copy}: {shown}"));
        assert_eq!(
            held["reason"], "left out: a copy of Quarry's own database",
            "{held}"
        );
    }
    assert_eq!(q.connectors()[0]["held_back_count"], 2);
}

#[test]
fn files_an_older_quarry_never_judged_are_judged_in_the_background_at_the_next_start() {
    let (mut q, share) = keyword_only();
    std::fs::write(
        share.join("garden.md"),
        "The plain note about the garden.\n",
    )
    .expect("write");
    std::fs::write(
        share.join("export.json"),
        format!("{{\"note\": \"backup\", \"aws\": {{\"id\": \"{AWS_KEY_ID}\", \"token\": \"{GITHUB_TOKEN}\"}}}}\n"),
    )
    .expect("write");
    let (connector, key) = shared_and_synced(&mut q, &share);
    let garden = doc_id(&q, &key, "garden", "garden.md");
    q.stop();
    // As an older Quarry left them: no verdict on any original, the export indexed by name
    // only (its text out of reach) and not held back.
    let db = sqlx_pool(&q.data_dir().join("quarry.db"));
    db.0.block_on(async {
        sqlx::query("UPDATE documents SET original = NULL, unjudged = NULL, held_back = NULL")
            .execute(&db.1)
            .await
            .expect("update");
        db.1.close().await;
    });
    q.start();
    // Served once judged, within seconds; the export is held back by its file alone.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let response = download(&q, &key, &connector, &garden, &[]);
        if response.status == 200 {
            assert_eq!(response.text(), "The plain note about the garden.\n");
            break;
        }
        assert_eq!(response.status, 404);
        assert!(
            response.text().contains("not been checked"),
            "{}",
            response.text()
        );
        assert!(Instant::now() < deadline, "{}", q.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while noted(&status(&q, "Share"), "held_back", "export.json").is_none() {
        assert!(Instant::now() < deadline, "{}", q.log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A writable pool on the database at `path`, with the runtime its queries run on.
fn sqlx_pool(path: &Path) -> (tokio::runtime::Runtime, sqlx::SqlitePool) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(path);
    let pool = runtime
        .block_on(sqlx::SqlitePool::connect_with(options))
        .expect("the database opens");
    (runtime, pool)
}
