//! The checks every `/api/v1` data request passes, in the contract's order after routing:
//! authentication, then data sharing, then quota and the per-integration bounds of `limits`
//! (validation is the handler's).
//!
//! Two pieces, in the shape of meilisearch's `GuardedData`: the [`Caller`] extractor runs the
//! checks before a handler's body (a handler that takes a `Caller` cannot run unchecked), and
//! the [`account`] layer, on the data routes, answers every authenticated request with the quota
//! headers and writes it to the audit log under its route (`MatchedPath`), whatever its outcome.

use std::sync::{Arc, OnceLock};

use axum::extract::{FromRequestParts, MatchedPath, RawPathParams, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use quarry_core::times::rfc3339;
use quarry_core::{ConnectorId, DocId, ErrorKind};
use quarry_store::{AuditEntry, Integration, Quota, Sharing, now_ms};

use crate::error::ApiError;
use crate::extractors::frame::RequestId;
use crate::extractors::limits::RequestPermit;
use crate::state::AppState;

/// An authenticated caller whose request passed sharing, quota and the integration's bounds.
/// Holding it holds the request's place among the integration's requests in flight.
pub(crate) struct Caller {
    /// Its integration.
    pub integration: Integration,
    _permit: RequestPermit,
}

impl Caller {
    /// The connectors this caller may see.
    pub(crate) fn sharing(&self) -> &Sharing {
        &self.integration.sharing
    }
}

/// What a request read, for the audit log; a handler puts it in its answer's extensions.
#[derive(Debug, Clone, Default)]
pub(crate) struct Read {
    connector_id: Option<String>,
    doc_id: Option<String>,
}

impl Read {
    /// A read of one document.
    pub(crate) fn document(connector: &ConnectorId, doc: &DocId) -> Read {
        Read {
            connector_id: Some(connector.to_string()),
            doc_id: Some(doc.to_string()),
        }
    }

    /// `response`, marked as this read.
    pub(crate) fn on(self, mut response: Response) -> Response {
        response.extensions_mut().insert(self);
        response
    }
}

/// What authentication learned about a request, for its quota headers and its audit entry.
pub(crate) struct Account {
    integration_id: String,
    key_lookup: String,
    quota: Quota,
    used: u64,
    reset_ms: i64,
    /// The connector id the request names, as sent.
    connector: Option<String>,
}

/// How a request ended, for its audit entry.
pub(crate) struct Outcome {
    /// `METHOD /route` for `/api/v1`, `mcp:<tool>` for a tool call.
    pub endpoint: String,
    /// The request's id.
    pub request_id: String,
    /// What it read.
    pub read: Read,
    /// Bytes answered.
    pub bytes: u64,
    /// Its HTTP status, or the status the same refusal would have over HTTP.
    pub status: u16,
}

impl Account {
    /// Writes the request's audit entry (in the background).
    pub(crate) fn audit(&self, state: &AppState, outcome: Outcome) {
        state.audit.record(
            AuditEntry {
                time_ms: now_ms(),
                request_id: outcome.request_id,
                integration_id: self.integration_id.clone(),
                endpoint: outcome.endpoint,
                connector_id: outcome.read.connector_id.or_else(|| self.connector.clone()),
                doc_id: outcome.read.doc_id,
                bytes: outcome.bytes,
                status: outcome.status,
            },
            self.key_lookup.clone(),
        );
    }
}

/// Where the extractor leaves the [`Account`] of the request for the layer.
#[derive(Default)]
struct AccountSlot(OnceLock<Account>);

impl FromRequestParts<Arc<AppState>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Caller, ApiError> {
        let slot = parts
            .extensions
            .get::<Arc<AccountSlot>>()
            .cloned()
            .ok_or_else(|| ApiError::internal("access check", &"a data route without `account`"))?;
        let connector = route_connector(parts, state).await;
        Caller::admit(state, &parts.headers, connector, &slot.0).await
    }
}

impl Caller {
    /// The checks of a request with `headers` that names `connector` (as sent): authentication
    /// (the request is counted), sharing, quota, then a place among the integration's requests
    /// in flight. Once authenticated, the request's [`Account`] is left in `account`, whether it
    /// is then refused or not.
    pub(crate) async fn admit(
        state: &AppState,
        headers: &HeaderMap,
        connector: Option<String>,
        account: &OnceLock<Account>,
    ) -> Result<Caller, ApiError> {
        let (integration, learned) = authenticate(state, headers, connector).await?;
        let account = account.get_or_init(|| learned);
        check_sharing(&integration.sharing, account.connector.as_deref())?;
        check_quota(account)?;
        let permit = state.admission.admit(&integration.id)?;
        Ok(Caller {
            integration,
            _permit: permit,
        })
    }
}

/// The layer on the data routes: gives the [`Caller`] extractor a place for what it learns, then
/// adds the quota headers to the answer of an authenticated request and audits it.
pub(crate) async fn account(
    State(state): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let slot = Arc::new(AccountSlot::default());
    request.extensions_mut().insert(slot.clone());
    let route = request.extensions().get::<MatchedPath>().map_or_else(
        || request.uri().path().to_owned(),
        |m| m.as_str().to_owned(),
    );
    let endpoint = format!("{} {route}", request.method());
    let request_id = request
        .extensions()
        .get::<RequestId>()
        .map(|id| id.0.to_string())
        .unwrap_or_default();
    let mut response = next.run(request).await;
    let Some(account) = slot.0.get() else {
        return response;
    };
    for (name, value) in quota_headers(account) {
        response.headers_mut().insert(name, value);
    }
    let read = response
        .extensions_mut()
        .remove::<Read>()
        .unwrap_or_default();
    let bytes = response
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .or_else(|| axum::body::HttpBody::size_hint(response.body()).exact())
        .unwrap_or(0);
    account.audit(
        &state,
        Outcome {
            endpoint,
            request_id,
            read,
            bytes,
            status: response.status().as_u16(),
        },
    );
    response
}

