//! Who may use the settings page and its admin API: a session cookie (HttpOnly,
//! SameSite=Strict) given for the admin token or a one-time login link, and on every change the
//! page's CSRF token and a same-origin `Origin`. Integration keys open nothing here.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, header};
use quarry_core::ErrorKind;
use quarry_store::{AdminSession, now_ms};
use subtle::ConstantTimeEq;

use crate::error::ApiError;
use crate::state::AppState;

/// The session cookie's name.
pub(crate) const COOKIE: &str = "quarry_session";
/// The header that carries the CSRF token.
pub(crate) const CSRF_HEADER: &str = "x-csrf-token";
/// How long a session lasts.
pub(crate) const SESSION_MS: i64 = 12 * 3600 * 1000;
/// How long a login link works.
pub const LOGIN_LINK_MS: i64 = 15 * 60 * 1000;

/// A signed-in request; as an extractor, one that may also change something: a request with an
/// unsafe method passes [`signed_change`]'s checks too. An admin handler that takes a `Signed`
/// cannot run without them.
pub(crate) struct Signed {
    /// The cookie's secret.
    pub secret: String,
    /// The session.
    pub session: AdminSession,
}

impl FromRequestParts<Arc<AppState>> for Signed {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Signed, ApiError> {
        signed_change(state, &parts.method, &parts.headers).await
    }
}

/// True when `candidate` is the admin token (the store compares hashes in constant time).
pub(crate) async fn is_admin_token(state: &AppState, candidate: &str) -> Result<bool, ApiError> {
    Ok(state.store.is_admin_token(candidate).await?)
}

/// The session of this request, or 401.
pub(crate) async fn signed_in(state: &AppState, headers: &HeaderMap) -> Result<Signed, ApiError> {
    let unauthorized = || {
        ApiError::new(
            ErrorKind::Unauthorized,
            "sign in to Quarry's settings first: open the link `quarry admin link` prints, or /settings/login with the admin token",
        )
    };
    let secret = cookie(headers, COOKIE).ok_or_else(unauthorized)?;
    let session = state
        .store
        .admin_session(&secret, now_ms())
        .await?
        .ok_or_else(unauthorized)?;
    Ok(Signed { secret, session })
}

/// The session of a request that changes something: signed in, from this service's own pages
/// (`Origin`, when sent, names this service), carrying the session's CSRF token.
pub(crate) async fn signed_change(
    state: &AppState,
    method: &Method,
    headers: &HeaderMap,
) -> Result<Signed, ApiError> {
    let signed = signed_in(state, headers).await?;
    if !method.is_safe() {
        same_origin(state, headers)?;
        let sent = headers
            .get(CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let expected = signed.session.csrf.as_bytes();
        if !bool::from(sent.as_bytes().ct_eq(expected)) {
            return Err(ApiError::new(
                ErrorKind::CsrfRejected,
                "this change lacks the settings page's X-CSRF-Token (or it is stale): reload the page and try again",
            ));
        }
    }
    Ok(signed)
}

/// Rejects a request whose `Origin` (or, without one, `Referer`) names another site.
pub(crate) fn same_origin(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let origin = headers
        .get(header::ORIGIN)
        .or_else(|| headers.get(header::REFERER))
        .and_then(|v| v.to_str().ok());
    let Some(origin) = origin else {
        return Ok(());
    };
    let authority = origin
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .map(str::to_ascii_lowercase);
    match authority {
        Some(a) if state.config.allowed_hosts.contains(&a) => Ok(()),
        _ => Err(ApiError::new(
            ErrorKind::CsrfRejected,
            format!(
                "changes are accepted only from Quarry's own settings page, not from {origin:?}"
            ),
        )),
    }
}

/// The value of cookie `name`.
pub(crate) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.to_owned())
}

/// The `Set-Cookie` value that starts a session (`Secure` when served over https).
pub(crate) fn session_cookie(state: &AppState, secret: &str) -> Option<HeaderValue> {
    let secure = if state.config.public_url.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    HeaderValue::from_str(&format!(
        "{COOKIE}={secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{secure}",
        SESSION_MS / 1000
    ))
    .ok()
}

/// The `Set-Cookie` value that ends the session in the browser.
pub(crate) fn cleared_cookie() -> HeaderValue {
    HeaderValue::from_static("quarry_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")
}
