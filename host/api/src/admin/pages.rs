//! The settings and search pages and their sign-in: `/settings` (the page, its script and
//! styles), `/search` and `/search/docs/{connector_id}/{doc_id}` (one page, its script and
//! styles), `/settings/login` (the admin token form, and one-time links; back to the page asked
//! for), `/settings/logout`.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use quarry_store::now_ms;

use super::session::{
    SESSION_MS, cleared_cookie, is_admin_token, same_origin, session_cookie, signed_change,
    signed_in,
};
use crate::error::ApiError;
use crate::state::AppState;
/// The largest sign-in form read (it holds one token of 64 characters).
const MAX_SIGN_IN_BYTES: usize = 4 << 10;

const PAGE: &str = include_str!("../../assets/settings.html");
const LOGIN: &str = include_str!("../../assets/login.html");
const SCRIPT: &str = include_str!("../../assets/settings.js");
const COMMON_SCRIPT: &str = include_str!("../../assets/common.js");
const STYLE: &str = include_str!("../../assets/settings.css");
const SEARCH_PAGE: &str = include_str!("../../assets/search.html");
const SEARCH_SCRIPT: &str = include_str!("../../assets/search.js");
const SEARCH_STYLE: &str = include_str!("../../assets/search.css");
/// The longest address the sign-in returns to.
const MAX_NEXT_BYTES: usize = 2048;

/// Every page: nothing from elsewhere, no framing, no referrer to other sites (login links
/// carry a code; same-origin keeps the `Origin` header that changes are checked by).
fn page(status: StatusCode, content_type: &'static str, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn html(status: StatusCode, body: String) -> Response {
    page(status, "text/html; charset=utf-8", body)
}

fn redirect(to: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let location = HeaderValue::from_str(to).unwrap_or(HeaderValue::from_static("/settings/login"));
    response.headers_mut().insert(header::LOCATION, location);
    response
}

/// `next` when it is one of this service's pages to return to after signing in (a path of the
/// settings or search page, never another site), else the settings page.
fn return_to(next: Option<&str>) -> &str {
    let Some(next) = next else {
        return "/settings";
    };
    let page = next.split(['?', '#']).next().unwrap_or_default();
    let ours = page == "/settings" || page == "/search" || page.starts_with("/search/docs/");
    let plain = next.len() <= MAX_NEXT_BYTES
        && !page.contains("..")
        && next
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'\\' && b != b'"' && b != b'<' && b != b'>');
    if ours && plain { next } else { "/settings" }
}

/// The value of `name` in a URL-encoded query or form.
fn form_value(encoded: &[u8], name: &str) -> Option<String> {
    form_urlencoded::parse(encoded)
        .find(|(n, _)| n == name)
        .map(|(_, value)| value.into_owned())
}

/// Text for HTML.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn login_page(status: StatusCode, message: &str, next: &str) -> Response {
    let notice = if message.is_empty() {
        String::new()
    } else {
        format!(r#"<p class="error" role="alert">{}</p>"#, escape(message))
    };
    html(
        status,
        LOGIN
            .replace("{{NOTICE}}", &notice)
            .replace("{{NEXT}}", &escape(next)),
    )
}

/// `GET /settings`: the page, or the sign-in form's address.
pub(crate) async fn settings(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    match signed_in(&state, &headers).await {
        Ok(signed) => html(
            StatusCode::OK,
            PAGE.replace("{{CSRF}}", &escape(&signed.session.csrf))
                .replace("{{BASE_URL}}", &escape(&state.config.public_url)),
        ),
        Err(_) => redirect("/settings/login"),
    }
}

