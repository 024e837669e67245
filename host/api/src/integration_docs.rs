//! The API documentation generated for one integration: its base URL and key filled in, every
//! endpoint with its parameters, a quick-start curl line, response shapes and error codes, in
//! one Markdown text that a person or a coding agent can use as is. The settings page shows it
//! behind "Copy All"; `quarry integration docs NAME` prints it.

use std::fmt::Write;

use quarry_store::{Connector, Integration, Quota, Sharing};

/// What the documentation is generated for.
#[derive(Debug, Clone)]
pub struct DocsFor<'a> {
    /// The service's base URL (`http://127.0.0.1:4747`).
    pub base_url: &'a str,
    /// The command that serves MCP over stdio (`quarry --data-dir ... mcp`).
    pub stdio_command: &'a [String],
    /// The integration's name.
    pub integration: &'a str,
    /// The key, when it is being shown (just created or rotated); otherwise a placeholder is
    /// written and the reader is told where the key is.
    pub api_key: Option<&'a str>,
    /// The connectors the integration may read: (name, id).
    pub connectors: &'a [(String, String)],
    /// True when the user declined data sharing for this integration.
    pub declined: bool,
    /// The monthly quota in words (`10000 requests`, `unlimited`).
    pub quota: &'a str,
}

/// The documentation of `integration` served at `base_url` (and over stdio by `stdio_command`),
/// among `connectors` (all of them; those it may read are picked here), with `key` when it is
/// being shown.
pub fn docs_for_integration(
    base_url: &str,
    stdio_command: &[String],
    integration: &Integration,
    connectors: &[Connector],
    key: Option<&str>,
) -> String {
    let shared: Vec<(String, String)> = connectors
        .iter()
        .filter(|c| integration.sharing.allows(&c.id))
        .map(|c| (c.name.clone(), c.id.to_string()))
        .collect();
    let quota = match integration.quota {
        Quota::Limited(n) => format!("{n} requests"),
        Quota::Unlimited => "unlimited requests".to_owned(),
    };
    integration_docs(&DocsFor {
        base_url,
        stdio_command,
        integration: &integration.name,
        api_key: key,
        connectors: &shared,
        declined: integration.sharing == Sharing::Declined,
        quota: &quota,
    })
}

/// The placeholder written where the key goes when it is not shown.
pub const KEY_PLACEHOLDER: &str = "$QUARRY_API_KEY";

/// The quick-start query of the generated documentation.
pub const EXAMPLE_QUERY: &str = "quarterly report";

/// The documentation text (Markdown).
pub fn integration_docs(docs: &DocsFor<'_>) -> String {
    let base = docs.base_url.trim_end_matches('/');
    let key = docs.api_key.unwrap_or(KEY_PLACEHOLDER);
    let mut out = String::new();
    let _ = writeln!(out, "# Quarry search API for \"{}\"", docs.integration);
    out.push('\n');
    out.push_str(
        "Quarry searches the user's own documents (folders and other sources, called connectors) \
         on this computer. Use it to find documents by words or by meaning, read their text, and \
         download the original files.\n\n",
    );
    let _ = writeln!(out, "- Base URL: {base}/api/v1");
    match docs.api_key {
        Some(_) => {
            let _ = writeln!(
                out,
                "- API key: {key}  (shown once: store it as a secret; never put it in code you share)"
            );
        }
        None => {
            let _ = writeln!(
                out,
                "- API key: not shown here (keys are shown once, when created). Put yours in the \
                 environment variable QUARRY_API_KEY, or rotate the key in Quarry's settings to get a new one."
            );
        }
    }
    let _ = writeln!(
        out,
        "- Authentication: send `Authorization: Bearer {key}` with every request."
    );
    let _ = writeln!(
        out,
        "- Quota: {} per calendar month (UTC). Every answered request counts, except 401s.",
        docs.quota
    );
    if docs.declined {
        out.push_str(
            "- Data sharing: DECLINED. The user has not shared any data with this integration: \
             every data request answers 403 DATA_SHARING_DECLINED until they change it in Quarry's settings.\n",
        );
    } else if docs.connectors.is_empty() {
        out.push_str("- Connectors shared: none yet.\n");
    } else {
        let names: Vec<String> = docs
            .connectors
            .iter()
            .map(|(name, id)| format!("{name} ({id})"))
            .collect();
        let _ = writeln!(out, "- Connectors shared: {}", names.join(", "));
    }
    out.push_str("\n## Quick start\n\n");
    let _ = writeln!(
        out,
        "curl -s -X POST '{base}/api/v1/search' -H \"Authorization: Bearer {key}\" -H 'Content-Type: application/json' -d '{{\"query\": \"{EXAMPLE_QUERY}\", \"limit\": 5}}'"
    );
    out.push('\n');
    mcp_setup(&mut out, base, docs.stdio_command, key);
    out.push_str(AGENT_GUIDE);
    out.push_str(BODY);
    out
}

