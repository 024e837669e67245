//! Who may call the API, and what every answer looks like: authentication, the error envelope,
//! the order of checks, quotas (across restarts and a crash), data sharing, the Host check.
//! The real binary, on a loopback port, over folders indexed by the real folder plugin.

use quarry_tests::corpus;
use quarry_tests::http::{Response, build};
use quarry_tests::quarry::Quarry;
use serde_json::{Value, json};
use time::format_description::well_known::Rfc3339;
use time::{Month, OffsetDateTime};

/// A server over a "Notes" and a "Mail" folder, synced.
fn world() -> (Quarry, String, String) {
    let mut q = Quarry::new();
    let ids = q.serve_folders(&[("Notes", corpus::notes()), ("Mail", corpus::mail())]);
    (q, ids[0].clone(), ids[1].clone())
}

/// Asserts an error answer in the contract's envelope; returns its `error` object.
fn error(response: &Response, status: u16, code: &str) -> Value {
    assert_eq!(response.status, status, "{}", response.text());
    assert_eq!(
        response.header("content-type"),
        Some("application/json; charset=utf-8")
    );
    let body = response.json();
    let error = body["error"].clone();
    assert_eq!(error["code"], code, "{body}");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    let id = response.header("x-request-id").expect("X-Request-Id");
    assert_eq!(error["request_id"], id, "the body names the request's id");
    let keys: Vec<&String> = error.as_object().expect("object").keys().collect();
    let validation = code == "REQUEST_VALIDATION_FAILED";
    assert_eq!(
        error.get("details").is_some(),
        validation && status == 400,
        "details only for validation errors with problems: {body}"
    );
    assert!(keys.len() <= 4, "{body}");
    error
}

fn remaining(response: &Response) -> String {
    response
        .header("x-quota-remaining")
        .unwrap_or_else(|| panic!("no quota headers: {:?}", response.headers))
        .to_owned()
}

#[test]
fn bad_keys_are_refused_alike_and_never_counted() {
    let (q, _, _) = world();
    let key = q.integration("Agent", "all", &[]);
    let other = Quarry::new().integration("Elsewhere", "all", &[]);
    let soon = OffsetDateTime::now_utc() + time::Duration::seconds(2);
    let soon = soon.format(&Rfc3339).expect("formats");
    let expiring = q.integration("Short", "all", &["--expires", &soon]);
    let revoked = q.integration("Gone", "all", &[]);
    q.cli_ok(&["integration", "revoke", "Gone"]);
    std::thread::sleep(std::time::Duration::from_millis(2_500));

    let search = |auth: Option<&str>| {
        let mut headers = vec![("Content-Type", "application/json")];
        if let Some(auth) = auth {
            headers.push(("Authorization", auth));
        }
        q.raw(&build(
            "POST",
            "/api/v1/search",
            &q.addr,
            &headers,
            br#"{"query":"revenue"}"#,
        ))
    };
    let mut messages = Vec::new();
    let bad = [
        None,
        Some("Basic dXNlcjpwYXNz".to_owned()),
        Some("Bearer".to_owned()),
        Some(format!("Bearer {key} extra")),
        Some("Bearer qry_notakey".to_owned()),
        Some(format!("Bearer {}", &key[..key.len() - 1])),
        Some(format!("Bearer {other}")),
        Some(format!("Bearer {revoked}")),
        Some(format!("Bearer {expiring}")),
    ];
    for auth in &bad {
        let response = search(auth.as_deref());
        let e = error(&response, 401, "UNAUTHORIZED");
        assert_eq!(response.header("www-authenticate"), Some("Bearer"));
        assert!(
            response.header("x-quota-remaining").is_none(),
            "401s carry no quota headers"
        );
        messages.push(e["message"].as_str().unwrap_or_default().to_owned());
    }
    messages.dedup();
    assert_eq!(
        messages.len(),
        1,
        "the message never says which check failed: {messages:?}"
    );
    assert!(!q.log().contains(&key), "keys never reach the log");

    for scheme in ["Bearer", "bearer", "BEARER"] {
        let response = search(Some(&format!("{scheme} {key}")));
        assert_eq!(response.status, 200, "{scheme}: {}", response.text());
    }

    // 401s do not count: the old key of a rotated integration is refused without cost.
    let first = q.search(&key, json!({"query": "revenue"}));
    let before: u64 = remaining(&first).parse().expect("number");
    let rotated = q.cli_json(&["integration", "rotate", "Agent", "--json"]);
    let new_key = rotated["api_key"].as_str().expect("key");
    for _ in 0..5 {
        error(
            &q.search(&key, json!({"query": "revenue"})),
            401,
            "UNAUTHORIZED",
        );
    }
    let after: u64 = remaining(&q.search(new_key, json!({"query": "revenue"})))
        .parse()
        .expect("number");
    assert_eq!(after, before - 1, "only the one accepted request counted");
}

