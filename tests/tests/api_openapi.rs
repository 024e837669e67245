//! The OpenAPI document against real answers: every answer's status is documented for its
//! operation, its JSON body validates against the documented schema, and every documented
//! header is present and valid.

use jsonschema::Draft;
use quarry_tests::corpus;
use quarry_tests::http::Response;
use quarry_tests::quarry::Quarry;
use serde_json::{Value, json};

struct Spec {
    doc: Value,
}

impl Spec {
    /// Follows a `$ref` within the document.
    fn resolve<'a>(&'a self, value: &'a Value) -> &'a Value {
        match value.get("$ref").and_then(Value::as_str) {
            Some(pointer) => self
                .doc
                .pointer(pointer.trim_start_matches('#'))
                .unwrap_or_else(|| panic!("dangling $ref {pointer}")),
            None => value,
        }
    }

    /// Validates `instance` against `schema`, resolving references into the document.
    fn validate(&self, schema: &Value, instance: &Value, what: &str) {
        let mut root = schema.clone();
        if let Some(object) = root.as_object_mut() {
            object.insert("components".into(), self.doc["components"].clone());
        }
        let validator = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .should_validate_formats(true)
            .build(&root)
            .unwrap_or_else(|e| panic!("{what}: the schema does not compile: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{what}: {errors:?}\n{instance}");
    }

    /// Checks an answer against the operation `method template`.
    fn check(&self, method: &str, template: &str, response: &Response) {
        let what = format!("{method} {template} -> {}", response.status);
        let operation = &self.doc["paths"][template][method.to_ascii_lowercase()];
        assert!(operation.is_object(), "{what}: operation not documented");
        let documented = &operation["responses"][response.status.to_string()];
        assert!(documented.is_object(), "{what}: status not documented");
        let documented = self.resolve(documented);
        if let Some(headers) = documented.get("headers").and_then(Value::as_object) {
            for (name, spec) in headers {
                if name.eq_ignore_ascii_case("content-length") {
                    continue; // framing, checked by the client
                }
                let spec = self.resolve(spec);
                let value = response.header(name).unwrap_or_else(|| {
                    panic!("{what}: header {name} missing: {:?}", response.headers)
                });
                let schema = &spec["schema"];
                let instance = if schema["type"] == "integer" {
                    json!(
                        value
                            .parse::<i64>()
                            .unwrap_or_else(|_| panic!("{what}: {name} {value:?}"))
                    )
                } else {
                    json!(value)
                };
                self.validate(schema, &instance, &format!("{what}: header {name}"));
            }
        }
        let served = response.header("content-type").unwrap_or_default();
        match documented.get("content") {
            // JSON where JSON is documented (alone, or as one of the types asked for by Accept).
            Some(content)
                if content.get("application/json").is_some()
                    && (content.as_object().is_some_and(|c| c.len() == 1)
                        || served.starts_with("application/json")) =>
            {
                assert_eq!(served, "application/json; charset=utf-8", "{what}");
                self.validate(
                    &content["application/json"]["schema"],
                    &response.json(),
                    &what,
                );
            }
            Some(content) => {
                let media = served.split(';').next().unwrap_or_default().trim();
                assert!(
                    content.get("*/*").is_some() || content.get(media).is_some(),
                    "{what}: {served} is not documented"
                );
            }
            None => assert!(response.body.is_empty(), "{what}: no body documented"),
        }
    }
}

#[test]
fn real_answers_match_the_openapi_document() {
    let mut q = Quarry::new();
    let ids = q.serve_folders(&[("Notes", corpus::notes()), ("Mail", corpus::mail())]);
    let (notes_id, mail_id) = (ids[0].clone(), ids[1].clone());

    let served = q.request("GET", "/api/v1/openapi.json", None, None);
    assert_eq!(served.status, 200, "served without a key");
    let spec = Spec { doc: served.json() };
    assert_eq!(spec.doc["openapi"], "3.1.0");
    assert_eq!(spec.doc["servers"][0]["url"], format!("http://{}", q.addr));
    let committed: Value = serde_json::from_str(include_str!("../../host/api/openapi.json"))
        .expect("committed document");
    assert_eq!(
        spec.doc["paths"], committed["paths"],
        "the served document is the committed one"
    );

    let key = q.integration("Agent", "all", &[]);
    let tiny = q.integration("Tiny", "all", &["--quota", "0"]);
    let declined = q.integration("Declined", "none", &[]);
    let selected = q.integration("Selected", "Notes", &[]);
    let unlimited = q.integration("Unlimited", "all", &["--quota", "unlimited"]);

    let search = "/api/v1/search";
    let found = q.search(&key, json!({"query": "revenue", "limit": 100}));
    spec.check("POST", search, &found);
    spec.check(
        "POST",
        search,
        &q.search(
            &unlimited,
            json!({"query": "revenue", "semantic_search": false}),
        ),
    );
    spec.check("POST", search, &q.search(&key, json!({"query": ""})));
    spec.check("POST", search, &q.search("qry_bad", json!({"query": "x"})));
    spec.check("POST", search, &q.search(&declined, json!({"query": "x"})));
    spec.check("POST", search, &q.search(&tiny, json!({"query": "x"})));
    spec.check("POST", search, &q.request("PUT", search, None, None));
    let auth = format!("Bearer {key}");
    let huge = quarry_tests::http::build(
        "POST",
        search,
        &q.addr,
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        &vec![b' '; (1 << 20) + 1],
    );
    spec.check("POST", search, &q.raw(&huge));
    let text = quarry_tests::http::build(
        "POST",
        search,
        &q.addr,
        &[("Authorization", &auth)],
        b"query=x",
    );
    spec.check("POST", search, &q.raw(&text));

    let connectors = "/api/v1/connectors";
    spec.check(
        "GET",
        connectors,
        &q.request("GET", connectors, Some(&key), None),
    );
    spec.check(
        "GET",
        connectors,
        &q.request("GET", connectors, Some(&unlimited), None),
    );
    spec.check(
        "GET",
        connectors,
        &q.request("GET", "/api/v1/connectors?x=1", Some(&key), None),
    );
    spec.check("GET", connectors, &q.request("GET", connectors, None, None));
    let guide = "/api/v1/agent-guide";
    for who in [Some(key.as_str()), Some(declined.as_str()), None] {
        spec.check("GET", guide, &q.request("GET", guide, who, None));
    }
    spec.check(
        "GET",
        connectors,
        &q.request("GET", connectors, Some(&declined), None),
    );
    spec.check(
        "GET",
        connectors,
        &q.request("GET", connectors, Some(&tiny), None),
    );

    let results = found.json();
    let pick = |connector: &str, path: &str| -> String {
        results["results"]
            .as_array()
            .expect("results")
            .iter()
            .find(|r| r["connector_id"] == connector && r["path"] == path)
            .and_then(|r| r["doc_id"].as_str())
            .unwrap_or_else(|| panic!("{path} in the results"))
            .to_owned()
    };
    let report = pick(&notes_id, "report.pdf");
    let inbox = pick(&mail_id, "inbox.txt");
    let doc = "/api/v1/connectors/{connector_id}/docs/{doc_id}";
    let doc_path = |c: &str, d: &str| format!("/api/v1/connectors/{c}/docs/{d}");
    spec.check(
        "GET",
        doc,
        &q.request("GET", &doc_path(&notes_id, &report), Some(&key), None),
    );
    spec.check(
        "GET",
        doc,
        &q.request(
            "GET",
            &(doc_path(&notes_id, &report) + "?page_start=2&max_chars=5"),
            Some(&key),
            None,
        ),
    );
    spec.check(
        "GET",
        doc,
        &q.request(
            "GET",
            &(doc_path(&notes_id, &report) + "?page_start=0"),
            Some(&key),
            None,
        ),
    );
    spec.check(
        "GET",
        doc,
        &q.request("GET", &doc_path(&notes_id, "nope"), Some(&key), None),
    );
    spec.check(
        "GET",
        doc,
        &q.request("GET", &doc_path(&mail_id, &inbox), Some(&selected), None),
    );
    spec.check(
        "GET",
        doc,
        &q.request("GET", &doc_path("a.b", "c"), Some(&key), None),
    );
    spec.check(
        "GET",
        doc,
        &q.request("POST", &doc_path(&notes_id, &report), Some(&key), None),
    );

    let file = "/api/v1/connectors/{connector_id}/docs/{doc_id}/file";
    let file_path = doc_path(&notes_id, &report) + "/file";
    let whole = q.request("GET", &file_path, Some(&key), None);
    spec.check("GET", file, &whole);
    let etag = whole.header("etag").expect("etag").to_owned();
    spec.check(
        "GET",
        file,
        &q.request_with(
            "GET",
            &file_path,
            Some(&key),
            None,
            &[("Range", "bytes=0-3")],
        ),
    );
    spec.check(
        "GET",
        file,
        &q.request_with(
            "GET",
            &file_path,
            Some(&key),
            None,
            &[("If-None-Match", &etag)],
        ),
    );
    spec.check(
        "GET",
        file,
        &q.request_with(
            "GET",
            &file_path,
            Some(&key),
            None,
            &[("Range", "bytes=99999999-")],
        ),
    );
    spec.check(
        "GET",
        file,
        &q.request(
            "GET",
            &(doc_path(&notes_id, "nope") + "/file"),
            Some(&key),
            None,
        ),
    );

    let preview = "/api/v1/connectors/{connector_id}/docs/{doc_id}/pages/{page}/preview";
    let preview_path = doc_path(&notes_id, &report) + "/pages/1/preview?width=300";
    let png = q.request("GET", &preview_path, Some(&key), None);
    spec.check("GET", preview, &png);
    let json_answer = q.request_with(
        "GET",
        &preview_path,
        Some(&key),
        None,
        &[("Accept", "application/json")],
    );
    spec.check("GET", preview, &json_answer);
    assert_eq!(json_answer.status, 200, "{}", json_answer.text());
    let etag = png.header("etag").expect("etag").to_owned();
    spec.check(
        "GET",
        preview,
        &q.request_with(
            "GET",
            &preview_path,
            Some(&key),
            None,
            &[("If-None-Match", &etag)],
        ),
    );
    let past = doc_path(&notes_id, &report) + "/pages/99/preview";
    spec.check("GET", preview, &q.request("GET", &past, Some(&key), None));

    spec.check("GET", "/healthz", &q.request("GET", "/healthz", None, None));
    spec.check("GET", "/readyz", &q.request("GET", "/readyz", None, None));
    spec.check("GET", "/api/v1/openapi.json", &served);
}
