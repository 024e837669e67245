//! Quarry's HTTP API, on axum: `/api/v1` for integrations (`docs/api.md` is the contract), its
//! OpenAPI document, `/healthz`, and the settings page with its admin API (`/settings`,
//! `/admin/v1`, behind the admin session).
//!
//! Every request gets a request id and passes the `Host` check; unknown routes and wrong
//! methods answer in the error envelope. Data endpoints then authenticate, count, check data
//! sharing and quota, validate, and answer with the quota headers; each is audited.

mod admin;
mod audit;
mod connections;
pub mod desktop;
mod error;
mod extractors;
mod integration_docs;
pub mod mcp;
mod previews;
mod router;
mod routes;
mod state;
mod times;
pub mod views;

pub use admin::LOGIN_LINK_MS;
pub use admin::state::AdminConfig;
pub use connections::{ConnectionLimits, serve};
pub use error::{ApiError, Detail};
pub use extractors::frame::RequestId;
pub use extractors::limits::ApiLimits;
pub use integration_docs::{docs_for_integration, mcp_http_config};
pub use router::router;
pub use state::{ApiConfig, AppState};
