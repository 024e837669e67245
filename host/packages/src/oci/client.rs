//! The OCI distribution API, as much as pushing and pulling one artifact needs: manifests and
//! blobs by digest, monolithic uploads, and the registry's authentication: a `401` with
//! `WWW-Authenticate: Basic` is answered with the user's credentials, one with `Bearer
//! realm=...,service=...,scope=...` by asking the realm for a token (with the credentials,
//! when there are some) and sending that.
//!
//! Credentials come from `QUARRY_REGISTRY_USERNAME` and `QUARRY_REGISTRY_PASSWORD`, else from
//! the `auths` of Docker's `config.json` (`$DOCKER_CONFIG`, else `~/.docker`), which `docker
//! login`, `oras login` and `wkg` write. Every answer is bounded like a download.

use base64::Engine as _;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use reqwest::{Method, StatusCode, Url};
use serde::Deserialize;

use super::reference::Reference;
use crate::address::check_web_url;
use crate::error::PackageError;
use crate::fetch::{Fetcher, fetch_error, read_body};

/// The largest manifest, token or error answer read.
const MAX_SMALL_ANSWER: u64 = 4 << 20;

/// A user name and password (or token) for a registry.
#[derive(Clone)]
pub struct Credentials {
    username: String,
    password: String,
}

impl Credentials {
    /// The credentials the environment or Docker's configuration holds for `registry`.
    pub fn for_registry(registry: &str) -> Option<Credentials> {
        if let (Ok(username), Ok(password)) = (
            std::env::var("QUARRY_REGISTRY_USERNAME"),
            std::env::var("QUARRY_REGISTRY_PASSWORD"),
        ) {
            return Some(Credentials { username, password });
        }
        let dir = std::env::var_os("DOCKER_CONFIG")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".docker"))
            })?;
        let text = quarry_runtime::read_bounded_text(&dir.join("config.json"), 1 << 20).ok()?;
        let config: serde_json::Value = serde_json::from_str(&text).ok()?;
        let auth = config.get("auths")?.get(registry)?.get("auth")?.as_str()?;
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth)
            .ok()?;
        let (username, password) = std::str::from_utf8(&decoded).ok()?.split_once(':')?;
        Some(Credentials {
            username: username.to_owned(),
            password: password.to_owned(),
        })
    }
}

/// One registry, for one repository's requests.
pub struct Registry {
    fetcher: Fetcher,
    base: Url,
    repository: String,
    credentials: Option<Credentials>,
    /// What to send: `Basic ...` or `Bearer ...`, once a challenge said which.
    authorization: Option<HeaderValue>,
}

/// An answer's status, headers and body.
pub struct Answer {
    /// Its status.
    pub status: StatusCode,
    /// Its headers.
    pub headers: reqwest::header::HeaderMap,
    /// Its body, at most the cap asked for.
    pub body: Vec<u8>,
}

impl Registry {
    /// The registry of `reference`, with its credentials.
    pub fn new(fetcher: Fetcher, reference: &Reference) -> Result<Registry, PackageError> {
        Ok(Registry {
            fetcher,
            base: reference.base()?,
            repository: reference.repository.clone(),
            credentials: Credentials::for_registry(&reference.registry),
            authorization: None,
        })
    }

    /// The address of `path` under the repository (`manifests/1.2.0`, `blobs/sha256:...`).
    pub fn url(&self, path: &str) -> Result<Url, PackageError> {
        self.base
            .join(&format!("v2/{}/{path}", self.repository))
            .map_err(|e| PackageError::Refused(format!("{}: {e}", self.base)))
    }

    /// The address of `location` as an answer gave it (relative to the registry).
    pub fn resolve(&self, location: &str) -> Result<Url, PackageError> {
        let url = self
            .base
            .join(location)
            .map_err(|e| PackageError::Refused(format!("{location}: {e}")))?;
        check_web_url(&url)?;
        Ok(url)
    }

