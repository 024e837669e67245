//! The settings page (`/settings`), the search page (`/search`, its document view
//! `/search/docs/{connector_id}/{doc_id}`: where search results' `link`s lead) and their admin
//! API (`/admin/v1`): integrations with the data sharing prompt and generated docs, connectors
//! with live progress, plugin installs with the capability grant, the activity log, and search
//! as the user or as one integration. Every route needs the admin session; every change (and
//! every search, a POST) also needs the page's CSRF token (`session.rs`).

mod activity;
mod answer;
mod connectors;
mod integrations;
mod pages;
mod plugins;
mod search;
mod session;
pub(crate) mod state;

use std::sync::Arc;

use axum::Router;
use axum::routing::{delete, get, post, put};

pub(crate) use pages::escape;
pub use session::LOGIN_LINK_MS;

use crate::state::AppState;

/// The settings routes.
pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/settings", get(pages::settings))
        .route("/settings/", get(pages::settings))
        .route("/settings/assets/settings.js", get(pages::script))
        .route("/settings/assets/settings.css", get(pages::style))
        .route("/settings/assets/common.js", get(pages::common_script))
        .route("/settings/assets/search.js", get(pages::search_script))
        .route("/settings/assets/search.css", get(pages::search_style))
        .route("/search", get(pages::search))
        .route("/search/docs/{connector_id}/{doc_id}", get(pages::search))
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
        .route(
            "/admin/v1/connectors/{id}",
            delete(connectors::remove_connector),
        )
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
        .route(
            "/admin/v1/connectors/{id}/{action}",
            post(connectors::connector_action),
        )
        .route("/admin/v1/plugins", get(plugins::list))
        .route("/admin/v1/plugins/stage", post(plugins::stage))
        .route("/admin/v1/plugins/install", post(plugins::install))
        .route("/admin/v1/activity", get(activity::list))
        .route("/admin/v1/search", post(search::run))
        .route(
            "/admin/v1/connectors/{connector_id}/docs/{doc_id}",
            get(search::document),
        )
        .route(
            "/admin/v1/connectors/{connector_id}/docs/{doc_id}/file",
            get(search::original),
        )
        .route(
            "/admin/v1/connectors/{connector_id}/docs/{doc_id}/pages/{page}/preview",
            get(search::preview),
        )
}
