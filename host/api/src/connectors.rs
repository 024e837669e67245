//! `GET /api/v1/connectors`.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use quarry_store::Sharing;

use crate::error::ApiError;
use crate::frame::json;
use crate::guard::Caller;
use crate::input::query_params;
use crate::views::{ConnectorList, ConnectorView};
use crate::{AppState, visible_connectors};

pub(crate) async fn list(
    caller: Caller,
    State(state): State<Arc<AppState>>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    query_params(query.as_deref(), &[])?;
    let answer = listed(&state, caller.sharing()).await?;
    Ok(json(StatusCode::OK, &answer))
}

/// The connectors `sharing` lets the caller see, as integrations see them.
pub(crate) async fn listed(state: &AppState, sharing: &Sharing) -> Result<ConnectorList, ApiError> {
    let connectors = visible_connectors(state, sharing).await?;
    Ok(ConnectorList {
        connectors: connectors.iter().map(ConnectorView::public).collect(),
    })
}
