//! A signed-in browser as far as the server can tell, for tests of the settings and search
//! pages' admin API: the session cookie the sign-in form gives and the page's CSRF token.

use serde_json::Value;

use crate::http::{self, Response};
use crate::quarry::Quarry;

/// A signed-in browser, as far as the server can tell: the session cookie and the CSRF token.
pub struct Admin {
    /// `quarry_session=...`, for a `Cookie` header.
    pub cookie: String,
    /// The page's CSRF token.
    pub csrf: String,
}

/// Sends one raw request to `q`.
pub fn send(
    q: &Quarry,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    q.raw(&http::build(method, path, &q.addr, headers, body))
}

/// The session cookie an answer sets, as `name=value`.
pub fn session_cookie(response: &Response) -> Option<String> {
    let set = response.header("set-cookie")?;
    let pair = set.split(';').next()?;
    pair.starts_with("quarry_session=")
        .then(|| pair.to_owned())
        .filter(|p| p.len() > "quarry_session=".len())
}

/// Signs in with the admin token, as the sign-in form does; the session and the page's CSRF
/// token.
pub fn sign_in(q: &Quarry) -> Admin {
    let form = format!("token={}", q.admin_token());
    let response = send(
        q,
        "POST",
        "/settings/login",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        form.as_bytes(),
    );
    assert_eq!(response.status, 200, "{}", response.text());
    let set = response.header("set-cookie").expect("a session cookie");
    assert!(set.contains("HttpOnly"), "{set}");
    assert!(set.contains("SameSite=Strict"), "{set}");
    let cookie = session_cookie(&response).expect("a session cookie");
    let page = send(q, "GET", "/settings", &[("Cookie", &cookie)], b"");
    assert_eq!(page.status, 200);
    let html = page.text();
    let csrf = html
        .split("name=\"csrf-token\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page carries its CSRF token")
        .to_owned();
    Admin { cookie, csrf }
}

impl Admin {
    /// A request of the signed-in page (cookie and CSRF token; JSON `body`).
    pub fn call(&self, q: &Quarry, method: &str, path: &str, body: Option<&Value>) -> Response {
        let text = body.map(Value::to_string).unwrap_or_default();
        let mut headers = vec![
            ("Cookie", self.cookie.as_str()),
            ("X-CSRF-Token", &self.csrf),
        ];
        if body.is_some() {
            headers.push(("Content-Type", "application/json"));
        }
        send(q, method, path, &headers, text.as_bytes())
    }
}
