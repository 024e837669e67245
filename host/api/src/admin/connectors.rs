//! `/admin/v1/connectors`: every connector with its settings and live progress; add one (the
//! folders it names are granted read-only), sync now, disable, enable, remove; the documents it
//! holds back (credentials) with why, what it does with credentials, and files released.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use quarry_core::ErrorKind;
use quarry_store::{Connector, ConnectorStatus, CredentialMode, now_ms};
use quarry_sync::{ConnectorRequest, SyncError, add_connector, own_folders_inside};
use serde_json::{Value, json};

use super::answer::admin_json;
use super::integrations::all_connectors;
use super::session::Signed;
use crate::error::ApiError;
use crate::extractors::input::{Fields, JsonObject};
use crate::routes::connectors::{add_embedding_progress, add_ocr_progress};
use crate::state::AppState;
use crate::views::{AdminConnectorView, CredentialsView, NotedDocView, NotedDocsView};

/// Held-back documents one answer lists at most.
const HELD_BACK_SHOWN: u32 = 500;

/// `GET /admin/v1/connectors`.
pub(crate) async fn list(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
) -> Result<Response, ApiError> {
    let connectors = all_connectors(&state).await?;
    let mut rows: Vec<AdminConnectorView> = connectors
        .iter()
        .map(|c| admin_connector(&state, c))
        .collect();
    let views = rows.iter_mut().map(|r| &mut r.connector).collect();
    add_embedding_progress(&state, &connectors, views).await?;
    let views = rows.iter_mut().map(|r| &mut r.connector).collect();
    add_ocr_progress(&state, &connectors, views).await?;
    Ok(admin_json(StatusCode::OK, &json!({ "connectors": rows })))
}

/// `POST /admin/v1/connectors` `{name, plugin, settings: {key: string}}`.
pub(crate) async fn add(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
    JsonObject(object): JsonObject,
) -> Result<Response, ApiError> {
    let mut fields = Fields::new(&object, "");
    fields.reject_unknown(&["name", "plugin", "settings"]);
    let name = fields.string("name").map(str::trim).map(str::to_owned);
    let plugin = fields.string("plugin").map(str::to_owned);
    for required in ["name", "plugin", "settings"] {
        fields.require(required, "");
    }
    let mut values = BTreeMap::new();
    match fields.get("settings") {
        Some(Value::Object(settings)) => {
            for (key, value) in settings {
                match value {
                    // Empty optional fields take the plugin's default.
                    Value::String(s) if s.trim().is_empty() => {}
                    Value::String(s) => {
                        values.insert(key.clone(), s.clone());
                    }
                    _ => fields.problems.add(
                        &format!("settings.{key}"),
                        "must be a string",
                        format!("settings.{key} must be a string"),
                    ),
                }
            }
        }
        Some(_) => fields.problems.add(
            "settings",
            "must be an object",
            "settings must be an object of strings, by the plugin's setting keys",
        ),
        None => {}
    }
    fields.problems.finish()?;
    let (Some(name), Some(plugin_id)) = (name, plugin) else {
        return Err(ApiError::internal("adding a connector", &"fields lost"));
    };
    let connector = add_connector(
        &state.store,
        &state.plugins,
        ConnectorRequest {
            name,
            plugin_id,
            values,
        },
    )
    .await
    .map_err(sync_error)?;
    tracing::info!(connector = %connector.id, plugin = connector.plugin_id, "connector added in the settings page");
    Ok(admin_json(
        StatusCode::CREATED,
        &json!({ "connector": admin_connector(&state, &connector) }),
    ))
}

/// `GET /admin/v1/connectors/{id}/held-back`: the documents held back from the index with
/// why, those whose file could not be judged (not served) with why, how many are indexed
/// redacted, and the connector's credential settings.
pub(crate) async fn held_back(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let connector = by_id(&state, &id).await?;
    let held = state
        .store
        .held_back_docs(&connector.id, HELD_BACK_SHOWN)
        .await?;
    let redacted = state.store.count_redacted(&connector.id).await?;
    let unjudged = state
        .store
        .unjudged_docs(&connector.id, HELD_BACK_SHOWN)
        .await?;
    Ok(admin_json(
        StatusCode::OK,
        &json!({
            "count": connector.held_back_count,
            "documents": held.iter().map(NotedDocView::new).collect::<Vec<_>>(),
            "unjudged_files": NotedDocsView {
                count: state.store.count_unjudged(&connector.id).await?,
                documents: unjudged.iter().map(NotedDocView::new).collect(),
            },
            "redacted_count": redacted,
            "credentials": CredentialsView {
                mode: connector.credentials.mode.as_str(),
                released: connector.credentials.released.clone(),
            },
        }),
    ))
}

