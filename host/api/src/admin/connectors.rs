//! `/admin/v1/connectors`: every connector with its settings and live progress; add one (the
//! folders it names are granted read-only), sync now, disable, enable, remove.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use quarry_core::ErrorKind;
use quarry_runtime::FieldKind;
use quarry_store::{Connector, ConnectorStatus, now_ms};
use quarry_sync::{ConnectorRequest, add_connector, own_folders_inside};
use serde_json::{Value, json};

use super::integrations::all_connectors;
use super::session::{signed_change, signed_in};
use super::{admin_json, respond, store_error, sync_error};
use crate::AppState;
use crate::connectors::connector_json_for_user;
use crate::error::ApiError;
use crate::input::{Fields, json_object};

/// `GET /admin/v1/connectors`.
pub(crate) async fn list(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    respond(async {
        signed_in(&state, &headers).await?;
        let rows: Vec<Value> = all_connectors(&state)
            .await?
            .iter()
            .map(|c| admin_connector_json(&state, c))
            .collect();
        Ok(admin_json(StatusCode::OK, &json!({ "connectors": rows })))
    })
    .await
}

/// `POST /admin/v1/connectors` `{name, plugin, settings: {key: string}}`.
pub(crate) async fn add(
    State(state): State<Arc<AppState>>,
    method: Method,
    headers: HeaderMap,
    body: Body,
) -> Response {
    respond(async {
        signed_change(&state, &method, &headers).await?;
        let object = json_object(&headers, body).await?;
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
            &json!({ "connector": admin_connector_json(&state, &connector) }),
        ))
    })
    .await
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
    state: Arc<AppState>,
    id: String,
    method: Method,
    headers: HeaderMap,
    action: Action,
) -> Response {
    respond(async {
        signed_change(&state, &method, &headers).await?;
        let connector = all_connectors(&state)
            .await?
            .into_iter()
            .find(|c| c.id.as_str() == id)
            .ok_or_else(|| {
                ApiError::new(ErrorKind::NotFound, format!("no connector with id {id}"))
            })?;
        let store = &state.store;
        let now = now_ms();
        let done = match action {
            Action::Sync | Action::FullSync if connector.status == ConnectorStatus::Disabled => {
                return Err(ApiError::validation(
                    format!("{} is disabled; enable it first", connector.name),
                    vec![crate::input::detail("connector", "is disabled")],
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
        done.map_err(|e| store_error(e, "connector"))?;
        Ok(admin_json(StatusCode::OK, &json!({ "ok": true })))
    })
    .await
}

/// A connector for the settings page: the API's fields, its settings (never passwords), the
/// folders and hosts it was granted, and what its plugin calls cost.
fn admin_connector_json(state: &AppState, c: &Connector) -> Value {
    let mut row = connector_json_for_user(c);
    let manifest = state
        .plugins
        .get(&c.plugin_id)
        .map(|p| p.manifest().clone());
    let settings: serde_json::Map<String, Value> = c
        .config
        .iter()
        .filter(|(key, _)| {
            manifest
                .as_ref()
                .and_then(|m| m.field(key))
                .is_some_and(|f| f.kind != FieldKind::Password)
        })
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    row["settings"] = Value::Object(settings);
    row["granted_folders"] = json!(c.grant_dirs.values().collect::<Vec<_>>());
    row["granted_hosts"] = json!(c.grant_hosts);
    row["left_out"] = json!(own_folders_inside(&state.plugins, c));
    row["plugin_name"] = json!(manifest.map(|m| m.name));
    row["created"] = json!(quarry_core::times::rfc3339(c.created_ms));
    row
}
