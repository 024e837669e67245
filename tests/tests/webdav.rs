//! The WebDAV connector against real servers on loopback (`quarry_tests::dav`): WsgiDAV and
//! Apache httpd with mod_dav. Files in nested folders are found by their words (PDF, DOCX,
//! Markdown, a scanned page through OCR); a file changed, deleted or moved on the server is
//! reflected within 60 s; an unchanged resync fetches nothing; a server killed mid-sync loses
//! nothing and indexes nothing twice; wrong credentials, an unknown CA and a password in clear
//! are refused naming the fix; the password appears in no answer, page or log.

use std::time::{Duration, Instant};

use quarry_tests::dav::{DavServer, PASSWORD, Server};
use quarry_tests::docx::docx;
use quarry_tests::found::{first, paths, wait_until_found};
use quarry_tests::pdf::{ScanPage, pdf, scanned};
use quarry_tests::quarry::Quarry;
use quarry_tests::scans::{jpeg, page_html, screenshot};
use serde_json::{Value, json};

/// Adds the connector the way the outside check does.
fn add_cloud(q: &Quarry, server: &DavServer) {
    let args = server.connector_add_args(PASSWORD);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    q.cli_ok(&args);
}

/// Waits (up to 60 s) until `query` finds exactly `expected` paths; answers how long it took.
fn wait_for_paths(q: &Quarry, key: &str, query: &str, expected: &[&str]) -> Duration {
    wait_until_found(q, key, (query, "path"), expected, Duration::from_secs(60))
}

/// The original file of a result, as `GET .../file` serves it.
fn file_of(q: &Quarry, key: &str, hit: &Value) -> Vec<u8> {
    let (connector, doc) = (
        hit["connector_id"].as_str().unwrap_or_default(),
        hit["doc_id"].as_str().unwrap_or_default(),
    );
    let file = q.request(
        "GET",
        &format!("/api/v1/connectors/{connector}/docs/{doc}/file"),
        Some(key),
        None,
    );
    assert_eq!(file.status, 200, "{}", file.text());
    file.body
}

#[test]
fn files_on_wsgidav_are_found_by_their_words_and_kept_in_step_with_the_server() {
    let server = DavServer::start(Server::WsgiDav);
    let report = pdf(
        "Q3 report",
        &[&["The lighthouse budget grew in the third quarter."]],
        true,
    );
    let contract = docx(
        "Vendor contract",
        &["The tungsten supplier signs the contract next week."],
        "",
    );
    let letter = screenshot(
        &page_html("Letter", &["The quince marmalade recipe needs lemons."]),
        900,
        400,
    );
    let scan = scanned(&[ScanPage::Jpeg {
        data: &jpeg(&letter, 85),
        width: letter.width(),
        height: letter.height(),
    }]);
    server.put("Reports/2026/q3 report.pdf", &report);
    server.put(
        "Notes/plan.md",
        b"# Plan\n\nThe marzipan festival opens in May.\n",
    );
    server.put("Notes/Deep/contract.docx", &contract);
    server.put("Scans/letter.pdf", &scan);
    server.put(".hidden/secret.txt", b"The walrus password hint.");
    server.put("Notes/.draft.md", b"The walrus draft.");

    let mut q = Quarry::new();
    q.without_model();
    q.with_ocr();
    add_cloud(&q, &server);
    q.start();
    q.wait_for_ocr();
    let key = q.integration("agent", "all", &["--quota", "unlimited"]);

    for (query, path) in [
        ("lighthouse", "Reports/2026/q3 report.pdf"),
        ("marzipan", "Notes/plan.md"),
        ("tungsten", "Notes/Deep/contract.docx"),
        ("marmalade", "Scans/letter.pdf"),
    ] {
        assert_eq!(paths(&q, &key, query), [path], "{query}");
    }
    assert_eq!(paths(&q, &key, "walrus"), Vec::<String>::new(), "hidden");

    // The result's `url` is the file's address on the server; the file is its bytes.
    let hit = first(&q, &key, "tungsten");
    assert_eq!(
        hit["url"].as_str(),
        Some(format!("{}Notes/Deep/contract.docx", server.url()).as_str()),
        "{hit}"
    );
    assert_eq!(file_of(&q, &key, &hit), contract);
    let hit = first(&q, &key, "lighthouse");
    assert_eq!(file_of(&q, &key, &hit), report);

    // The scan's original is judged for credentials once OCR has read it (a GET of its own,
    // in the background): served once judged.
    let scan_hit = first(&q, &key, "marmalade");
    let started = Instant::now();
    while q
        .request(
            "GET",
            &format!(
                "/api/v1/connectors/{}/docs/{}/file",
                scan_hit["connector_id"].as_str().unwrap_or_default(),
                scan_hit["doc_id"].as_str().unwrap_or_default()
            ),
            Some(&key),
            None,
        )
        .status
        != 200
    {
        assert!(started.elapsed() < Duration::from_secs(60), "never judged");
        std::thread::sleep(Duration::from_millis(200));
    }

    // A resync of the unchanged tree fetches nothing: one PROPFIND a folder (six), and
    // perhaps a watch's walk beside it.
    let before = server.requests().len();
    q.cli_ok(&["connector", "sync", "Cloud", "--wait"]);
    let resync: Vec<String> = server.requests()[before..].to_vec();
    let propfinds = resync.iter().filter(|r| r.starts_with("PROPFIND")).count();
    eprintln!(
        "an unchanged resync: {} requests ({propfinds} PROPFIND)",
        resync.len()
    );
    assert!(
        resync.iter().all(|r| r.starts_with("PROPFIND")) && propfinds <= 12,
        "{resync:?}"
    );

    // Changed, deleted and moved on the server: reflected within 60 s (the watch).
    server.put(
        "Notes/plan.md",
        b"# Plan\n\nThe marzipan festival moved to June, with kumquat stalls.\n",
    );
    let took = wait_for_paths(&q, &key, "kumquat", &["Notes/plan.md"]);
    eprintln!("a changed file was found after {took:?}");
    std::fs::remove_file(server.root().join("Reports/2026/q3 report.pdf")).expect("delete");
    let took = wait_for_paths(&q, &key, "lighthouse", &[]);
    eprintln!("a deleted file was gone after {took:?}");
    std::fs::create_dir_all(server.root().join("Archive")).expect("mkdir");
    std::fs::rename(
        server.root().join("Notes/Deep/contract.docx"),
        server.root().join("Archive/contract 2026.docx"),
    )
    .expect("move");
    let took = wait_for_paths(&q, &key, "tungsten", &["Archive/contract 2026.docx"]);
    eprintln!("a moved file was found at its new path after {took:?}");

    // The password is in no answer, page or log.
    let status = q.cli_ok(&["connector", "status", "Cloud"]);
    let listed = q.cli_ok(&["connector", "list", "--json"]);
    let connectors = q
        .request("GET", "/api/v1/connectors", Some(&key), None)
        .text();
    for (what, text) in [
        ("the server log", q.log()),
        ("connector status", status),
        ("connector list", listed),
        ("GET /connectors", connectors),
        ("a result", hit.to_string()),
    ] {
        assert!(!text.contains(PASSWORD), "the password is in {what}");
    }
}

