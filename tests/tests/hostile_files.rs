//! Hostile files, against the real binary: Quarry's own data inside a granted folder is never
//! indexed or served, FIFOs, sockets and devices in a granted folder never hang a sync or a
//! request, and archive bombs and hostile XML fail their own document, with the reason, and
//! nothing else.

use std::fs;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::{Duration, Instant};

use quarry_tests::corpus::{FixtureFile, MARCH_2026_MS};
use quarry_tests::docx::{docx, docx_with_document, package_with_parts};
use quarry_tests::quarry::Quarry;
use serde_json::{Value, json};

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

fn results(q: &Quarry, key: &str, query: &str) -> Vec<Value> {
    let response = q.search(
        key,
        json!({"query": query, "semantic_search": false, "limit": 100}),
    );
    assert_eq!(response.status, 200, "{}", response.text());
    response.json()["results"]
        .as_array()
        .expect("results")
        .clone()
}

#[test]
fn quarrys_own_data_inside_a_granted_folder_is_never_indexed_or_served() {
    // The user shares their whole folder, and Quarry keeps its data inside it.
    let mut q = Quarry::with_data_dir("share/q");
    let share = q.scratch("share");
    fs::write(
        share.join("notes.md"),
        "My admin notes: rotate the token monthly.\n",
    )
    .expect("write");
    fs::write(share.join("todo.txt"), "Buy milk.\n").expect("write");
    // The data folder exists (with its database) before the folder is added.
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    let added = q.cli_ok(&[
        "connector",
        "add",
        "folder",
        &share.to_string_lossy(),
        "--name",
        "Share",
    ]);
    let own = q.data_dir().canonicalize().expect("real path");
    assert!(
        added.contains(&format!("Left out: {}", own.display())),
        "adding says what it leaves out:\n{added}"
    );
    q.start();
    q.wait_synced();
    let token = q.admin_token();

    let connector = &q.connectors()[0];
    assert_eq!(connector["doc_count"], 2, "{connector}");
    for query in [
        "admin token",
        token.as_str(),
        "quarry db",
        "index",
        "secret key",
    ] {
        for hit in results(&q, &key, query) {
            let path = hit["path"].as_str().unwrap_or_default();
            assert!(
                !path.starts_with("q/"),
                "{query:?} found Quarry's own {path}"
            );
            assert!(
                !hit["snippet"].as_str().unwrap_or_default().contains(&token),
                "{hit}"
            );
        }
    }
    assert!(results(&q, &key, &token).is_empty());
    // The user's own file about an admin token is found, as it should be.
    let found = results(&q, &key, "admin token");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["path"], "notes.md");
}

#[test]
fn fifos_sockets_and_a_file_swapped_for_a_fifo_never_hang_a_sync_or_a_download() {
    let mut q = Quarry::new();
    let dir = q.scratch("folder");
    fs::write(dir.join("a.txt"), "alpha document\n").expect("write");
    fs::write(dir.join("b.txt"), "beta document\n").expect("write");
    mkfifo(&dir.join("pipe"));
    // A FIFO with a writer that never writes: reading it would block.
    mkfifo(&dir.join("held-pipe"));
    let _writer = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.join("held-pipe"))
        .expect("hold the FIFO open");
    let _socket = UnixListener::bind(dir.join("socket")).expect("socket");
    let connector_id = q.add_folder("Folder", &dir);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    q.start();
    q.wait_synced();
    let connector = &q.connectors()[0];
    assert_eq!(connector["doc_count"], 2, "only regular files: {connector}");
    assert!(connector["last_error"].is_null(), "{connector}");

    // A listed file becomes a FIFO nobody writes to, then a client downloads it.
    let hit = &results(&q, &key, "alpha")[0];
    let doc_id = hit["doc_id"].as_str().expect("doc id").to_owned();
    fs::remove_file(dir.join("a.txt")).expect("remove");
    mkfifo(&dir.join("a.txt"));
    let started = Instant::now();
    let file = q.request(
        "GET",
        &format!("/api/v1/connectors/{connector_id}/docs/{doc_id}/file"),
        Some(&key),
        None,
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "answered at once, not at the 30 s deadline: {:?}",
        started.elapsed()
    );
    assert_eq!(file.status, 404, "{}", file.text());
    assert!(
        file.text().contains("no longer has this file"),
        "{}",
        file.text()
    );

    // The next sync (the watcher saw the change) finishes, and the FIFO is no document.
    q.wait_for("the swapped file leaves the index", |cs| {
        cs[0]["status"] == "idle" && cs[0]["doc_count"] == 1
    });
    assert!(results(&q, &key, "alpha").is_empty());
    assert_eq!(results(&q, &key, "beta").len(), 1);
}

