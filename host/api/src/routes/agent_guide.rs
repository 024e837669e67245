//! `GET /api/v1/agent-guide`: the integration's generated documentation (endpoints, MCP
//! configuration, the guide for agents) as Markdown, for an agent to fetch itself. It needs a
//! valid key but is about the integration, not the user's data: it is not counted against the
//! quota and is served whatever the sharing (a declined integration reads why).

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::extractors::guard::Known;
use crate::integration_docs::docs_for_integration;
use crate::state::AppState;

pub(crate) async fn get(
    Known(integration): Known,
    State(state): State<Arc<AppState>>,
) -> Result<Response, ApiError> {
    let connectors = state.store.connectors().await?;
    let config = &state.config;
    let text = docs_for_integration(
        &config.public_url,
        &config.stdio_command,
        &integration,
        &connectors,
        None,
    );
    let mut response = text.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/markdown; charset=utf-8"),
    );
    Ok(response)
}
