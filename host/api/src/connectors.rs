//! `GET /api/v1/connectors`.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use quarry_core::ConnectorId;
use quarry_store::Sharing;

use crate::error::ApiError;
use crate::frame::json;
use crate::guard::Caller;
use crate::input::query_params;
use crate::views::{ConnectorList, ConnectorView, EmbeddingView};
use crate::{AppState, visible_connectors, with_read_turn};

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
    let mut views: Vec<ConnectorView> = connectors.iter().map(ConnectorView::public).collect();
    add_embedding_progress(state, views.iter_mut().collect()).await?;
    Ok(ConnectorList { connectors: views })
}

/// Sets each view's embedding progress (left `None` without a model): the documents of its
/// connector that still lack vectors of the loaded model, counted in the index.
pub(crate) async fn add_embedding_progress(
    state: &AppState,
    views: Vec<&mut ConnectorView>,
) -> Result<(), ApiError> {
    let Some(embedder) = &state.embedder else {
        return Ok(());
    };
    let model = embedder.id().to_owned();
    let ids: Vec<String> = views.iter().map(|v| v.connector_id.clone()).collect();
    let index = state.index.clone();
    let counted = with_read_turn(state, move || {
        ids.iter()
            .map(|id| match ConnectorId::parse(id) {
                Ok(id) => index.pending_count(&model, Some(&id)),
                Err(_) => Ok(0),
            })
            .collect::<Result<Vec<u64>, _>>()
    })
    .await??;
    for (view, pending) in views.into_iter().zip(counted) {
        view.embedding = Some(EmbeddingView {
            model: embedder.id().to_owned(),
            pending,
        });
    }
    Ok(())
}
