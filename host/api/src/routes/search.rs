//! `POST /api/v1/search`.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use quarry_embed::Embedder;
use quarry_index::{Filters, Fusion, Ranking, SearchRequest, SemanticQuery, SortBy, SortOrder};
use quarry_store::{Connector, ConnectorStatus, Sharing};
use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::error::clip;
use crate::extractors::frame::json;
use crate::extractors::guard::Caller;
use crate::extractors::input::{Fields, JsonObject, listed};
use crate::routes::connectors::reads_scans;
use crate::state::{AppState, visible_connectors, with_read_turn};
use crate::views::{HitView, SearchAnswer};
use quarry_core::times::parse_instant;

/// The fields a search request may have.
const FIELDS: [&str; 9] = [
    "query",
    "limit",
    "semantic_search",
    "connector_names_filter",
    "update_time_filter",
    "sort_by",
    "sort_order",
    "offset",
    "file_extensions_filter",
];
/// Longest query, in characters after trimming.
pub(crate) const MAX_QUERY_CHARS: usize = 1000;
/// Results that can be paged through at most (offset plus limit).
const MAX_WINDOW: i64 = 10_100;

/// A validated search request.
struct Params {
    request: SearchRequest,
    semantic: bool,
}

pub(crate) async fn search(
    caller: Caller,
    State(state): State<Arc<AppState>>,
    JsonObject(object): JsonObject,
) -> Result<Response, ApiError> {
    let answer = answer(&state, caller.sharing(), &object).await?;
    Ok(json(StatusCode::OK, &answer))
}

/// The answer to a search request (the JSON object of `POST /search`) over the connectors
/// `sharing` lets the caller see; the MCP `search` tool answers with it too.
pub(crate) async fn answer(
    state: &Arc<AppState>,
    sharing: &Sharing,
    object: &Map<String, Value>,
) -> Result<SearchAnswer, ApiError> {
    let connectors = visible_connectors(state, sharing).await?;
    let Params {
        semantic,
        mut request,
    } = parse(object, &connectors)?;
    let query = request.query.clone();
    let started = Instant::now();
    let (index, embedder) = (state.index.clone(), state.embedder.clone());
    let (results, fallback) = with_read_turn(state, move || {
        let fallback = if semantic {
            use_semantic(embedder.as_deref(), &mut request)
        } else {
            None
        };
        index.search(&request).map(|r| (r, fallback))
    })
    .await??;
    let mode = match (semantic, &fallback) {
        (true, None) => "semantic",
        _ => "keyword",
    };
    let mut warnings = results.warnings;
    warnings.extend(fallback);
    warnings.extend(waiting_for_ocr(state, &connectors).await?);
    Ok(SearchAnswer {
        results: HitView::list(results.hits, &connectors, &state.config.public_url, &query),
        total: results.total,
        mode,
        took_ms: started.elapsed().as_millis() as u64,
        warnings,
    })
}

/// The warning that documents of `connectors` still wait for OCR (their images and scanned
/// pages are found by name only until then), if any do.
async fn waiting_for_ocr(
    state: &AppState,
    connectors: &[Connector],
) -> Result<Option<String>, ApiError> {
    let mut waiting = 0;
    for connector in connectors.iter().filter(|c| reads_scans(state, c)) {
        waiting += state.store.ocr_pending(Some(&connector.id)).await?;
    }
    Ok((waiting > 0).then(|| {
        format!(
            "{waiting} document(s) still wait for OCR: their images and scanned pages are found by name only until read"
        )
    }))
}

fn parse(object: &Map<String, Value>, connectors: &[Connector]) -> Result<Params, ApiError> {
    let mut f = Fields::new(object, "");
    f.reject_unknown(&FIELDS);
    let query = match f.get("query") {
        None => {
            f.problems.add(
                "query",
                "is required",
                "query is required: the words or question to search for",
            );
            None
        }
        Some(_) => f.string("query").map(str::trim),
    };
    if let Some(q) = query {
        let chars = q.chars().count();
        if chars == 0 || chars > MAX_QUERY_CHARS {
            f.problems.add(
                "query",
                format!("must be 1 to {MAX_QUERY_CHARS} characters after trimming"),
                format!(
                    "query must be 1 to {MAX_QUERY_CHARS} characters after trimming, got {chars}"
                ),
            );
        }
    }
    let limit = f.integer("limit", 1, 100).unwrap_or(10);
    let semantic = f.boolean("semantic_search").unwrap_or(true);
    let offset = f.integer("offset", 0, 10_000).unwrap_or(0);
    if offset + limit > MAX_WINDOW {
        f.problems.add(
            "offset",
            format!("offset + limit must be at most {MAX_WINDOW}"),
            format!(
                "offset + limit must be at most {MAX_WINDOW}, got {}",
                offset + limit
            ),
        );
    }
    let sort_by = match f.choice("sort_by", &["default", "update_time"]) {
        Some("update_time") => SortBy::UpdateTime,
        _ => SortBy::Relevance,
    };
    let order = match f.choice("sort_order", &["ascending", "descending"]) {
        Some("ascending") => SortOrder::Ascending,
        _ => SortOrder::Descending,
    };
    let searched = connector_filter(&mut f, connectors);
    let (from, to) = time_filter(&mut f);
    let extensions = extension_filter(&mut f);
    f.problems.finish()?;
    Ok(Params {
        request: SearchRequest {
            query: query.unwrap_or_default().to_owned(),
            filters: Filters {
                connectors: searched,
                updated_from_ms: from,
                updated_to_ms: to,
                extensions,
            },
            sort_by,
            order,
            offset: usize::try_from(offset).unwrap_or(0),
            limit: usize::try_from(limit).unwrap_or(10),
            ranking: Ranking::Keyword,
        },
        semantic,
    })
}

