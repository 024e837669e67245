//! `GET /api/v1/connectors`.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use quarry_store::Connector;
use serde_json::{Value, json};

use crate::frame::{RequestId, json};
use crate::guard::{Read, guarded};
use crate::input::query_params;
use crate::{AppState, visible_connectors};
use quarry_core::times::rfc3339;

pub(crate) async fn list(
    State(state): State<Arc<AppState>>,
    Extension(request_id): Extension<RequestId>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let endpoint = "GET /api/v1/connectors";
    guarded(
        &state,
        &headers,
        &request_id,
        endpoint,
        None,
        |caller, state| async move {
            query_params(query.as_deref(), &[])?;
            let connectors = visible_connectors(&state, caller.sharing()).await?;
            let body =
                json!({ "connectors": connectors.iter().map(connector_json).collect::<Vec<_>>() });
            Ok((json(StatusCode::OK, &body), Read::default()))
        },
    )
    .await
}

/// A connector as the API shows it to integrations: `last_error` says what kind of failure it
/// was, without host paths, addresses or the plugin's words (the user's views replace it with
/// [`Connector::last_error`], the full reason).
pub fn connector_json(c: &Connector) -> Value {
    json!({
        "connector_id": c.id.as_str(),
        "name": c.name,
        "plugin": format!("{}@{}", c.plugin_id, c.plugin_version),
        "status": c.status.as_str(),
        "doc_count": c.doc_count,
        "last_sync_time": c.last_sync_ms.map(rfc3339),
        // A failure recorded before failures had public words is named without detail.
        "last_error": c.last_error_public.as_deref().or(c.last_error.as_ref().map(|_| "the last sync failed")),
        "progress": {
            "listed": c.progress.listed,
            "indexed": c.progress.indexed,
            "failed": c.progress.failed,
            "remaining": c.progress.remaining,
        },
    })
}

/// A connector as its user sees it (the settings page, `quarry connector list --json`): as
/// [`connector_json`], with the full reason of a failure and what its plugin calls cost.
pub fn connector_json_for_user(c: &Connector) -> Value {
    let mut row = connector_json(c);
    row["last_error"] = json!(c.last_error);
    row["plugin_usage"] = plugin_usage_json(c);
    row
}

/// What a connector's plugin calls have cost since it was added, for admin views and the CLI:
/// calls (and failed ones), CPU time in milliseconds, and the peak memory of one instance.
pub fn plugin_usage_json(c: &Connector) -> Value {
    json!({
        "calls": c.usage.calls,
        "failed_calls": c.usage.failed_calls,
        "cpu_ms": c.usage.cpu_us / 1000,
        "peak_memory_bytes": c.usage.peak_memory_bytes,
    })
}
