//! The service's routes: the data routes behind the guard, MCP, the OpenAPI document, the
//! agent guide, `/healthz`, `/readyz` and the settings page, with the request frame around all of them and
//! the error envelope for unknown routes and wrong methods.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use quarry_core::ErrorKind;

use crate::error::{ApiError, RETRY_UNAVAILABLE_S};
use crate::extractors::{frame, guard};
use crate::routes::{agent_guide, connectors, docs, file, openapi, preview, search};
use crate::state::AppState;
use crate::{admin, mcp};

/// The service's routes.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .merge(data_routes(state.clone()))
        .merge(mcp::routes(state.clone()))
        .route("/api/v1/openapi.json", get(openapi::get))
        .route("/api/v1/agent-guide", get(agent_guide::get))
        .route("/healthz", get(health))
        .route("/readyz", get(ready))
        .merge(admin::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(from_fn_with_state(state.clone(), frame::frame))
        .with_state(state)
}

/// The `/api/v1` routes that read the user's data: each handler takes a [`guard::Caller`]
/// (authentication, sharing, quota, bounds) and the [`guard::account`] layer adds the quota
/// headers and the audit entry.
fn data_routes(state: Arc<AppState>) -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/search", post(search::search))
        .route("/api/v1/connectors", get(connectors::list))
        .route(
            "/api/v1/connectors/{connector_id}/docs/{doc_id}",
            get(docs::get),
        )
        .route(
            "/api/v1/connectors/{connector_id}/docs/{doc_id}/file",
            get(file::get),
        )
        .route(
            "/api/v1/connectors/{connector_id}/docs/{doc_id}/pages/{page}/preview",
            get(preview::get),
        )
        .route_layer(from_fn_with_state(state, guard::account))
}

async fn health() -> Response {
    frame::json(StatusCode::OK, &serde_json::json!({ "status": "ok" }))
}

/// How long readiness waits for the database.
const READY_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Ready while the database answers: what a load balancer asks before it sends a host requests.
async fn ready(State(state): State<Arc<AppState>>) -> Response {
    let answered = tokio::time::timeout(READY_WAIT, state.store.ping()).await;
    if matches!(answered, Ok(Ok(()))) {
        return frame::json(StatusCode::OK, &serde_json::json!({ "status": "ready" }));
    }
    let mut response = frame::json(
        StatusCode::SERVICE_UNAVAILABLE,
        &serde_json::json!({
            "status": "unavailable",
            "reason": "the database cannot be reached",
        }),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_UNAVAILABLE_S));
    response
}

async fn not_found() -> Response {
    ApiError::new(
        ErrorKind::NotFound,
        "no such route; the API is described at /api/v1/openapi.json",
    )
    .into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::new(
        ErrorKind::MethodNotAllowed,
        "this route does not accept this method; the Allow header lists those it does",
    )
    .into_response()
}
