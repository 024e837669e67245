//! The Model Context Protocol server: the same search, documents and connectors as `/api/v1`,
//! as tools an agent picks by their descriptions. Two transports:
//!
//! - **Streamable HTTP** at `/mcp` on the service ([`routes`]), stateless (no sessions to hold:
//!   each POST is answered on its own, as JSON), behind the same `Host` check as every route. A
//!   request without `Authorization: Bearer <key>` is refused with 401 before the protocol; one
//!   whose key is not valid is answered 429 before the protocol once such requests pass their
//!   service-wide rate, as on the API. Every tool call passes the data routes' checks (`calls`),
//!   so a revoked key or declined sharing is a tool error the agent can read and act on. What a
//!   request names is cut to a bounded length in every answer and log line.
//! - **stdio** for clients that launch a command ([`serve_stdio`] in this process, on the data
//!   folder; `bridge` relays to a running server's `/mcp`).
//!
//! Original files are not inlined: `read_document` links them (`GET .../file` with the same
//! key), as a `resource_link` and in its text.

mod bridge;
mod calls;
mod text;
mod tools;

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::{Next, from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use quarry_core::ErrorKind;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::{RequestContext, RoleServer, ServiceExt};
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;

pub use bridge::bridge_stdio;

use crate::error::clip;
use crate::error::{ApiError, PendingError};
use crate::extractors::frame::RequestId;
use crate::extractors::guard;
use crate::extractors::input::MAX_BODY_BYTES;
use crate::state::AppState;

/// The most of a name the caller sent that an answer (and so a log line) repeats.
const MAX_NAME_SHOWN: usize = 64;

/// What the server tells an agent when it connects (the agent guide, short).
const INSTRUCTIONS: &str = "Quarry searches the user's own documents (folders and other \
sources they shared with you). Call list_connectors first to see what is shared. Turn a request \
into search filters (connector_names_filter, update_time_filter, file_extensions_filter, sort_by \
update_time for the latest); page with offset. Read only the top few results with \
read_document, and for long documents only the pages around a result's `page`. Errors name a \
code (UNAUTHORIZED, DATA_SHARING_DECLINED, QUOTA_EXCEEDED, ...) and what to do.";

/// How a tool call is authenticated.
#[derive(Clone)]
enum Access {
    /// By the `Authorization` header of the HTTP request that carries it.
    Http,
    /// By the key the stdio server was started with.
    Key(Arc<str>),
}

/// The MCP server over the service's state.
#[derive(Clone)]
struct Quarry {
    state: Arc<AppState>,
    access: Access,
}

impl ServerHandler for Quarry {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("quarry", env!("CARGO_PKG_VERSION")).with_title("Quarry"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::TOOLS.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::find(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = tools::find(&request.name) else {
            let names: Vec<&str> = tools::TOOLS.iter().map(|t| t.name.as_ref()).collect();
            // The name is the caller's: cut, since the transport logs the error it answers.
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool named {:?}; the tools are {}",
                    clip(&request.name, MAX_NAME_SHOWN),
                    names.join(", ")
                ),
                None,
            ));
        };
        let call = self.call_context(&context);
        let arguments = request.arguments.unwrap_or_default();
        Ok(calls::run(&self.state, call, &tool.name, arguments)
            .await
            .into())
    }
}

impl Quarry {
    /// Who makes the call of `context`, by this server's access.
    fn call_context(&self, context: &RequestContext<RoleServer>) -> calls::CallContext {
        match &self.access {
            Access::Http => {
                let parts = context.extensions.get::<axum::http::request::Parts>();
                calls::CallContext {
                    headers: parts.map(|p| p.headers.clone()).unwrap_or_default(),
                    request_id: parts
                        .and_then(|p| p.extensions.get::<RequestId>())
                        .map(|id| id.0.to_string())
                        .unwrap_or_else(new_request_id),
                    file_base: Some(self.state.config.public_url.clone()),
                }
            }
            Access::Key(key) => {
                let mut headers = HeaderMap::new();
                if let Ok(value) = HeaderValue::from_str(&format!("Bearer {key}")) {
                    headers.insert(header::AUTHORIZATION, value);
                }
                calls::CallContext {
                    headers,
                    request_id: new_request_id(),
                    file_base: None,
                }
            }
        }
    }
}