/// The connectors to search: the named ones (without regard to case), else every one visible;
/// disabled connectors are never searched.
fn connector_filter(f: &mut Fields<'_>, connectors: &[Connector]) -> Vec<quarry_core::ConnectorId> {
    let searchable = |c: &&Connector| c.status != ConnectorStatus::Disabled;
    let Some(names) = f.string_list("connector_names_filter") else {
        return connectors
            .iter()
            .filter(searchable)
            .map(|c| c.id.clone())
            .collect();
    };
    let known: Vec<&str> = connectors.iter().map(|c| c.name.as_str()).collect();
    let known = if known.is_empty() {
        "there are none".to_owned()
    } else {
        format!("known: {}", listed(&known))
    };
    let mut chosen = Vec::new();
    for name in names {
        match connectors
            .iter()
            .find(|c| c.name.to_lowercase() == name.trim().to_lowercase())
        {
            Some(c) => {
                if searchable(&c) && !chosen.contains(&c.id) {
                    chosen.push(c.id.clone());
                }
            }
            None => {
                let name = clip(name, 60);
                f.problems.add(
                    "connector_names_filter",
                    format!("unknown connector {name:?}; {known}"),
                    format!("connector_names_filter names an unknown connector {name:?}; {known}"),
                );
            }
        }
    }
    chosen
}

/// `update_time_filter`: `from` inclusive, `to` exclusive, at least one.
fn time_filter(f: &mut Fields<'_>) -> (Option<i64>, Option<i64>) {
    let Some(value) = f.get("update_time_filter") else {
        return (None, None);
    };
    let Some(object) = value.as_object() else {
        f.problems.add(
            "update_time_filter",
            "must be an object with from, to or both",
            "update_time_filter must be an object such as {\"from\": \"2026-01-01\"}",
        );
        return (None, None);
    };
    let mut inner = Fields::new(object, "update_time_filter.");
    inner.reject_unknown(&["from", "to"]);
    let mut instant = |name: &str| {
        let text = inner.string(name)?;
        let parsed = parse_instant(text);
        if parsed.is_none() {
            inner.problems.add(
                &format!("update_time_filter.{name}"),
                "must be an RFC 3339 date-time or a YYYY-MM-DD date",
                format!(
                    "update_time_filter.{name} must be an RFC 3339 date-time (2026-11-22T15:00:00Z) or a date (2026-11-22), got {text:?}"
                ),
            );
        }
        parsed
    };
    let from = instant("from");
    let to = instant("to");
    let mut problems = std::mem::take(&mut inner.problems);
    if object.get("from").is_none() && object.get("to").is_none() {
        problems.add(
            "update_time_filter",
            "must have from, to or both",
            "update_time_filter must have from, to or both",
        );
    }
    if let (Some(a), Some(b)) = (from, to)
        && a > b
    {
        problems.add(
            "update_time_filter",
            "from must not be after to",
            "update_time_filter.from must not be after update_time_filter.to",
        );
    }
    f.problems.absorb(problems);
    (from, to)
}

/// `file_extensions_filter`: extensions without the dot, lowercased.
fn extension_filter(f: &mut Fields<'_>) -> Option<Vec<String>> {
    let list = f.string_list("file_extensions_filter")?;
    let mut out = Vec::with_capacity(list.len());
    for ext in list {
        let ok = (1..=16).contains(&ext.chars().count()) && ext.chars().all(char::is_alphanumeric);
        if ok {
            out.push(ext.to_lowercase());
        } else {
            let hint = match ext.strip_prefix('.') {
                Some(bare) => format!("; write {bare:?}, without the dot"),
                None => String::new(),
            };
            f.problems.add(
                "file_extensions_filter",
                format!("{ext:?} is not an extension: 1 to 16 letters or digits{hint}"),
                format!("file_extensions_filter has {ext:?}, which is not an extension (1 to 16 letters or digits, no dot){hint}"),
            );
        }
    }
    Some(out)
}

/// Makes `request` semantic (fused with keyword ranking); returns why it stays keyword-only
/// instead, as the warning the caller sees.
fn use_semantic(embedder: Option<&Embedder>, request: &mut SearchRequest) -> Option<String> {
    let Some(embedder) = embedder else {
        return Some(
            "semantic search is not available: no embedding model is loaded; keyword search ran instead"
                .to_owned(),
        );
    };
    match embedder.embed_query(&request.query) {
        Ok(vector) => {
            request.ranking = Ranking::Fused(
                SemanticQuery {
                    model: embedder.id().to_owned(),
                    vector,
                },
                Fusion::HYBRID,
            );
            None
        }
        Err(e) => {
            tracing::error!("query embedding: {e}");
            Some("semantic search failed for this query (see the server log); keyword search ran instead".to_owned())
        }
    }
}
