//! How the admin API answers: JSON that no cache keeps.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use crate::extractors::frame::json;

/// An admin answer: JSON, never cached.
pub(crate) fn admin_json(status: StatusCode, body: &impl serde::Serialize) -> Response {
    let mut response = json(status, body);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
