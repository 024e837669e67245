//! Connectors in three languages through the real server: the Python mbox connector
//! (componentize-py), the JavaScript JSON-over-HTTP connector (componentize-js) and the Rust feed
//! connector (wasi:http), each built from this repository by `make plugins`, indexed and searched
//! over the API. Secrets given to a plugin never reach the log or the CLI's output.

use quarry_tests::quarry::Quarry;
use quarry_tests::web::{WebServer, rss};
use serde_json::Value;

const MBOX: &str = "From alice@example.com Mon Nov  2 09:00:00 2026
From: Alice <alice@example.com>
To: Bob <bob@example.com>
Subject: Offsite in Lisbon
Date: Mon, 02 Nov 2026 09:00:00 +0000
Message-ID: <offsite-1@example.com>

The offsite moves to Lisbon in March; book the flights early.

From bob@example.com Tue Nov  3 10:00:00 2026
From: Bob <bob@example.com>
To: Alice <alice@example.com>
Subject: Re: Offsite in Lisbon
Date: Tue, 03 Nov 2026 10:00:00 +0000
Message-ID: <offsite-2@example.com>
Content-Type: text/html; charset=utf-8

<html><body><p>Flights are booked; the <b>marzipan</b> tasting is on day two.</p></body></html>
";

const ARCHIVE: &str = "From carol@example.com Wed Nov  4 11:00:00 2026
From: Carol <carol@example.com>
Subject: Budget review
Date: Wed, 04 Nov 2026 11:00:00 +0000

The quarterly budget review is due Friday.
";

