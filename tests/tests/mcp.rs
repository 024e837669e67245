//! The MCP server against independent clients, both official MCP SDKs (Python and TypeScript):
//! over Streamable HTTP at `/mcp` and over stdio (`quarry mcp`), the real binary over folders
//! indexed by the real folder plugin. Tools answer as the REST routes do, refuse as they do
//! (tool errors every client reads, the TypeScript SDK checking each answer against the tool's
//! output schema), and are audited.

use quarry_tests::corpus;
use quarry_tests::mcp::{
    Sdk, call, error_code, error_envelope, http_plan, over_http, over_stdio, results, run_with,
};
use quarry_tests::quarry::Quarry;
use serde_json::{Value, json};

/// A server over "Notes" and "Mail", synced; their ids.
fn world() -> (Quarry, String, String) {
    let mut q = Quarry::new();
    let ids = q.serve_folders(&[("Notes", corpus::notes()), ("Mail", corpus::mail())]);
    (q, ids[0].clone(), ids[1].clone())
}

/// The result of `path` among a search result's structured results.
fn result_for(result: &Value, path: &str) -> Value {
    result["structuredContent"]["results"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["path"] == path).cloned())
        .unwrap_or_else(|| panic!("{path} not in {result}"))
}

fn detail_fields(result: &Value) -> Vec<String> {
    let details = error_envelope(result)["error"]["details"].as_array();
    let mut fields: Vec<String> = details
        .into_iter()
        .flatten()
        .filter_map(|d| d["field"].as_str().map(str::to_owned))
        .collect();
    fields.sort();
    fields
}

/// The audit log of integration `name`, as `(endpoint, status)`, oldest first, once it holds
/// `expected` entries (the audit writer stores entries in batches; up to 10 s).
fn audited(q: &Quarry, name: &str, expected: usize) -> Vec<(String, u64)> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let entries = q.cli_json(&["activity", "--integration", name, "--json"]);
        let mut seen: Vec<(String, u64)> = entries
            .as_array()
            .unwrap_or_else(|| panic!("activity: {entries}"))
            .iter()
            .map(|e| {
                let endpoint = e["endpoint"].as_str().unwrap_or_default().to_owned();
                (endpoint, e["status"].as_u64().unwrap_or_default())
            })
            .collect();
        if seen.len() >= expected || std::time::Instant::now() > deadline {
            seen.reverse();
            return seen;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn tools_answer_as_the_rest_routes_do_and_a_result_is_read_by_its_page() {
    let (q, notes, _) = world();
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    for sdk in Sdk::BOTH {
        answers_as_the_rest_routes(sdk, &q, &key, &notes);
    }
}

fn answers_as_the_rest_routes(sdk: Sdk, q: &Quarry, key: &str, notes: &str) {
    let report = run_with(
        sdk,
        &http_plan(
            q,
            Some(key),
            json!([
                {"op": "list_tools"},
                call("list_connectors", json!({})),
                call("search", json!({"query": "spring", "semantic_search": false})),
            ]),
        ),
    );
    assert_eq!(report["server"]["name"], "quarry", "{report}");
    assert!(
        report["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("list_connectors")),
        "{report}"
    );
    let steps = results(&report);

    // The catalogue: three read-only tools, described for agents, with the contract's schemas.
    let tools = steps[0]["tools"].as_array().expect("tools");
    let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["list_connectors", "read_document", "search"]);
    for tool in tools {
        assert!(
            tool["description"].as_str().is_some_and(|d| d.len() > 200),
            "{tool}"
        );
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
        assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
    }
    let openapi = q.request("GET", "/api/v1/openapi.json", None, None).json();
    let rest_search = &openapi["components"]["schemas"]["SearchRequest"]["properties"];
    let search_tool = tools
        .iter()
        .find(|t| t["name"] == "search")
        .expect("search");
    for (name, schema) in rest_search.as_object().expect("properties") {
        if schema.get("$ref").is_none() {
            assert_eq!(
                &search_tool["inputSchema"]["properties"][name], schema,
                "{name}"
            );
        }
    }

    // Structured content is the REST answer; the SDK checked it against the output schema.
    let listed = &steps[1];
    assert_eq!(listed["schema_valid"], true, "{listed}");
    let rest = q
        .request("GET", "/api/v1/connectors", Some(key), None)
        .json();
    assert_eq!(listed["structuredContent"], rest);
    assert!(
        listed["text"]
            .as_str()
            .is_some_and(|t| t.contains("Notes") && t.contains(notes))
    );

    let found = &steps[2];
    assert_eq!(found["schema_valid"], true, "{found}");
    let rest = q.search_ok(key, json!({"query": "spring", "semantic_search": false}));
    let mut structured = found["structuredContent"].clone();
    structured["took_ms"] = rest["took_ms"].clone();
    assert_eq!(structured, rest);
    let hit = result_for(found, "report.pdf");
    assert_eq!(hit["page"], 2, "{hit}");
    let doc_id = hit["doc_id"].as_str().expect("doc_id").to_owned();
    let text = found["text"].as_str().expect("text");
    assert!(
        text.contains(&format!("doc_id {doc_id}, page_start 2, page_end 2")),
        "the text says how to read the page: {text}"
    );

    // Read just that page, as the text said; the original is linked, not inlined.
    let args = json!({"connector_id": notes, "doc_id": doc_id, "page_start": 2, "page_end": 2});
    let steps = over_http(sdk, q, key, json!([call("read_document", args)]));
    let read = &steps[0];
    assert_eq!(read["schema_valid"], true, "{read}");
    let doc = &read["structuredContent"];
    assert_eq!(
        (doc["page_start"].clone(), doc["page_count"].clone()),
        (json!(2), json!(3))
    );
    let content = doc["content"].as_str().expect("content");
    assert!(
        content.contains("Costs fell sharply") && !content.contains("outlook"),
        "{content}"
    );
    let link = read["content"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "resource_link"))
        .unwrap_or_else(|| panic!("a link to the original: {read}"));
    let url = link["uri"].as_str().expect("uri");
    assert_eq!(link["mimeType"], "application/pdf");
    assert!(link["size"].as_u64().is_some_and(|s| s > 0));
    assert!(read["text"].as_str().is_some_and(|t| t.contains(url)));
    let path = url
        .strip_prefix(&q.url())
        .expect("the link is this server's");
    let file = q.request("GET", path, Some(key), None);
    assert_eq!(file.status, 200);
    assert!(file.body.starts_with(b"%PDF"));
}

