//! `GET /api/v1/connectors/{connector_id}/docs/{doc_id}`: the stored text of a document, whole
//! or in parts (pages, a character limit). No plugin is called.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use quarry_core::{ConnectorId, DocId, ErrorKind, split_pages};
use quarry_index::IndexDoc;
use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::extractors::frame::json;
use crate::extractors::guard::{Caller, Read};
use crate::extractors::input::{Fields, Problems, param_integer};
use crate::extractors::path_ids::{ID_ISSUE, PathIds};
use crate::state::{AppState, served_connector, with_read_turn};
use crate::views::{DocView, DocumentView, FileView};

/// Largest value of `page_start`, `page_end` and `max_chars` accepted.
const MAX_PARAM: u64 = 1 << 31;

/// The parameters of a document's parts, in the contract's order.
const PARAMS: [&str; 3] = ["page_start", "page_end", "max_chars"];

pub(crate) async fn get(
    _caller: Caller,
    State(state): State<Arc<AppState>>,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let (connector_id, doc_id, pages) =
        PathIds::from(path).check(query.as_deref(), &PARAMS, |params, problems| {
            let [start, end, max_chars] =
                PARAMS.map(|name| param_integer(params, name, 1, MAX_PARAM, problems));
            Pages::checked(start, end, max_chars, problems)
        })?;
    let read = Read::document(&connector_id, &doc_id);
    let body = read_document(&state, &connector_id, &doc_id, pages).await?;
    Ok(read.on(json(StatusCode::OK, &body)))
}

/// What of a document's text is asked for.
#[derive(Clone, Copy)]
pub(crate) struct Pages {
    start: Option<u64>,
    end: Option<u64>,
    max_chars: Option<u64>,
}

impl Pages {
    /// Page `page` alone, cut to `max_chars`.
    pub(crate) fn one(page: u64, max_chars: u64) -> Pages {
        Pages {
            start: Some(page),
            end: Some(page),
            max_chars: Some(max_chars),
        }
    }

    /// The parts asked for; `page_end` before `page_start` is a problem.
    fn checked(
        start: Option<u64>,
        end: Option<u64>,
        max_chars: Option<u64>,
        problems: &mut Problems,
    ) -> Pages {
        if let (Some(a), Some(b)) = (start, end)
            && a > b
        {
            problems.add(
                "page_end",
                "must not be before page_start",
                format!("page_end ({b}) must not be before page_start ({a})"),
            );
        }
        Pages {
            start,
            end,
            max_chars,
        }
    }
}

/// A document read asked for by a JSON object (MCP's `read_document`): `connector_id` and
/// `doc_id`, and the route's query parameters as integers, checked with the route's limits and
/// messages. Every problem is reported together.
pub(crate) fn from_object(
    object: &Map<String, Value>,
) -> Result<(ConnectorId, DocId, Pages), ApiError> {
    let mut f = Fields::new(object, "");
    f.reject_unknown(&[
        "connector_id",
        "doc_id",
        "page_start",
        "page_end",
        "max_chars",
    ]);
    let max = i64::try_from(MAX_PARAM).unwrap_or(i64::MAX);
    let [start, end, max_chars] =
        PARAMS.map(|name| f.integer(name, 1, max).and_then(|n| u64::try_from(n).ok()));
    let connector = id_field(&mut f, "connector_id", |s| ConnectorId::parse(s));
    let doc = id_field(&mut f, "doc_id", |s| DocId::parse(s));
    let pages = Pages::checked(start, end, max_chars, &mut f.problems);
    f.problems.finish()?;
    match (connector, doc) {
        (Some(connector), Some(doc)) => Ok((connector, doc, pages)),
        _ => Err(ApiError::internal(
            "document ids",
            &"checked without problems, yet missing",
        )),
    }
}

/// A required id field of a JSON object, parsed by `parse`; a problem when absent or invalid.
fn id_field<T, E>(f: &mut Fields<'_>, name: &str, parse: fn(&str) -> Result<T, E>) -> Option<T> {
    f.require(name, ": use the id a search result or list_connectors gave");
    let parsed = parse(f.string(name)?).ok();
    if parsed.is_none() {
        f.problems.add(name, ID_ISSUE, format!("{name} {ID_ISSUE}"));
    }
    parsed
}

/// The document's answer, or 404 for an unknown connector or document. Reading and rendering
/// run on a blocking thread that holds one of the service's read turns until they end.
pub(crate) async fn read_document(
    state: &Arc<AppState>,
    connector: &ConnectorId,
    doc: &DocId,
    pages: Pages,
) -> Result<DocumentView, ApiError> {
    let served = served_connector(state, connector).await?;
    let file = FileView::new(&match state.store.catalog_doc(connector, doc).await? {
        Some(catalog) => quarry_sync::serving(&served.credentials, &catalog),
        None => quarry_sync::Serving::Refused(quarry_sync::REFUSED_PENDING),
    });
    let index = state.index.clone();
    let (c, d) = (connector.clone(), doc.clone());
    with_read_turn(state, move || {
        index
            .document(&c, &d)?
            .map(|doc| render(&doc, pages, file))
            .transpose()
    })
    .await??
    .ok_or_else(|| {
        ApiError::new(
            ErrorKind::NotFound,
            format!("connector {connector} has no document with id {doc}"),
        )
    })
}

fn render(doc: &IndexDoc, asked: Pages, file: FileView) -> Result<DocumentView, ApiError> {
    let pages = split_pages(&doc.text, &doc.page_starts);
    let page_count = pages.len() as u64;
    let first = asked.start.unwrap_or(1);
    let last = asked.end.unwrap_or(page_count).min(page_count);
    if first > page_count {
        return Err(ApiError::validation(
            format!("page_start is {first}, but this document has {page_count} page(s)"),
            vec![crate::error::detail(
                "page_start",
                &format!("must be at most the page count, {page_count}"),
            )],
        ));
    }
    let selected: String = pages[(first - 1) as usize..last as usize].concat();
    let total_chars = selected.chars().count() as u64;
    let (content, truncated) = match asked.max_chars {
        Some(max) if max < total_chars => (
            selected
                .chars()
                .take(usize::try_from(max).unwrap_or(usize::MAX))
                .collect(),
            true,
        ),
        _ => (selected, false),
    };
    Ok(DocumentView {
        doc: DocView::new(&doc.info, None),
        content,
        metadata: doc.metadata.iter().cloned().collect(),
        page_count,
        page_start: first,
        page_end: last,
        total_chars,
        truncated,
        file,
    })
}
