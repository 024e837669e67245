//! Drawing one page: the document looked up as a download looks it up (a held-back document does
//! not exist, a file that is not served has no preview), its file read whole through its
//! connector, the page drawn by the renderer; kept in the cache by document version.

use std::sync::Arc;
use std::time::Duration;

use quarry_core::{ConnectorId, DocId, ErrorKind};
use quarry_runtime::{PageImage, RuntimeError, RuntimeErrorKind, Unrendered};
use quarry_sync::{REFUSED_CHANGED, REFUSED_TOO_LARGE, Serving};

use super::drawn::Drawn;
use crate::error::{ApiError, detail};
use crate::extractors::limits::too_many;
use crate::routes::file::{lookup, open_session, record_usage};
use crate::state::{AppState, blocking};

/// The largest file a preview reads.
pub(crate) const MAX_FILE_BYTES: u64 = 64 << 20;
/// How long a preview waits for a turn to be drawn before it is answered 429 (a page of search
/// results asks for several at once).
const TURN_WAIT: Duration = Duration::from_secs(10);

/// Page `page` of the document, `width` pixels wide at most, and the document's version.
pub(crate) async fn draw(
    state: &Arc<AppState>,
    connector_id: &ConnectorId,
    doc_id: &DocId,
    page: u32,
    width: u32,
) -> Result<(Arc<Drawn>, String), ApiError> {
    let (connector, doc) = lookup(state, connector_id, doc_id).await?;
    let serving = quarry_sync::serving(&connector.credentials, &doc);
    if let Serving::Refused(why) = serving {
        return Err(no_preview(why));
    }
    let mime = doc.meta.mime_type.clone();
    if mime != "application/pdf" && !mime.starts_with("image/") {
        return Err(ApiError::new(
            ErrorKind::NotFound,
            format!(
                "no preview of a {mime} document: previews are drawn for PDF files and images; read its text with GET /api/v1/connectors/{connector_id}/docs/{doc_id}"
            ),
        ));
    }
    if doc.meta.size_bytes > MAX_FILE_BYTES {
        return Err(no_preview(REFUSED_TOO_LARGE));
    }
    let previews = &state.previews;
    let key = (
        connector_id.to_string(),
        doc_id.to_string(),
        doc.version.clone(),
        page,
        width,
    );
    if let Some(drawn) = previews.cache.get(&key) {
        return Ok((drawn, doc.version));
    }
    let turn = tokio::time::timeout(TURN_WAIT, previews.turns.clone().acquire_owned())
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| {
            too_many(
                "previews are being drawn, the most the service draws at once; retry shortly"
                    .to_owned(),
                1,
            )
        })?;
    let mut session = open_session(state, &connector)?;
    let (id, locator) = (doc.doc_id.clone(), doc.locator.clone());
    let shared = state.clone();
    // On a blocking thread: the first preview loads (and may compile) the renderer.
    let (drawn, session) = blocking(move || {
        let _turn = turn;
        let drawn = shared
            .previews
            .renderer(&shared.admin.runtime)
            .map_err(|why| ApiError::internal("drawing a preview", &why))
            .map(|renderer| {
                quarry_sync::served_bytes(&mut session, (&id, &locator), &serving, MAX_FILE_BYTES)
                    .map(|bytes| renderer.render(&bytes, &mime, page, width, &[]))
            });
        (drawn, session)
    })
    .await?;
    record_usage(state.store.clone(), connector.id.clone(), session.usage()).await;
    let image = match drawn? {
        Ok(Ok(Ok(image))) => image,
        Ok(Ok(Err(why))) => return Err(unrendered(why, page)),
        Ok(Err(stopped)) => {
            tracing::warn!(connector = %connector.name, doc = %doc_id, page, "a preview was not drawn: {stopped}");
            return Err(no_preview(&stopped_drawing(&stopped)));
        }
        Err((public, why)) => {
            tracing::info!(connector = %connector.name, doc = %doc_id, "a preview's file was not read: {why}");
            if public == REFUSED_CHANGED
                && let Err(e) = state
                    .store
                    .request_sync(&connector.id, quarry_store::now_ms())
                    .await
            {
                tracing::warn!(connector = %connector.name, "cannot ask for a sync: {e}");
            }
            return Err(no_preview(public));
        }
    };
    let drawn = Arc::new(drawn_of(image));
    previews.cache.put(key, drawn.clone());
    Ok((drawn, doc.version))
}

fn drawn_of(image: PageImage) -> Drawn {
    Drawn {
        png: image.png,
        width: image.width,
        height: image.height,
        page_count: image.page_count,
    }
}

/// A document without a preview: why, in words for an integration.
fn no_preview(why: &str) -> ApiError {
    ApiError::new(ErrorKind::NotFound, format!("no preview: {why}"))
}

/// The renderer's refusal: a page past the last is the request's fault (naming `page`); the
/// rest mean the document has no preview.
fn unrendered(why: Unrendered, page: u32) -> ApiError {
    match why {
        Unrendered::NoSuchPage(count) => ApiError::validation(
            format!("page is {page}, but this document has {count} page(s)"),
            vec![detail(
                "page",
                &format!("must be at most the page count, {count}"),
            )],
        ),
        other => no_preview(&format!("its page could not be drawn: {other}")),
    }
}

/// Why the renderer stopped, without what it printed (a file's words may be in it).
fn stopped_drawing(error: &RuntimeError) -> String {
    match &error.kind {
        RuntimeErrorKind::Timeout { limit } => format!(
            "drawing its page took longer than {} s and was stopped",
            limit.as_secs()
        ),
        RuntimeErrorKind::MemoryLimit { limit_bytes } => format!(
            "drawing its page needed more than {} MiB and was stopped",
            limit_bytes >> 20
        ),
        _ => "the renderer failed on its page".to_owned(),
    }
}