#[test]
fn invalid_arguments_are_tool_errors_naming_each_field() {
    let (q, notes, _) = world();
    for sdk in Sdk::BOTH {
        invalid_arguments_are_refused(sdk, &q, &notes);
    }
}

fn invalid_arguments_are_refused(sdk: Sdk, q: &Quarry, notes: &str) {
    let name = format!("Agent-{sdk:?}");
    let key = q.integration(&name, "all", &["--quota", "unlimited"]);
    let steps = over_http(
        sdk,
        q,
        &key,
        json!([
            call("search", json!({"query": "x", "limit": 0, "bogus": 1})),
            call("read_document", json!({})),
            call(
                "read_document",
                json!({"connector_id": notes, "doc_id": "nothing_here"})
            ),
            call("list_connectors", json!({"verbose": true})),
            call("no_such_tool", json!({})),
        ]),
    );
    assert_eq!(error_code(&steps[0]), "REQUEST_VALIDATION_FAILED");
    assert_eq!(detail_fields(&steps[0]), ["bogus", "limit"]);
    assert!(
        steps[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("limit")),
        "{}",
        steps[0]
    );
    assert_eq!(error_code(&steps[1]), "REQUEST_VALIDATION_FAILED");
    assert_eq!(detail_fields(&steps[1]), ["connector_id", "doc_id"]);
    assert_eq!(error_code(&steps[2]), "RESOURCE_NOT_FOUND");
    assert_eq!(error_code(&steps[3]), "REQUEST_VALIDATION_FAILED");
    assert!(
        steps[4]["protocol_error"]
            .as_str()
            .is_some_and(|e| e.contains("no_such_tool")),
        "an unknown tool is a protocol error: {}",
        steps[4]
    );
    let audit = audited(q, &name, 4);
    assert_eq!(
        audit,
        [
            ("mcp:search".to_owned(), 400),
            ("mcp:read_document".to_owned(), 400),
            ("mcp:read_document".to_owned(), 404),
            ("mcp:list_connectors".to_owned(), 400),
        ],
        "every tool call is audited; an unknown tool is not a call"
    );
}

