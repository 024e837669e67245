//! What the handlers share: how the service is reached ([`ApiConfig`]), the store, index,
//! plugins and model ([`AppState`]), and the steps many handlers take with them (the connectors
//! an integration sees, a served connector, work on a blocking thread under a read turn).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use quarry_core::{ConnectorId, ErrorKind};
use quarry_embed::Embedder;
use quarry_index::SearchIndex;
use quarry_runtime::PluginSet;
use quarry_store::{Connector, ConnectorStatus, Sharing, Store};

use crate::admin::state::{Admin, AdminConfig};
use crate::audit::AuditSink;
use crate::error::ApiError;
use crate::extractors::limits::{Admission, ApiLimits};
use crate::previews::keep::Previews;

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
    /// The page renderer's component (`quarry_preview.wasm`), which draws page previews; none
    /// turns them off.
    pub renderer: Option<PathBuf>,
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
            renderer: None,
        }
    }

    /// The configuration with `command` as the stdio MCP command of the documentation.
    pub fn with_stdio_command(mut self, command: Vec<String>) -> ApiConfig {
        self.stdio_command = command;
        self
    }

    /// The same, drawing page previews with the renderer component at `path`.
    pub fn with_renderer(mut self, path: Option<PathBuf>) -> ApiConfig {
        self.renderer = path;
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
    pub(crate) audit: AuditSink,
    pub(crate) admin: Arc<Admin>,
    pub(crate) admission: Arc<Admission>,
    pub(crate) previews: Previews,
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
        let previews = Previews::new(config.renderer.clone());
        Arc::new(AppState {
            store,
            index,
            plugins,
            config,
            embedder,
            audit,
            admin: Admin::new(admin),
            admission: Admission::new(limits),
            previews,
        })
    }

    /// Waits until the audit entries of answered requests are written.
    pub async fn flush(&self) {
        self.audit.flush().await;
    }
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
