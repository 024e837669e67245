//! `/admin/v1/integrations`: list, create (after the data sharing prompt), rotate and revoke
//! keys, change quota and sharing, and the generated API documentation.

use std::sync::Arc;

use axum::extract::{FromRequestParts, Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use quarry_core::ErrorKind;
use quarry_store::{ApiKey, Connector, Integration, IntegrationSummary, Quota, Sharing, now_ms};
use serde_json::{Value, json};

use super::answer::admin_json;
use super::session::Signed;
use crate::error::ApiError;
use crate::extractors::input::{Fields, JsonObject};
use crate::integration_docs::{docs_for_integration, mcp_http_config};
use crate::state::AppState;
use crate::views::{IntegrationSummaryView, IntegrationView, KeyAnswer, QuotaView};

/// `GET /admin/v1/integrations`.
pub(crate) async fn list(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
) -> Result<Response, ApiError> {
    let connectors = all_connectors(&state).await?;
    let list = state.store.integrations(now_ms()).await?;
    let rows: Vec<IntegrationSummaryView> = list
        .iter()
        .map(|s| IntegrationSummaryView::new(s, &connectors))
        .collect();
    Ok(admin_json(
        StatusCode::OK,
        &json!({ "integrations": rows, "base_url": state.config.public_url }),
    ))
}

/// `POST /admin/v1/integrations` `{name, sharing: {mode, connectors?}, quota?}`: the answer
/// to the data sharing prompt creates the integration; the key is in this answer only.
pub(crate) async fn create(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
    JsonObject(object): JsonObject,
) -> Result<Response, ApiError> {
    let connectors = all_connectors(&state).await?;
    let mut fields = Fields::new(&object, "");
    fields.reject_unknown(&["name", "sharing", "quota"]);
    let name = fields.string("name").map(str::trim);
    fields.require("name", ": how you will recognise this integration");
    let sharing = read_sharing(&mut fields, &connectors);
    let quota = read_quota(&mut fields);
    fields.problems.finish()?;
    let (Some(name), Some(sharing)) = (name, sharing) else {
        return Err(ApiError::internal(
            "creating an integration",
            &"fields lost",
        ));
    };
    let (integration, key) = state
        .store
        .create_integration(name, &sharing, quota.unwrap_or(Quota::FREE), None, now_ms())
        .await
        .map_err(|e| ApiError::from(e).on_field("name"))?;
    tracing::info!(integration = %integration.id, "integration created in the settings page");
    Ok(key_answer(
        &state,
        StatusCode::CREATED,
        &integration,
        &connectors,
        &key,
    ))
}

/// `GET /admin/v1/integrations/{id}/docs`: the documentation, with a placeholder for the key.
pub(crate) async fn docs(
    ById(integration): ById,
    State(state): State<Arc<AppState>>,
) -> Result<Response, ApiError> {
    let connectors = all_connectors(&state).await?;
    let docs = docs_text(&state, &integration, &connectors, None);
    Ok(admin_json(StatusCode::OK, &json!({ "docs": docs })))
}

/// `POST /admin/v1/integrations/{id}/rotate`: a new key (shown in this answer only); the old
/// one stops working.
pub(crate) async fn rotate(
    ById(integration): ById,
    State(state): State<Arc<AppState>>,
) -> Result<Response, ApiError> {
    let key = state
        .store
        .rotate_key(&integration.name, None, now_ms())
        .await?;
    let connectors = all_connectors(&state).await?;
    Ok(key_answer(
        &state,
        StatusCode::OK,
        &integration,
        &connectors,
        &key,
    ))
}

/// `POST /admin/v1/integrations/{id}/revoke`: its keys stop working at once.
pub(crate) async fn revoke(
    ById(integration): ById,
    State(state): State<Arc<AppState>>,
) -> Result<Response, ApiError> {
    let revoked = state.store.revoke_keys(&integration.name, now_ms()).await?;
    Ok(admin_json(
        StatusCode::OK,
        &json!({ "revoked_keys": revoked }),
    ))
}

/// `PUT /admin/v1/integrations/{id}/sharing` `{sharing: {mode, connectors?}}`.
pub(crate) async fn set_sharing(
    ById(integration): ById,
    State(state): State<Arc<AppState>>,
    JsonObject(object): JsonObject,
) -> Result<Response, ApiError> {
    let connectors = all_connectors(&state).await?;
    let mut fields = Fields::new(&object, "");
    fields.reject_unknown(&["sharing"]);
    let sharing = read_sharing(&mut fields, &connectors);
    fields.problems.finish()?;
    let sharing = sharing.ok_or_else(|| ApiError::internal("sharing", &"lost"))?;
    state
        .store
        .set_sharing(&integration.name, &sharing)
        .await
        .map_err(|e| ApiError::from(e).on_field("sharing"))?;
    let changed = Integration {
        sharing,
        ..integration
    };
    Ok(admin_json(
        StatusCode::OK,
        &json!({ "integration": IntegrationView::new(&changed, &connectors) }),
    ))
}

/// `PUT /admin/v1/integrations/{id}/quota` `{quota: number | "unlimited"}`.
pub(crate) async fn set_quota(
    ById(integration): ById,
    State(state): State<Arc<AppState>>,
    JsonObject(object): JsonObject,
) -> Result<Response, ApiError> {
    let mut fields = Fields::new(&object, "");
    fields.reject_unknown(&["quota"]);
    let quota = read_quota(&mut fields);
    fields.require("quota", ": requests per month, or \"unlimited\"");
    fields.problems.finish()?;
    let quota = quota.ok_or_else(|| ApiError::internal("quota", &"lost"))?;
    state
        .store
        .set_quota(&integration.name, quota)
        .await
        .map_err(|e| ApiError::from(e).on_field("quota"))?;
    Ok(admin_json(
        StatusCode::OK,
        &json!({ "monthly_quota": QuotaView(quota) }),
    ))
}

/// Every connector (for names and the sharing choices).
pub(crate) async fn all_connectors(state: &AppState) -> Result<Vec<Connector>, ApiError> {
    Ok(state.store.connectors().await?)
}

/// The integration a route's `{id}` names, for a signed-in user (the [`Signed`] checks run
/// first); 404 when there is none.
pub(crate) struct ById(Integration);

impl FromRequestParts<Arc<AppState>> for ById {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<ById, ApiError> {
        Signed::from_request_parts(parts, state).await?;
        let Path(id) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::new(ErrorKind::NotFound, "no such integration"))?;
        Ok(ById(by_id(state, &id).await?.integration))
    }
}

