//! Quarry's HTTP API, on axum: `/api/v1` for integrations (`docs/api.md` is the contract), its
//! OpenAPI document, `/healthz`, and the settings page with its admin API (`/settings`,
//! `/admin/v1`, behind the admin session).
//!
//! Every request gets a request id and passes the `Host` check; unknown routes and wrong
//! methods answer in the error envelope. Data endpoints then authenticate, count, check data
//! sharing and quota, validate, and answer with the quota headers; each is audited.

mod admin;
mod agent_guide;
mod audit;
mod connections;
mod connectors;
mod docs;
mod error;
mod file;
mod frame;
mod guard;
mod input;
mod integration_docs;
mod limits;
pub mod mcp;
mod openapi;
mod search;
mod times;
pub mod views;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use axum::http::StatusCode;
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use quarry_core::{ConnectorId, DocId, ErrorKind};
use quarry_embed::Embedder;
use quarry_index::SearchIndex;
use quarry_runtime::PluginSet;
use quarry_store::{Connector, ConnectorStatus, Sharing, Store};

pub use admin::{AdminConfig, LOGIN_LINK_MS};
pub use connections::{ConnectionLimits, serve};
pub use error::{ApiError, Detail};
pub use frame::RequestId;
pub use integration_docs::{docs_for_integration, mcp_http_config};
pub use limits::ApiLimits;

use crate::audit::AuditSink;
use crate::input::Problems;
use crate::limits::Admission;

/// How the service is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiConfig {
    /// The base URL clients use (`http://127.0.0.1:4747`), shown in the OpenAPI document.
    pub public_url: String,
    /// `Host` header values accepted (lowercase `host:port`).
    pub allowed_hosts: Vec<String>,
    /// The command an MCP client launches for stdio (`quarry ... mcp`), shown in the generated
    /// documentation.
    pub stdio_command: Vec<String>,
}

impl ApiConfig {
    /// The configuration for a service listening on `addr`, reached at `public_url` (default:
    /// `http://<addr>`). Accepted hosts: the address itself, `localhost` and the other loopback
    /// forms when it is a loopback or unspecified address, and the public URL's host.
    pub fn new(addr: SocketAddr, public_url: Option<&str>) -> ApiConfig {
        let port = addr.port();
        let public_url = public_url
            .map(|u| u.trim_end_matches('/').to_owned())
            .unwrap_or_else(|| format!("http://{addr}"));
        let mut allowed_hosts = vec![addr.to_string()];
        if addr.ip().is_loopback() || addr.ip().is_unspecified() {
            for host in ["127.0.0.1", "localhost", "[::1]"] {
                allowed_hosts.push(format!("{host}:{port}"));
            }
        }
        // A client sends the authority of the URL it uses as its Host header.
        if let Some(authority) = public_url.split("://").nth(1) {
            let authority = authority.split('/').next().unwrap_or(authority);
            allowed_hosts.push(authority.to_ascii_lowercase());
        }
        allowed_hosts.sort();
        allowed_hosts.dedup();
        ApiConfig {
            public_url,
            allowed_hosts,
            stdio_command: vec!["quarry".to_owned(), "mcp".to_owned()],
        }
    }

    /// The configuration with `command` as the stdio MCP command of the documentation.
    pub fn with_stdio_command(mut self, command: Vec<String>) -> ApiConfig {
        self.stdio_command = command;
        self
    }
}

/// What the handlers share.
pub struct AppState {
    /// The store.
    pub store: Store,
    /// The index (read by the API; written by the sync).
    pub index: Arc<SearchIndex>,
    /// Installed plugins, for file downloads.
    pub plugins: PluginSet,
    /// How the service is reached.
    pub config: ApiConfig,
    /// The embedding model for semantic search; `None` runs semantic requests as keyword ones.
    pub embedder: Option<Arc<Embedder>>,
    audit: AuditSink,
    admin: Arc<admin::Admin>,
    admission: Arc<Admission>,
}

impl AppState {
    /// The state; starts the audit writer on the current tokio runtime.
    pub fn new(
        store: Store,
        index: Arc<SearchIndex>,
        plugins: PluginSet,
        config: ApiConfig,
        embedder: Option<Arc<Embedder>>,
        admin: AdminConfig,
        limits: ApiLimits,
    ) -> Arc<AppState> {
        let audit = AuditSink::start(store.clone(), limits.audit_retention);
        Arc::new(AppState {
            store,
            index,
            plugins,
            config,
            embedder,
            audit,
            admin: admin::Admin::new(admin),
            admission: Admission::new(limits),
        })
    }

    /// Waits until the audit entries of answered requests are written.
    pub async fn flush(&self) {
        self.audit.flush().await;
    }
}

/// The service's routes.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .merge(data_routes(state.clone()))
        .merge(mcp::routes(state.clone()))
        .route("/api/v1/openapi.json", get(openapi::get))
        .route("/api/v1/agent-guide", get(agent_guide::get))
        .route("/healthz", get(health))
        .merge(admin::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(from_fn_with_state(state.clone(), frame::frame))
        .with_state(state)
}