fn new_request_id() -> String {
    ulid::Ulid::generate().to_string()
}

/// `/mcp`: the Streamable HTTP transport, stateless, answering in JSON.
pub(crate) fn routes(state: Arc<AppState>) -> Router<Arc<AppState>> {
    let key_state = state.clone();
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        // The service's own `Host` check (the frame layer) runs before; one list, not two.
        .disable_allowed_hosts();
    let service = StreamableHttpService::new(
        move || {
            Ok(Quarry {
                state: state.clone(),
                access: Access::Http,
            })
        },
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new()
        .route_service("/mcp", service)
        .layer(from_fn_with_state(key_state, require_key))
        .layer(from_fn(in_the_envelope))
}

/// Longest refusal text of the transport's that is carried into the envelope.
const MAX_REFUSAL_BYTES: usize = 4096;

/// The transport's own refusals (a wrong method, `Accept` or `Content-Type`, a body over the
/// limit), which it answers in plain text, answered in the API's error envelope with the
/// error table's code, as every other refusal of the service is. JSON answers (JSON-RPC
/// results and errors) pass as they are.
async fn in_the_envelope(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let ours = response.extensions().get::<PendingError>().is_some();
    if !(status.is_client_error() || status.is_server_error()) || is_json || ours {
        return response;
    }
    let kind = match status.as_u16() {
        401 => return response,
        405 => ErrorKind::MethodNotAllowed,
        413 => ErrorKind::PayloadTooLarge,
        415 => ErrorKind::UnsupportedMediaType,
        500.. => ErrorKind::Internal,
        _ => ErrorKind::Validation,
    };
    let allow = response.headers().get(header::ALLOW).cloned();
    let text = axum::body::to_bytes(response.into_body(), MAX_REFUSAL_BYTES)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
        .unwrap_or_default();
    let message = match kind {
        ErrorKind::Internal => "the MCP transport failed; see the server log".to_owned(),
        _ if text.is_empty() => format!("the MCP transport refused the request ({status})"),
        _ => text,
    };
    let mut error = ApiError::new(kind, message);
    if let Some(allow) = allow {
        error = error.with_header(header::ALLOW, allow);
    }
    error.into_response()
}

/// A request to `/mcp` without a bearer key is refused before the protocol: there is nothing to
/// serve it. A request with a key that is not valid goes on while such requests stay within the
/// service-wide rate of refusals (its tool calls are then tool errors the agent can read, see
/// `docs/mcp.md`), and is answered 429 beyond it, before the protocol, as on the API. A valid
/// key goes on, not counted: its tool calls are counted and checked as data requests.
async fn require_key(
    axum::extract::State(state): axum::extract::State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let sent = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(guard::bearer_token)
        .is_some();
    if !sent {
        return ApiError::new(
            ErrorKind::Unauthorized,
            "an API key is required: configure your MCP client to send the header \
             Authorization: Bearer <API_KEY> (Quarry's settings page shows the configuration)",
        )
        .with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))
        .into_response();
    }
    if let Err(refused) = guard::known_key(&state, request.headers()).await
        && refused.kind != ErrorKind::Unauthorized
    {
        return refused.into_response();
    }
    next.run(request).await
}

/// Serves MCP over this process's stdin and stdout until the client closes them, with the
/// integration key `key` (every tool call checks it, as over HTTP).
pub async fn serve_stdio(state: Arc<AppState>, key: &str) -> Result<(), std::io::Error> {
    let server = Quarry {
        state,
        access: Access::Key(key.into()),
    };
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