/// The MCP client configuration of the service at `base_url` with `key`, over HTTP (the shape
/// Claude Desktop, Cursor and VS Code read).
pub fn mcp_http_config(base_url: &str, key: &str) -> serde_json::Value {
    let base = base_url.trim_end_matches('/');
    serde_json::json!({"mcpServers": {"quarry": {
        "type": "http",
        "url": format!("{base}/mcp"),
        "headers": {"Authorization": format!("Bearer {key}")},
    }}})
}

/// The MCP configuration for the common clients: the HTTP endpoint with the key, and the
/// stdio command.
fn mcp_setup(out: &mut String, base: &str, stdio: &[String], key: &str) {
    let http = mcp_http_config(base, key);
    let (command, args) = stdio
        .split_first()
        .map_or(("quarry", &[][..]), |(c, a)| (c.as_str(), a));
    let stdio = serde_json::json!({"mcpServers": {"quarry": {
        "command": command,
        "args": args,
        "env": {"QUARRY_API_KEY": key},
    }}});
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
    let _ = write!(
        out,
        "## Connect an agent over MCP

Quarry is also an MCP server (Model Context Protocol, Streamable HTTP) at {base}/mcp with the \
tools `search`, `read_document` and `list_connectors`: the same parameters, limits, answers and \
errors as the endpoints below, and each tool call counts as one request.

Claude Code:

```
claude mcp add --transport http quarry {base}/mcp --header \"Authorization: Bearer {key}\"
```

Clients configured with JSON (Claude Desktop, Cursor, VS Code, ...), over HTTP:

```json
{}
```

Clients that launch a command (stdio); `quarry mcp` goes through the running Quarry server, or \
reads the data folder itself when none runs:

```json
{}
```

",
        pretty(&http),
        pretty(&stdio)
    );
}

/// How an agent uses Quarry well; also `GET /api/v1/agent-guide` and the MCP server's
/// instructions, in short.
pub const AGENT_GUIDE: &str = r#"## Guide for agents

1. List connectors first (`list_connectors`, `GET /api/v1/connectors`): what is shared, their
   names, and whether one is still syncing (its documents may not all be there yet).
2. Turn the request into filters. "The PDF Anna sent last month": query "Anna",
   `file_extensions_filter` ["pdf"], `update_time_filter` {"from": first day of last month,
   "to": first day of this month}. "My latest notes on X": `sort_by` "update_time". A named
   source: `connector_names_filter` with its name.
3. Search with a few distinctive words (in Chinese, Japanese or Korean, any characters of a
   sentence); quote exact phrases, exclude with -word. Semantic search
   (the default) also finds passages that say it in other words. When nothing is found, drop a
   filter or try other words before concluding it is not there.
4. Page with `offset`: results come best first, at most 100 at a time; ask for the next page
   (offset + limit) only when the first did not answer the question.
5. Read only the top few documents, and only what you need: a result's `page` is where its
   snippet lies in a paged document (PDF), so read `page_start` = `page_end` = that page (and
   its neighbours if needed) rather than a whole book; `max_chars` caps the text.
6. Cite what you used by title and its `link` (the user opens it signed in to Quarry and lands
   on that page with the words highlighted; it carries no key). The original file
   is `GET .../docs/{doc_id}/file` with the same key; it is never needed to read the text.
   If you read images, `GET .../docs/{doc_id}/pages/{page}/preview` shows a PDF page or an
   image as the person sees it (a scan, a slide, a chart): PNG, or JSON with it in base64 and,
   with `q`, the boxes of the query's words on the page (`highlights`).