/// The `/api/v1` routes that read the user's data: each handler takes a [`guard::Caller`]
/// (authentication, sharing, quota, bounds) and the [`guard::account`] layer adds the quota
/// headers and the audit entry.
fn data_routes(state: Arc<AppState>) -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/search", post(search::search))
        .route("/api/v1/connectors", get(connectors::list))
        .route(
            "/api/v1/connectors/{connector_id}/docs/{doc_id}",
            get(docs::get),
        )
        .route(
            "/api/v1/connectors/{connector_id}/docs/{doc_id}/file",
            get(file::get),
        )
        .route_layer(from_fn_with_state(state, guard::account))
}

async fn health() -> Response {
    frame::json(StatusCode::OK, &serde_json::json!({ "status": "ok" }))
}

async fn not_found() -> Response {
    ApiError::new(
        ErrorKind::NotFound,
        "no such route; the API is described at /api/v1/openapi.json",
    )
    .into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::new(
        ErrorKind::MethodNotAllowed,
        "this route does not accept this method; the Allow header lists those it does",
    )
    .into_response()
}

/// The connectors an integration may see, by name (disabled ones included).
pub(crate) async fn visible_connectors(
    state: &AppState,
    sharing: &Sharing,
) -> Result<Vec<Connector>, ApiError> {
    let all = state.store.connectors().await?;
    Ok(all.into_iter().filter(|c| sharing.allows(&c.id)).collect())
}

/// The connector with this id, if its documents may be served: 404 when it does not exist (or
/// was removed) and when the user disabled it (a disabled connector serves nothing).
pub(crate) async fn served_connector(
    state: &AppState,
    id: &ConnectorId,
) -> Result<Connector, ApiError> {
    let connector = state.store.connector(id).await?.ok_or_else(|| {
        ApiError::new(
            ErrorKind::NotFound,
            format!("no connector with id {id}; GET /api/v1/connectors lists them"),
        )
    })?;
    if connector.status == ConnectorStatus::Disabled {
        return Err(ApiError::new(
            ErrorKind::NotFound,
            format!(
                "connector {id} is disabled: its documents and files are not served until the user enables it again"
            ),
        ));
    }
    Ok(connector)
}

/// Runs `work` on a blocking thread.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::internal("blocking task", &e))
}

/// Runs `work` on a blocking thread that holds one of the service's read turns until the work
/// ends, even if the client went away meanwhile.
pub(crate) async fn with_read_turn<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    let turn = state.admission.read_turn().await?;
    blocking(move || {
        let _turn = turn;
        work()
    })
    .await
}

/// What is wrong with an id that does not parse.
pub(crate) const ID_ISSUE: &str = "must be 1 to 128 characters from A-Z, a-z, 0-9, '_' and '-'";

/// The ids in a document route's path, checked in the validation step.
pub(crate) struct PathIds {
    /// The connector id as sent (empty when the path could not be decoded).
    pub connector: Option<String>,
    doc: Option<String>,
}

impl From<Result<Path<(String, String)>, PathRejection>> for PathIds {
    fn from(path: Result<Path<(String, String)>, PathRejection>) -> PathIds {
        match path {
            Ok(Path((connector, doc))) => PathIds {
                connector: Some(connector),
                doc: Some(doc),
            },
            Err(_) => PathIds {
                connector: Some(String::new()),
                doc: None,
            },
        }
    }
}

impl PathIds {
    /// The validation step of a document route: the query string (only `allowed` parameters),
    /// `extra` checks on them, and both ids. Every problem is reported together.
    pub(crate) fn check<T>(
        &self,
        query: Option<&str>,
        allowed: &[&str],
        extra: impl FnOnce(&BTreeMap<String, String>, &mut Problems) -> T,
    ) -> Result<(ConnectorId, DocId, T), ApiError> {
        let params = input::query_params(query, allowed)?;
        let mut problems = Problems::default();
        let checked = extra(&params, &mut problems);
        let issue = ID_ISSUE;
        let connector = match self.connector.as_deref().map(ConnectorId::parse) {
            Some(Ok(id)) => Some(id),
            _ => {
                problems.add(
                    "connector_id",
                    issue,
                    format!("connector_id in the path {issue}"),
                );
                None
            }
        };
        let doc = match self.doc.as_deref().map(DocId::parse) {
            Some(Ok(id)) => Some(id),
            _ => {
                problems.add("doc_id", issue, format!("doc_id in the path {issue}"));
                None
            }
        };
        problems.finish()?;
        match (connector, doc) {
            (Some(connector), Some(doc)) => Ok((connector, doc, checked)),
            _ => Err(ApiError::internal(
                "path ids",
                &"checked without problems, yet missing",
            )),
        }
    }
}
