//! What the search page asks of the admin API: a search as the user (every connector) or "as"
//! one integration (its sharing applied, not counted against its quota, audited as the user's),
//! a document one page at a time with the query's words marked, and its original file.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use quarry_core::ErrorKind;
use quarry_index::QueryWords;
use quarry_store::{AuditEntry, Sharing, now_ms};
use serde::Serialize;
use serde_json::Value;

use super::answer::admin_json;
use super::session::Signed;
use crate::audit::USER;
use crate::error::ApiError;
use crate::extractors::frame::RequestId;
use crate::extractors::input::{JsonObject, Problems, param_integer};
use crate::extractors::path_ids::PathIds;
use crate::routes::docs::{Pages, read_document};
use crate::routes::preview::{self, PreviewPath};
use crate::routes::{file, search};
use crate::state::{AppState, blocking};
use crate::views::{DocumentView, Highlight, SearchAnswer};

/// The body field naming the integration to search as.
const SEE_AS: &str = "see_as";
/// The most characters of one page the document view shows (a text without pages is one page).
const MAX_PAGE_CHARS: u64 = 1_000_000;

/// The search page's answer: the search's, and whose sharing it ran with.
#[derive(Serialize)]
struct PageSearch {
    #[serde(flatten)]
    answer: SearchAnswer,
    /// The integration it ran as, when one was chosen.
    see_as: Option<SeenAs>,
}

/// An integration a search ran as.
#[derive(Serialize)]
struct SeenAs {
    id: String,
    name: String,
}

/// `POST /admin/v1/search`: the body of `POST /api/v1/search`, plus `see_as` (an integration
/// id) to search with that integration's sharing.
pub(crate) async fn run(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
    request_id: Option<axum::Extension<RequestId>>,
    JsonObject(mut object): JsonObject,
) -> Result<Response, ApiError> {
    let see_as = match object.remove(SEE_AS) {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) if !id.is_empty() => Some(id),
        Some(_) => {
            return Err(ApiError::validation(
                "see_as must be the id of an integration (or left out to search as yourself)",
                vec![crate::error::detail(SEE_AS, "must be an integration id")],
            ));
        }
    };
    let Some(id) = see_as else {
        let answer = search::answer(&state, &Sharing::All, &object).await?;
        return Ok(admin_json(
            StatusCode::OK,
            &PageSearch {
                answer,
                see_as: None,
            },
        ));
    };
    let integration = state
        .store
        .integrations(now_ms())
        .await?
        .into_iter()
        .map(|s| s.integration)
        .find(|i| i.id == id)
        .ok_or_else(|| {
            ApiError::new(ErrorKind::NotFound, format!("no integration with id {id}"))
                .on_field(SEE_AS)
        })?;
    let outcome = match integration.sharing {
        Sharing::Declined => Err(ApiError::new(
            ErrorKind::SharingDeclined,
            format!(
                "{} declined data sharing: it sees nothing, and every search it makes is refused",
                integration.name
            ),
        )),
        ref sharing => search::answer(&state, sharing, &object).await,
    };
    state.audit.record_user(AuditEntry {
        time_ms: now_ms(),
        request_id: request_id.map(|r| r.0.0.to_string()).unwrap_or_default(),
        integration_id: USER.to_owned(),
        endpoint: format!("search page: search as {}", integration.name),
        connector_id: None,
        doc_id: None,
        bytes: 0,
        status: outcome.as_ref().map_or_else(|e| e.kind.status(), |_| 200),
    });
    Ok(admin_json(
        StatusCode::OK,
        &PageSearch {
            answer: outcome?,
            see_as: Some(SeenAs {
                id: integration.id,
                name: integration.name,
            }),
        },
    ))
}

/// One page of a document for the document view.
#[derive(Serialize)]
struct PageView {
    #[serde(flatten)]
    document: DocumentView,
    /// Where the query's words are in `content` (character offsets).
    marks: Vec<Highlight>,
    /// Whether the original file is served (not when its text was redacted of credentials).
    file_served: bool,
}

/// `GET /admin/v1/connectors/{connector_id}/docs/{doc_id}?page=N&q=...`: page N (default 1) of
/// the document's text, at most a million characters of it, with the words of `q` marked.
pub(crate) async fn document(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let (connector, doc, (page, words)) =
        PathIds::from(path).check(query.as_deref(), &["page", "q"], |params, problems| {
            (page_param(params, problems), params.get("q").cloned())
        })?;
    let pages = Pages::one(page, MAX_PAGE_CHARS);
    let mut document = read_document(&state, &connector, &doc, pages).await?;
    document.doc.connector_name = state.store.connector(&connector).await?.map(|c| c.name);
    let file_served = document.file.served;
    let words: String = words
        .unwrap_or_default()
        .chars()
        .take(search::MAX_QUERY_CHARS)
        .collect();
    let (document, marks) = blocking(move || {
        let marks = QueryWords::new(&words)
            .ranges(&document.content)
            .into_iter()
            .map(|(start, end)| Highlight { start, end })
            .collect();
        (document, marks)
    })
    .await?;
    Ok(admin_json(
        StatusCode::OK,
        &PageView {
            document,
            marks,
            file_served,
        },
    ))
}

fn page_param(params: &std::collections::BTreeMap<String, String>, problems: &mut Problems) -> u64 {
    param_integer(params, "page", 1, 1 << 31, problems).unwrap_or(1)
}

/// `GET /admin/v1/connectors/{connector_id}/docs/{doc_id}/pages/{page}/preview`: a page's
/// preview, as the API draws it for integrations (none for held-back and redacted documents),
/// bounded as the user's downloads are.
pub(crate) async fn preview(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
    path: PreviewPath,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let asked = preview::checked(path, query.as_deref())?;
    let _permit = state.admission.admit_user_download()?;
    preview::answer(&state, &headers, &asked).await
}

/// `GET /admin/v1/connectors/{connector_id}/docs/{doc_id}/file`: the original file, as the API
/// serves it to integrations (held-back and redacted documents, and files not judged for
/// credentials or changed since, are not served), bounded by the
/// downloads the service runs at once.
pub(crate) async fn original(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (connector, doc, ()) = PathIds::from(path).check(query.as_deref(), &[], |_, _| ())?;
    let permit = state.admission.admit_user_download()?;
    file::download(&state, &headers, &connector, &doc, permit).await
}