7. Errors say what to do: UNAUTHORIZED, ask the user for a new key; DATA_SHARING_DECLINED, tell
   the user (they share data in Quarry's settings); QUOTA_EXCEEDED, stop until the reset;
   REQUEST_VALIDATION_FAILED, fix the named field.

"#;

/// The part that is the same for every integration.
const BODY: &str = r#"Requests with a body use `Content-Type: application/json`; every answer is JSON
(`application/json; charset=utf-8`) except file downloads.

## POST /api/v1/search

Finds documents. Body fields (unknown fields are rejected):

| field | type | default | rules |
|---|---|---|---|
| query | string | required | 1 to 1,000 characters. Words, "quoted phrases" (must appear as written), -word (excluded) |
| limit | integer | 10 | 1 to 100 |
| offset | integer | 0 | 0 to 10,000 results to skip, for paging (offset + limit at most 10,100) |
| semantic_search | boolean | true | true: by meaning, fused with keyword ranking; false: exact keyword matching |
| connector_names_filter | string[] | all shared | connector names, case-insensitive; unknown names are an error that lists the known ones |
| update_time_filter | object | none | {"from"?: date, "to"?: date}, RFC 3339 or YYYY-MM-DD (UTC); from inclusive, to exclusive |
| sort_by | string | "default" | "default" (relevance) or "update_time" |
| sort_order | string | "descending" | "ascending" or "descending" |
| file_extensions_filter | string[] | all | e.g. ["pdf", "md"], no dot |

Answer 200:

```json
{ "results": [ { "connector_id": "cn_...", "connector_name": "Documents", "doc_id": "d_...",
    "title": "Quarterly report.pdf", "path": "reports/Quarterly report.pdf", "url": null,
    "mime_type": "application/pdf", "size_bytes": 482113, "update_time": "2026-10-30T09:12:44Z",
    "score": 0.83, "snippet": "revenue grew 12% ...", "highlights": [ { "start": 0, "end": 7 } ],
    "page": 3,
    "link": "http://127.0.0.1:4747/search/docs/cn_.../d_...?q=revenue&page=3" } ],
  "total": 37, "mode": "semantic", "took_ms": 4, "warnings": [] }
```

`highlights` are character offsets into `snippet`; `page` is the page the snippet lies on for
documents with pages (read it with `page_start`/`page_end`), null otherwise; `link` is where the
user sees the result (Quarry's document view at that page, the query's words highlighted; it
asks for the user's sign-in to Quarry, never for a key), to cite; `mode` is what ran ("keyword" when no
embedding model is loaded, with a warning); `total` counts matches (keyword) or candidates
(semantic).

## GET /api/v1/connectors/{connector_id}/docs/{doc_id}

The document's metadata (the fields of a search result without score, snippet, highlights), its
full extracted text in `content`, and `metadata` (an object of strings from the connector).
Query parameters, all optional: `page_start` and `page_end` (1-based, inclusive; documents with
pages such as PDFs), `max_chars` (cuts `content`). With them the answer also says `page_count`,
`truncated` and the range returned.

## GET /api/v1/connectors/{connector_id}/docs/{doc_id}/file

The original file's bytes, streamed, with `Content-Type`, `Content-Length`,
`Content-Disposition`, `ETag` and `Last-Modified`. `Range: bytes=0-1023` gets 206 with that part;
a range past the end gets 416.

## GET /api/v1/connectors/{connector_id}/docs/{doc_id}/pages/{page}/preview

One page of a document as a PNG `width` pixels wide (64 to 2000, default 800), for clients that
read images: a PDF's page, an image (page 1), or any other document's page of text laid out as
a page. With `Accept: application/json`, JSON with `page`, `page_count`, `width`, `height`,
`mime_type`, the PNG in base64 as `image`, and `highlights`: with `q=<your query>`, the boxes
`{x, y, w, h}` (pixels of the image) of its words on the page, from the page's text layer or
read by OCR on a scan. Documents whose file is not served answer 404 saying why; a page past
the last, 400.

## GET /api/v1/connectors

```json
{ "connectors": [ { "connector_id": "cn_...", "name": "Documents", "plugin": "folder@0.1.0",
    "status": "idle", "doc_count": 1532, "last_sync_time": "2026-11-21T10:00:00Z",
    "last_error": null, "progress": { "listed": 0, "indexed": 0, "failed": 0, "remaining": null } } ] }
```

`status` is idle, syncing, error or disabled. Only connectors shared with you are listed.

## Quota headers

Every authenticated answer carries `X-Quota-Limit`, `X-Quota-Remaining` and `X-Quota-Reset`
(RFC 3339 time of the next reset; limit and remaining say "unlimited" when there is no limit).

## Errors

Every error has this body; `details` only for validation errors; `request_id` is also in the
`X-Request-Id` header.

```json
{ "error": { "code": "REQUEST_VALIDATION_FAILED", "message": "limit must be an integer between 1 and 100, got 0",
    "details": [ { "field": "limit", "issue": "must be between 1 and 100" } ], "request_id": "01JD3..." } }
```

| code | status | meaning | what to do |
|---|---|---|---|
| UNAUTHORIZED | 401 | key missing, malformed, unknown, revoked or expired | check the header; ask the user for a new key |
| REQUEST_VALIDATION_FAILED | 400 (405, 413, 415) | bad JSON, wrong type, unknown field, out of range, bad id; wrong method, body over 1 MiB, body not JSON | fix the named field |
| RESOURCE_NOT_FOUND | 404 | unknown connector, document or route | search again for current ids |
| DATA_SHARING_DECLINED | 403 | the user declined sharing, or the connector is not shared with you | ask the user to share it in Quarry's settings |
| QUOTA_EXCEEDED | 429 | the monthly quota is used up | wait `Retry-After` seconds, or ask for a higher quota |
| INTERNAL_ERROR | 500 | unexpected failure | retry later; quote the request_id |

Checks run in this order: route and method, authentication, data sharing, quota, validation.
The OpenAPI 3.1 description of this API is at /api/v1/openapi.json.
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(key: Option<&str>, declined: bool) -> String {
        let connectors = vec![("Notes".to_owned(), "cn_1".to_owned())];
        integration_docs(&DocsFor {
            base_url: "http://127.0.0.1:4747/",
            stdio_command: &["/opt/quarry".to_owned(), "mcp".to_owned()],
            integration: "Agent",
            api_key: key,
            connectors: &connectors,
            declined,
            quota: "10000 requests",
        })
    }

    #[test]
    fn the_key_and_base_url_are_filled_in() {
        let text = docs(Some("qry_abc"), false);
        assert!(text.contains("Authorization: Bearer qry_abc"));
        assert!(text.contains("curl -s -X POST 'http://127.0.0.1:4747/api/v1/search'"));
        assert!(text.contains("Notes (cn_1)"));
        for endpoint in [
            "POST /api/v1/search",
            "GET /api/v1/connectors/{connector_id}/docs/{doc_id}",
            "GET /api/v1/connectors/{connector_id}/docs/{doc_id}/file",
            "GET /api/v1/connectors/{connector_id}/docs/{doc_id}/pages/{page}/preview",
            "GET /api/v1/connectors",
        ] {
            assert!(text.contains(endpoint), "{endpoint}");
        }
        for code in [
            "UNAUTHORIZED",
            "REQUEST_VALIDATION_FAILED",
            "RESOURCE_NOT_FOUND",
            "QUOTA_EXCEEDED",
            "DATA_SHARING_DECLINED",
            "INTERNAL_ERROR",
        ] {
            assert!(text.contains(code), "{code}");
        }
    }

    #[test]
    fn mcp_configurations_carry_the_endpoint_the_key_and_the_command() {
        let text = docs(Some("qry_abc"), false);
        assert!(text.contains("claude mcp add --transport http quarry http://127.0.0.1:4747/mcp"));
        let blocks: Vec<serde_json::Value> = text
            .split("```json\n")
            .skip(1)
            .filter_map(|b| serde_json::from_str(b.split("\n```").next()?).ok())
            .filter(|v: &serde_json::Value| v.get("mcpServers").is_some())
            .collect();
        assert_eq!(blocks.len(), 2, "{text}");
        let http = &blocks[0]["mcpServers"]["quarry"];
        assert_eq!(http["url"], "http://127.0.0.1:4747/mcp");
        assert_eq!(http["headers"]["Authorization"], "Bearer qry_abc");
        let stdio = &blocks[1]["mcpServers"]["quarry"];
        assert_eq!(stdio["command"], "/opt/quarry");
        assert_eq!(stdio["args"], serde_json::json!(["mcp"]));
        assert_eq!(stdio["env"]["QUARRY_API_KEY"], "qry_abc");
        assert!(text.contains("## Guide for agents"));
    }

    #[test]
    fn without_the_key_a_placeholder_is_written() {
        let text = docs(None, true);
        assert!(text.contains("Bearer $QUARRY_API_KEY"));
        assert!(!text.contains("qry_"));
        assert!(text.contains("DECLINED"));
    }
}