#[test]
fn quarrys_data_bind_mounted_inside_a_granted_folder_is_out_of_reach() {
    let mut q = Quarry::new();
    let share = q.scratch("share");
    fs::write(share.join("notes.md"), "My notes about the admin token.\n").expect("write");
    let alias = share.join("alias");
    fs::create_dir(&alias).expect("mount point");
    q.cli_ok(&["integration", "list"]); // makes the data folder
    // Every quarry process sees its data folder a second time, at share/alias: same files,
    // another real path.
    let command = quarry_tests::quarry::in_mount_namespace(
        "mount --bind \"$1\" \"$2\"",
        &[q.data_dir(), &alias],
    );
    q.run_through(&command.iter().map(String::as_str).collect::<Vec<_>>());
    // The hostile plugin reads whatever it is told, by a path through the alias.
    q.cli_ok(&[
        "plugin",
        "install",
        &quarry_tests::plugin_dir("hostile").to_string_lossy(),
        "--yes",
    ]);
    let share_path = share.to_string_lossy();
    let probe = q.cli_json(&[
        "connector",
        "add",
        "plugin",
        "hostile",
        "--name",
        "Probe",
        "--set",
        "mode=read-all",
        "--set",
        &format!("folder={share_path}"),
        "--set",
        "probe=alias/admin-token",
        "--json",
    ]);
    let added = q.cli_ok(&["connector", "add", "folder", &share_path, "--name", "Share"]);
    assert!(
        !added.contains("Left out"),
        "the alias is not Quarry's by path: {added}"
    );
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    q.start();
    q.wait_synced();
    let token = q.admin_token();

    // The folder connector cannot list the alias: it is Quarry's data folder by device and
    // inode.
    let share_connector = q
        .connectors()
        .into_iter()
        .find(|c| c["name"] == "Share")
        .expect("Share");
    assert_eq!(share_connector["doc_count"], 1, "{share_connector}");
    // The hostile plugin's report: the alias and a path through it refused, nothing read.
    let id = probe["connector_id"].as_str().expect("id");
    let report = q.request(
        "GET",
        &format!("/api/v1/connectors/{id}/docs/probe"),
        Some(&key),
        None,
    );
    assert_eq!(report.status, 200, "{}", report.text());
    let content = report.json()["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(content.contains("DENIED alias/admin-token:"), "{content}");
    assert!(
        content.contains("DENIED stat alias/admin-token:"),
        "{content}"
    );
    assert!(content.contains("DENIED alias:"), "{content}");
    assert!(!content.contains(&token), "{content}");
    assert!(content.contains("READ notes.md:"), "{content}");
}

#[test]
fn archive_bombs_and_endless_xml_fail_their_own_document_with_the_reason() {
    let file = |path, bytes| FixtureFile {
        path,
        bytes,
        mtime_ms: MARCH_2026_MS,
    };
    // 64 MiB of markup that compresses to about 64 KiB.
    let bomb = docx_with_document(&vec![b' '; 64 << 20]);
    assert!(bomb.len() < 256 << 10, "{} bytes", bomb.len());
    // Under 1 MiB, so read whatever it compresses to: the nesting bound stops it.
    let depth = 80_000;
    let deep = format!(
        "{}deepword{}",
        "<w:p>".repeat(depth),
        "</w:p>".repeat(depth)
    );
    let laughs = r#"<?xml version="1.0"?>
<!DOCTYPE d [<!ENTITY a "lollollollollol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
<w:document><w:body><w:p><w:r><w:t>&d; laughword</w:t></w:r></w:p></w:body></w:document>"#;
    let mut q = Quarry::new();
    q.serve_folders(&[(
        "Office",
        vec![
            file("bomb.docx", bomb),
            file("deep.docx", docx_with_document(deep.as_bytes())),
            file("laughs.docx", docx_with_document(laughs.as_bytes())),
            file(
                "fine.docx",
                docx("Fine", &["fineword in a paragraph"], "a note"),
            ),
            file("notes.txt", b"plainword".to_vec()),
            // The same bounds for every package format.
            file(
                "bomb.odt",
                package_with_parts(&[("content.xml", &vec![b' '; 64 << 20])]),
            ),
            file(
                "deep.pptx",
                package_with_parts(&[("ppt/presentation.xml", deep.as_bytes())]),
            ),
            file("truncated.odp", truncated_deck()),
            file(
                "bomb.xlsx",
                package_with_parts(&[("xl/workbook.xml", &vec![b' '; 64 << 20])]),
            ),
            file(
                "repeated.ods",
                office_fixture_with_part("book.ods", "content.xml", REPEATED_CELLS.as_bytes()),
            ),
            file(
                "bomb.epub",
                package_with_parts(&[
                    ("META-INF/container.xml", BOMB_CONTAINER.as_bytes()),
                    ("book.opf", BOMB_OPF.as_bytes()),
                    ("chapter.xhtml", &vec![b' '; 64 << 20]),
                ]),
            ),
            file(
                "repeated-fewer.ods",
                office_fixture_with_part(
                    "book.ods",
                    "content.xml",
                    REPEATED_CELLS
                        .replace("1048576", "5000")
                        .replace("16384", "10000")
                        .as_bytes(),
                ),
            ),
        ],
    )]);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);

    let status = q.cli_json(&["connector", "status", "Office", "--json"]);
    assert_eq!(
        status["status"], "idle",
        "bad files never fail a sync: {status}"
    );
    assert_eq!(status["doc_count"], 12, "{status}");
    let failed = status["failed_documents"].as_array().expect("list");
    let reason = |path: &str| failure_reason(&status, path);
    assert_eq!(failed.len(), 9, "{status}");
    assert!(reason("bomb.docx").contains("archive bomb"), "{status}");
    assert!(reason("deep.docx").contains("deeper than 512"), "{status}");
    assert!(reason("bomb.odt").contains("archive bomb"), "{status}");
    assert!(reason("deep.pptx").contains("deeper than 512"), "{status}");
    assert!(
        reason("truncated.odp").contains("not a readable ODP"),
        "{status}"
    );
    assert!(reason("bomb.xlsx").contains("archive bomb"), "{status}");
    assert!(reason("bomb.epub").contains("archive bomb"), "{status}");
    // calamine refuses more than 100 million cells; under that, the sandbox's memory limit
    // stops a grid too large for it.
    assert!(
        reason("repeated.ods").contains("Cell limit exceeded"),
        "{status}"
    );
    eprintln!("repeated-fewer.ods: {}", reason("repeated-fewer.ods"));
    assert!(reason("repeated-fewer.ods").contains("memory"), "{status}");

    // Entities are never expanded: the word after them is indexed, the expansion is not.
    let path = |r: &Value| r["path"].as_str().unwrap_or_default().to_owned();
    let found =
        |query: &str| -> Vec<String> { results(&q, &key, query).iter().map(path).collect() };
    assert_eq!(found("laughword"), ["laughs.docx"]);
    assert!(found("lollollollollol").is_empty());
    assert_eq!(found("fineword"), ["fine.docx"]);
    assert_eq!(found("plainword"), ["notes.txt"]);
    // Failed documents are still found by name.
    let mut bombs = found("bomb");
    bombs.sort();
    assert_eq!(bombs, ["bomb.docx", "bomb.epub", "bomb.odt", "bomb.xlsx"]);
}

/// An e-book whose one chapter is a bomb: where the book is, and its chapter list.
const BOMB_CONTAINER: &str = r#"<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="book.opf"/></rootfiles></container>"#;
const BOMB_OPF: &str = r#"<package xmlns="http://www.idpf.org/2007/opf"><manifest><item id="c" href="chapter.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c"/></spine></package>"#;

/// A sheet of a few hundred bytes whose one cell is repeated over every row and column a sheet
/// can have (17 billion cells).
const REPEATED_CELLS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:spreadsheet><table:table table:name="Sheet1"><table:table-row table:number-rows-repeated="1048576"><table:table-cell table:number-columns-repeated="16384" office:value-type="string"><text:p>again</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>"#;

fn office_fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/office")
        .join(name);
    fs::read(&path).expect("the fixture exists")
}

