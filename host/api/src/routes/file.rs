//! `GET /api/v1/connectors/{connector_id}/docs/{doc_id}/file`: the original bytes, streamed from
//! the plugin chunk by chunk (never held whole), with `Range` (one range; `206`), `ETag` and
//! `If-None-Match` (`304`), `Last-Modified` and `Content-Disposition`. Only bytes that were
//! judged for credentials are served: the file is read whole first and checked against the
//! fingerprint its sync took, and each chunk sent is checked against that first read
//! (`quarry_sync::verify`); a file that changed since is refused until a sync judges it again.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use quarry_core::{ConnectorId, DocId, ErrorKind};
use quarry_runtime::{Grant, GuestError, Session, Usage};
use quarry_store::{CatalogDoc, Connector, Store};
use quarry_sync::{Serving, Verified};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::error::ApiError;
use crate::extractors::guard::{Caller, Read};
use crate::extractors::limits::DownloadPermit;
use crate::extractors::path_ids::PathIds;
use crate::state::{AppState, blocking, served_connector};
use crate::times::http_date;

/// Bytes asked of the plugin per call.
const CHUNK_BYTES: u32 = 256 << 10;
/// Chunks buffered between the plugin and the client.
const CHUNKS_AHEAD: usize = 4;

/// RFC 5987 `attr-char`s stay as they are; everything else is percent-encoded.
const ATTR_CHAR: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'!')
    .remove(b'#')
    .remove(b'$')
    .remove(b'&')
    .remove(b'+')
    .remove(b'-')
    .remove(b'.')
    .remove(b'^')
    .remove(b'_')
    .remove(b'`')
    .remove(b'|')
    .remove(b'~');

pub(crate) async fn get(
    caller: Caller,
    State(state): State<Arc<AppState>>,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (connector_id, doc_id, ()) = PathIds::from(path).check(query.as_deref(), &[], |_, _| ())?;
    let read = Read::document(&connector_id, &doc_id);
    let permit = state.admission.admit_download(&caller.integration.id)?;
    let response = download(&state, &headers, &connector_id, &doc_id, permit).await?;
    Ok(read.on(response))
}

/// Answers a download, holding `permit` (and the plugin instance) until the last byte is sent,
/// the client goes away, or the client takes nothing for the stall limit.
pub(crate) async fn download(
    state: &Arc<AppState>,
    headers: &HeaderMap,
    connector_id: &ConnectorId,
    doc_id: &DocId,
    permit: DownloadPermit,
) -> Result<Response, ApiError> {
    let (connector, doc) = lookup(state, connector_id, doc_id).await?;
    let serving = quarry_sync::serving(&connector.credentials, &doc);
    if let Serving::Refused(why) = serving {
        return Err(ApiError::new(ErrorKind::NotFound, why));
    }
    let etag = etag(connector_id, &doc);
    if if_none_match(headers, &etag) {
        let mut response = StatusCode::NOT_MODIFIED.into_response();
        response.headers_mut().insert(header::ETAG, etag);
        return Ok(response);
    }
    let (session, total) = current_size(state, &connector, &doc).await?;
    let (status, start, length) = byte_range(headers, &etag, total)?;
    let (session, verified) = match serving {
        Serving::IfUnchanged(fingerprint) => {
            let (session, verified) = judged_bytes(
                state,
                session,
                &connector,
                &doc,
                fingerprint,
                (start, length),
            )
            .await?;
            (session, Some(verified))
        }
        _ => (session, None),
    };
    let body = stream(
        state,
        session,
        &connector,
        &doc,
        (start, length),
        verified,
        permit,
    );
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let h = response.headers_mut();
    file_headers(h, &doc, etag, length);
    if status == StatusCode::PARTIAL_CONTENT {
        let last = start + length - 1;
        h.insert(
            header::CONTENT_RANGE,
            header_value(&format!("bytes {start}-{last}/{total}")),
        );
    }
    Ok(response)
}

/// The connector (served, not disabled) and the document in its catalog; 404 for either.
pub(crate) async fn lookup(
    state: &AppState,
    connector_id: &ConnectorId,
    doc_id: &DocId,
) -> Result<(Connector, CatalogDoc), ApiError> {
    let connector = served_connector(state, connector_id).await?;
    let missing = || {
        ApiError::new(
            ErrorKind::NotFound,
            format!("connector {connector_id} has no document with id {doc_id}"),
        )
    };
    // A held-back document is, for integrations, one that does not exist.
    let doc = state
        .store
        .catalog_doc(connector_id, doc_id)
        .await?
        .filter(|doc| doc.held_back.is_none())
        .ok_or_else(missing)?;
    Ok((connector, doc))
}

