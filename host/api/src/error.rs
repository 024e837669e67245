//! API errors. A handler returns an [`ApiError`]; the envelope middleware renders every error in
//! the contract's shape with the request's id (`API.md`, "Errors"). Statuses and codes come from
//! the one table in `quarry_core::ErrorKind`. Details of internal errors go to the log only.

use std::sync::Arc;

use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use quarry_core::ErrorKind;
use serde::Serialize;

use crate::input::{MAX_DETAILS, MAX_MESSAGE_CHARS, clip, detail};

/// One problem with one field of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Detail {
    /// The field (`limit`, `update_time_filter.from`, the path segment `doc_id`).
    pub field: String,
    /// What is wrong with it.
    pub issue: String,
}

/// An error answer.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// Its kind, which decides code and status.
    pub kind: ErrorKind,
    /// The message for the client.
    pub message: String,
    /// For validation errors: every problem found.
    pub details: Vec<Detail>,
    /// Headers the answer carries (`WWW-Authenticate`, `Retry-After`, `Allow`).
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl ApiError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ApiError {
        ApiError {
            kind,
            message: message.into(),
            details: Vec::new(),
            headers: Vec::new(),
        }
    }

    /// A validation error from the problems found; the message is the first one's sentence.
    pub fn validation(message: impl Into<String>, details: Vec<Detail>) -> ApiError {
        ApiError {
            details,
            ..ApiError::new(ErrorKind::Validation, message)
        }
    }

    /// An unexpected failure: logged in full, answered with a generic message.
    pub fn internal(context: &str, error: &dyn std::fmt::Display) -> ApiError {
        tracing::error!("{context}: {error}");
        ApiError::new(
            ErrorKind::Internal,
            "an internal error occurred; the request id identifies it in the server's log",
        )
    }

    /// Adds a header to the answer.
    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> ApiError {
        self.headers.push((name, value));
        self
    }
}

/// The error an answer carries until the envelope middleware renders it.
#[derive(Clone)]
pub(crate) struct PendingError(pub(crate) Arc<ApiError>);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.kind.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = status.into_response();
        for (name, value) in &self.headers {
            response.headers_mut().insert(name.clone(), value.clone());
        }
        response
            .extensions_mut()
            .insert(PendingError(Arc::new(self)));
        response
    }
}

/// The body of an error answer. Whatever built the error, the answer stays small: the message
/// and each detail are cut to a readable length and at most [`MAX_DETAILS`] details are listed.
pub(crate) fn envelope(error: &ApiError, request_id: &str) -> serde_json::Value {
    let mut body = serde_json::json!({
        "code": error.kind.code().as_str(),
        "message": clip(&error.message, MAX_MESSAGE_CHARS),
        "request_id": request_id,
    });
    if !error.details.is_empty() {
        let details: Vec<Detail> = error
            .details
            .iter()
            .take(MAX_DETAILS)
            .map(|d| detail(&d.field, &d.issue))
            .collect();
        body["details"] = serde_json::to_value(&details).unwrap_or_default();
    }
    serde_json::json!({ "error": body })
}
