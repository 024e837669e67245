//! `GET /api/v1/connectors/{connector_id}/docs/{doc_id}`: the stored text of a document, whole
//! or in parts (pages, a character limit). No plugin is called.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use quarry_core::{ConnectorId, DocId, ErrorKind, split_pages};
use quarry_index::IndexDoc;
use serde_json::json;

use crate::error::ApiError;
use crate::frame::{RequestId, json};
use crate::guard::{Read, guarded};
use crate::input::param_integer;
use crate::shape::doc_fields;
use crate::{AppState, PathIds, served_connector};

/// Largest value of `page_start`, `page_end` and `max_chars` accepted.
const MAX_PARAM: u64 = 1 << 31;

pub(crate) async fn get(
    State(state): State<Arc<AppState>>,
    Extension(request_id): Extension<RequestId>,
    path: Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let endpoint = "GET /api/v1/connectors/{connector_id}/docs/{doc_id}";
    let ids = PathIds::from(path);
    let connector = ids.connector.clone();
    guarded(
        &state,
        &headers,
        &request_id,
        endpoint,
        connector.as_deref(),
        |_, state| async move {
            let allowed = ["page_start", "page_end", "max_chars"];
            let (connector_id, doc_id, (page_start, page_end, max_chars)) =
                ids.check(query.as_deref(), &allowed, |params, problems| {
                    let page_start = param_integer(params, "page_start", 1, MAX_PARAM, problems);
                    let page_end = param_integer(params, "page_end", 1, MAX_PARAM, problems);
                    let max_chars = param_integer(params, "max_chars", 1, MAX_PARAM, problems);
                    if let (Some(a), Some(b)) = (page_start, page_end)
                        && a > b
                    {
                        problems.add(
                            "page_end",
                            "must not be before page_start",
                            format!("page_end ({b}) must not be before page_start ({a})"),
                        );
                    }
                    (page_start, page_end, max_chars)
                })?;
            let read = Read::document(&connector_id, &doc_id);
            let pages = Pages {
                start: page_start,
                end: page_end,
                max_chars,
            };
            let body = read_document(&state, &connector_id, &doc_id, pages).await?;
            Ok((json(StatusCode::OK, &body), read))
        },
    )
    .await
}

/// What of a document's text is asked for.
#[derive(Clone, Copy)]
struct Pages {
    start: Option<u64>,
    end: Option<u64>,
    max_chars: Option<u64>,
}

/// The document's answer, or 404 for an unknown connector or document. Reading and rendering
/// run on a blocking thread that holds one of the service's read turns until they end.
async fn read_document(
    state: &Arc<AppState>,
    connector: &ConnectorId,
    doc: &DocId,
    pages: Pages,
) -> Result<serde_json::Value, ApiError> {
    served_connector(state, connector).await?;
    let turn = state.admission.read_turn().await?;
    let index = state.index.clone();
    let (c, d) = (connector.clone(), doc.clone());
    tokio::task::spawn_blocking(move || {
        let _turn = turn;
        let found = index
            .document(&c, &d)
            .map_err(|e| ApiError::internal("reading a document", &e))?;
        found
            .map(|doc| render(&doc, pages.start, pages.end, pages.max_chars))
            .transpose()
    })
    .await
    .map_err(|e| ApiError::internal("document task", &e))??
    .ok_or_else(|| {
        ApiError::new(
            ErrorKind::NotFound,
            format!("connector {connector} has no document with id {doc}"),
        )
    })
}

fn render(
    doc: &IndexDoc,
    page_start: Option<u64>,
    page_end: Option<u64>,
    max_chars: Option<u64>,
) -> Result<serde_json::Value, ApiError> {
    let pages = split_pages(&doc.text, &doc.page_starts);
    let page_count = pages.len() as u64;
    let first = page_start.unwrap_or(1);
    let last = page_end.unwrap_or(page_count).min(page_count);
    if first > page_count {
        return Err(ApiError::validation(
            format!("page_start is {first}, but this document has {page_count} page(s)"),
            vec![crate::input::detail(
                "page_start",
                &format!("must be at most the page count, {page_count}"),
            )],
        ));
    }
    let selected: String = pages[(first - 1) as usize..last as usize].concat();
    let total_chars = selected.chars().count() as u64;
    let (content, truncated) = match max_chars {
        Some(max) if max < total_chars => (
            selected
                .chars()
                .take(usize::try_from(max).unwrap_or(usize::MAX))
                .collect(),
            true,
        ),
        _ => (selected, false),
    };
    let metadata: BTreeMap<&str, &str> = doc
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut fields = doc_fields(&doc.info, None);
    for (name, value) in [
        ("content", json!(content)),
        ("metadata", json!(metadata)),
        ("page_count", json!(page_count)),
        ("page_start", json!(first)),
        ("page_end", json!(last)),
        ("total_chars", json!(total_chars)),
        ("truncated", json!(truncated)),
    ] {
        fields.insert(name.into(), value);
    }
    Ok(serde_json::Value::Object(fields))
}
