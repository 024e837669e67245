//! `GET /api/v1/connectors`.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use quarry_core::ConnectorId;
use quarry_store::{Connector, Sharing};

use crate::error::ApiError;
use crate::extractors::frame::json;
use crate::extractors::guard::Caller;
use crate::extractors::input::query_params;
use crate::state::{AppState, visible_connectors, with_read_turn};
use crate::views::{ConnectorList, ConnectorView, EmbeddingView, OcrView};

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
    add_embedding_progress(state, &connectors, views.iter_mut().collect()).await?;
    add_ocr_progress(state, &connectors, views.iter_mut().collect()).await?;
    Ok(ConnectorList { connectors: views })
}

/// Sets the embedding progress of each view, the view of the connector at the same place in
/// `connectors` (left `None` without a model).
pub(crate) async fn add_embedding_progress(
    state: &AppState,
    connectors: &[Connector],
    views: Vec<&mut ConnectorView>,
) -> Result<(), ApiError> {
    let Some(embedder) = &state.embedder else {
        return Ok(());
    };
    let model = embedder.id().to_owned();
    let ids: Vec<ConnectorId> = connectors.iter().map(|c| c.id.clone()).collect();
    let index = state.index.clone();
    let counted =
        with_read_turn(state, move || EmbeddingView::counted(&index, &model, &ids)).await??;
    for (view, progress) in views.into_iter().zip(counted) {
        view.embedding = Some(progress);
    }
    Ok(())
}

/// Sets the OCR progress of each view, the view of the connector at the same place in
/// `connectors` (left `None` where its plugin does not read scans, or OCR is off).
pub(crate) async fn add_ocr_progress(
    state: &AppState,
    connectors: &[Connector],
    views: Vec<&mut ConnectorView>,
) -> Result<(), ApiError> {
    for (view, connector) in views.into_iter().zip(connectors) {
        if !reads_scans(state, connector) {
            continue;
        }
        let pending = state.store.ocr_pending(Some(&connector.id)).await?;
        view.ocr = Some(OcrView { pending });
    }
    Ok(())
}

/// Whether OCR reads `connector`'s scans: its plugin reads them and the host has models.
pub(crate) fn reads_scans(state: &AppState, connector: &Connector) -> bool {
    state
        .plugins
        .get(&connector.plugin_id)
        .is_some_and(|plugin| plugin.ocr_models().is_some())
}
