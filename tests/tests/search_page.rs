//! The search page for people and the citation links that lead to it: the real server over real
//! folders, the page in real headless Chromium (tests/browser/search-page.mjs), and the admin
//! routes behind it checked over HTTP.

use std::ffi::OsStr;

use quarry_tests::admin::sign_in;
use quarry_tests::browser::{assert_screenshots, run_script};
use quarry_tests::corpus;
use quarry_tests::quarry::Quarry;
use serde_json::{Value, json};

/// A server over "Notes" and "Mail", synced; their ids.
fn world() -> (Quarry, String, String) {
    let mut q = Quarry::new();
    let ids = q.serve_folders(&[("Notes", corpus::notes()), ("Mail", corpus::mail())]);
    (q, ids[0].clone(), ids[1].clone())
}

/// The id of integration `name`.
fn integration_id(q: &Quarry, name: &str) -> String {
    let listed = q.cli_json(&["integration", "list", "--json"]);
    listed
        .as_array()
        .and_then(|list| list.iter().find(|i| i["name"] == name))
        .and_then(|i| i["integration_id"].as_str())
        .unwrap_or_else(|| panic!("{name} in {listed}"))
        .to_owned()
}

#[test]
fn a_person_searches_opens_the_cited_page_downloads_and_sees_as_an_integration() {
    let (q, notes, mail) = world();
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    q.integration("NotesOnly", "Notes", &[]);
    let see_as = integration_id(&q, "NotesOnly");
    let found = q.search_ok(&key, json!({"query": "costs", "semantic_search": false}));
    let hit = found["results"]
        .as_array()
        .and_then(|r| r.iter().find(|h| h["path"] == "report.pdf"))
        .unwrap_or_else(|| panic!("report.pdf in {found}"));
    let link = hit["link"].as_str().expect("every result has a link");
    assert!(!link.contains(&key), "a link never carries a key");

    let result = run_script(
        "search-page.mjs",
        &q,
        &[
            ("LINK", OsStr::new(link)),
            ("NOTES_ID", OsStr::new(&notes)),
            ("MAIL_ID", OsStr::new(&mail)),
            ("SEE_AS", OsStr::new(&see_as)),
        ],
    );
    assert_eq!(result["download"]["name"], "report.pdf", "{result}");
    assert_screenshots(
        "search",
        &["sign-in", "document", "results", "thumbnail", "see-as"],
    );

    // "See as" cost NotesOnly nothing of its quota, and the log has it as the user's.
    let listed = q.cli_json(&["integration", "list", "--json"]);
    let notes_only = listed
        .as_array()
        .and_then(|l| l.iter().find(|i| i["name"] == "NotesOnly"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(notes_only["requests_this_month"], 0, "{notes_only}");
    let log = q.cli_json(&["activity", "--json"]);
    let entries = log.as_array().cloned().unwrap_or_default();
    assert!(
        entries.iter().any(|e| e["integration"] == "You"
            && e["endpoint"]
                .as_str()
                .is_some_and(|p| p.contains("as NotesOnly"))),
        "{log}"
    );
    assert!(
        !entries
            .iter()
            .any(|e| e["integration_id"] == see_as.as_str()),
        "nothing is logged as NotesOnly's: {log}"
    );
}

#[test]
fn links_are_in_every_rest_and_cli_result_and_open_only_with_a_session() {
    let (q, notes, _) = world();
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    let found = q.search_ok(&key, json!({"query": "revenue", "semantic_search": false}));
    let results = found["results"].as_array().expect("results");
    assert!(results.len() >= 4);
    for hit in results {
        let link = hit["link"].as_str().expect("link");
        let expected = format!(
            "{}/search/docs/{}/{}?q=revenue",
            q.url(),
            hit["connector_id"].as_str().expect("connector"),
            hit["doc_id"].as_str().expect("doc")
        );
        assert!(link.starts_with(&expected), "{link} starts with {expected}");
        match hit["page"].as_u64() {
            Some(page) => assert!(link.ends_with(&format!("&page={page}")), "{link}"),
            None => assert!(!link.contains("page="), "{link}"),
        }
    }
    let cli = q.cli_json(&["search", "revenue", "--json"]);
    assert!(
        cli["results"][0]["link"]
            .as_str()
            .is_some_and(|l| l.contains("/search/docs/")),
        "{cli}"
    );

    // Without a session the document view is the sign-in form's address, whatever the key.
    let path = results[0]["link"]
        .as_str()
        .and_then(|l| l.strip_prefix(&q.url()))
        .expect("a link of this server")
        .to_owned();
    let stranger = q.request("GET", &path, Some(&key), None);
    assert_eq!(stranger.status, 303);
    let location = stranger.header("location").unwrap_or_default().to_owned();
    assert!(
        location.starts_with("/settings/login?next=%2Fsearch%2Fdocs%2F"),
        "{location}"
    );
    assert!(stranger.body.is_empty(), "nothing of the document");
    // Nor do the admin routes behind it answer to a key.
    let doc_id = results[0]["doc_id"].as_str().expect("doc");
    let connector = results[0]["connector_id"].as_str().expect("connector");
    for route in [
        format!("/admin/v1/connectors/{connector}/docs/{doc_id}?page=1"),
        format!("/admin/v1/connectors/{connector}/docs/{doc_id}/file"),
    ] {
        let refused = q.request("GET", &route, Some(&key), None);
        assert_eq!(refused.status, 401, "{route}");
    }
    let search = q.request(
        "POST",
        "/admin/v1/search",
        Some(&key),
        Some(&json!({"query": "revenue"})),
    );
    assert_eq!(search.status, 401);
    // The sign-in returns only to Quarry's own pages.
    for (next, lands) in [
        (
            "/search/docs/a/b?q=x&page=2",
            "/search/docs/a/b?q=x&amp;page=2",
        ),
        ("//evil.example/search", "/settings\""),
        ("https://evil.example/", "/settings\""),
        ("/search/../admin", "/settings\""),
        ("/search/docs/../../admin/v1/activity", "/settings\""),
    ] {
        let encoded: String = form_urlencoded_value(next);
        let form = q.request(
            "GET",
            &format!("/settings/login?next={encoded}"),
            None,
            None,
        );
        assert!(
            form.text().contains(&format!("value=\"{lands}")),
            "{next}: {}",
            form.text()
        );
    }
    let _ = notes;
}

/// `text` percent-encoded for a query string.
fn form_urlencoded_value(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[test]
fn mcp_search_results_carry_the_link_and_the_tool_says_to_cite_it() {
    let (q, _, _) = world();
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    let steps = quarry_tests::mcp::over_http(
        quarry_tests::mcp::Sdk::TypeScript,
        &q,
        &key,
        json!([
            {"op": "list_tools"},
            quarry_tests::mcp::call("search", json!({"query": "costs", "semantic_search": false})),
        ]),
    );
    let search_tool = steps[0]["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "search"))
        .cloned()
        .unwrap_or(Value::Null);
    assert!(
        search_tool["description"]
            .as_str()
            .is_some_and(|d| d.contains("cite")),
        "{search_tool}"
    );
    let link = steps[1]["structuredContent"]["results"][0]["link"]
        .as_str()
        .expect("a link")
        .to_owned();
    assert!(
        steps[1]["text"]
            .as_str()
            .is_some_and(|t| t.contains(&format!("cite: {link}"))),
        "{}",
        steps[1]
    );
}

#[test]
fn seeing_as_a_declined_or_unknown_integration_says_so_and_a_page_past_the_end_names_the_field() {
    let (q, notes, _) = world();
    let admin = sign_in(&q);
    q.integration("Nobody", "none", &[]);
    let nobody = integration_id(&q, "Nobody");
    let declined = admin.call(
        &q,
        "POST",
        "/admin/v1/search",
        Some(&json!({"query": "revenue", "see_as": nobody})),
    );
    assert_eq!(declined.status, 403, "{}", declined.text());
    assert_eq!(declined.json()["error"]["code"], "DATA_SHARING_DECLINED");
    let unknown = admin.call(
        &q,
        "POST",
        "/admin/v1/search",
        Some(&json!({"query": "revenue", "see_as": "in_nobody"})),
    );
    assert_eq!(unknown.status, 404, "{}", unknown.text());
    let wrong = admin.call(
        &q,
        "POST",
        "/admin/v1/search",
        Some(&json!({"query": "revenue", "see_as": 7})),
    );
    assert_eq!(wrong.status, 400);
    assert_eq!(wrong.json()["error"]["details"][0]["field"], "see_as");

    // As the user: every connector; a page of the document with the words marked.
    let mine = admin.call(
        &q,
        "POST",
        "/admin/v1/search",
        Some(&json!({"query": "costs", "semantic_search": false})),
    );
    assert_eq!(mine.status, 200, "{}", mine.text());
    let hit = mine.json()["results"]
        .as_array()
        .and_then(|r| r.iter().find(|h| h["path"] == "report.pdf").cloned())
        .expect("report.pdf");
    let doc = hit["doc_id"].as_str().expect("doc id");
    let page = admin.call(
        &q,
        "GET",
        &format!("/admin/v1/connectors/{notes}/docs/{doc}?page=2&q=costs%20-spring"),
        None,
    );
    assert_eq!(page.status, 200, "{}", page.text());
    let body = page.json();
    assert_eq!(
        body["content"].as_str().map(str::trim),
        Some("Costs fell sharply in the spring")
    );
    assert_eq!(
        body["marks"],
        json!([{"start": 0, "end": 5}]),
        "excluded words are not marked"
    );
    assert_eq!(body["connector_name"], "Notes");
    assert_eq!(body["file_served"], true);
    let past = admin.call(
        &q,
        "GET",
        &format!("/admin/v1/connectors/{notes}/docs/{doc}?page=9"),
        None,
    );
    assert_eq!(past.status, 400);
    assert_eq!(past.json()["error"]["details"][0]["field"], "page_start");
}