#[test]
fn every_error_has_the_envelope_and_the_request_id() {
    let (q, notes, _) = world();
    let key = q.integration("Agent", "all", &[]);

    let e = error(
        &q.request("GET", "/nowhere", None, None),
        404,
        "RESOURCE_NOT_FOUND",
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("openapi.json")
    );
    let unknown_route = q.request("GET", "/api/v1/nothing/here", Some(&key), None);
    error(&unknown_route, 404, "RESOURCE_NOT_FOUND");
    assert!(
        unknown_route.header("x-quota-remaining").is_none(),
        "routing comes before auth"
    );

    let put = q.request("PUT", "/api/v1/search", None, None);
    error(&put, 405, "REQUEST_VALIDATION_FAILED");
    assert!(
        put.header("allow").is_some_and(|a| a.contains("POST")),
        "{:?}",
        put.headers
    );
    let delete = q.request("DELETE", "/api/v1/connectors", Some(&key), None);
    error(&delete, 405, "REQUEST_VALIDATION_FAILED");
    assert!(delete.header("allow").is_some_and(|a| a.contains("GET")));

    let big = format!(r#"{{"query":"{}"}}"#, "a".repeat((1 << 20) + 10));
    let auth = format!("Bearer {key}");
    let too_large = q.raw(&build(
        "POST",
        "/api/v1/search",
        &q.addr,
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        big.as_bytes(),
    ));
    error(&too_large, 413, "REQUEST_VALIDATION_FAILED");
    assert!(too_large.header("x-quota-remaining").is_some());

    let plain = q.raw(&build(
        "POST",
        "/api/v1/search",
        &q.addr,
        &[("Authorization", &auth), ("Content-Type", "text/plain")],
        br#"{"query":"revenue"}"#,
    ));
    error(&plain, 415, "REQUEST_VALIDATION_FAILED");

    let broken = q.raw(&build(
        "POST",
        "/api/v1/search",
        &q.addr,
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        br#"{"query": "revenue",,}"#,
    ));
    let e = error(&broken, 400, "REQUEST_VALIDATION_FAILED");
    assert_eq!(e["details"][0]["field"], "body");

    let bad_id = q.request("GET", "/api/v1/connectors/a.b/docs/x", Some(&key), None);
    let e = error(&bad_id, 400, "REQUEST_VALIDATION_FAILED");
    assert_eq!(e["details"][0]["field"], "connector_id");
    let unknown_doc = q.request(
        "GET",
        &format!("/api/v1/connectors/{notes}/docs/nope"),
        Some(&key),
        None,
    );
    error(&unknown_doc, 404, "RESOURCE_NOT_FOUND");

    // The request id of an answer is in the server's log line for it.
    let id = bad_id.header("x-request-id").expect("id").to_owned();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(q.log().contains(&id), "request {id} is in the log");
}

#[test]
fn checks_run_in_the_contract_order() {
    let (q, _, mail) = world();
    let declined = q.integration("Declined", "none", &[]);
    let tiny = q.integration("Tiny", "all", &["--quota", "1"]);
    let tiny_declined = q.integration("TinyDeclined", "none", &["--quota", "0"]);
    let notes_only = q.integration("NotesOnly", "Notes", &["--quota", "0"]);
    let bad_body = json!({"query": "", "limit": 0});

    error(&q.search("qry_nope", bad_body.clone()), 401, "UNAUTHORIZED");
    let response = q.search(&declined, bad_body.clone());
    error(&response, 403, "DATA_SHARING_DECLINED");
    assert_eq!(remaining(&response), "9999", "a 403 is counted");
    error(
        &q.search(&tiny, bad_body.clone()),
        400,
        "REQUEST_VALIDATION_FAILED",
    );
    error(&q.search(&tiny, bad_body.clone()), 429, "QUOTA_EXCEEDED");
    error(
        &q.search(&tiny_declined, bad_body),
        403,
        "DATA_SHARING_DECLINED",
    );
    // Selected sharing: a connector outside the selection is refused before quota and
    // validation, even with a malformed document id.
    let path = format!("/api/v1/connectors/{mail}/docs/not.valid");
    error(
        &q.request("GET", &path, Some(&notes_only), None),
        403,
        "DATA_SHARING_DECLINED",
    );
    error(
        &q.request("POST", "/api/v1/connectors", Some("qry_nope"), None),
        405,
        "REQUEST_VALIDATION_FAILED",
    );
}

#[test]
fn quotas_count_every_request_and_survive_restarts_and_crashes() {
    let (mut q, _, _) = world();
    let key = q.integration("Metered", "all", &["--quota", "3"]);
    let ok = json!({"query": "revenue"});
    let expected_reset = next_month_start();
    for left in ["2", "1", "0"] {
        let response = q.search(&key, ok.clone());
        assert_eq!(response.status, 200);
        assert_eq!(response.header("x-quota-limit"), Some("3"));
        assert_eq!(remaining(&response), left);
        assert_eq!(
            response.header("x-quota-reset"),
            Some(expected_reset.as_str())
        );
    }
    let over = q.search(&key, ok.clone());
    let e = error(&over, 429, "QUOTA_EXCEEDED");
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&expected_reset)
    );
    let retry: u64 = over
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!(retry > 0 && retry <= 31 * 86_400, "{retry}");
    assert_eq!(remaining(&over), "0");

    q.stop();
    q.start();
    error(&q.search(&key, ok.clone()), 429, "QUOTA_EXCEEDED");

    // A change of quota applies to the next request; counting went on meanwhile (5 so far).
    q.cli_ok(&["integration", "quota", "Metered", "10"]);
    let response = q.search(&key, ok.clone());
    assert_eq!(response.status, 200);
    assert_eq!(remaining(&response), "4");

    q.kill();
    q.start();
    let response = q.search(&key, ok.clone());
    assert_eq!(remaining(&response), "3", "counts survive a crash");

    let unlimited = q.integration("Free for all", "all", &["--quota", "unlimited"]);
    let response = q.search(&unlimited, ok);
    assert_eq!(response.header("x-quota-limit"), Some("unlimited"));
    assert_eq!(remaining(&response), "unlimited");
}

