//! Drawing one page: the document looked up as a download looks it up (a held-back document does
//! not exist, a file that is not served has no preview). A PDF file or an image is read whole
//! through its connector and its page drawn by the renderer (a scanned page read by OCR too, for
//! a query's marks); any other document's page of extracted text is laid out as a page by the
//! renderer. Pages drawn are kept in the cache by document version.

use std::sync::Arc;

use quarry_core::ocr::TextRecognizer;
use quarry_core::{ConnectorId, DocId, ErrorKind, split_pages};
use quarry_runtime::{Renderer, RuntimeError, RuntimeErrorKind, Unrendered};
use quarry_store::{CatalogDoc, Connector};
use quarry_sync::{REFUSED_CHANGED, REFUSED_TOO_LARGE, Serving};
use tokio::sync::OwnedSemaphorePermit;

use super::drawn::Drawn;
use super::scan;
use crate::error::{ApiError, detail};
use crate::routes::file::{lookup, open_session, record_usage};
use crate::state::{AppState, blocking, with_read_turn};

/// The largest file a preview reads.
pub(crate) const MAX_FILE_BYTES: u64 = 64 << 20;
/// The most characters of a page's text drawn as a page of text (more than a page holds).
const TEXT_CHARS: usize = 20_000;

/// Page `page` of the document, `width` pixels wide at most, and the document's version. For
/// `marks` (a query's words to box), a page without a text layer is read by OCR, when it is on.
pub(crate) async fn draw(
    state: &Arc<AppState>,
    (connector_id, doc_id): (&ConnectorId, &DocId),
    page: u32,
    width: u32,
    marks: bool,
) -> Result<(Arc<Drawn>, String), ApiError> {
    let (connector, doc) = lookup(state, connector_id, doc_id).await?;
    let serving = quarry_sync::serving(&connector.credentials, &doc);
    if let Serving::Refused(why) = serving {
        return Err(no_preview(why));
    }
    let mime = doc.meta.mime_type.clone();
    let drawn_as_is = mime == "application/pdf" || mime.starts_with("image/");
    if drawn_as_is && doc.meta.size_bytes > MAX_FILE_BYTES {
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
    let ocr = (marks && drawn_as_is)
        .then(|| state.admin.runtime.ocr().cloned())
        .flatten();
    if let Some(drawn) = previews.cache.get(&key)
        && (!marks || drawn.can_mark(ocr.is_some()))
    {
        return Ok((drawn, doc.version));
    }
    let turn = previews.turn().await?;
    let drawn = if drawn_as_is {
        let asked = FilePage {
            connector,
            doc: &doc,
            serving,
            page,
            width,
        };
        file_page(state, asked, ocr, turn).await?
    } else {
        text_page(state, (&connector, doc_id), page, width, turn).await?
    };
    let drawn = Arc::new(drawn);
    previews.cache.put(key, drawn.clone());
    Ok((drawn, doc.version))
}

/// A page of a document's file to draw.
struct FilePage<'a> {
    connector: Connector,
    doc: &'a CatalogDoc,
    serving: Serving,
    page: u32,
    width: u32,
}

/// Draws a page of a PDF file or an image, read whole through its connector (and read by `ocr`
/// when given and the page has no text layer), holding `turn`.
async fn file_page(
    state: &Arc<AppState>,
    asked: FilePage<'_>,
    ocr: Option<Arc<dyn TextRecognizer>>,
    turn: OwnedSemaphorePermit,
) -> Result<Drawn, ApiError> {
    let FilePage {
        connector,
        doc,
        serving,
        page,
        width,
    } = asked;
    let mut session = open_session(state, &connector)?;
    let (id, locator, mime) = (
        doc.doc_id.clone(),
        doc.locator.clone(),
        doc.meta.mime_type.clone(),
    );
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
                    .map(|bytes| {
                        drawn_page(&renderer, ocr.as_deref(), (&bytes, &mime, page), width)
                    })
            });
        (drawn, session)
    })
    .await?;
    record_usage(state.store.clone(), connector.id.clone(), session.usage()).await;
    match drawn? {
        Ok(drawn) => checked_drawing(drawn, &connector, page),
        Err((public, why)) => {
            tracing::info!(connector = %connector.name, doc = %doc.doc_id, "a preview's file was not read: {why}");
            if public == REFUSED_CHANGED
                && let Err(e) = state
                    .store
                    .request_sync(&connector.id, quarry_store::now_ms())
                    .await
            {
                tracing::warn!(connector = %connector.name, "cannot ask for a sync: {e}");
            }
            Err(no_preview(public))
        }
    }
}

/// Draws page `page` of a document's extracted text (its first [`TEXT_CHARS`] characters, what
/// a page holds) as a page of text, holding `turn`.
async fn text_page(
    state: &Arc<AppState>,
    (connector, doc_id): (&Connector, &DocId),
    page: u32,
    width: u32,
    turn: OwnedSemaphorePermit,
) -> Result<Drawn, ApiError> {
    let (index, shared) = (state.index.clone(), state.clone());
    let (c, d) = (connector.id.clone(), doc_id.clone());
    let text = with_read_turn(state, move || {
        index.document(&c, &d).map(|doc| {
            doc.map(|doc| {
                let pages = split_pages(&doc.text, &doc.page_starts);
                let count = u32::try_from(pages.len()).unwrap_or(u32::MAX);
                let text = usize::try_from(page - 1)
                    .ok()
                    .and_then(|i| pages.get(i))
                    .map(|text| text.chars().take(TEXT_CHARS).collect::<String>());
                (text, count)
            })
        })
    })
    .await??;
    let (text, count) = text.ok_or_else(|| {
        ApiError::new(
            ErrorKind::NotFound,
            format!(
                "connector {} has no document with id {doc_id}",
                connector.id
            ),
        )
    })?;
    let text = text.ok_or_else(|| unrendered(Unrendered::NoSuchPage(count), page))?;
    let drawn = blocking(move || {
        let _turn = turn;
        shared
            .previews
            .renderer(&shared.admin.runtime)
            .map_err(|why| ApiError::internal("drawing a preview", &why))
            .map(|renderer| renderer.render(text.as_bytes(), "text/plain", 1, width, false))
    })
    .await??;
    let drawn = drawn.map(|d| d.map(|image| Drawn::of(image, None)));
    let mut drawn = checked_drawing(drawn, connector, page)?;
    drawn.page_count = count;
    Ok(drawn)
}

/// The renderer's drawing, or the answer that says why there is none.
fn checked_drawing(
    drawn: Result<Result<Drawn, Unrendered>, RuntimeError>,
    connector: &Connector,
    page: u32,
) -> Result<Drawn, ApiError> {
    match drawn {
        Ok(Ok(drawn)) => Ok(drawn),
        Ok(Err(why)) => Err(unrendered(why, page)),
        Err(stopped) => {
            tracing::warn!(connector = %connector.name, page, "a preview was not drawn: {stopped}");
            Err(no_preview(&stopped_drawing(&stopped)))
        }
    }
}

/// The page drawn by `renderer`, read by `ocr` (when given) if it has no text layer.
fn drawn_page(
    renderer: &Renderer,
    ocr: Option<&dyn TextRecognizer>,
    (bytes, mime, page): (&[u8], &str, u32),
    width: u32,
) -> Result<Result<Drawn, Unrendered>, RuntimeError> {
    Ok(renderer
        .render(bytes, mime, page, width, false)?
        .map(|image| {
            let read = ocr
                .filter(|_| image.words.is_empty())
                .map(|ocr| scan::read(renderer, ocr, (bytes, mime, page), &image));
            Drawn::of(image, read)
        }))
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
