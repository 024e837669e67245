//! `GET /admin/v1/activity?integration_id=&connector_id=&since=&limit=`: which integration read
//! what, when, and how much, newest first, from the audit log; how many entries could not be
//! recorded (`lost_entries`, zero unless the log's queue overflowed or the database failed); and
//! how many files each connector holds back from every integration (`held_back`).

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use quarry_core::times::parse_instant;
use quarry_store::{AuditFilter, now_ms};
use serde_json::{Value, json};

use super::answer::admin_json;
use super::integrations::all_connectors;
use super::session::Signed;
use crate::error::ApiError;
use crate::extractors::input::{Problems, param_integer, query_params};
use crate::state::AppState;
use crate::views::AuditEntryView;

/// The most entries one answer lists.
const MAX_LIMIT: u64 = 1000;

pub(crate) async fn list(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let params = query_params(
        query.as_deref(),
        &["integration_id", "connector_id", "since", "limit"],
    )?;
    let mut problems = Problems::default();
    let limit = param_integer(&params, "limit", 1, MAX_LIMIT, &mut problems).unwrap_or(200);
    let since = params.get("since").and_then(|s| match parse_instant(s) {
        Some(ms) => Some(ms),
        None => {
            problems.add(
                "since",
                "must be a date (2026-11-01) or an RFC 3339 time",
                format!("since must be a date (2026-11-01) or an RFC 3339 time, got {s:?}"),
            );
            None
        }
    });
    problems.finish()?;
    let filter = AuditFilter {
        integration_id: params.get("integration_id").cloned(),
        connector_id: params.get("connector_id").cloned(),
        since_ms: since,
        limit: u32::try_from(limit).ok(),
    };
    let entries = state.store.audit(&filter).await?;
    let integrations = state.store.integrations(now_ms()).await?;
    let connectors = all_connectors(&state).await?;
    let rows: Vec<AuditEntryView> = entries
        .iter()
        .map(|e| AuditEntryView::new(e, &integrations, &connectors))
        .collect();
    let lost = state.store.lost_audit_entries().await?;
    // What integrations never got to read: the files held back from the index, by connector.
    let held_back: Vec<Value> = connectors
        .iter()
        .filter(|c| c.held_back_count > 0)
        .map(|c| json!({ "connector_id": c.id.as_str(), "connector": c.name, "count": c.held_back_count }))
        .collect();
    Ok(admin_json(
        StatusCode::OK,
        &json!({ "entries": rows, "lost_entries": lost, "held_back": held_back }),
    ))
}