#[test]
fn files_on_apache_mod_dav_are_found_served_and_kept_in_step() {
    let server = DavServer::start(Server::Apache);
    let long: String = (0..20_000).map(|n| format!("line {n} ")).collect();
    server.put(
        "Über uns/Straßenfest & Markt.md",
        b"The street festival has a carousel and a brass band.",
    );
    server.put("Projects/2026/notes.txt", long.as_bytes());
    server.put(
        "Projects/plan.docx",
        &docx("Plan", &["The zeppelin hangar opens."], ""),
    );

    let mut q = Quarry::new();
    q.without_model();
    add_cloud(&q, &server);
    q.start();
    q.wait_synced();
    let key = q.integration("agent", "all", &["--quota", "unlimited"]);

    assert_eq!(
        paths(&q, &key, "carousel"),
        ["Über uns/Straßenfest & Markt.md"]
    );
    assert_eq!(paths(&q, &key, "zeppelin"), ["Projects/plan.docx"]);
    let hit = first(&q, &key, "line");
    assert_eq!(file_of(&q, &key, &hit), long.as_bytes());
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.starts_with("PROPFIND /dav/Projects/2026/")),
        "{:?}",
        server.requests()
    );

    server.put(
        "Über uns/Straßenfest & Markt.md",
        b"The street festival has a carousel and a juggler.",
    );
    let took = wait_for_paths(&q, &key, "juggler", &["Über uns/Straßenfest & Markt.md"]);
    eprintln!("a changed file on Apache was found after {took:?}");
}