/// `PUT /admin/v1/connectors/{id}/credentials` `{mode: "hold" | "redact" | "off"}`.
pub(crate) async fn set_credentials(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    JsonObject(object): JsonObject,
) -> Result<Response, ApiError> {
    let connector = by_id(&state, &id).await?;
    let mut fields = Fields::new(&object, "");
    fields.reject_unknown(&["mode"]);
    fields.require("mode", "hold, redact or off");
    let mode = fields
        .choice("mode", &["hold", "redact", "off"])
        .and_then(CredentialMode::parse);
    fields.problems.finish()?;
    let Some(mode) = mode else {
        return Err(ApiError::internal("setting credentials", &"mode lost"));
    };
    let changed = state
        .store
        .set_credential_mode(&connector.name, mode, now_ms())
        .await?;
    tracing::info!(connector = %changed.id, mode = mode.as_str(), "credential mode set in the settings page");
    Ok(admin_json(
        StatusCode::OK,
        &json!({ "connector": admin_connector(&state, &changed) }),
    ))
}

/// `POST /admin/v1/connectors/{id}/release` `{path, undo?}`: index a held-back file (a path, a
/// folder's path ending in `/`, or a pattern) as it is, or hold it back again.
pub(crate) async fn release(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    JsonObject(object): JsonObject,
) -> Result<Response, ApiError> {
    let connector = by_id(&state, &id).await?;
    let mut fields = Fields::new(&object, "");
    fields.reject_unknown(&["path", "undo"]);
    fields.require(
        "path",
        "a path from the held-back list, or a pattern such as keys/*.pem",
    );
    let path = fields.string("path").map(str::to_owned);
    let undo = fields.boolean("undo").unwrap_or(false);
    fields.problems.finish()?;
    let Some(path) = path else {
        return Err(ApiError::internal("releasing a file", &"path lost"));
    };
    let changed = state
        .store
        .set_released(&connector.name, &path, !undo, now_ms())
        .await
        .map_err(|e| ApiError::from(e).on_field("path"))?;
    Ok(admin_json(
        StatusCode::OK,
        &json!({ "connector": admin_connector(&state, &changed) }),
    ))
}

/// The connector with id `id`, or 404.
async fn by_id(state: &Arc<AppState>, id: &str) -> Result<Connector, ApiError> {
    all_connectors(state)
        .await?
        .into_iter()
        .find(|c| c.id.as_str() == id)
        .ok_or_else(|| ApiError::new(ErrorKind::NotFound, format!("no connector with id {id}")))
}

/// What a connector action does.
#[derive(Clone, Copy)]
pub(crate) enum Action {
    Sync,
    FullSync,
    Disable,
    Enable,
    Remove,
}

/// `POST /admin/v1/connectors/{id}/{sync,full-sync,disable,enable}`, `DELETE .../{id}`.
pub(crate) async fn act(
    _signed: Signed,
    state: Arc<AppState>,
    id: String,
    action: Action,
) -> Result<Response, ApiError> {
    let connector = by_id(&state, &id).await?;
    let store = &state.store;
    let now = now_ms();
    let done = match action {
        Action::Sync | Action::FullSync if connector.status == ConnectorStatus::Disabled => {
            return Err(ApiError::validation(
                format!("{} is disabled; enable it first", connector.name),
                vec![crate::error::detail("connector", "is disabled")],
            ));
        }
        Action::Sync => store.request_sync(&connector.id, now).await,
        Action::FullSync => store.request_full_sync(&connector.id, now).await,
        Action::Disable => store
            .set_disabled(&connector.name, true, now)
            .await
            .map(drop),
        Action::Enable => store
            .set_disabled(&connector.name, false, now)
            .await
            .map(drop),
        Action::Remove => store.remove_connector(&connector.name, now).await.map(drop),
    };
    done?;
    Ok(admin_json(StatusCode::OK, &json!({ "ok": true })))
}

/// A connector for the settings page.
fn admin_connector(state: &AppState, c: &Connector) -> AdminConnectorView {
    let plugin = state.plugins.get(&c.plugin_id);
    AdminConnectorView::new(c, plugin.as_ref(), own_folders_inside(&state.plugins, c))
}

/// An error adding a connector as an answer: wrong settings are the user's to fix (a taken name
/// is the `name` field's).
fn sync_error(error: SyncError) -> ApiError {
    let field = match error {
        SyncError::Store(_) => "name",
        _ => "settings",
    };
    ApiError::from(error).on_field(field)
}

/// `DELETE /admin/v1/connectors/{id}`.
pub(super) async fn remove_connector(
    signed: Signed,
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    act(signed, state, id, Action::Remove).await
}

/// `POST /admin/v1/connectors/{id}/{action}`: sync, full-sync, disable or enable.
pub(super) async fn connector_action(
    signed: Signed,
    State(state): State<Arc<AppState>>,
    Path((id, action)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let action = match action.as_str() {
        "sync" => Action::Sync,
        "full-sync" => Action::FullSync,
        "disable" => Action::Disable,
        "enable" => Action::Enable,
        _ => {
            return Err(ApiError::new(
                ErrorKind::NotFound,
                "no such connector action; use sync, full-sync, disable or enable",
            ));
        }
    };
    act(signed, state, id, action).await
}
