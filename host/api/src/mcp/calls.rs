//! One tool call: the same checks as a data route (authentication and counting, sharing, quota,
//! the integration's bounds), then the route's own code, answered as structured content (the
//! route's JSON) and text; refusals are tool errors that say what to do. Every authenticated call
//! is audited as `mcp:<tool>`.

use std::sync::{Arc, OnceLock};

use axum::http::HeaderMap;
use quarry_core::ErrorKind;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Resource};
use serde::Serialize;
use serde_json::Value;

use super::text;
use super::tools::{LIST_CONNECTORS, READ_DOCUMENT, SEARCH};
use crate::error::ApiError;
use crate::extractors::guard::{Caller, Outcome, Read};
use crate::extractors::input::Fields;
use crate::routes::{connectors, docs, search};
use crate::state::AppState;
use crate::views::ErrorEnvelope;

/// The `_meta` key of a tool error's REST error envelope.
pub(crate) const ERROR_META: &str = "quarry/error";

/// Who calls and how its answers reach it.
pub(crate) struct CallContext {
    /// The request's headers (the key is in `Authorization`).
    pub headers: HeaderMap,
    /// Its id, for the audit log and error answers.
    pub request_id: String,
    /// The base URL original files are linked under, when a server serves them.
    pub file_base: Option<String>,
}

/// What a tool answered and what it read.
struct Answer {
    result: CallToolResult,
    read: Read,
}

/// Runs the tool `tool` (a catalogue name) with `arguments`.
pub(crate) async fn run(
    state: &Arc<AppState>,
    context: CallContext,
    tool: &str,
    arguments: JsonObject,
) -> CallToolResult {
    // The connector a call names is checked against sharing as the route's path is.
    let named = (tool == READ_DOCUMENT)
        .then(|| arguments.get("connector_id").and_then(Value::as_str))
        .flatten()
        .map(str::to_owned);
    let account = OnceLock::new();
    let outcome = async {
        let caller = Caller::admit(state, &context.headers, named, &account).await?;
        match tool {
            SEARCH => search_call(state, &caller, &arguments).await,
            READ_DOCUMENT => read_call(state, &arguments, context.file_base.as_deref()).await,
            LIST_CONNECTORS => list_call(state, &caller, &arguments).await,
            _ => Err(ApiError::internal("tool call", &"a tool without code")),
        }
    }
    .await;
    let (answer, status) = match outcome {
        Ok(answer) => (answer, 200),
        Err(error) => {
            let status = error.kind.status();
            let result = refused(&error, &context.request_id);
            let read = Read::default();
            (Answer { result, read }, status)
        }
    };
    if let Some(account) = account.get() {
        account.audit(
            state,
            Outcome {
                endpoint: format!("mcp:{tool}"),
                request_id: context.request_id,
                read: answer.read,
                bytes: size(&answer.result),
                status,
            },
        );
    }
    answer.result
}

async fn search_call(
    state: &Arc<AppState>,
    caller: &Caller,
    arguments: &JsonObject,
) -> Result<Answer, ApiError> {
    let answer = search::answer(state, caller.sharing(), arguments).await?;
    let offset = arguments.get("offset").and_then(Value::as_u64).unwrap_or(0);
    let text = text::search(&answer, offset);
    Ok(Answer {
        result: structured(&answer, vec![ContentBlock::text(text)])?,
        read: Read::default(),
    })
}

async fn read_call(
    state: &Arc<AppState>,
    arguments: &JsonObject,
    file_base: Option<&str>,
) -> Result<Answer, ApiError> {
    let (connector, doc, pages) = docs::from_object(arguments)?;
    let document = docs::read_document(state, &connector, &doc, pages).await?;
    let file_url =
        file_base.map(|base| format!("{base}/api/v1/connectors/{connector}/docs/{doc}/file"));
    let mut content = vec![ContentBlock::text(text::document(
        &document,
        file_url.as_deref(),
    ))];
    if let Some(url) = file_url {
        let d = &document.doc;
        content.push(ContentBlock::resource_link(
            Resource::new(url, d.title.clone())
                .with_mime_type(d.mime_type.clone())
                .with_size(d.size_bytes)
                .with_description(
                    "The original file: GET it over HTTP with the same Authorization header",
                ),
        ));
    }
    Ok(Answer {
        result: structured(&document, content)?,
        read: Read::document(&connector, &doc),
    })
}

