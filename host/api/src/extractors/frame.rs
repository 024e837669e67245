//! What every request goes through, outermost: a request id (header `X-Request-Id`, in the log
//! line, in error bodies), the `Host` check against DNS rebinding, a guard that turns a panic
//! into a 500, and the rendering of error envelopes.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use quarry_core::ErrorKind;

use crate::error::{ApiError, Detail, PendingError};
use crate::state::AppState;
use crate::views::ErrorEnvelope;

/// The id of the request being answered.
#[derive(Debug, Clone)]
pub struct RequestId(pub Arc<str>);

/// The most of a request's path its log line shows.
const MAX_PATH_LOGGED: usize = 256;

/// JSON answers' content type.
pub(crate) const JSON: &str = "application/json; charset=utf-8";

/// A JSON answer.
pub(crate) fn json(status: StatusCode, body: &impl serde::Serialize) -> Response {
    let text = match serde_json::to_string(body) {
        Ok(text) => text,
        Err(e) => return ApiError::internal("rendering an answer", &e).into_response(),
    };
    let mut response = (status, text).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
    response
}

/// The middleware.
pub(crate) async fn frame(
    State(state): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let id: Arc<str> = ulid::Ulid::generate().to_string().into();
    let method = request.method().clone();
    // The path is the client's: the log line shows a bounded part of it.
    let path = crate::error::clip(request.uri().path(), MAX_PATH_LOGGED);
    request.extensions_mut().insert(RequestId(id.clone()));

    let mut response = match check_host(&state, &request) {
        Err(error) => error.into_response(),
        Ok(()) => match AssertUnwindSafe(next.run(request)).catch_unwind().await {
            Ok(response) => response,
            Err(_) => ApiError::internal("request handler", &"panicked").into_response(),
        },
    };
    if let Some(PendingError(error)) = response.extensions_mut().remove::<PendingError>() {
        let status = response.status();
        let headers = std::mem::take(response.headers_mut());
        response = json(status, &ErrorEnvelope::of(&error, &id));
        for (name, value) in &headers {
            if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
                response.headers_mut().insert(name.clone(), value.clone());
            }
        }
    }
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert("x-request-id", value);
    }
    tracing::info!(
        request_id = %id,
        %method,
        path,
        status = response.status().as_u16(),
        ms = started.elapsed().as_millis() as u64,
        "request"
    );
    response
}

/// Accepts only `Host` values naming this service: its bound address (and `localhost` when that
/// is a loopback address) or the configured public URL's host. A page on another site that
/// resolves its own name to 127.0.0.1 therefore cannot talk to Quarry.
fn check_host(state: &AppState, request: &Request<Body>) -> Result<(), ApiError> {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_ascii_lowercase)
        .or_else(|| {
            request
                .uri()
                .authority()
                .map(|a| a.as_str().to_ascii_lowercase())
        });
    match host {
        Some(host) if state.config.allowed_hosts.contains(&host) => Ok(()),
        host => {
            let shown = host.unwrap_or_else(|| "(none)".to_owned());
            Err(ApiError {
                details: vec![Detail {
                    field: "Host".into(),
                    issue: format!("must be one of: {}", state.config.allowed_hosts.join(", ")),
                }],
                ..ApiError::new(
                    ErrorKind::Validation,
                    format!(
                        "the Host header {shown:?} does not name this service; use its address, e.g. {}",
                        state.config.public_url
                    ),
                )
            })
        }
    }
}
