//! A preview's answer: the PNG itself, or (`Accept: application/json`) JSON with the image in
//! base64, its size and page count and the boxes of the query's words, for clients that pass
//! images on as data. Either way with a validator of the document's version, page, width and
//! words.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use quarry_runtime::PixelBox;
use sha2::{Digest, Sha256};

use super::drawn::Drawn;
use crate::extractors::frame::json;
use crate::views::{BoxView, PreviewView};

/// The header that carries the document's page count.
const PAGE_COUNT: &str = "quarry-page-count";

/// What the client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// `image/png` (the default).
    Png,
    /// `application/json`.
    Json,
}

impl Format {
    /// JSON when `Accept` names `application/json` before any image type; else the PNG.
    pub(crate) fn asked(headers: &HeaderMap) -> Format {
        let accept = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let first = accept
            .split(',')
            .map(|part| part.split(';').next().unwrap_or_default().trim())
            .find(|media| *media == "application/json" || media.starts_with("image/"));
        if first == Some("application/json") {
            Format::Json
        } else {
            Format::Png
        }
    }
}

/// The answer for `drawn`, page `page` of `connector`'s `doc` of version `version`, with the
/// `boxes` of the query `words` on it: 304 when the client has it.
pub(crate) fn respond(
    headers: &HeaderMap,
    (connector, doc, version): (&str, &str, &str),
    (page, words): (u32, &str),
    drawn: &Drawn,
    boxes: &[PixelBox],
) -> Response {
    let format = Format::asked(headers);
    let digest = Sha256::digest(format!(
        "{connector}/{doc}/{version}/{page}/{}/{format:?}/{words}",
        drawn.width
    ));
    let etag = HeaderValue::from_str(&format!("\"{}\"", &hex::encode(digest)[..32]))
        .unwrap_or(HeaderValue::from_static("\"\""));
    let has_it = headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|v| v.as_bytes() == etag.as_bytes());
    let mut response = if has_it {
        StatusCode::NOT_MODIFIED.into_response()
    } else if format == Format::Json {
        json(
            StatusCode::OK,
            &PreviewView {
                connector_id: connector.to_owned(),
                doc_id: doc.to_owned(),
                page,
                page_count: drawn.page_count,
                width: drawn.width,
                height: drawn.height,
                mime_type: "image/png",
                image: base64::engine::general_purpose::STANDARD.encode(&drawn.png),
                highlights: boxes
                    .iter()
                    .map(|b| BoxView {
                        x: b.x,
                        y: b.y,
                        w: b.w,
                        h: b.h,
                    })
                    .collect(),
            },
        )
    } else {
        let mut png = Response::new(Body::from(drawn.png.clone()));
        let h = png.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("image/png"));
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(drawn.png.len()));
        png
    };
    let h = response.headers_mut();
    h.insert(PAGE_COUNT, HeaderValue::from(drawn.page_count));
    h.insert(header::ETAG, etag);
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache"),
    );
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_str(value).expect("header"),
        );
        headers
    }

    #[test]
    fn json_is_sent_only_when_asked_before_images() {
        assert_eq!(Format::asked(&HeaderMap::new()), Format::Png);
        assert_eq!(Format::asked(&accept("application/json")), Format::Json);
        assert_eq!(
            Format::asked(&accept("image/png, application/json")),
            Format::Png
        );
        assert_eq!(
            Format::asked(&accept("text/html;q=0.9, application/json")),
            Format::Json
        );
        assert_eq!(Format::asked(&accept("*/*")), Format::Png);
    }
}
