//! `GET /api/v1/openapi.json`: the OpenAPI 3.1 document of this API, naming this service's own
//! address. Served without authentication.

use std::sync::{Arc, LazyLock};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use crate::extractors::frame::json;
use crate::state::AppState;

/// The document, as committed beside this crate.
pub const OPENAPI_JSON: &str = include_str!("../../openapi.json");

pub(crate) static DOCUMENT: LazyLock<Value> =
    LazyLock::new(|| serde_json::from_str(OPENAPI_JSON).unwrap_or(Value::Null));

pub(crate) async fn get(State(state): State<Arc<AppState>>) -> Response {
    let mut document = DOCUMENT.clone();
    document["servers"] = serde_json::json!([{
        "url": state.config.public_url,
        "description": "This Quarry service",
    }]);
    json(StatusCode::OK, &document)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_document_parses() {
        let doc: serde_json::Value =
            serde_json::from_str(super::OPENAPI_JSON).expect("openapi.json is JSON");
        assert_eq!(doc["openapi"], "3.1.0");
    }
}
