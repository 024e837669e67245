//! The checks every `/api/v1` data request passes, in the contract's order after routing:
//! authentication, then data sharing, then quota and the per-integration bounds of `limits`
//! (validation is the handler's). Every
//! authenticated request is counted, whatever its outcome, and answered with the quota headers;
//! it is also written to the audit log.

use std::future::Future;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use quarry_core::{ConnectorId, ErrorKind};
use quarry_store::{AuditEntry, Integration, Quota, Sharing, now_ms};

use crate::AppState;
use crate::error::ApiError;
use crate::frame::RequestId;
use quarry_core::times::rfc3339;

/// An authenticated caller.
pub(crate) struct Caller {
    /// Its integration.
    pub integration: Integration,
    key_lookup: String,
    used: u64,
    reset_ms: i64,
}

/// What a request read, for the audit log.
#[derive(Debug, Clone, Default)]
pub(crate) struct Read {
    pub connector_id: Option<String>,
    pub doc_id: Option<String>,
}

impl Read {
    /// A read of one document.
    pub(crate) fn document(connector: &ConnectorId, doc: &quarry_core::DocId) -> Read {
        Read {
            connector_id: Some(connector.to_string()),
            doc_id: Some(doc.to_string()),
        }
    }
}

/// Answers a request: authenticates and counts it, checks sharing (for `connector`, when the
/// route names one) and quota, then runs `handler`. The answer carries the quota headers.
pub(crate) async fn guarded<F, Fut>(
    state: &Arc<AppState>,
    headers: &HeaderMap,
    request_id: &RequestId,
    endpoint: &'static str,
    connector: Option<&str>,
    handler: F,
) -> Response
where
    F: FnOnce(Arc<Caller>, Arc<AppState>) -> Fut,
    Fut: Future<Output = Result<(Response, Read), ApiError>>,
{
    let caller = match authenticate(state, headers).await {
        Ok(caller) => Arc::new(caller),
        Err(error) => return error.into_response(),
    };
    let admitted = caller
        .check_sharing(connector)
        .and_then(|()| caller.check_quota())
        .and_then(|()| state.admission.admit(&caller.integration.id));
    let (mut response, read) = match admitted {
        Ok(permit) => {
            let answer = match handler(caller.clone(), state.clone()).await {
                Ok(answer) => answer,
                Err(error) => (error.into_response(), Read::default()),
            };
            drop(permit);
            answer
        }
        Err(error) => (error.into_response(), Read::default()),
    };
    for (name, value) in caller.quota_headers() {
        response.headers_mut().insert(name, value);
    }
    let bytes = response
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .or_else(|| axum::body::HttpBody::size_hint(response.body()).exact())
        .unwrap_or(0);
    state.audit.record(
        AuditEntry {
            time_ms: now_ms(),
            request_id: request_id.0.to_string(),
            integration_id: caller.integration.id.clone(),
            endpoint: endpoint.to_owned(),
            connector_id: read.connector_id.or_else(|| connector.map(str::to_owned)),
            doc_id: read.doc_id,
            bytes,
            status: response.status().as_u16(),
        },
        caller.key_lookup.clone(),
    );
    response
}

/// The integration of the request's key, counted. Never says why a key was refused.
async fn authenticate(state: &AppState, headers: &HeaderMap) -> Result<Caller, ApiError> {
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
        .and_then(bearer_token)
        .ok_or_else(unauthorized)?;
    let now = now_ms();
    let (integration, key_lookup) = state
        .store
        .authenticate(key, now)
        .await
        .map_err(|e| ApiError::internal("authenticating", &e))?
        .ok_or_else(unauthorized)?;
    let (used, month) = state
        .store
        .count_request(&integration.id, now)
        .await
        .map_err(|e| ApiError::internal("counting a request", &e))?;
    Ok(Caller {
        integration,
        key_lookup,
        used,
        reset_ms: month.reset_ms,
    })
}

/// The token of `Bearer <token>`: the scheme in any case, then exactly one token.
fn bearer_token(value: &str) -> Option<&str> {
    let mut parts = value.split_ascii_whitespace();
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && parts.next().is_none()).then_some(token)
}

impl Caller {
    /// The connectors this caller may see.
    pub(crate) fn sharing(&self) -> &Sharing {
        &self.integration.sharing
    }

    fn check_sharing(&self, connector: Option<&str>) -> Result<(), ApiError> {
        let declined = || {
            ApiError::new(
                ErrorKind::SharingDeclined,
                "the user declined to share their data with this integration; they can change \
                 this in Quarry's settings",
            )
        };
        match (&self.integration.sharing, connector) {
            (Sharing::Declined, _) => Err(declined()),
            (Sharing::Selected(shared), Some(id)) => {
                let allowed = ConnectorId::parse(id).is_ok_and(|id| shared.contains(&id));
                if allowed {
                    Ok(())
                } else {
                    Err(ApiError::new(
                        ErrorKind::SharingDeclined,
                        "this connector is not among those the user shared with this integration",
                    ))
                }
            }
            _ => Ok(()),
        }
    }

    fn check_quota(&self) -> Result<(), ApiError> {
        let Quota::Limited(limit) = self.integration.quota else {
            return Ok(());
        };
        if self.used <= limit {
            return Ok(());
        }
        let wait_s = (self.reset_ms - now_ms()).max(0).div_euclid(1000) + 1;
        Err(ApiError::new(
            ErrorKind::QuotaExceeded,
            format!(
                "this integration's monthly quota of {limit} requests is used up; it resets at {}",
                rfc3339(self.reset_ms)
            ),
        )
        .with_header(header::RETRY_AFTER, HeaderValue::from(wait_s)))
    }

    fn quota_headers(&self) -> [(HeaderName, HeaderValue); 3] {
        let (limit, remaining) = match self.integration.quota {
            Quota::Limited(limit) => (
                HeaderValue::from(limit),
                HeaderValue::from(limit.saturating_sub(self.used)),
            ),
            Quota::Unlimited => (
                HeaderValue::from_static("unlimited"),
                HeaderValue::from_static("unlimited"),
            ),
        };
        let reset =
            HeaderValue::from_str(&rfc3339(self.reset_ms)).unwrap_or(HeaderValue::from_static(""));
        [
            (HeaderName::from_static("x-quota-limit"), limit),
            (HeaderName::from_static("x-quota-remaining"), remaining),
            (HeaderName::from_static("x-quota-reset"), reset),
        ]
    }
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
