//! `/admin/v1/plugins`: the installed plugins with their settings and what they ask for, and
//! installing one in two steps: the upload is checked and staged, the page shows what the
//! plugin asks for, and only the user's grant installs it.

use std::sync::{Arc, PoisonError};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use base64::Engine as _;
use quarry_core::ErrorKind;
use serde_json::json;

use super::answer::admin_json;
use super::session::Signed;
use crate::error::ApiError;
use crate::error::detail;
use crate::extractors::input::{Fields, JsonObject};
use crate::state::AppState;
use crate::views::PluginView;
use quarry_packages::{Lock, Locked, Verification, sha256_digest};

/// The largest upload: a component of up to about 48 MiB, base64-encoded.
const MAX_UPLOAD_BYTES: usize = 64 << 20;
/// Staged uploads kept waiting for an answer at most (older ones are discarded).
const MAX_STAGED: usize = 4;

/// `GET /admin/v1/plugins`.
pub(crate) async fn list(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
) -> Result<Response, ApiError> {
    let lock_path = state.admin.lock_path.clone();
    let lock = tokio::task::spawn_blocking(move || Lock::read(&lock_path))
        .await
        .map_err(|e| ApiError::internal("reading the plugin lock", &e))?
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the plugin lock cannot be read");
            Lock::default()
        });
    let rows: Vec<PluginView> = state
        .plugins
        .all()
        .iter()
        .map(|p| PluginView::new(p).with_origin(p, &lock, &state.admin.plugins_dir))
        .collect();
    Ok(admin_json(StatusCode::OK, &json!({ "plugins": rows })))
}

/// `POST /admin/v1/plugins/stage` `{manifest: string, component_base64: string}`: checks the
/// plugin and keeps it waiting for the grant.
pub(crate) async fn stage(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
    JsonObject(object): JsonObject<MAX_UPLOAD_BYTES>,
) -> Result<Response, ApiError> {
    let mut fields = Fields::new(&object, "");
    fields.reject_unknown(&["manifest", "component_base64"]);
    let manifest = fields.string("manifest").map(str::to_owned);
    let encoded = fields.string("component_base64");
    for required in ["manifest", "component_base64"] {
        fields.require(
            required,
            " (the quarry-plugin.toml text and the component file)",
        );
    }
    let component =
        encoded.and_then(
            |e| match base64::engine::general_purpose::STANDARD.decode(e.trim()) {
                Ok(bytes) => Some(bytes),
                Err(err) => {
                    fields.problems.add(
                        "component_base64",
                        "must be base64",
                        format!("component_base64 is not valid base64: {err}"),
                    );
                    None
                }
            },
        );
    fields.problems.finish()?;
    let (Some(manifest), Some(component)) = (manifest, component) else {
        return Err(ApiError::internal("staging a plugin", &"fields lost"));
    };
    let admin = state.admin.clone();
    let staged = tokio::task::spawn_blocking(move || {
        admin
            .runtime
            .stage(&manifest, &component, &admin.staging_dir)
    })
    .await
    .map_err(|e| ApiError::internal("staging a plugin", &e))?
    .map_err(|e| {
        ApiError::validation(
            format!("this plugin cannot be installed: {e}"),
            vec![detail("plugin", &e.to_string())],
        )
    })?;
    if let Err(e) = state
        .plugins
        .check_installable(staged.plugin.id(), &state.admin.plugins_dir)
    {
        staged.discard();
        return Err(ApiError::validation(
            e.to_string(),
            vec![detail("manifest", &e.to_string())],
        ));
    }
    let replaces = state
        .plugins
        .get(staged.plugin.id())
        .map(|p| p.manifest().version.clone());
    let body = json!({
        "plugin": PluginView::new(&staged.plugin),
        "replaces_version": replaces,
    });
    let stage_id = ulid::Ulid::generate().to_string();
    let mut waiting = state
        .admin
        .staged
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    while waiting.len() >= MAX_STAGED {
        if let Some((_, old)) = waiting.pop_first() {
            old.discard();
        }
    }
    waiting.insert(stage_id.clone(), staged);
    drop(waiting);
    let mut body = body;
    body["stage_id"] = json!(stage_id);
    Ok(admin_json(StatusCode::OK, &body))
}

/// `POST /admin/v1/plugins/install` `{stage_id, grant: true | false}`: installs the staged
/// plugin when the user grants what it asks for; otherwise discards it.
pub(crate) async fn install(
    _signed: Signed,
    State(state): State<Arc<AppState>>,
    JsonObject(object): JsonObject,
) -> Result<Response, ApiError> {
    let mut fields = Fields::new(&object, "");
    fields.reject_unknown(&["stage_id", "grant"]);
    let stage_id = fields.string("stage_id").map(str::to_owned);
    let grant = fields.boolean("grant");
    for required in ["stage_id", "grant"] {
        fields.require(required, "");
    }
    fields.problems.finish()?;
    let (Some(stage_id), Some(grant)) = (stage_id, grant) else {
        return Err(ApiError::internal("installing a plugin", &"fields lost"));
    };
    let staged = state
        .admin
        .staged
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&stage_id)
        .ok_or_else(|| {
            ApiError::new(
                ErrorKind::NotFound,
                "this upload is no longer waiting (too old, or answered already); upload the plugin again",
            )
        })?;
    if !grant {
        staged.discard();
        return Ok(admin_json(StatusCode::OK, &json!({ "installed": false })));
    }
    let admin = state.admin.clone();
    let plugin = tokio::task::spawn_blocking(move || {
        let grants = staged.plugin.requested_capabilities();
        let digest = sha256_digest(&staged.component_bytes()?);
        let plugin = staged.install(&admin.runtime, &admin.plugins_dir)?;
        let entry = Locked {
            id: plugin.id().to_owned(),
            version: plugin.manifest().version.clone(),
            source: "settings page upload".to_owned(),
            digest,
            verification: Verification::Upload,
            signed_by: None,
            index: None,
            revoked: None,
            grants,
            installed_at: quarry_core::times::rfc3339(quarry_store::now_ms()),
        };
        if let Err(e) = Lock::record(&admin.lock_path, entry) {
            tracing::warn!(error = %e, plugin = plugin.id(), "installed, but not recorded in the plugin lock");
        }
        Ok::<_, quarry_runtime::RuntimeError>(plugin)
    })
    .await
    .map_err(|e| ApiError::internal("installing a plugin", &e))?
    .map_err(|e| ApiError::internal("installing a plugin", &e))?;
    tracing::info!(
        plugin = plugin.id(),
        version = plugin.manifest().version,
        "plugin installed in the settings page"
    );
    state.plugins.insert(plugin.clone());
    Ok(admin_json(
        StatusCode::OK,
        &json!({ "installed": true, "plugin": PluginView::new(&plugin) }),
    ))
}