/// Reads the file whole and checks it is the one judged (`fingerprint`), keeping the hashes the
/// serving read checks its chunks against. A file that changed is refused (404) and a sync is
/// asked for, which judges it again.
async fn judged_bytes(
    state: &AppState,
    mut session: Session,
    connector: &Connector,
    doc: &CatalogDoc,
    fingerprint: quarry_store::Fingerprint,
    range: (u64, u64),
) -> Result<(Session, Verified), ApiError> {
    let (id, locator) = (doc.doc_id.clone(), doc.locator.clone());
    let (checked, session) = blocking(move || {
        let checked = quarry_sync::verify(
            &mut session,
            (&id, &locator),
            &fingerprint,
            range,
            CHUNK_BYTES,
        );
        (checked, session)
    })
    .await?;
    match checked {
        Ok(verified) => Ok((session, verified)),
        Err((public, why)) => {
            tracing::info!(connector = %connector.name, doc = %doc.doc_id, "download refused: {why}");
            record_usage(state.store.clone(), connector.id.clone(), session.usage()).await;
            if let Err(e) = state
                .store
                .request_sync(&connector.id, quarry_store::now_ms())
                .await
            {
                tracing::warn!(connector = %connector.name, "cannot ask for a sync: {e}");
            }
            Err(ApiError::new(ErrorKind::NotFound, public))
        }
    }
}

/// A session of the connector's plugin and the file's current size: a read of zero bytes asks
/// the source for it (and whether the file still exists: 404 if not).
async fn current_size(
    state: &AppState,
    connector: &Connector,
    doc: &CatalogDoc,
) -> Result<(Session, u64), ApiError> {
    let mut session = open_session(state, connector)?;
    let (id, locator) = (doc.doc_id.clone(), doc.locator.clone());
    let (stat, session) = blocking(move || {
        let size = session.read_file(&id, &locator, 0, 0).map(|c| c.total_size);
        (size, session)
    })
    .await?;
    match stat {
        Ok(total) => Ok((session, total)),
        Err(e) => {
            record_usage(state.store.clone(), connector.id.clone(), session.usage()).await;
            Err(match e.guest_error() {
                Some(GuestError::NotFound(_)) => ApiError::new(
                    ErrorKind::NotFound,
                    "the source no longer has this file; the next sync removes it from the index",
                ),
                _ => ApiError::internal("reading a file from its plugin", &e),
            })
        }
    }
}

/// What of the file to send: status, first byte and length. `If-Range` with another validator
/// sends the whole file; a range past the end is a 416.
fn byte_range(
    headers: &HeaderMap,
    etag: &HeaderValue,
    total: u64,
) -> Result<(StatusCode, u64, u64), ApiError> {
    let ignore_range = headers
        .get(header::IF_RANGE)
        .is_some_and(|v| v.as_bytes() != etag.as_bytes());
    let range = if ignore_range {
        Range::Whole
    } else {
        Range::parse(
            headers.get(header::RANGE).and_then(|v| v.to_str().ok()),
            total,
        )
    };
    match range {
        Range::Whole => Ok((StatusCode::OK, 0, total)),
        Range::Part(first, last) => Ok((StatusCode::PARTIAL_CONTENT, first, last - first + 1)),
        Range::Unsatisfiable => Err(ApiError::new(
            ErrorKind::RangeNotSatisfiable,
            format!("the requested range starts past the end of the file ({total} bytes)"),
        )
        .with_header(
            header::CONTENT_RANGE,
            header_value(&format!("bytes */{total}")),
        )),
    }
}