/// The first half of a real presentation (LibreOffice's, from the office fixtures).
fn truncated_deck() -> Vec<u8> {
    let mut bytes = office_fixture("deck.odp");
    bytes.truncate(bytes.len() / 2);
    bytes
}

/// Office fixture `name` with its part `part` replaced by `bytes`, every other part as it was.
fn office_fixture_with_part(name: &str, part: &str, bytes: &[u8]) -> Vec<u8> {
    let mut source =
        zip::ZipArchive::new(std::io::Cursor::new(office_fixture(name))).expect("a ZIP file");
    let mut parts = Vec::new();
    for index in 0..source.len() {
        let mut entry = source.by_index(index).expect("an entry");
        let mut content = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut content).expect("readable");
        if entry.name() != part && !entry.is_dir() {
            parts.push((entry.name().to_owned(), content));
        }
    }
    parts.push((part.to_owned(), bytes.to_vec()));
    let parts: Vec<(&str, &[u8])> = parts
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    package_with_parts(&parts)
}

/// Why document `path` failed, in `status` (`connector status --json`); empty if it did not.
fn failure_reason(status: &Value, path: &str) -> String {
    status["failed_documents"]
        .as_array()
        .and_then(|failed| failed.iter().find(|f| f["path"] == path))
        .and_then(|f| f["error"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Every package format: its fixture, and the part its reader starts from.
const PACKAGES: [(&str, &str, &str); 7] = [
    ("docx", "report.docx", "word/document.xml"),
    ("pptx", "deck.pptx", "ppt/presentation.xml"),
    ("odt", "report.odt", "content.xml"),
    ("odp", "deck.odp", "content.xml"),
    ("xlsx", "book.xlsx", "xl/workbook.xml"),
    ("ods", "book.ods", "content.xml"),
    ("epub", "novel.epub", "META-INF/container.xml"),
];

#[test]
fn every_new_format_survives_truncation_bombs_entities_and_nesting() {
    let depth = 80_000;
    let deep = format!("{}x{}", "<a>".repeat(depth), "</a>".repeat(depth));
    let laughs = r#"<?xml version="1.0"?>
<!DOCTYPE d [<!ENTITY a "lollollollollol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
<root>&d;</root>"#;
    let bomb = vec![b' '; 64 << 20];
    let mut q = Quarry::new();
    q.without_model();
    let dir = q.scratch("hostile");
    for (extension, fixture, main) in PACKAGES {
        let mut truncated = office_fixture(fixture);
        truncated.truncate(truncated.len() / 2);
        fs::write(dir.join(format!("truncated.{extension}")), truncated).expect("write");
        for (what, bytes) in [
            ("bomb", &bomb[..]),
            ("deep", deep.as_bytes()),
            ("laughs", laughs.as_bytes()),
        ] {
            let file = office_fixture_with_part(fixture, main, bytes);
            fs::write(dir.join(format!("{what}.{extension}")), file).expect("write");
        }
    }
    // The two formats that are not packages: RTF groups and MIME parts nested without end.
    let rtf = format!(r"{{\rtf1 {}x{}}}", "{".repeat(depth), "}".repeat(depth));
    fs::write(dir.join("deep.rtf"), rtf).expect("write");
    let mut mail = String::from("From: a@example.org\r\nSubject: nested\r\nMIME-Version: 1.0\r\n");
    for level in 0..2_000 {
        mail.push_str(&format!(
            "Content-Type: multipart/mixed; boundary=\"b{level}\"\r\n\r\n--b{level}\r\n"
        ));
    }
    mail.push_str("Content-Type: text/plain\r\n\r\nnestedword\r\n");
    fs::write(dir.join("nested.eml"), mail).expect("write");
    q.add_folder("Hostile", &dir);
    q.start();
    q.wait_synced();
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);

    let status = q.cli_json(&["connector", "status", "Hostile", "--json"]);
    assert_eq!(
        status["status"], "idle",
        "bad files never fail a sync: {status}"
    );
    assert_eq!(status["doc_count"], 4 * PACKAGES.len() + 2, "{status}");
    let reason = |path: &str| failure_reason(&status, path);
    assert!(reason("deep.rtf").contains("deeper than 512"), "{status}");
    for (extension, _, _) in PACKAGES {
        assert!(
            !reason(&format!("truncated.{extension}")).is_empty(),
            "{extension}: {status}"
        );
        assert!(
            reason(&format!("bomb.{extension}")).contains("archive bomb"),
            "{extension}: {status}"
        );
        // calamine reads spreadsheets' XML itself; the other readers bound the nesting.
        if !matches!(extension, "xlsx" | "ods") {
            assert!(
                reason(&format!("deep.{extension}")).contains("deeper than 512"),
                "{extension}: {status}"
            );
        }
    }
    assert!(
        results(&q, &key, "lollollollollol").is_empty(),
        "entities are never expanded"
    );
}

#[test]
fn escape_sequences_in_file_names_and_text_never_reach_the_terminal() {
    let mut q = Quarry::new();
    q.without_model();
    let dir = q.scratch("evil");
    // A name that would clear the screen, a text that would retitle the terminal, and a PDF
    // that fails under a name that would turn the rest of the output red.
    fs::write(
        dir.join("evil\u{1b}[2J.txt"),
        "escapeword \u{1b}]0;owned\u{7} and \u{202e}txt.exe",
    )
    .expect("write");
    fs::write(dir.join("broken\u{1b}[31m.pdf"), b"%PDF-1.7 not really").expect("write");
    q.add_folder("Evil", &dir);
    q.start();
    q.wait_synced();

    let search = q.cli_ok(&["search", "escapeword"]);
    let status = q.cli_ok(&["connector", "status", "Evil"]);
    let list = q.cli_ok(&["connector", "list"]);
    for (what, output) in [("search", &search), ("status", &status), ("list", &list)] {
        assert!(
            !output.contains('\u{1b}') && !output.contains('\u{7}') && !output.contains('\u{202e}'),
            "{what} printed a control character: {output:?}"
        );
    }
    assert!(search.contains("evil\\u{1b}[2J.txt"), "{search}");
    assert!(status.contains("broken\\u{1b}[31m.pdf"), "{status}");
}

#[test]
fn a_file_or_folder_swapped_for_a_symlink_answers_404_not_500() {
    let mut q = Quarry::new();
    q.without_model();
    let dir = q.scratch("folder");
    fs::create_dir(dir.join("inner")).expect("mkdir");
    fs::write(dir.join("top.txt"), "apricot notes at the top\n").expect("write");
    fs::write(dir.join("inner/deep.txt"), "blueberry notes further down\n").expect("write");
    let outside = q.scratch("outside");
    fs::create_dir(outside.join("inner")).expect("mkdir");
    fs::write(outside.join("top.txt"), "not the user's to share\n").expect("write");
    fs::write(outside.join("inner/deep.txt"), "not the user's either\n").expect("write");
    let connector = q.add_folder("Folder", &dir);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    q.start();
    q.wait_synced();
    let id_of = |word: &str| {
        results(&q, &key, word)[0]["doc_id"]
            .as_str()
            .expect("doc id")
            .to_owned()
    };
    let (top, deep) = (id_of("apricot"), id_of("blueberry"));
    // While the server is down (so that no sync sees it before the downloads below), the
    // file, and the folder, become links out of the grant.
    q.stop();
    fs::remove_file(dir.join("top.txt")).expect("rm");
    std::os::unix::fs::symlink(outside.join("top.txt"), dir.join("top.txt")).expect("symlink");
    fs::remove_dir_all(dir.join("inner")).expect("rm");
    std::os::unix::fs::symlink(outside.join("inner"), dir.join("inner")).expect("symlink");
    q.start();
    for doc in [&top, &deep] {
        let file = q.request(
            "GET",
            &format!("/api/v1/connectors/{connector}/docs/{doc}/file"),
            Some(&key),
            None,
        );
        assert_eq!(file.status, 404, "{}", file.text());
        assert!(
            file.text().contains("RESOURCE_NOT_FOUND"),
            "{}",
            file.text()
        );
        assert!(!file.text().contains("not the user's"), "{}", file.text());
    }
}
