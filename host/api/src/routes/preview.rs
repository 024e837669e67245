//! `GET /api/v1/connectors/{connector_id}/docs/{doc_id}/pages/{page}/preview?width=N&q=...`: one
//! page of a document as a PNG (or JSON with it in base64 and the boxes of `q`'s words on it),
//! drawn in the page renderer's sandbox: a PDF file's page or an image from the file the
//! connector serves, any other document's page of text as a page.
//! Counted and audited as a document read; bounded as a download is, and by the pages drawn at
//! once service-wide.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use quarry_core::{ConnectorId, DocId};

use crate::error::ApiError;
use crate::extractors::guard::{Caller, Read};
use crate::extractors::input::{Problems, param_integer};
use crate::extractors::path_ids::PathIds;
use crate::previews::{draw, highlights, respond};
use crate::routes::search::MAX_QUERY_CHARS;
use crate::state::{AppState, blocking};

/// The width drawn unless `width` says otherwise.
pub(crate) const DEFAULT_WIDTH: u64 = 800;
/// The narrowest and widest previews.
pub(crate) const WIDTHS: (u64, u64) = (64, 2000);
/// The highest page number accepted.
const MAX_PAGE: u64 = 1 << 20;

/// A preview route's path: the ids, and the page as sent.
pub(crate) type PreviewPath = Result<Path<(String, String, String)>, PathRejection>;

pub(crate) async fn get(
    caller: Caller,
    State(state): State<Arc<AppState>>,
    path: PreviewPath,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let asked = checked(path, query.as_deref())?;
    let read = Read::document(&asked.connector, &asked.doc);
    let _permit = state.admission.admit_download(&caller.integration.id)?;
    Ok(read.on(answer(&state, &headers, &asked).await?))
}

/// A preview request, checked.
pub(crate) struct Asked {
    pub connector: ConnectorId,
    pub doc: DocId,
    /// The page, from 1.
    pub page: u32,
    /// The widest the image may be.
    pub width: u32,
    /// The words to box on the page (`q`), empty for none.
    pub words: String,
}

/// The preview's answer, once the request is checked and admitted.
pub(crate) async fn answer(
    state: &Arc<AppState>,
    headers: &HeaderMap,
    asked: &Asked,
) -> Result<Response, ApiError> {
    let marks = !asked.words.trim().is_empty();
    let (drawn, version) = draw(
        state,
        (&asked.connector, &asked.doc),
        asked.page,
        asked.width,
        marks,
    )
    .await?;
    let boxes = if marks {
        let (found, words) = (drawn.clone(), asked.words.clone());
        blocking(move || highlights(&found.words, &words)).await?
    } else {
        Vec::new()
    };
    Ok(respond(
        headers,
        (asked.connector.as_str(), asked.doc.as_str(), &version),
        (asked.page, &asked.words),
        &drawn,
        &boxes,
    ))
}

/// The validation step: the ids, the page (1 or more), `width` and `q`, every problem together.
pub(crate) fn checked(path: PreviewPath, query: Option<&str>) -> Result<Asked, ApiError> {
    let (ids, page) = match path {
        Ok(Path((connector, doc, page))) => (PathIds::from(Ok(Path((connector, doc)))), Some(page)),
        Err(rejection) => (PathIds::from(Err(rejection)), None),
    };
    let (connector, doc, (page, width, words)) =
        ids.check(query, &["width", "q"], |params, problems| {
            (
                page_number(page.as_deref(), problems),
                width(params, problems),
                words(params, problems),
            )
        })?;
    Ok(Asked {
        connector,
        doc,
        page,
        width,
        words,
    })
}

fn page_number(page: Option<&str>, problems: &mut Problems) -> u32 {
    match page.and_then(|p| p.parse::<u64>().ok()) {
        Some(n) if (1..=MAX_PAGE).contains(&n) => u32::try_from(n).unwrap_or(1),
        _ => {
            problems.add(
                "page",
                format!("must be a page number from 1 to {MAX_PAGE}"),
                format!(
                    "page in the path must be a page number from 1 to {MAX_PAGE}, got {:?}",
                    page.unwrap_or_default()
                ),
            );
            1
        }
    }
}

fn width(params: &BTreeMap<String, String>, problems: &mut Problems) -> u32 {
    let (min, max) = WIDTHS;
    let width = param_integer(params, "width", min, max, problems).unwrap_or(DEFAULT_WIDTH);
    u32::try_from(width).unwrap_or(800)
}

fn words(params: &BTreeMap<String, String>, problems: &mut Problems) -> String {
    let words = params.get("q").cloned().unwrap_or_default();
    let chars = words.chars().count();
    if chars > MAX_QUERY_CHARS {
        problems.add(
            "q",
            format!("must be at most {MAX_QUERY_CHARS} characters"),
            format!("q must be at most {MAX_QUERY_CHARS} characters, got {chars}"),
        );
    }
    words
}
