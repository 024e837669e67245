//! The router driven in process with `oneshot` (axum's `examples/testing`): a real store and a
//! real index in a temporary folder, no socket. The access checks and the accounting layer are
//! proved here; what needs the process (signals, the CLI, plugins) is in `tests/`.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use quarry_api::{AdminConfig, ApiConfig, ApiLimits, AppState, router};
use quarry_index::SearchIndex;
use quarry_runtime::{PluginSet, Runtime, RuntimeConfig};
use quarry_store::{AuditFilter, Quota, Sharing, Store, now_ms};
use serde_json::Value;
use tower::ServiceExt;

/// A service over an empty store and index, with one integration per sharing answer.
struct Service {
    _dir: tempfile::TempDir,
    store: Store,
    state: Arc<AppState>,
    all_key: String,
    declined_key: String,
}

const HOST: &str = "127.0.0.1:4747";

async fn service() -> Service {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().join("quarry.db"), &dir.path().join("keys"))
        .await
        .expect("store");
    let index = SearchIndex::open(&dir.path().join("index"), true).expect("index");
    let runtime = Arc::new(Runtime::new(RuntimeConfig::default()).expect("runtime"));
    let admin = AdminConfig {
        plugins_dir: dir.path().join("plugins"),
        staging_dir: dir.path().join("staging"),
        lock_path: dir.path().join("plugins.lock"),
        runtime,
    };
    let config = ApiConfig::new(HOST.parse().expect("address"), None);
    let state = AppState::new(
        store.clone(),
        Arc::new(index),
        PluginSet::default(),
        config,
        None,
        admin,
        ApiLimits::default(),
    );
    let key = |name: &'static str, sharing: Sharing| {
        let store = store.clone();
        async move {
            let (_, key) = store
                .create_integration(name, &sharing, Quota::Limited(100), None, now_ms())
                .await
                .expect("integration");
            key.expose().to_owned()
        }
    };
    Service {
        all_key: key("Everything", Sharing::All).await,
        declined_key: key("Nothing", Sharing::Declined).await,
        _dir: dir,
        store,
        state,
    }
}

impl Service {
    fn app(&self) -> Router {
        router(self.state.clone())
    }

    async fn get(
        &self,
        path: &str,
        key: Option<&str>,
    ) -> (StatusCode, axum::http::HeaderMap, Value) {
        let mut request = Request::get(path).header(header::HOST, HOST);
        if let Some(key) = key {
            request = request.header(header::AUTHORIZATION, format!("Bearer {key}"));
        }
        let response = self
            .app()
            .oneshot(request.body(Body::empty()).expect("request"))
            .await
            .expect("answer");
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.expect("body").to_bytes();
        let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (parts.status, parts.headers, json)
    }

    async fn audited_endpoints(&self) -> Vec<(String, u16)> {
        self.state.flush().await;
        let entries = self
            .store
            .audit(&AuditFilter::default())
            .await
            .expect("audit log");
        entries
            .into_iter()
            .map(|e| (e.endpoint, e.status))
            .collect()
    }
}

#[tokio::test]
async fn an_authenticated_request_is_answered_with_quota_headers_and_audited_under_its_route() {
    let s = service().await;
    let (status, headers, body) = s.get("/api/v1/connectors", Some(&s.all_key)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["connectors"], serde_json::json!([]));
    assert_eq!(headers["x-quota-limit"], "100");
    assert_eq!(headers["x-quota-remaining"], "99");
    assert!(headers.contains_key("x-quota-reset"));
    assert_eq!(
        s.audited_endpoints().await,
        [("GET /api/v1/connectors".to_owned(), 200)]
    );
}

#[tokio::test]
async fn a_request_without_a_key_is_refused_before_the_handler_and_not_audited() {
    let s = service().await;
    let (status, headers, body) = s.get("/api/v1/connectors", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "UNAUTHORIZED");
    assert_eq!(headers[header::WWW_AUTHENTICATE], "Bearer");
    assert!(!headers.contains_key("x-quota-limit"));
    assert!(s.audited_endpoints().await.is_empty());
}

#[tokio::test]
async fn a_refusal_after_authentication_still_counts_and_is_audited_with_the_route_pattern() {
    let s = service().await;
    let path = "/api/v1/connectors/cn_x/docs/d1";
    let (status, headers, body) = s.get(path, Some(&s.declined_key)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(body["error"]["code"], "DATA_SHARING_DECLINED");
    assert_eq!(headers["x-quota-remaining"], "99");
    assert_eq!(
        s.audited_endpoints().await,
        [(
            "GET /api/v1/connectors/{connector_id}/docs/{doc_id}".to_owned(),
            403
        )]
    );
}

#[tokio::test]
async fn an_unknown_route_is_a_404_in_the_envelope_with_the_request_id() {
    let s = service().await;
    let (status, headers, body) = s.get("/api/v1/nothing-here", Some(&s.all_key)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["code"], "RESOURCE_NOT_FOUND");
    assert_eq!(
        body["error"]["request_id"].as_str(),
        headers["x-request-id"].to_str().ok()
    );
    assert!(s.audited_endpoints().await.is_empty());
}