/// The first instant of the next UTC month, as the API writes it.
fn next_month_start() -> String {
    let today = OffsetDateTime::now_utc().date();
    let (year, month) = match today.month() {
        Month::December => (today.year() + 1, Month::January),
        m => (today.year(), m.next()),
    };
    format!("{year:04}-{:02}-01T00:00:00Z", u8::from(month))
}

#[test]
fn data_sharing_declined_selected_and_changed() {
    let (q, notes, mail) = world();
    let all = q.integration("All", "all", &[]);
    let selected = q.integration("Selected", "notes", &[]);
    let declined = q.integration("Declined", "none", &[]);
    let doc_of = |key: &str, connector: &str| -> String {
        let body = q
            .search(
                key,
                json!({"query": "revenue", "limit": 100, "connector_names_filter": [connector]}),
            )
            .json();
        body["results"][0]["doc_id"]
            .as_str()
            .expect("a result")
            .to_owned()
    };
    let mail_doc = doc_of(&all, "Mail");
    let notes_doc = doc_of(&all, "Notes");

    for (method, path, body) in [
        (
            "POST",
            "/api/v1/search".to_owned(),
            Some(json!({"query": "revenue"})),
        ),
        ("GET", "/api/v1/connectors".to_owned(), None),
        (
            "GET",
            format!("/api/v1/connectors/{notes}/docs/{notes_doc}"),
            None,
        ),
        (
            "GET",
            format!("/api/v1/connectors/{notes}/docs/{notes_doc}/file"),
            None,
        ),
    ] {
        let response = q.request(method, &path, Some(&declined), body.as_ref());
        error(&response, 403, "DATA_SHARING_DECLINED");
    }

    let results = q
        .search(&selected, json!({"query": "revenue", "limit": 100}))
        .json();
    let connectors: Vec<&str> = results["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["connector_name"].as_str().unwrap_or_default())
        .collect();
    assert!(
        !connectors.is_empty() && connectors.iter().all(|c| *c == "Notes"),
        "{connectors:?}"
    );
    let listed = q
        .request("GET", "/api/v1/connectors", Some(&selected), None)
        .json();
    assert_eq!(listed["connectors"].as_array().map(Vec::len), Some(1));
    assert_eq!(listed["connectors"][0]["name"], "Notes");
    for path in [
        format!("/api/v1/connectors/{mail}/docs/{mail_doc}"),
        format!("/api/v1/connectors/{mail}/docs/{mail_doc}/file"),
        "/api/v1/connectors/cn_doesnotexist/docs/x".to_owned(),
    ] {
        error(
            &q.request("GET", &path, Some(&selected), None),
            403,
            "DATA_SHARING_DECLINED",
        );
    }
    let e = error(
        &q.search(
            &selected,
            json!({"query": "revenue", "connector_names_filter": ["Mail"]}),
        ),
        400,
        "REQUEST_VALIDATION_FAILED",
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("known: Notes"),
        "{e}"
    );
    assert_eq!(
        q.request(
            "GET",
            &format!("/api/v1/connectors/{notes}/docs/{notes_doc}"),
            Some(&selected),
            None
        )
        .status,
        200
    );

    // Changes made in the CLI apply to the next request.
    q.cli_ok(&["integration", "share", "Selected", "all"]);
    let listed = q
        .request("GET", "/api/v1/connectors", Some(&selected), None)
        .json();
    assert_eq!(listed["connectors"].as_array().map(Vec::len), Some(2));
    q.cli_ok(&["integration", "share", "All", "none"]);
    error(
        &q.request("GET", "/api/v1/connectors", Some(&all), None),
        403,
        "DATA_SHARING_DECLINED",
    );
}

#[test]
fn the_host_header_must_name_the_service() {
    let (q, _, _) = world();
    let port = q.addr.rsplit(':').next().expect("port").to_owned();
    let evil = q.raw(&build(
        "GET",
        "/healthz",
        &format!("evil.example:{port}"),
        &[],
        b"",
    ));
    let e = error(&evil, 400, "REQUEST_VALIDATION_FAILED");
    assert_eq!(e["details"][0]["field"], "Host");
    let rebinding = q.raw(&build(
        "GET",
        "/api/v1/openapi.json",
        &format!("attacker.test:{port}"),
        &[],
        b"",
    ));
    assert_eq!(rebinding.status, 400);
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let ok = q.raw(&build("GET", "/healthz", &host, &[], b""));
        assert_eq!(ok.status, 200, "{host}");
        assert_eq!(ok.json(), json!({"status": "ok"}));
    }
    let no_host = q.raw(b"GET /healthz HTTP/1.0\r\n\r\n");
    assert_eq!(no_host.status, 400, "{}", no_host.text());
}