/// The answer's body: `length` bytes from `start`, read by a blocking thread that keeps the
/// session and `permit` until it ends, then records what the plugin calls cost. With
/// `verified`, a chunk that is not the one verified ends the body instead of being sent.
fn stream(
    state: &AppState,
    mut session: Session,
    connector: &Connector,
    doc: &CatalogDoc,
    (start, length): (u64, u64),
    verified: Option<Verified>,
    permit: DownloadPermit,
) -> Body {
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(CHUNKS_AHEAD);
    let (store, connector_id) = (state.store.clone(), connector.id.clone());
    let (id, locator) = (doc.doc_id.clone(), doc.locator.clone());
    let runtime = tokio::runtime::Handle::current();
    let sink = Sink {
        tx,
        runtime: runtime.clone(),
        stall: state.admission.limits().download_stall,
    };
    tokio::task::spawn_blocking(move || {
        let file = (&id, locator.as_str(), verified.as_ref());
        stream_file(&mut session, file, start, length, &sink);
        runtime.block_on(record_usage(store, connector_id, session.usage()));
        drop(permit);
    });
    Body::from_stream(ReceiverStream::new(rx))
}

/// The headers of a file answer: type, length, name, validators, ranges, no sniffing.
fn file_headers(h: &mut HeaderMap, doc: &CatalogDoc, etag: HeaderValue, length: u64) {
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(&doc.meta.mime_type)
            .unwrap_or(HeaderValue::from_static("application/octet-stream")),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    h.insert(header::CONTENT_DISPOSITION, header_value(&disposition(doc)));
    h.insert(header::ETAG, etag);
    h.insert(
        header::LAST_MODIFIED,
        header_value(&http_date(doc.meta.update_time_ms)),
    );
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
}

/// Where a download's chunks go: the answer's body, which takes each within `stall` or is ended.
struct Sink {
    tx: mpsc::Sender<Result<Bytes, std::io::Error>>,
    runtime: tokio::runtime::Handle,
    stall: Duration,
}

impl Sink {
    /// Hands a chunk to the client's connection; false when the client went away or took
    /// nothing for the stall limit (then the download ends and frees its plugin instance).
    fn send(&self, chunk: Result<Bytes, std::io::Error>) -> bool {
        let sent = self
            .runtime
            .block_on(tokio::time::timeout(self.stall, self.tx.send(chunk)));
        match sent {
            Ok(Ok(())) => true,
            Ok(Err(_)) => false, // the client went away
            Err(_) => {
                tracing::info!(
                    "a download's client took nothing for {} s: ended",
                    self.stall.as_secs()
                );
                false
            }
        }
    }
}

/// Reads `length` bytes from `start` and sends them on; stops early if the client goes away,
/// stalls, the plugin fails, or a chunk is not the one `verified` (the client then sees a body
/// shorter than its `Content-Length`).
fn stream_file(
    session: &mut Session,
    (id, locator, verified): (&DocId, &str, Option<&Verified>),
    start: u64,
    length: u64,
    sink: &Sink,
) {
    let mut sent = 0u64;
    // The chunk's number in the range, as `verified` counts them.
    let mut n = 0;
    while sent < length {
        let want =
            u32::try_from((length - sent).min(u64::from(CHUNK_BYTES))).unwrap_or(CHUNK_BYTES);
        match session.read_file(id, locator, start + sent, want) {
            Ok(chunk) if chunk.data.is_empty() => {
                tracing::warn!(doc = %id, "file ended after {sent} of {length} bytes");
                sink.send(Err(std::io::Error::other("the file got shorter")));
                return;
            }
            Ok(chunk) if verified.is_some_and(|v| !v.matches(n, &chunk.data)) => {
                tracing::warn!(doc = %id, "the file changed while it was sent: ended after {sent} of {length} bytes");
                sink.send(Err(std::io::Error::other("the file changed")));
                return;
            }
            Ok(chunk) => {
                sent += chunk.data.len() as u64;
                n += 1;
                if !sink.send(Ok(Bytes::from(chunk.data))) {
                    return;
                }
            }
            Err(e) => {
                tracing::warn!(doc = %id, "streaming stopped after {sent} bytes: {e}");
                sink.send(Err(std::io::Error::other(e.to_string())));
                return;
            }
        }
    }
}

pub(crate) fn open_session(state: &AppState, connector: &Connector) -> Result<Session, ApiError> {
    let plugin = state.plugins.get(&connector.plugin_id).ok_or_else(|| {
        ApiError::internal(
            "downloading a file",
            &format!("plugin {:?} is not installed", connector.plugin_id),
        )
    })?;
    let grant = Grant::from_stored(&connector.grant.dirs, &connector.grant.hosts);
    plugin
        .session(&connector.config, &grant, None)
        .map_err(|e| ApiError::internal("opening a plugin session", &e))
}