#[test]
fn sharing_quota_and_keys_refuse_tool_calls_as_the_api_does() {
    let (q, notes, mail) = world();
    for sdk in Sdk::BOTH {
        refuses_as_the_api_does(sdk, &q, &notes, &mail);
    }
}

fn refuses_as_the_api_does(sdk: Sdk, q: &Quarry, notes: &str, mail: &str) {
    let named = |name: &str| format!("{name}-{sdk:?}");
    let mail_doc = q.keyword_search(
        &q.integration(&named("All"), "all", &["--quota", "unlimited"]),
        "friday",
        10,
    )["results"][0]["doc_id"]
        .as_str()
        .expect("a Mail document")
        .to_owned();

    // Selected: only Notes is seen; a Mail document is refused before anything is read.
    let selected = q.integration(&named("NotesOnly"), "Notes", &["--quota", "unlimited"]);
    let steps = over_http(
        sdk,
        q,
        &selected,
        json!([
            call("list_connectors", json!({})),
            call(
                "search",
                json!({"query": "revenue", "semantic_search": false, "limit": 50})
            ),
            call(
                "read_document",
                json!({"connector_id": mail, "doc_id": mail_doc})
            ),
        ]),
    );
    let seen: Vec<&str> = steps[0]["structuredContent"]["connectors"]
        .as_array()
        .expect("connectors")
        .iter()
        .filter_map(|c| c["connector_id"].as_str())
        .collect();
    assert_eq!(seen, [notes]);
    let hits = steps[1]["structuredContent"]["results"]
        .as_array()
        .expect("results");
    assert!(!hits.is_empty() && hits.iter().all(|h| h["connector_id"] == notes));
    assert_eq!(error_code(&steps[2]), "DATA_SHARING_DECLINED");
    assert!(
        steps[2]["text"]
            .as_str()
            .is_some_and(|t| t.contains("settings")),
        "{}",
        steps[2]
    );

    // Declined: every call is refused, in words the agent can pass on.
    let declined = q.integration(&named("Nobody"), "none", &["--quota", "unlimited"]);
    for step in over_http(
        sdk,
        q,
        &declined,
        json!([
            call("search", json!({"query": "revenue"})),
            call("list_connectors", json!({}))
        ]),
    ) {
        assert_eq!(error_code(&step), "DATA_SHARING_DECLINED");
    }
    assert_eq!(
        audited(q, &named("Nobody"), 2),
        [
            ("mcp:search".to_owned(), 403),
            ("mcp:list_connectors".to_owned(), 403)
        ]
    );

    // Quota: each tool call is one request; the third of a quota of two is refused.
    let tiny = q.integration(&named("Tiny"), "all", &["--quota", "2"]);
    let steps = over_http(
        sdk,
        q,
        &tiny,
        json!([
            call("list_connectors", json!({})),
            call("search", json!({"query": "revenue"})),
            call("search", json!({"query": "revenue"})),
        ]),
    );
    assert_eq!(steps[0]["isError"], false);
    assert_eq!(steps[1]["isError"], false);
    assert_eq!(error_code(&steps[2]), "QUOTA_EXCEEDED");
    assert!(
        steps[2]["text"]
            .as_str()
            .is_some_and(|t| t.contains("resets at")),
        "{}",
        steps[2]
    );

    // A revoked key: the client connects, and its calls say the key is no longer valid.
    let gone = q.integration(&named("Gone"), "all", &[]);
    q.cli_ok(&["integration", "revoke", &named("Gone")]);
    let steps = over_http(
        sdk,
        q,
        &gone,
        json!([call("search", json!({"query": "revenue"}))]),
    );
    let step = &steps[0];
    assert_eq!(error_code(step), "UNAUTHORIZED");
    assert!(
        step["text"].as_str().is_some_and(|t| t.contains("revoked")),
        "{step}"
    );

    // No key at all: refused before the protocol, with 401.
    let report = run_with(sdk, &http_plan(q, None, json!([])));
    assert!(
        report["error"].as_str().is_some_and(|e| !e.is_empty()),
        "a client without a key cannot connect: {report}"
    );
    let bare = q.request_with(
        "POST",
        "/mcp",
        None,
        Some(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
        &[("accept", "application/json, text/event-stream")],
    );
    assert_eq!(bare.status, 401);
    assert_eq!(bare.json()["error"]["code"], "UNAUTHORIZED");
    assert_eq!(bare.header("www-authenticate"), Some("Bearer"));
}

#[test]
fn stdio_relays_to_the_running_server_or_serves_the_folder_itself() {
    for sdk in Sdk::BOTH {
        relays_or_serves_over_stdio(sdk);
    }
}

fn relays_or_serves_over_stdio(sdk: Sdk) {
    let (mut q, notes, _) = world();
    let key = q.integration("Desktop", "all", &["--quota", "unlimited"]);
    let steps = || {
        json!([
            {"op": "list_tools"},
            call("search", json!({"query": "spring", "semantic_search": false})),
        ])
    };
    let relayed = over_stdio(sdk, &q, &key, steps());
    assert_eq!(relayed[0]["tools"].as_array().map(Vec::len), Some(3));
    let hit = result_for(&relayed[1], "report.pdf");
    assert_eq!(hit["page"], 2);
    let doc_id = hit["doc_id"].as_str().expect("doc_id").to_owned();
    let read = json!({"connector_id": notes, "doc_id": doc_id, "page_start": 2});
    let through_server = over_stdio(sdk, &q, &key, json!([call("read_document", read.clone())]));
    // Only a server links the original file: these calls went through it.
    assert!(
        through_server[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains(&q.url())),
        "{}",
        through_server[0]
    );
    assert_eq!(
        audited(&q, "Desktop", 2).len(),
        2,
        "the server audited both calls"
    );

    // No server: `quarry mcp` reads the data folder itself, with the same checks.
    q.stop();
    let here = over_stdio(sdk, &q, &key, json!([call("read_document", read.clone())]));
    assert_eq!(here[0]["schema_valid"], true, "{}", here[0]);
    let content = here[0]["structuredContent"]["content"]
        .as_str()
        .expect("content");
    assert!(
        content.contains("Costs fell sharply") && !content.contains("revenue"),
        "{content}"
    );
    assert!(
        here[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("while its server runs"))
    );
    let declined = q.integration("Nobody", "none", &[]);
    let refused = over_stdio(
        sdk,
        &q,
        &declined,
        json!([call("search", json!({"query": "x"}))]),
    );
    assert_eq!(error_code(&refused[0]), "DATA_SHARING_DECLINED");
    let tiny = q.integration("Tiny", "all", &["--quota", "1"]);
    let twice = json!([
        call("list_connectors", json!({})),
        call("list_connectors", json!({}))
    ]);
    let metered = over_stdio(sdk, &q, &tiny, twice);
    assert_eq!(metered[0]["isError"], false);
    assert_eq!(error_code(&metered[1]), "QUOTA_EXCEEDED");
    q.cli_ok(&["integration", "revoke", "Desktop"]);
    let revoked = over_stdio(sdk, &q, &key, steps());
    assert_eq!(error_code(&revoked[1]), "UNAUTHORIZED");
    assert_eq!(
        audited(&q, "Desktop", 3).len(),
        3,
        "the folder's own calls are audited too"
    );
}

/// The JSON code blocks of a Markdown text that configure MCP servers.
fn mcp_configurations(markdown: &str) -> Vec<Value> {
    markdown
        .split("```json\n")
        .skip(1)
        .filter_map(|block| serde_json::from_str(block.split("\n```").next()?).ok())
        .filter(|v: &Value| v.get("mcpServers").is_some())
        .collect()
}

#[test]
fn the_agent_guide_is_served_to_the_integration_and_its_mcp_configurations_connect() {
    let (q, _, _) = world();
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    let guide = q.request("GET", "/api/v1/agent-guide", Some(&key), None);
    assert_eq!(guide.status, 200);
    assert_eq!(
        guide.header("content-type"),
        Some("text/markdown; charset=utf-8")
    );
    assert!(guide.header("x-quota-remaining").is_none(), "not counted");
    let text = guide.text();
    assert!(
        text.contains("## Guide for agents") && text.contains("page_start"),
        "{text}"
    );
    assert!(!text.contains(&key), "the key is never echoed");

    // Both configurations work as written, with the key put where the placeholder is.
    let configs = mcp_configurations(&text.replace("$QUARRY_API_KEY", &key));
    assert_eq!(configs.len(), 2, "{text}");
    let http = &configs[0]["mcpServers"]["quarry"];
    let plan = json!({
        "transport": "http",
        "url": http["url"],
        "headers": http["headers"],
        "steps": [call("list_connectors", json!({}))],
    });
    for sdk in Sdk::BOTH {
        assert_eq!(results(&run_with(sdk, &plan))[0]["isError"], false);
    }
    let stdio = &configs[1]["mcpServers"]["quarry"];
    let mut env = stdio["env"].clone();
    env["PATH"] = json!(std::env::var("PATH").unwrap_or_default());
    let plan = json!({
        "transport": "stdio",
        "command": stdio["command"],
        "args": stdio["args"],
        "env": env,
        "steps": [call("search", json!({"query": "revenue"}))],
    });
    for sdk in Sdk::BOTH {
        let found = results(&run_with(sdk, &plan));
        assert!(
            found[0]["structuredContent"]["total"]
                .as_u64()
                .is_some_and(|t| t > 0),
            "{sdk:?}: {}",
            found[0]
        );
    }

    // A declined integration reads why; a request without a valid key does not.
    let declined = q.integration("Nobody", "none", &[]);
    let theirs = q.request("GET", "/api/v1/agent-guide", Some(&declined), None);
    assert_eq!(theirs.status, 200);
    assert!(theirs.text().contains("DECLINED"));
    let anonymous = q.request("GET", "/api/v1/agent-guide", None, None);
    assert_eq!(anonymous.status, 401);
}

#[test]
fn mcp_requests_are_bounded_as_api_requests_are() {
    let mut q = Quarry::new();
    let notes = q.scratch("notes");
    corpus::write(&notes, &corpus::notes());
    q.add_folder("Notes", &notes);
    // One request a second (bursts of two): the integration's rate bound, per tool call.
    q.start_with_env(&[("QUARRY_RATE_LIMIT", "1")]);
    q.wait_synced();
    let key = q.integration("Agent", "all", &["--quota", "unlimited"]);
    let mcp_headers = [("accept", "application/json, text/event-stream")];

    let huge = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": "x".repeat(2 << 20)}}});
    let refused = q.request_with("POST", "/mcp", Some(&key), Some(&huge), &mcp_headers);
    assert_eq!(refused.status, 413, "a body over 1 MiB is refused unread");
    let stream = q.request_with("GET", "/mcp", Some(&key), None, &mcp_headers);
    assert_eq!(stream.status, 405, "no session, no stream to hold open");
    assert!(stream.header("allow").is_some_and(|a| a.contains("POST")));
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let unacceptable = q.request("POST", "/mcp", Some(&key), Some(&ping));
    assert_eq!(unacceptable.status, 400, "{}", unacceptable.text());
    // The transport's refusals come in the API's envelope, with its code and the request id.
    for answer in [&refused, &stream, &unacceptable] {
        let body = answer.json();
        assert_eq!(body["error"]["code"], "REQUEST_VALIDATION_FAILED", "{body}");
        assert_eq!(
            body["error"]["request_id"].as_str(),
            answer.header("x-request-id")
        );
    }
    assert!(
        unacceptable.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("text/event-stream"))
    );

    for sdk in Sdk::BOTH {
        rate_bound_refuses_tool_calls(sdk, &q, &key);
    }
}

/// Six tool calls in a row, past a rate of one a second: tool errors with the code and why.
fn rate_bound_refuses_tool_calls(sdk: Sdk, q: &Quarry, key: &str) {
    let calls: Vec<Value> = (0..6).map(|_| call("list_connectors", json!({}))).collect();
    let steps = over_http(sdk, q, key, Value::Array(calls));
    let bounded: Vec<&Value> = steps.iter().filter(|s| s["isError"] == true).collect();
    assert!(
        !bounded.is_empty(),
        "six calls at once exceed a rate of one a second: {steps:?}"
    );
    for step in bounded {
        assert_eq!(error_code(step), "QUOTA_EXCEEDED");
        assert!(
            step["text"]
                .as_str()
                .is_some_and(|t| t.contains("per second")),
            "{step}"
        );
    }
}
