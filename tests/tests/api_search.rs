//! `POST /api/v1/search` against the real server: every validation rule of the contract, every
//! filter and sort, offset paging, keyword semantics, snippets.

use quarry_tests::corpus::{self, MARCH_2026_MS, MONTH_MS};
use quarry_tests::quarry::Quarry;
use serde_json::{Value, json};

struct World {
    q: Quarry,
    key: String,
}

fn world() -> World {
    let mut q = Quarry::new();
    q.serve_folders(&[("Notes", corpus::notes()), ("Mail", corpus::mail())]);
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    World { q, key }
}

impl World {
    /// Searches; keyword mode unless `body` says otherwise (semantic search has its own tests).
    fn search(&self, mut body: Value) -> Value {
        if body.get("semantic_search").is_none() {
            body["semantic_search"] = json!(false);
        }
        self.q.search_ok(&self.key, body)
    }

    fn paths(&self, body: Value) -> Vec<String> {
        self.search(body)["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| r["path"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    /// The validation error for `body`: its message and `(field, issue)` details.
    fn invalid(&self, body: Value) -> (String, Vec<(String, String)>) {
        let response = self.q.search(&self.key, body.clone());
        assert_eq!(response.status, 400, "{body} -> {}", response.text());
        let e = &response.json()["error"];
        assert_eq!(e["code"], "REQUEST_VALIDATION_FAILED");
        let details = e["details"]
            .as_array()
            .expect("details")
            .iter()
            .map(|d| {
                (
                    d["field"].as_str().unwrap_or_default().to_owned(),
                    d["issue"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        (
            e["message"].as_str().unwrap_or_default().to_owned(),
            details,
        )
    }
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn every_validation_rule_names_the_field_and_the_fix() {
    let w = world();
    let cases: Vec<(Value, &str, &str)> = vec![
        (json!({}), "query", "is required"),
        (json!({"query": ""}), "query", "1 to 1000 characters"),
        (json!({"query": "   "}), "query", "1 to 1000 characters"),
        (
            json!({"query": "x".repeat(1001)}),
            "query",
            "1 to 1000 characters",
        ),
        (json!({"query": 7}), "query", "must be a string"),
        (
            json!({"query": "a", "limit": 0}),
            "limit",
            "between 1 and 100",
        ),
        (
            json!({"query": "a", "limit": 101}),
            "limit",
            "between 1 and 100",
        ),
        (
            json!({"query": "a", "limit": 10.5}),
            "limit",
            "must be an integer",
        ),
        (
            json!({"query": "a", "limit": "10"}),
            "limit",
            "must be an integer",
        ),
        (
            json!({"query": "a", "semantic_search": "yes"}),
            "semantic_search",
            "true or false",
        ),
        (
            json!({"query": "a", "connector_names_filter": []}),
            "connector_names_filter",
            "must not be empty",
        ),
        (
            json!({"query": "a", "connector_names_filter": "Notes"}),
            "connector_names_filter",
            "array of strings",
        ),
        (
            json!({"query": "a", "connector_names_filter": [1]}),
            "connector_names_filter",
            "array of strings",
        ),
        (
            json!({"query": "a", "connector_names_filter": ["Nope"]}),
            "connector_names_filter",
            "known: Mail, Notes",
        ),
        (
            json!({"query": "a", "update_time_filter": {}}),
            "update_time_filter",
            "from, to or both",
        ),
        (
            json!({"query": "a", "update_time_filter": "2026"}),
            "update_time_filter",
            "must be an object",
        ),
        (
            json!({"query": "a", "update_time_filter": {"from": "yesterday"}}),
            "update_time_filter.from",
            "RFC 3339",
        ),
        (
            json!({"query": "a", "update_time_filter": {"to": "2026-02-30"}}),
            "update_time_filter.to",
            "RFC 3339",
        ),
        (
            json!({"query": "a", "update_time_filter": {"from": "2026-05-01", "to": "2026-04-01"}}),
            "update_time_filter",
            "must not be after",
        ),
        (
            json!({"query": "a", "update_time_filter": {"since": "2026-05-01"}}),
            "update_time_filter.since",
            "unknown field",
        ),
        (
            json!({"query": "a", "sort_by": "relevance"}),
            "sort_by",
            "\"default\", \"update_time\"",
        ),
        (
            json!({"query": "a", "sort_order": "up"}),
            "sort_order",
            "\"ascending\", \"descending\"",
        ),
        (
            json!({"query": "a", "offset": -1}),
            "offset",
            "between 0 and 10000",
        ),
        (
            json!({"query": "a", "offset": 10001}),
            "offset",
            "between 0 and 10000",
        ),
        (
            json!({"query": "a", "file_extensions_filter": []}),
            "file_extensions_filter",
            "must not be empty",
        ),
        (
            json!({"query": "a", "file_extensions_filter": [".pdf"]}),
            "file_extensions_filter",
            "write \"pdf\", without the dot",
        ),
        (
            json!({"query": "a", "colour": "red"}),
            "colour",
            "unknown field",
        ),
    ];
    for (body, field, issue) in cases {
        let (message, details) = w.invalid(body.clone());
        assert!(
            details.iter().any(|(f, i)| f == field && i.contains(issue)),
            "{body}: expected {field} / {issue}, got {details:?}"
        );
        assert!(!message.is_empty());
    }
    // Every problem is reported at once; the message is the first.
    let (message, details) = w.invalid(json!({"query": "", "limit": 0, "offset": -3}));
    assert_eq!(details.len(), 3, "{details:?}");
    assert!(message.starts_with("query must be"), "{message}");
    assert_eq!(
        w.invalid(json!({"query": "a", "limit": 0})).0,
        "limit must be an integer between 1 and 100, got 0"
    );
    // Accepted forms.
    for body in [
        json!({"query": "revenue", "limit": 10.0}),
        json!({"query": "revenue", "connector_names_filter": ["notes", "MAIL"]}),
        json!({"query": "revenue", "update_time_filter": {"from": "2026-01-01T00:00:00+02:00"}}),
        json!({"query": "revenue", "file_extensions_filter": ["PDF"]}),
        json!({"query": "revenue", "offset": 10000, "limit": 100}),
    ] {
        w.search(body);
    }
}

#[test]
fn keyword_search_follows_the_contract() {
    let w = world();
    let body = w.search(json!({"query": "revenue costs", "semantic_search": false, "limit": 100}));
    assert_eq!(body["mode"], "keyword");
    assert_eq!(body["warnings"], json!([]));
    let results = body["results"].as_array().expect("results");
    // report.pdf (page 2 says costs) and letter.docx have both words; they come first.
    let first_two: Vec<&str> = results[..2]
        .iter()
        .map(|r| r["path"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        sorted(first_two.iter().map(|s| s.to_string()).collect()),
        ["letter.docx", "report.pdf"]
    );
    assert!(
        results[..2]
            .iter()
            .all(|r| r["score"].as_f64().unwrap_or(0.0) >= 0.5)
    );
    assert!(
        results[2..]
            .iter()
            .all(|r| r["score"].as_f64().unwrap_or(1.0) < 0.5)
    );
    assert_eq!(body["total"], results.len());
    for r in results {
        let update_time = r["update_time"].as_str().expect("update_time");
        assert!(update_time.ends_with('Z'), "{update_time}");
        let snippet: Vec<char> = r["snippet"].as_str().expect("snippet").chars().collect();
        for h in r["highlights"].as_array().expect("highlights") {
            let (start, end) = (
                h["start"].as_u64().unwrap_or(0) as usize,
                h["end"].as_u64().unwrap_or(0) as usize,
            );
            let word: String = snippet[start..end].iter().collect();
            assert!(
                ["revenue", "costs"].contains(&word.to_lowercase().as_str()),
                "{word:?} in {r}"
            );
        }
    }

    assert_eq!(
        w.paths(json!({"query": "\"revenue grew\""})),
        ["report.pdf"]
    );
    assert!(w.paths(json!({"query": "\"grew revenue\""})).is_empty());
    assert_eq!(
        sorted(w.paths(json!({"query": "revenue -milk -friday -targets", "limit": 100}))),
        ["letter.docx", "report.pdf"]
    );
    assert_eq!(w.paths(json!({"query": "CRÈME brulee"})), ["café menu.txt"]);
    assert_eq!(
        w.paths(json!({"query": "menu"})),
        ["café menu.txt"],
        "file names are searchable"
    );
    assert_eq!(
        w.paths(json!({"query": "photo"})),
        ["photo.png"],
        "binaries are found by name"
    );
    let nothing = w.search(json!({"query": "-revenue"}));
    assert_eq!(nothing["total"], 0);
    assert!(
        nothing["warnings"][0]
            .as_str()
            .unwrap_or_default()
            .contains("no words")
    );
}

#[test]
fn filters_apply_to_connectors_times_and_extensions() {
    let w = world();
    let all = |extra: Value| {
        let mut body = json!({"query": "revenue", "limit": 100});
        for (k, v) in extra.as_object().expect("object") {
            body[k] = v.clone();
        }
        sorted(w.paths(body))
    };
    assert_eq!(
        all(json!({"connector_names_filter": ["mail"]})),
        ["inbox.txt"]
    );
    assert_eq!(
        all(json!({})),
        [
            "inbox.txt",
            "letter.docx",
            "plans/plan.md",
            "report.pdf",
            "todo.txt"
        ]
    );
    // report.pdf is March 2026, plan.md a month on, todo.txt two, letter.docx three.
    let at = |months: i64| quarry_tests_time(MARCH_2026_MS + months * MONTH_MS);
    assert_eq!(
        all(json!({"update_time_filter": {"from": at(1), "to": at(3)}})),
        ["plans/plan.md", "todo.txt"],
        "from is inclusive, to exclusive"
    );
    assert_eq!(
        all(json!({"update_time_filter": {"to": at(0)}})),
        ["inbox.txt"]
    );
    assert_eq!(
        all(json!({"update_time_filter": {"from": at(3)}})),
        ["letter.docx"]
    );
    assert_eq!(
        all(json!({"update_time_filter": {"from": "2026-03-01"}})).len(),
        4
    );
    assert_eq!(
        all(json!({"file_extensions_filter": ["PDF", "docx"]})),
        ["letter.docx", "report.pdf"]
    );
    assert_eq!(
        all(json!({"file_extensions_filter": ["md"], "connector_names_filter": ["Notes"]})),
        ["plans/plan.md"]
    );
}

/// RFC 3339 for `ms` since the Unix epoch.
fn quarry_tests_time(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .expect("valid time")
        .format(&time::format_description::well_known::Rfc3339)
        .expect("formats")
}

#[test]
fn sorts_and_pages_consistently() {
    let w = world();
    let query = json!({"query": "revenue costs prize bank", "limit": 100});
    let full = w.search(query.clone());
    let total = full["total"].as_u64().expect("total");
    assert_eq!(total, 6);

    let mut newest = query.clone();
    newest["sort_by"] = json!("update_time");
    let newest_paths = w.paths(newest.clone());
    assert_eq!(
        newest_paths,
        [
            "letter.docx",
            "todo.txt",
            "plans/plan.md",
            "report.pdf",
            "inbox.txt",
            "spam.html"
        ]
    );
    newest["sort_order"] = json!("ascending");
    let oldest = w.paths(newest);
    assert_eq!(
        oldest,
        newest_paths.iter().rev().cloned().collect::<Vec<_>>()
    );

    let best_first = w.paths(query.clone());
    let mut worst = query.clone();
    worst["sort_order"] = json!("ascending");
    assert_eq!(
        w.paths(worst),
        best_first.iter().rev().cloned().collect::<Vec<_>>()
    );

    for sort_by in ["default", "update_time"] {
        for order in ["descending", "ascending"] {
            let mut whole = query.clone();
            whole["sort_by"] = json!(sort_by);
            whole["sort_order"] = json!(order);
            let expected = w.paths(whole.clone());
            let mut paged = Vec::new();
            for offset in (0..8).step_by(3) {
                let mut page = whole.clone();
                page["offset"] = json!(offset);
                page["limit"] = json!(3);
                let body = w.search(page);
                assert_eq!(body["total"], total, "exact total on every page");
                assert!(body["results"].as_array().map_or(0, Vec::len) <= 3);
                paged.extend(
                    body["results"]
                        .as_array()
                        .expect("results")
                        .iter()
                        .map(|r| r["path"].as_str().unwrap_or_default().to_owned()),
                );
            }
            assert_eq!(paged, expected, "{sort_by} {order}");
        }
    }
    let past_the_end = w.search(json!({"query": "revenue", "offset": 50}));
    assert_eq!(past_the_end["results"], json!([]));
    assert_eq!(past_the_end["total"], 5);
}