    /// Sends a request, answering one authentication challenge, and reads at most `max` bytes
    /// of the answer.
    pub async fn send(
        &mut self,
        method: Method,
        url: &Url,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        max: u64,
    ) -> Result<Answer, PackageError> {
        let mut answered_challenge = false;
        loop {
            let mut request = self.fetcher.client().request(method.clone(), url.clone());
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            // The sign-in goes to the registry alone, never to a storage host an upload's
            // location names.
            if let Some(authorization) = &self.authorization
                && url.origin() == self.base.origin()
            {
                request = request.header(AUTHORIZATION, authorization.clone());
            }
            if let Some(body) = body {
                request = request.body(body.to_vec());
            }
            let fetcher = self.fetcher.clone();
            let response = fetcher
                .within_deadline(url, async {
                    request.send().await.map_err(|e| fetch_error(url, &e))
                })
                .await?;
            if response.status() == StatusCode::UNAUTHORIZED
                && !answered_challenge
                && url.origin() == self.base.origin()
            {
                answered_challenge = true;
                let challenge = response
                    .headers()
                    .get(WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                self.authorization = Some(self.answer(url, &challenge).await?);
                continue;
            }
            let status = response.status();
            let headers = response.headers().clone();
            let cap = if status.is_success() { max } else { 64 << 10 };
            let body = fetcher
                .within_deadline(url, read_body(url, response, cap))
                .await?;
            return Ok(Answer {
                status,
                headers,
                body,
            });
        }
    }

    /// What to send for `challenge` (a `WWW-Authenticate` value).
    async fn answer(&self, url: &Url, challenge: &str) -> Result<HeaderValue, PackageError> {
        let no_credentials = || {
            PackageError::Fetch {
            url: url.to_string(),
            message: "the registry asks to sign in; set QUARRY_REGISTRY_USERNAME and QUARRY_REGISTRY_PASSWORD (or sign in with `docker login`)".into(),
        }
        };
        let (scheme, params) = challenge.split_once(' ').unwrap_or((challenge, ""));
        let header = |value: String| {
            HeaderValue::from_str(&value).map_err(|_| PackageError::Fetch {
                url: url.to_string(),
                message: "the registry's answer cannot be sent back".into(),
            })
        };
        if scheme.eq_ignore_ascii_case("basic") {
            let credentials = self.credentials.as_ref().ok_or_else(no_credentials)?;
            return header(format!("Basic {}", basic(credentials)));
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(PackageError::Fetch {
                url: url.to_string(),
                message: format!(
                    "the registry asks to sign in by {scheme:?}, which Quarry does not speak"
                ),
            });
        }
        let params = challenge_params(params);
        let get = |key: &str| {
            params
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .map(|(_, v)| v.as_str())
        };
        let realm = get("realm").ok_or_else(|| PackageError::Fetch {
            url: url.to_string(),
            message: "the registry's Bearer challenge names no realm".into(),
        })?;
        let mut token_url = Url::parse(realm).map_err(|e| PackageError::Fetch {
            url: url.to_string(),
            message: format!("the registry's token realm {realm:?} is not an address: {e}"),
        })?;
        check_web_url(&token_url)?;
        {
            let mut query = token_url.query_pairs_mut();
            for key in ["service", "scope"] {
                if let Some(value) = get(key) {
                    query.append_pair(key, value);
                }
            }
        }
        let mut request = self.fetcher.client().get(token_url.clone());
        if let Some(credentials) = &self.credentials {
            request = request.header(AUTHORIZATION, format!("Basic {}", basic(credentials)));
        }
        let body = self
            .fetcher
            .within_deadline(&token_url, async {
                let response = request
                    .send()
                    .await
                    .map_err(|e| fetch_error(&token_url, &e))?;
                if response.status() == StatusCode::UNAUTHORIZED {
                    return Err(no_credentials());
                }
                if !response.status().is_success() {
                    return Err(PackageError::Fetch {
                        url: token_url.to_string(),
                        message: format!("the token service answered {}", response.status()),
                    });
                }
                read_body(&token_url, response, MAX_SMALL_ANSWER).await
            })
            .await?;
        #[derive(Deserialize)]
        struct Token {
            token: Option<String>,
            access_token: Option<String>,
        }
        let token: Token = serde_json::from_slice(&body).map_err(|e| PackageError::Fetch {
            url: token_url.to_string(),
            message: format!("the token service's answer is not a token: {e}"),
        })?;
        let token = token
            .token
            .or(token.access_token)
            .ok_or_else(|| PackageError::Fetch {
                url: token_url.to_string(),
                message: "the token service's answer holds no token".into(),
            })?;
        header(format!("Bearer {token}"))
    }
}

/// `user:password` in base64.
fn basic(credentials: &Credentials) -> String {
    base64::engine::general_purpose::STANDARD
        .encode(format!("{}:{}", credentials.username, credentials.password))
}

/// The `key="value"` pairs of a challenge.
fn challenge_params(text: &str) -> Vec<(String, String)> {
    let mut params = Vec::new();
    let mut rest = text.trim();
    while let Some((key, after)) = rest.split_once('=') {
        let key = key.trim().trim_start_matches(',').trim().to_owned();
        let after = after.trim_start();
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            match quoted.find('"') {
                Some(end) => (&quoted[..end], &quoted[end + 1..]),
                None => (quoted, ""),
            }
        } else {
            match after.find(',') {
                Some(end) => (&after[..end], &after[end..]),
                None => (after, ""),
            }
        };
        params.push((key, value.to_owned()));
        rest = next.trim_start().trim_start_matches(',');
    }
    params
}

