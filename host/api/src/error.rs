//! API errors. A handler returns an [`ApiError`]; the envelope middleware renders every error in
//! the contract's shape with the request's id (`docs/api.md`, "Errors"). Statuses and codes come
//! from the one table in `quarry_core::ErrorKind`; any crate's error becomes an answer through
//! its [`ErrorCode`] with `?`. Details of internal errors go to the log only.

use std::sync::Arc;

use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use quarry_core::{ErrorCode, ErrorKind};
use serde::Serialize;

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

    /// The database out of reach for a moment: logged in full, answered 503 with
    /// `Retry-After` ([`RETRY_UNAVAILABLE_S`]).
    pub fn unavailable(error: &dyn std::fmt::Display) -> ApiError {
        tracing::warn!("the database cannot be reached: {error}");
        ApiError::new(
            ErrorKind::Unavailable,
            "the database cannot be reached for a moment; retry after Retry-After seconds",
        )
        .with_header(
            axum::http::header::RETRY_AFTER,
            HeaderValue::from(RETRY_UNAVAILABLE_S),
        )
    }

    /// An unexpected failure: logged in full, answered with a generic message.
    pub fn internal(context: &str, error: &dyn std::fmt::Display) -> ApiError {
        tracing::error!("{context}: {error}");
        ApiError::new(
            ErrorKind::Internal,
            "an internal error occurred; the request id identifies it in the server's log",
        )
    }

    /// Names the field a validation error is about, when the error did not list its details:
    /// the message becomes the field's one detail. Other kinds pass unchanged.
    pub fn on_field(mut self, field: &str) -> ApiError {
        if self.kind == ErrorKind::Validation && self.details.is_empty() {
            self.details.push(detail(field, &self.message));
        }
        self
    }

    /// Adds a header to the answer.
    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> ApiError {
        self.headers.push((name, value));
        self
    }
}

/// Any crate's error as an answer: its kind from [`ErrorCode`]; internal errors are logged with
/// their whole chain of causes and answered without detail, the others with their message.
impl<E: ErrorCode + std::error::Error> From<E> for ApiError {
    fn from(error: E) -> ApiError {
        match error.error_kind() {
            ErrorKind::Internal => ApiError::internal("internal error", &causes(&error)),
            ErrorKind::Unavailable => ApiError::unavailable(&causes(&error)),
            kind => ApiError::new(kind, error.to_string()),
        }
    }
}

/// An error and its sources, `outer: inner: innermost`.
fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.ends_with(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

/// Seconds a client is asked to wait when the database is out of reach: a failover of a team
/// database takes a few.
pub(crate) const RETRY_UNAVAILABLE_S: u32 = 2;

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

/// Different problems an answer lists at most.
pub(crate) const MAX_DETAILS: usize = 20;
/// Characters of a detail's field name at most.
pub(crate) const MAX_FIELD_CHARS: usize = 100;
/// Characters of a detail's issue at most.
pub(crate) const MAX_ISSUE_CHARS: usize = 300;
/// Characters of an error message at most.
pub(crate) const MAX_MESSAGE_CHARS: usize = 500;

/// A problem as a detail, each part cut to a readable length.
pub(crate) fn detail(field: &str, issue: &str) -> Detail {
    Detail {
        field: clip(field, MAX_FIELD_CHARS),
        issue: clip(issue, MAX_ISSUE_CHARS),
    }
}

/// `text` cut to `max` characters, the cut marked with "...".
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max.saturating_sub(3)) {
        Some((end, _)) if text.chars().count() > max => format!("{}...", &text[..end]),
        _ => text.to_owned(),
    }
}