/// The integration with this id, or 404.
async fn by_id(state: &AppState, id: &str) -> Result<IntegrationSummary, ApiError> {
    state
        .store
        .integrations(now_ms())
        .await?
        .into_iter()
        .find(|s| s.integration.id == id)
        .ok_or_else(|| ApiError::new(ErrorKind::NotFound, format!("no integration with id {id}")))
}

/// `sharing`: `{mode: "all" | "selected" | "declined", connectors: [ids]}` (connectors only,
/// and at least one, with "selected").
fn read_sharing(fields: &mut Fields<'_>, connectors: &[Connector]) -> Option<Sharing> {
    let Some(value) = fields.get("sharing") else {
        fields.problems.add(
            "sharing",
            "required",
            "sharing is required: the answer to the data sharing prompt (all, selected or declined)",
        );
        return None;
    };
    let Some(object) = value.as_object() else {
        fields.problems.add(
            "sharing",
            "must be an object",
            "sharing must be an object like {\"mode\": \"all\"}",
        );
        return None;
    };
    let mut inner = Fields::new(object, "sharing.");
    inner.reject_unknown(&["mode", "connectors"]);
    let mode = inner.choice("mode", &["all", "selected", "declined"]);
    inner.require("mode", ": all, selected or declined");
    let ids = inner.string_list("connectors");
    let sharing = match (mode, ids) {
        (Some("all"), None) => Some(Sharing::All),
        (Some("declined"), None) => Some(Sharing::Declined),
        (Some("selected"), Some(ids)) => {
            let mut chosen = Vec::new();
            for id in ids {
                match connectors.iter().find(|c| c.id.as_str() == id) {
                    Some(c) => chosen.push(c.id.clone()),
                    None => inner.problems.add(
                        "sharing.connectors",
                        format!("no connector with id {id}"),
                        format!("sharing.connectors names {id:?}, which is not a connector"),
                    ),
                }
            }
            Some(Sharing::Selected(chosen))
        }
        (Some("selected"), None) if inner.get("connectors").is_none() => {
            inner.problems.add(
                "sharing.connectors",
                "required with mode selected",
                "choose at least one connector to share, or decline",
            );
            None
        }
        (Some(_), Some(_)) => {
            inner.problems.add(
                "sharing.connectors",
                "only with mode selected",
                "sharing.connectors goes only with mode \"selected\"",
            );
            None
        }
        _ => None,
    };
    fields.problems.absorb(inner.problems);
    sharing
}

/// `quota`: a whole number of requests per month, or `"unlimited"`.
fn read_quota(fields: &mut Fields<'_>) -> Option<Quota> {
    match fields.get("quota")? {
        Value::String(s) if s == "unlimited" => Some(Quota::Unlimited),
        Value::Number(_) => fields
            .integer("quota", 0, i64::MAX)
            .map(|n| Quota::Limited(n.unsigned_abs())),
        other => {
            let shown = crate::extractors::input::shown(other);
            fields.problems.add(
                "quota",
                "must be a whole number or \"unlimited\"",
                format!("quota must be a whole number of requests or \"unlimited\", got {shown}"),
            );
            None
        }
    }
}

/// The one answer that carries a key: the integration, the key and its documentation.
fn key_answer(
    state: &AppState,
    status: StatusCode,
    integration: &Integration,
    connectors: &[Connector],
    key: &ApiKey,
) -> Response {
    let answer = KeyAnswer {
        integration: IntegrationView::new(integration, connectors),
        api_key: key.expose().to_owned(),
        docs: docs_text(state, integration, connectors, Some(key.expose())),
        mcp_config: mcp_http_config(&state.config.public_url, key.expose()),
    };
    admin_json(status, &answer)
}

/// The generated documentation of `integration`.
pub(crate) fn docs_text(
    state: &AppState,
    integration: &Integration,
    connectors: &[Connector],
    key: Option<&str>,
) -> String {
    let config = &state.config;
    docs_for_integration(
        &config.public_url,
        &config.stdio_command,
        integration,
        connectors,
        key,
    )
}