/// The registry's own words for a failed answer (`{"errors":[{"code","message"}]}`), else its
/// status.
pub fn registry_error(url: &Url, answer: &Answer, doing: &str) -> PackageError {
    #[derive(Deserialize)]
    struct Errors {
        errors: Vec<One>,
    }
    #[derive(Deserialize)]
    struct One {
        code: Option<String>,
        message: Option<String>,
    }
    let detail = serde_json::from_slice::<Errors>(&answer.body)
        .ok()
        .map(|e| {
            e.errors
                .iter()
                .map(|one| {
                    format!(
                        "{} {}",
                        one.code.as_deref().unwrap_or_default(),
                        one.message.as_deref().unwrap_or_default()
                    )
                    .trim()
                    .to_owned()
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .filter(|d| !d.is_empty());
    let hint = match answer.status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            "; check QUARRY_REGISTRY_USERNAME and QUARRY_REGISTRY_PASSWORD (or `docker login`)"
        }
        StatusCode::NOT_FOUND => "; check the name and tag",
        _ => "",
    };
    PackageError::Fetch {
        url: url.to_string(),
        message: format!(
            "{doing}: the registry answered {}{}{hint}",
            answer.status,
            detail.map(|d| format!(" ({d})")).unwrap_or_default()
        ),
    }
}

/// The `Content-Type` of an answer.
pub fn content_type(answer: &Answer) -> &str {
    answer
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_parameters_are_read_quoted_or_not() {
        let params = challenge_params(
            r#"realm="https://auth.example.org/token",service="registry.example.org",scope="repository:quarry/notes:pull,push""#,
        );
        assert_eq!(
            params,
            [
                (
                    "realm".to_owned(),
                    "https://auth.example.org/token".to_owned()
                ),
                ("service".to_owned(), "registry.example.org".to_owned()),
                (
                    "scope".to_owned(),
                    "repository:quarry/notes:pull,push".to_owned()
                ),
            ]
        );
        assert_eq!(
            challenge_params("realm=basic-realm"),
            [("realm".to_owned(), "basic-realm".to_owned())]
        );
    }
}