fn titles(response: &Value) -> Vec<String> {
    response["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["title"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn connectors_in_python_javascript_and_rust_are_indexed_and_searched() {
    let mut q = Quarry::new();

    // Python: mailboxes in a folder.
    let mail = q.scratch("mail");
    std::fs::create_dir_all(mail.join("old")).expect("mail folder");
    std::fs::write(mail.join("inbox.mbox"), MBOX).expect("inbox");
    std::fs::write(mail.join("old/archive.mbox"), ARCHIVE).expect("archive");
    std::fs::write(mail.join("notes.txt"), "not a mailbox").expect("notes");
    let added = q.cli_ok(&[
        "connector",
        "add",
        "plugin",
        "mbox",
        "--name",
        "Mail",
        "--set",
        &format!("folder={}", mail.display()),
    ]);
    assert!(added.contains("It may read"), "{added}");

    // JavaScript: JSON Lines over HTTP, with a bearer token read from standard input.
    let web = WebServer::start();
    web.put(
        "/bookmarks.jsonl",
        "application/x-ndjson",
        concat!(
            "{\"id\": 1, \"title\": \"Sourdough guide\", \"note\": \"Feed the starter twice a day\", \"href\": \"https://example.org/bread\", \"saved\": \"2026-10-01T08:00:00Z\"}\n",
            "{\"id\": 2, \"title\": \"Cycling routes\", \"note\": \"Coastal loop past the lighthouse\", \"href\": \"https://example.org/bike\", \"saved\": 1790000000}\n",
        ),
    );
    let token = "tok-7f3a9c-never-logged";
    let added = q.cli_with_input(
        &[
            "connector",
            "add",
            "plugin",
            "json-http",
            "--name",
            "Bookmarks",
            "--set",
            &format!("url={}", web.url("/bookmarks.jsonl")),
            "--set",
            "text_fields=note",
            "--set",
            "url_field=href",
            "--set",
            "updated_field=saved",
            "--set",
            "token=-",
        ],
        &format!("{token}\n"),
    );
    assert!(
        added.contains(&format!("It may reach 127.0.0.1:{}", web.port())),
        "{added}"
    );

    // Rust: an RSS feed behind Basic authentication, password from standard input.
    let feed = WebServer::start();
    feed.put(
        "/feed.xml",
        "application/rss+xml",
        &rss(&[
            (
                "p1",
                "Release notes 4.2",
                "The importer now reads &lt;b&gt;zettelkasten&lt;/b&gt; exports.",
            ),
            (
                "p2",
                "Security advisory",
                "Rotate keys created before October.",
            ),
        ]),
    );
    let password = "pw-51d2e8-never-logged";
    feed.require_basic("reader", password);
    q.cli_with_input(
        &[
            "connector",
            "add",
            "plugin",
            "feed",
            "--name",
            "Blog",
            "--set",
            &format!("feed_url={}", feed.url("/feed.xml")),
            "--set",
            "username=reader",
            "--set",
            "password=-",
        ],
        &format!("{password}\n"),
    );

    q.start();
    q.wait_synced();
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);

    let found = q.keyword_search(&key, "marzipan", 10);
    assert_eq!(titles(&found), ["Re: Offsite in Lisbon"], "{found}");
    let found = q.keyword_search(&key, "budget", 10);
    assert_eq!(found["results"][0]["path"], "old/archive.mbox", "{found}");
    let found = q.keyword_search(&key, "lighthouse", 10);
    assert_eq!(titles(&found), ["Cycling routes"], "{found}");
    assert_eq!(
        found["results"][0]["url"], "https://example.org/bike",
        "{found}"
    );
    let found = q.keyword_search(&key, "zettelkasten", 10);
    assert_eq!(titles(&found), ["Release notes 4.2"], "{found}");

    // Every request of the JS connector carried the token; the feed's the credentials.
    assert!(
        web.seen()
            .iter()
            .all(|r| r.headers.get("authorization") == Some(&format!("Bearer {token}")))
    );
    assert!(!feed.seen().is_empty());

    // The original of a message is the message, served by the Python plugin.
    let hit = &q.keyword_search(&key, "marzipan", 10)["results"][0];
    let file = q.request(
        "GET",
        &format!(
            "/api/v1/connectors/{}/docs/{}/file",
            hit["connector_id"].as_str().unwrap_or_default(),
            hit["doc_id"].as_str().unwrap_or_default()
        ),
        Some(&key),
        None,
    );
    assert_eq!(file.status, 200);
    assert!(
        file.text().starts_with("From: Bob <bob@example.com>"),
        "{}",
        file.text()
    );

    // What each connector's plugin cost is counted and shown.
    let list = q.connectors();
    assert_eq!(list.len(), 3);
    for c in &list {
        let usage = &c["plugin_usage"];
        assert!(usage["calls"].as_u64().unwrap_or(0) >= 2, "{c}");
        assert!(usage["peak_memory_bytes"].as_u64().unwrap_or(0) > 0, "{c}");
    }
    let table = q.cli_ok(&["connector", "list"]);
    assert!(
        table.contains("CALLS") && table.contains("PEAK MEM"),
        "{table}"
    );

    // Secrets reach only their plugin: not the log, not the CLI, not the settings page's data.
    let log = q.log();
    for secret in [token, password] {
        assert!(!log.contains(secret), "{secret} in the server log");
        assert!(!table.contains(secret));
        assert!(!q.stdout().contains(secret));
    }
}

#[test]
fn a_url_outside_the_connectors_grant_is_refused_naming_the_host() {
    let q = Quarry::new();
    let out = q.cli(&[
        "connector",
        "add",
        "plugin",
        "feed",
        "--name",
        "Nowhere",
        "--set",
        "feed_url=ftp://example.com/feed",
    ]);
    assert!(!out.ok);
    assert!(
        out.stderr.contains("feed_url") && out.stderr.contains("http://"),
        "{}",
        out.stderr
    );

    // A feed host that does not answer: the plugin's check fails and names the host.
    let out = q.cli(&[
        "connector",
        "add",
        "plugin",
        "feed",
        "--name",
        "Down",
        "--set",
        "feed_url=http://127.0.0.1:9/feed.xml",
    ]);
    assert!(!out.ok);
    assert!(out.stderr.contains("127.0.0.1:9"), "{}", out.stderr);
}