/// The connector id the route's path names, as sent (empty when the path does not decode);
/// `None` on routes without one.
async fn route_connector(parts: &mut Parts, state: &Arc<AppState>) -> Option<String> {
    let names_connector = parts
        .extensions
        .get::<MatchedPath>()
        .is_some_and(|m| m.as_str().contains("{connector_id}"));
    if !names_connector {
        return None;
    }
    let params = RawPathParams::from_request_parts(parts, state).await.ok();
    let sent = params.and_then(|params| {
        params
            .iter()
            .find(|(name, _)| *name == "connector_id")
            .map(|(_, value)| value.to_owned())
    });
    Some(sent.unwrap_or_default())
}

/// The integration of the request's key, counted. Never says why a key was refused.
async fn authenticate(
    state: &AppState,
    headers: &HeaderMap,
    connector: Option<String>,
) -> Result<(Integration, Account), ApiError> {
    let (integration, key_lookup) = known_key(state, headers).await?;
    let now = now_ms();
    let (used, month) = state.store.count_request(&integration.id, now).await?;
    let account = Account {
        integration_id: integration.id.clone(),
        key_lookup,
        quota: integration.quota,
        used,
        reset_ms: month.reset_ms,
        connector,
    };
    Ok((integration, account))
}

/// The integration of the request's key and the key's lookup id, not counted. A missing or
/// wrong key is a 401, or a 429 once such requests pass their service-wide rate.
pub(crate) async fn known_key(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<(Integration, String), ApiError> {
    let unauthorized = || {
        ApiError::new(
            ErrorKind::Unauthorized,
            "a valid API key is required: send the header Authorization: Bearer <API_KEY>",
        )
        .with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))
    };
    let key = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token);
    let known = match key {
        Some(key) => state.store.authenticate(key, now_ms()).await?,
        None => None,
    };
    // Refusals are bounded service-wide: past their rate they are 429s.
    known.ok_or_else(|| state.admission.refuse_unknown_key(unauthorized()))
}

/// An integration that sent a valid key, for routes about the integration itself rather than
/// the user's data (its agent guide): not counted, whatever its sharing and quota.
pub(crate) struct Known(pub Integration);

impl FromRequestParts<Arc<AppState>> for Known {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Known, ApiError> {
        let (integration, _) = known_key(state, &parts.headers).await?;
        Ok(Known(integration))
    }
}

/// The token of `Bearer <token>`: the scheme in any case, then exactly one token.
pub(crate) fn bearer_token(value: &str) -> Option<&str> {
    let mut parts = value.split_ascii_whitespace();
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && parts.next().is_none()).then_some(token)
}

/// Declined sharing refuses every data request; selected sharing refuses a route naming a
/// connector outside the selection.
fn check_sharing(sharing: &Sharing, connector: Option<&str>) -> Result<(), ApiError> {
    match (sharing, connector) {
        (Sharing::Declined, _) => Err(ApiError::new(
            ErrorKind::SharingDeclined,
            "the user declined to share their data with this integration; they can change \
             this in Quarry's settings",
        )),
        (Sharing::Selected(shared), Some(id))
            if !ConnectorId::parse(id).is_ok_and(|id| shared.contains(&id)) =>
        {
            Err(ApiError::new(
                ErrorKind::SharingDeclined,
                "this connector is not among those the user shared with this integration",
            ))
        }
        _ => Ok(()),
    }
}

fn check_quota(account: &Account) -> Result<(), ApiError> {
    let Quota::Limited(limit) = account.quota else {
        return Ok(());
    };
    if account.used <= limit {
        return Ok(());
    }
    let wait_s = (account.reset_ms - now_ms()).max(0).div_euclid(1000) + 1;
    Err(ApiError::new(
        ErrorKind::QuotaExceeded,
        format!(
            "this integration's monthly quota of {limit} requests is used up; it resets at {}",
            rfc3339(account.reset_ms)
        ),
    )
    .with_header(header::RETRY_AFTER, HeaderValue::from(wait_s)))
}

fn quota_headers(account: &Account) -> [(HeaderName, HeaderValue); 3] {
    let (limit, remaining) = match account.quota {
        Quota::Limited(limit) => (
            HeaderValue::from(limit),
            HeaderValue::from(limit.saturating_sub(account.used)),
        ),
        Quota::Unlimited => (
            HeaderValue::from_static("unlimited"),
            HeaderValue::from_static("unlimited"),
        ),
    };
    let reset =
        HeaderValue::from_str(&rfc3339(account.reset_ms)).unwrap_or(HeaderValue::from_static(""));
    [
        (HeaderName::from_static("x-quota-limit"), limit),
        (HeaderName::from_static("x-quota-remaining"), remaining),
        (HeaderName::from_static("x-quota-reset"), reset),
    ]
}

#[cfg(test)]
mod tests {
    use super::bearer_token;

    #[test]
    fn bearer_scheme_is_case_insensitive_with_exactly_one_token() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bEaReR   abc"), Some("abc"));
        for bad in ["Bearer", "Bearer a b", "Basic abc", "", "abc"] {
            assert_eq!(bearer_token(bad), None, "{bad}");
        }
    }
}