async fn list_call(
    state: &Arc<AppState>,
    caller: &Caller,
    arguments: &JsonObject,
) -> Result<Answer, ApiError> {
    let mut f = Fields::new(arguments, "");
    f.reject_unknown(&[]);
    f.problems.finish()?;
    let list = connectors::listed(state, caller.sharing()).await?;
    let text = text::connectors(&list);
    Ok(Answer {
        result: structured(&list, vec![ContentBlock::text(text)])?,
        read: Read::default(),
    })
}

/// A successful result: `value` as structured content beside `content`.
fn structured(
    value: &impl Serialize,
    content: Vec<ContentBlock>,
) -> Result<CallToolResult, ApiError> {
    let value = serde_json::to_value(value).map_err(|e| ApiError::internal("tool answer", &e))?;
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(value);
    Ok(result)
}

/// A refusal as a tool error. Its text starts with the API code and message and says what the
/// agent can do about it; the REST error envelope goes in `_meta` under [`ERROR_META`], never in
/// `structuredContent`, which clients check against the tool's output schema (docs/mcp.md).
fn refused(error: &ApiError, request_id: &str) -> CallToolResult {
    let body = ErrorEnvelope::of(error, request_id);
    let mut text = format!(
        "{}: {} (request id {})",
        body.error.code, body.error.message, body.error.request_id
    );
    for detail in &body.error.details {
        text.push_str(&format!("\n- {}: {}", detail.field, detail.issue));
    }
    text.push_str("\n\n");
    text.push_str(advice(error.kind));
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    if let Ok(envelope) = serde_json::to_value(&body) {
        let mut meta = JsonObject::new();
        meta.insert(ERROR_META.to_owned(), envelope);
        result.meta = Some(MetaObject(meta));
    }
    result
}

/// What an agent can do about an error of `kind`.
fn advice(kind: ErrorKind) -> &'static str {
    match kind.code().as_str() {
        "UNAUTHORIZED" => {
            "The API key in this MCP configuration is not valid: it was revoked, rotated or \
             mistyped. Ask the user to create or rotate the integration's key in Quarry's \
             settings and put the new key in the MCP configuration."
        }
        "DATA_SHARING_DECLINED" => {
            "Tell the user: this data is not shared with you. They can change what this \
             integration may read in Quarry's settings. Do not retry until they have."
        }
        "QUOTA_EXCEEDED" => {
            "Wait as the message says before calling again: a rate bound clears within \
             seconds; a used-up monthly quota resets at the time it names, or the user can \
             raise it in Quarry's settings."
        }
        "RESOURCE_NOT_FOUND" => {
            "The connector or document is gone or was never there: search again, or call \
             list_connectors for the current ids."
        }
        "REQUEST_VALIDATION_FAILED" => "Fix the arguments named above and call again.",
        _ => {
            "Quarry failed to answer; try again shortly. If it keeps failing, tell the user \
              the request id above so they can find it in Quarry's log."
        }
    }
}

/// Bytes of a result as sent, about (its text, structured content and `_meta`), counted
/// without writing the JSON anywhere.
fn size(result: &CallToolResult) -> u64 {
    let text: usize = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.len()))
        .sum();
    let mut counter = Counter(0);
    if let Some(value) = &result.structured_content {
        let _ = serde_json::to_writer(&mut counter, value);
    }
    if let Some(meta) = &result.meta {
        let _ = serde_json::to_writer(&mut counter, &meta.0);
    }
    (text + counter.0) as u64
}

/// A writer that only counts.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
