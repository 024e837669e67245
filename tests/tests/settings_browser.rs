//! The settings page in real headless Chromium (Debian's, driven by playwright-core from npm;
//! `make setup` installs both): tests/browser/settings-flow.mjs walks the whole flow against the
//! real server, once per answer to the data sharing prompt. Screenshots of every page land in
//! target/screenshots/.

use std::ffi::OsStr;

use quarry_tests::browser::{assert_screenshots, run_script};
use quarry_tests::generated::english;
use quarry_tests::quarry::Quarry;
use quarry_tests::rng::Rng;
use quarry_tests::scans::{page_html, png, screenshot};

/// Runs the flow with one answer to the sharing prompt, then checks that the key the page
/// showed never reached the server's log or output, and that every screenshot was taken.
fn walk(mode: &str) {
    let mut quarry = Quarry::new();
    let notes = quarry.scratch("notes");
    std::fs::write(
        notes.join("q3.md"),
        "# Q3\nNotes on the quarterly report: revenue grew in the third quarter.\n",
    )
    .expect("write fixture");
    std::fs::write(notes.join("minutes.md"), "Meeting minutes about hiring.\n")
        .expect("write fixture");
    let private = quarry.scratch("private");
    std::fs::write(
        private.join("draft.md"),
        "Private quarterly report draft, not for sharing.\n",
    )
    .expect("write fixture");
    quarry.start_with_env(&[("QUARRY_MODEL_DIR", "none")]);
    let (mcp_python, mcp_client) = (
        quarry_tests::mcp::python(),
        quarry_tests::mcp::client_script(),
    );
    let result = run_script(
        "settings-flow.mjs",
        &quarry,
        &[
            ("NOTES_DIR", notes.as_os_str()),
            ("PRIVATE_DIR", private.as_os_str()),
            ("SHARE_MODE", OsStr::new(mode)),
            ("MCP_PYTHON", mcp_python.as_os_str()),
            ("MCP_CLIENT", mcp_client.as_os_str()),
        ],
    );
    let key = result["api_key"]
        .as_str()
        .expect("the flow reports the key");
    assert!(key.starts_with("qry_"));
    quarry.stop();
    // The key was shown once, on the page: never in the server's output or log.
    assert!(
        !quarry.log().contains(key),
        "the key appears in the server log"
    );
    assert!(
        !quarry.stdout().contains(key),
        "the key appears in the server's output"
    );
    assert_screenshots(
        mode,
        &[
            "login",
            "connectors",
            "sharing-prompt",
            "created",
            "activity",
        ],
    );
}

#[test]
fn the_page_shows_documents_waiting_for_embeddings_until_none_are_left() {
    let mut quarry = Quarry::new();
    // Long documents, so their vectors take the queue several rounds while the page watches.
    let papers = quarry.scratch("papers");
    let mut rng = Rng(11);
    for i in 0..400 {
        std::fs::write(
            papers.join(format!("paper-{i:03}.txt")),
            english(&mut rng, 220),
        )
        .expect("write fixture");
    }
    quarry.start();
    let result = run_script(
        "embedding-progress.mjs",
        &quarry,
        &[("PAPERS_DIR", papers.as_os_str())],
    );
    let seen = result["pending_seen"].as_u64().expect("a count");
    assert!((1..=400).contains(&seen), "the page showed {seen} waiting");
    assert_screenshots("embedding", &["pending", "done"]);
}

#[test]
fn the_page_shows_documents_waiting_for_ocr_until_none_are_left() {
    let mut quarry = Quarry::new();
    quarry.without_model();
    quarry.with_ocr();
    // Eight screenshots of a page of text: the queue reads one at a time, a second or two each.
    let scans = quarry.scratch("scans");
    let page = png(&screenshot(
        &page_html(
            "Invoice 2231",
            &[
                "Payable within thirty days of the date above.",
                "Pallets shipped from Rotterdam: 4,213.",
            ],
        ),
        1000,
        700,
    ));
    for i in 0..8 {
        std::fs::write(scans.join(format!("scan-{i}.png")), &page).expect("write fixture");
    }
    quarry.start();
    let result = run_script(
        "ocr-progress.mjs",
        &quarry,
        &[("SCANS_DIR", scans.as_os_str())],
    );
    let seen = result["pending_seen"].as_u64().expect("a count");
    assert!((2..=8).contains(&seen), "the page showed {seen} waiting");
    assert_screenshots("ocr", &["pending", "done"]);
}

#[test]
fn the_whole_flow_works_when_sharing_everything() {
    walk("all");
}

#[test]
fn the_whole_flow_works_when_choosing_connectors() {
    walk("selected");
}

#[test]
fn the_whole_flow_works_when_declining() {
    walk("declined");
}

#[test]
fn the_page_lists_held_back_files_with_why_releases_them_and_warns_before_turning_the_check_off() {
    let mut quarry = Quarry::new();
    let share = quarry.scratch("share");
    std::fs::write(
        share.join("deploy-notes.md"),
        "Deploy with GITHUB_TOKEN=ghp_R8x2kLq9ZtW4mN7vB3cY6dH1fJ5sA0gE2uPo from the build host.\n",
    )
    .expect("write fixture");
    std::fs::write(
        share.join("server.key"),
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vl3XyZqQw8Rk\nQ4eQ0cJt9yPp2Wf6NnH1dK3sL8mT5vX2aB7cE4gF1hJ6kM9oP0qR3sT2uV5wY8zA\n-----END PRIVATE KEY-----\n",
    )
    .expect("write fixture");
    std::fs::write(share.join("plain.md"), "Nothing secret here.\n").expect("write fixture");
    quarry.start_with_env(&[("QUARRY_MODEL_DIR", "none")]);
    let result = run_script(
        "credentials.mjs",
        &quarry,
        &[("SHARE_DIR", share.as_os_str())],
    );
    assert_eq!(
        result["released"],
        serde_json::json!(["deploy-notes.md", "*.key"])
    );
    let status = quarry.cli_json(&["connector", "status", "Share", "--json"]);
    assert_eq!(
        status["credentials"]["released"],
        serde_json::json!(["deploy-notes.md", "*.key"])
    );
    assert_eq!(status["held_back"]["count"], 0);
    assert_eq!(status["credentials"]["mode"], "hold");
    assert_screenshots(
        "credentials",
        &["row", "dialog", "off-question", "released"],
    );
}