/// `GET /search` and `GET /search/docs/{connector_id}/{doc_id}` (the document view a search
/// result's `link` opens): the page, or the sign-in form, which comes back here. Someone without
/// the session learns nothing of the document.
pub(crate) async fn search(
    State(state): State<Arc<AppState>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Response {
    match signed_in(&state, &headers).await {
        Ok(signed) => html(
            StatusCode::OK,
            SEARCH_PAGE
                .replace("{{CSRF}}", &escape(&signed.session.csrf))
                .replace("{{BASE_URL}}", &escape(&state.config.public_url)),
        ),
        Err(_) => {
            let here = uri.path_and_query().map_or("/search", |p| p.as_str());
            let next: String =
                form_urlencoded::byte_serialize(return_to(Some(here)).as_bytes()).collect();
            redirect(&format!("/settings/login?next={next}"))
        }
    }
}

/// `GET /settings/assets/common.js`: what both pages' scripts share.
pub(crate) async fn common_script() -> Response {
    page(
        StatusCode::OK,
        "text/javascript; charset=utf-8",
        COMMON_SCRIPT.to_owned(),
    )
}

/// `GET /settings/assets/search.js`.
pub(crate) async fn search_script() -> Response {
    page(
        StatusCode::OK,
        "text/javascript; charset=utf-8",
        SEARCH_SCRIPT.to_owned(),
    )
}

/// `GET /settings/assets/search.css`.
pub(crate) async fn search_style() -> Response {
    page(
        StatusCode::OK,
        "text/css; charset=utf-8",
        SEARCH_STYLE.to_owned(),
    )
}

/// `GET /settings/assets/settings.js`.
pub(crate) async fn script() -> Response {
    page(
        StatusCode::OK,
        "text/javascript; charset=utf-8",
        SCRIPT.to_owned(),
    )
}

/// `GET /settings/assets/settings.css`.
pub(crate) async fn style() -> Response {
    page(StatusCode::OK, "text/css; charset=utf-8", STYLE.to_owned())
}

/// `GET /settings/login`: the form, or a one-time link (`?code=`) that signs in.
pub(crate) async fn login_form(
    State(state): State<Arc<AppState>>,
    RawQuery(query): RawQuery,
) -> Response {
    let query = query.unwrap_or_default();
    let next = form_value(query.as_bytes(), "next");
    let next = return_to(next.as_deref());
    let Some(code) = form_value(query.as_bytes(), "code") else {
        return login_page(StatusCode::OK, "", next);
    };
    match state.store.redeem_login_link(&code, now_ms()).await {
        Ok(true) => start_session(&state, next).await,
        Ok(false) => login_page(
            StatusCode::UNAUTHORIZED,
            "This login link was used already or has expired. Sign in with the admin token, or run `quarry admin link` for a new link.",
            next,
        ),
        Err(e) => ApiError::internal("redeeming a login link", &e).into_response(),
    }
}

/// `POST /settings/login` with `token=<admin token>` (a form).
pub(crate) async fn login(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Err(e) = same_origin(&state, &headers) {
        return e.into_response();
    }
    // The form holds one token of 64 characters and the page to return to: a larger body is
    // refused unread.
    let bytes = match axum::body::to_bytes(body, MAX_SIGN_IN_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return login_page(
                StatusCode::PAYLOAD_TOO_LARGE,
                "The form could not be read: it holds only the admin token.",
                "/settings",
            );
        }
    };
    let next = form_value(&bytes, "next");
    let next = return_to(next.as_deref());
    let token = form_value(&bytes, "token").unwrap_or_default();
    if token.trim().is_empty() {
        return login_page(
            StatusCode::BAD_REQUEST,
            "Enter the admin token that `quarry serve` printed at its first start (`quarry admin token` makes a new one), or open the link `quarry admin link` prints.",
            next,
        );
    }
    let signs_in = match is_admin_token(&state, &token).await {
        Ok(signs_in) => signs_in,
        Err(e) => return e.into_response(),
    };
    if !signs_in {
        // A guess costs a moment; the token has 256 random bits anyway.
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        tracing::warn!("settings sign-in with a wrong admin token");
        return login_page(
            StatusCode::UNAUTHORIZED,
            "That is not the admin token. Copy it from the output of the first `quarry serve`, make a new one with `quarry admin token`, or open the link `quarry admin link` prints.",
            next,
        );
    }
    start_session(&state, next).await
}

/// Starts a session and goes to `next` (checked by [`return_to`]). The page is reached by a
/// same-site step (a refresh, not a redirect) so that the SameSite=Strict cookie is sent even
/// when the link was opened from another application.
async fn start_session(state: &AppState, next: &str) -> Response {
    let new = match state.store.create_admin_session(now_ms(), SESSION_MS).await {
        Ok(new) => new,
        Err(e) => return ApiError::internal("starting an admin session", &e).into_response(),
    };
    let next = escape(next);
    let mut response = html(
        StatusCode::OK,
        format!(
            r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={next}"><title>Signed in</title></head><body><p><a href="{next}">Continue to Quarry</a></p></body></html>"#
        ),
    );
    if let Some(cookie) = session_cookie(state, &new.secret) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    tracing::info!("signed in to the settings page");
    response
}

/// `POST /settings/logout`: ends the session (CSRF-checked like every change).
pub(crate) async fn logout(
    State(state): State<Arc<AppState>>,
    method: axum::http::Method,
    headers: HeaderMap,
) -> Response {
    let signed = match signed_change(&state, &method, &headers).await {
        Ok(signed) => signed,
        Err(e) => return e.into_response(),
    };
    if let Err(e) = state.store.end_admin_session(&signed.secret).await {
        return ApiError::internal("ending an admin session", &e).into_response();
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, cleared_cookie());
    response
}