/// Adds what a download's plugin calls cost to the connector's totals.
pub(crate) async fn record_usage(store: Store, connector: ConnectorId, usage: Usage) {
    if let Err(e) = store
        .add_plugin_usage(&connector, &quarry_sync::plugin_usage(&usage))
        .await
    {
        tracing::warn!(%connector, "cannot record the plugin's usage: {e}");
    }
}

/// A strong validator that changes with the document's version.
fn etag(connector: &ConnectorId, doc: &CatalogDoc) -> HeaderValue {
    let digest = Sha256::digest(format!("{connector}/{}/{}", doc.doc_id, doc.version));
    header_value(&format!("\"{}\"", &hex::encode(digest)[..32]))
}

/// True when `If-None-Match` lists `etag` (or is `*`).
fn if_none_match(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    let Some(value) = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let ours = etag.to_str().unwrap_or_default();
    value
        .split(',')
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t == ours)
}

/// `attachment; filename*=UTF-8''<name>` with the file's name percent-encoded.
fn disposition(doc: &CatalogDoc) -> String {
    let name = doc
        .meta
        .path
        .as_deref()
        .and_then(|p| p.rsplit('/').next())
        .filter(|n| !n.is_empty())
        .unwrap_or(&doc.meta.title);
    format!(
        "attachment; filename*=UTF-8''{}",
        utf8_percent_encode(name, ATTR_CHAR)
    )
}

fn header_value(s: &str) -> HeaderValue {
    HeaderValue::from_str(s).unwrap_or(HeaderValue::from_static(""))
}

/// What a `Range` header asks for, against a file of known size.
#[derive(Debug, PartialEq, Eq)]
enum Range {
    /// No usable range: the whole file (`200`).
    Whole,
    /// Bytes `first..=last` (`206`).
    Part(u64, u64),
    /// Starts past the end (`416`).
    Unsatisfiable,
}

impl Range {
    /// One byte range (`bytes=a-b`, `bytes=a-`, `bytes=-n`). Other units, several ranges and
    /// malformed values are ignored, as HTTP allows: the whole file is sent.
    fn parse(header: Option<&str>, total: u64) -> Range {
        let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes=")) else {
            return Range::Whole;
        };
        if spec.contains(',') {
            return Range::Whole;
        }
        let Some((first, last)) = spec.trim().split_once('-') else {
            return Range::Whole;
        };
        let number = |s: &str| -> Option<Option<u64>> {
            let s = s.trim();
            if s.is_empty() {
                Some(None)
            } else if s.bytes().all(|b| b.is_ascii_digit()) {
                s.parse().ok().map(Some)
            } else {
                None
            }
        };
        match (number(first), number(last)) {
            (Some(Some(first)), Some(last)) => {
                if last.is_some_and(|l| l < first) {
                    Range::Whole
                } else if first >= total {
                    Range::Unsatisfiable
                } else {
                    Range::Part(first, last.unwrap_or(u64::MAX).min(total - 1))
                }
            }
            (Some(None), Some(Some(suffix))) => {
                if suffix == 0 || total == 0 {
                    Range::Unsatisfiable
                } else {
                    Range::Part(total.saturating_sub(suffix), total - 1)
                }
            }
            _ => Range::Whole,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Range;

    #[test]
    fn parses_single_byte_ranges() {
        let r = |h: &str| Range::parse(Some(h), 100);
        assert_eq!(Range::parse(None, 100), Range::Whole);
        assert_eq!(r("bytes=0-9"), Range::Part(0, 9));
        assert_eq!(r("bytes=90-"), Range::Part(90, 99));
        assert_eq!(r("bytes=90-500"), Range::Part(90, 99));
        assert_eq!(r("bytes=-10"), Range::Part(90, 99));
        assert_eq!(r("bytes=-500"), Range::Part(0, 99));
        assert_eq!(r("bytes=100-"), Range::Unsatisfiable);
        assert_eq!(r("bytes=-0"), Range::Unsatisfiable);
        for ignored in [
            "bytes=5-1",
            "bytes=0-1,5-9",
            "items=0-1",
            "bytes=a-b",
            "bytes=-",
            "bytes=+1-2",
        ] {
            assert_eq!(r(ignored), Range::Whole, "{ignored}");
        }
        assert_eq!(Range::parse(Some("bytes=0-"), 0), Range::Unsatisfiable);
    }
}