#[test]
fn wrong_password_unknown_ca_and_a_password_in_clear_are_refused_naming_the_fix() {
    let server = DavServer::start_tls();
    server.put(
        "Shared/rota.md",
        b"The allotment greenhouse is watered on Tuesdays.",
    );
    let q = Quarry::new();
    let add = |url: &str, password: &str, ca: bool| {
        let mut args: Vec<String> = ["connector", "add", "plugin", "webdav", "--name", "Cloud"]
            .map(str::to_owned)
            .to_vec();
        for setting in [
            format!("url={url}"),
            format!("username={}", quarry_tests::dav::USER),
            format!("password={password}"),
        ] {
            args.extend(["--set".to_owned(), setting]);
        }
        if ca {
            args.extend([
                "--set".to_owned(),
                format!("ca_file={}", server.ca_file().display()),
            ]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        q.cli(&args)
    };
    let said = |out: quarry_tests::quarry::CliOutput| {
        assert!(!out.ok, "accepted: {}", out.stdout);
        format!("{}{}", out.stdout, out.stderr)
    };
    let wrong_password = said(add(&server.url(), "not-the-password", true));
    assert!(
        wrong_password.contains("refused the user name and password")
            && wrong_password.contains("`password`"),
        "{wrong_password}"
    );
    let unknown_ca = said(add(&server.url(), PASSWORD, false));
    assert!(
        unknown_ca.contains("certificate did not verify") && unknown_ca.contains("ca_file"),
        "{unknown_ca}"
    );
    let in_clear = said(add("http://nas.example.org/dav/", PASSWORD, false));
    assert!(
        in_clear.contains("https://") && in_clear.contains("`url`"),
        "{in_clear}"
    );
    // With the CA, the same server is read.
    assert!(add(&server.url(), PASSWORD, true).ok);
    let mut q = q;
    q.without_model();
    q.start();
    q.wait_synced();
    let key = q.integration("agent", "all", &["--quota", "unlimited"]);
    assert_eq!(paths(&q, &key, "greenhouse"), ["Shared/rota.md"]);
}

#[test]
fn a_server_killed_mid_sync_converges_with_nothing_lost_and_nothing_twice() {
    const COUNT: usize = 3000;
    let mut server = DavServer::start(Server::WsgiDav);
    for n in 0..COUNT {
        server.put(
            &format!("Box {:02}/note {n:05}.txt", n % 30),
            format!("Codeword kw{n:05} for this note.").as_bytes(),
        );
    }
    let mut q = Quarry::new();
    q.without_model();
    add_cloud(&q, &server);
    q.start();
    let started = Instant::now();
    let at_kill = loop {
        let count = q.connectors()[0]["doc_count"].as_u64().unwrap_or(0);
        if count > 0 {
            break count;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no document arrived: {}",
            q.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    server.kill();
    assert!(
        at_kill < COUNT as u64,
        "the sync ended before the server was killed"
    );
    std::thread::sleep(Duration::from_secs(2));
    server.restart();
    let restarted = Instant::now();
    loop {
        let connector = q.connectors()[0].clone();
        if connector["status"] == "idle" && connector["doc_count"] == COUNT as u64 {
            break;
        }
        assert!(
            restarted.elapsed() < Duration::from_secs(180),
            "not every file indexed after the restart: {connector}\nthe server's log:\n{}\nQuarry's log:\n{}",
            server
                .log()
                .lines()
                .rev()
                .take(20)
                .collect::<Vec<_>>()
                .join("\n"),
            q.log()
                .lines()
                .filter(|l| !l.contains("text not extracted") && !l.contains("connect error"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let key = q.integration("agent", "all", &["--quota", "unlimited"]);
    for n in [0, 1, COUNT / 2, COUNT - 1] {
        assert_eq!(
            paths(&q, &key, &format!("kw{n:05}")),
            [format!("Box {:02}/note {n:05}.txt", n % 30)]
        );
    }
    let all = q.search_ok(
        &key,
        json!({"query": "codeword", "semantic_search": false, "limit": 1}),
    );
    assert_eq!(all["total"], COUNT as u64, "{all}");
}

#[test]
fn a_server_answering_5xx_mid_sync_loses_nothing_and_a_changed_password_shows_in_the_status() {
    const COUNT: usize = 600;
    let server = DavServer::start(Server::Apache);
    for n in 0..COUNT {
        server.put(
            &format!("Box {:02}/note {n:05}.txt", n % 6),
            format!("Codeword kw{n:05} for this note.").as_bytes(),
        );
    }
    // A folder whose configuration is broken: Apache answers 500 Internal Server Error there.
    server.put("Box 03/.htaccess", b"ThisIsNotADirective on\n");
    let mut q = Quarry::new();
    q.without_model();
    add_cloud(&q, &server);
    q.start();
    q.wait_for("the sync to stop at the broken folder", |connectors| {
        connectors[0]["status"] == "error"
    });
    let connector = q.connectors()[0].clone();
    let error = connector["last_error"].as_str().unwrap_or_default();
    assert!(
        error.contains("answered 500") && error.contains("tries again later"),
        "{connector}"
    );
    let before = connector["doc_count"].as_u64().unwrap_or(0);
    assert!(
        before > 0 && before < COUNT as u64,
        "{connector}\nthe server's requests: {:?}\n{}",
        server.requests(),
        q.log()
    );

    // Mended: the next sync goes on, and every note is there once.
    std::fs::remove_file(server.root().join("Box 03/.htaccess")).expect("mend");
    q.cli_ok(&["connector", "sync", "Cloud", "--wait"]);
    q.wait_for("every note indexed", |connectors| {
        connectors[0]["doc_count"].as_u64() == Some(COUNT as u64)
            && connectors[0]["status"] == "idle"
    });
    let key = q.integration("agent", "all", &["--quota", "unlimited"]);
    let all = q.search_ok(
        &key,
        json!({"query": "codeword", "semantic_search": false, "limit": 1}),
    );
    assert_eq!(all["total"], COUNT as u64, "{all}");
    assert_eq!(paths(&q, &key, "kw00003"), ["Box 03/note 00003.txt"]);

    // The password changed on the server: the status says so, naming the settings.
    server.change_password("a-new-password-on-the-server");
    let _ = q.cli(&["connector", "sync", "Cloud", "--wait"]);
    let status = q.cli_ok(&["connector", "status", "Cloud"]);
    assert!(
        status.contains("refused the user name and password") && status.contains("`password`"),
        "{status}"
    );
    assert!(!status.contains(PASSWORD) && !q.log().contains(PASSWORD));
}
