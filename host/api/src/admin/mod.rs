//! The settings page (`/settings`) and its admin API (`/admin/v1`): integrations with the data
//! sharing prompt and generated docs, connectors with live progress, plugin installs with the
//! capability grant, and the activity log. Every route needs the admin session; every change
//! also needs the page's CSRF token (`session.rs`).

mod activity;
mod connectors;
mod integrations;
mod pages;
mod plugins;
mod session;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::{delete, get, post, put};
use quarry_core::ErrorKind;
use quarry_runtime::{Runtime, StagedPlugin};

pub use session::LOGIN_LINK_MS;

use crate::AppState;
use crate::error::ApiError;
use crate::frame::json;
use connectors::Action;
use session::Signed;

/// What the settings page needs from the server (the admin token's hash is in the store).
pub struct AdminConfig {
    /// Where uploaded plugins are installed (the data folder's `plugins`).
    pub plugins_dir: PathBuf,
    /// Where uploads wait for the user's grant.
    pub staging_dir: PathBuf,
    /// Loads uploaded plugins.
    pub runtime: Arc<Runtime>,
}

/// The settings page's state.
pub(crate) struct Admin {
    pub(crate) plugins_dir: PathBuf,
    pub(crate) staging_dir: PathBuf,
    pub(crate) runtime: Arc<Runtime>,
    /// Uploads waiting for the grant, by stage id (oldest first).
    pub(crate) staged: Mutex<BTreeMap<String, StagedPlugin>>,
}

impl Admin {
    pub(crate) fn new(config: AdminConfig) -> Arc<Admin> {
        Arc::new(Admin {
            plugins_dir: config.plugins_dir,
            staging_dir: config.staging_dir,
            runtime: config.runtime,
            staged: Mutex::new(BTreeMap::new()),
        })
    }
}

/// The settings routes.
pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/settings", get(pages::settings))
        .route("/settings/", get(pages::settings))
        .route("/settings/assets/settings.js", get(pages::script))
        .route("/settings/assets/settings.css", get(pages::style))
        .route("/settings/login", get(pages::login_form).post(pages::login))
        .route("/settings/logout", post(pages::logout))
        .route(
            "/admin/v1/integrations",
            get(integrations::list).post(integrations::create),
        )
        .route("/admin/v1/integrations/{id}/docs", get(integrations::docs))
        .route(
            "/admin/v1/integrations/{id}/rotate",
            post(integrations::rotate),
        )
        .route(
            "/admin/v1/integrations/{id}/revoke",
            post(integrations::revoke),
        )
        .route(
            "/admin/v1/integrations/{id}/sharing",
            put(integrations::set_sharing),
        )
        .route(
            "/admin/v1/integrations/{id}/quota",
            put(integrations::set_quota),
        )
        .route(
            "/admin/v1/connectors",
            get(connectors::list).post(connectors::add),
        )
        .route("/admin/v1/connectors/{id}", delete(remove_connector))
        .route(
            "/admin/v1/connectors/{id}/held-back",
            get(connectors::held_back),
        )
        .route(
            "/admin/v1/connectors/{id}/credentials",
            put(connectors::set_credentials),
        )
        .route(
            "/admin/v1/connectors/{id}/release",
            post(connectors::release),
        )
        .route("/admin/v1/connectors/{id}/{action}", post(connector_action))
        .route("/admin/v1/plugins", get(plugins::list))
        .route("/admin/v1/plugins/stage", post(plugins::stage))
        .route("/admin/v1/plugins/install", post(plugins::install))
        .route("/admin/v1/activity", get(activity::list))
}

async fn remove_connector(
    signed: Signed,
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    connectors::act(signed, state, id, Action::Remove).await
}

async fn connector_action(
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
    connectors::act(signed, state, id, action).await
}

/// An admin answer: JSON, never cached.
pub(crate) fn admin_json(status: StatusCode, body: &impl serde::Serialize) -> Response {
    let mut response = json(status, body);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
