//! Bounds on what integrations may hold and ask of the service, beside the monthly quota: the
//! requests of one integration in flight and their rate, file downloads per integration and in
//! all (each holds a plugin instance until its last byte is sent), and the searches and document
//! reads that run at once (each holds a thread). Past a bound the answer is `429` in the
//! contract's envelope (code `QUOTA_EXCEEDED`) with `Retry-After`; a read beyond the concurrent
//! ones waits its turn, which comes as soon as one ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::http::{HeaderValue, header};
use quarry_core::ErrorKind;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::ApiError;

/// The bounds. The defaults suit one person's agents and scripts on one machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiLimits {
    /// Requests of one integration being answered at once.
    pub in_flight_per_integration: u32,
    /// Requests one integration may send per second, sustained.
    pub requests_per_second: u32,
    /// Requests one integration may send at once after a quiet while.
    pub burst: u32,
    /// File downloads of one integration running at once.
    pub downloads_per_integration: u32,
    /// File downloads running at once in all.
    pub downloads: u32,
    /// A download whose client takes nothing for this long is ended and its plugin instance
    /// freed.
    pub download_stall: Duration,
    /// Searches and document reads running at once.
    pub concurrent_reads: u32,
    /// How long the audit log keeps an entry.
    pub audit_retention: Duration,
}

impl Default for ApiLimits {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
        ApiLimits {
            in_flight_per_integration: 8,
            requests_per_second: 100,
            burst: 200,
            downloads_per_integration: 2,
            downloads: 8,
            download_stall: Duration::from_secs(20),
            concurrent_reads: u32::try_from(cores * 2).unwrap_or(u32::MAX).max(4),
            audit_retention: Duration::from_secs(90 * 86_400),
        }
    }
}

/// What one integration holds and has spent of its rate.
struct Tally {
    in_flight: u32,
    downloads: u32,
    /// Requests it may still send at once.
    rate: Bucket,
}

/// A token bucket: requests that may still be sent at once, refilled at a rate.
struct Bucket {
    tokens: f64,
    refilled: Instant,
}

impl Bucket {
    fn full(burst: f64, now: Instant) -> Bucket {
        Bucket {
            tokens: burst,
            refilled: now,
        }
    }

    /// Takes a token; else the seconds until there is one.
    fn take(&mut self, per_second: f64, burst: f64, now: Instant) -> Result<(), u64> {
        let elapsed = now.duration_since(self.refilled).as_secs_f64();
        self.tokens = (self.tokens + elapsed * per_second).min(burst);
        self.refilled = now;
        if self.tokens < 1.0 {
            return Err(((1.0 - self.tokens) / per_second).ceil().max(1.0) as u64);
        }
        self.tokens -= 1.0;
        Ok(())
    }
}

/// Requests with a missing or wrong key the whole service answers per second, sustained, and
/// at once: beyond, they are answered 429 at once (no key tried, no protocol) instead of 401.
const REFUSED_PER_SECOND: f64 = 20.0;
const REFUSED_BURST: f64 = 50.0;

/// Admits requests, downloads and reads within [`ApiLimits`].
pub(crate) struct Admission {
    limits: ApiLimits,
    tallies: Mutex<HashMap<String, Tally>>,
    downloads: Arc<Semaphore>,
    reads: Arc<Semaphore>,
    /// Requests refused for their key, service-wide.
    refused: Mutex<Bucket>,
}

/// A request being answered; dropping it ends it.
pub(crate) struct RequestPermit {
    admission: Arc<Admission>,
    integration: String,
}

/// A download running; dropping it (when its last byte is sent or it ends early) ends it.
pub(crate) struct DownloadPermit {
    admission: Arc<Admission>,
    integration: String,
    _slot: OwnedSemaphorePermit,
}

impl Admission {
    pub(crate) fn new(limits: ApiLimits) -> Arc<Admission> {
        Arc::new(Admission {
            downloads: Arc::new(Semaphore::new(limits.downloads.max(1) as usize)),
            reads: Arc::new(Semaphore::new(limits.concurrent_reads.max(1) as usize)),
            tallies: Mutex::new(HashMap::new()),
            refused: Mutex::new(Bucket::full(REFUSED_BURST, Instant::now())),
            limits,
        })
    }

    /// The answer to a request with a missing or wrong key: `unauthorized` while such requests
    /// stay within their service-wide rate, a 429 beyond it (so that a flood of them costs a
    /// line of log each and nothing more).
    pub(crate) fn refuse_unknown_key(&self, unauthorized: ApiError) -> ApiError {
        let mut refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
        match refused.take(REFUSED_PER_SECOND, REFUSED_BURST, Instant::now()) {
            Ok(()) => unauthorized,
            Err(wait) => too_many(
                "too many requests without a valid API key; send a valid key, after a pause"
                    .to_owned(),
                wait,
            ),
        }
    }

    /// The bounds in force.
    pub(crate) fn limits(&self) -> &ApiLimits {
        &self.limits
    }

    /// Admits a request of `integration`, or says why not: its rate, then its requests in
    /// flight.
    pub(crate) fn admit(self: &Arc<Self>, integration: &str) -> Result<RequestPermit, ApiError> {
        let limits = &self.limits;
        let mut tallies = self.lock();
        let now = Instant::now();
        let tally = tallies.entry(integration.to_owned()).or_insert(Tally {
            in_flight: 0,
            downloads: 0,
            rate: Bucket::full(f64::from(limits.burst.max(1)), now),
        });
        let rate = f64::from(limits.requests_per_second.max(1));
        if let Err(wait) = tally.rate.take(rate, f64::from(limits.burst.max(1)), now) {
            return Err(too_many(
                format!(
                    "this integration sends requests faster than the {} per second it may (bursts of {}); slow down and retry after {wait} s",
                    limits.requests_per_second, limits.burst
                ),
                wait,
            ));
        }
        if tally.in_flight >= limits.in_flight_per_integration {
            // Not sent after all: its token goes back.
            tally.rate.tokens += 1.0;
            return Err(too_many(
                format!(
                    "this integration already has {} requests being answered, the most it may have at once; retry when one ends",
                    tally.in_flight
                ),
                1,
            ));
        }
        tally.in_flight += 1;
        Ok(RequestPermit {
            admission: self.clone(),
            integration: integration.to_owned(),
        })
    }

    /// Admits a download of `integration`, or says why not: its own downloads running, then
    /// all downloads running.
    pub(crate) fn admit_download(
        self: &Arc<Self>,
        integration: &str,
    ) -> Result<DownloadPermit, ApiError> {
        let mut tallies = self.lock();
        let Some(tally) = tallies.get_mut(integration) else {
            return Err(ApiError::internal("admitting a download", &"not admitted"));
        };
        if tally.downloads >= self.limits.downloads_per_integration {
            return Err(too_many(
                format!(
                    "this integration already downloads {} files, the most it may at once; retry when one ends",
                    tally.downloads
                ),
                1,
            ));
        }
        let slot = self.downloads.clone().try_acquire_owned().map_err(|_| {
            too_many(
                format!(
                    "{} file downloads are running, the most the service runs at once; retry shortly",
                    self.limits.downloads
                ),
                1,
            )
        })?;
        tally.downloads += 1;
        Ok(DownloadPermit {
            admission: self.clone(),
            integration: integration.to_owned(),
            _slot: slot,
        })
    }

    /// Admits a download the user asked for on the search page: bounded as one integration's
    /// downloads are (under a name no integration can have), and within all downloads.
    pub(crate) fn admit_user_download(self: &Arc<Self>) -> Result<DownloadPermit, ApiError> {
        const USER: &str = "user (search page)";
        let burst = f64::from(self.limits.burst.max(1));
        self.lock().entry(USER.to_owned()).or_insert(Tally {
            in_flight: 0,
            downloads: 0,
            rate: Bucket::full(burst, Instant::now()),
        });
        self.admit_download(USER)
    }

    /// Waits for a turn to run a search or read a document.
    pub(crate) async fn read_turn(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        self.reads
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| ApiError::internal("waiting for a read turn", &e))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Tally>> {
        self.tallies.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for RequestPermit {
    fn drop(&mut self) {
        if let Some(tally) = self.admission.lock().get_mut(&self.integration) {
            tally.in_flight = tally.in_flight.saturating_sub(1);
        }
    }
}

impl Drop for DownloadPermit {
    fn drop(&mut self) {
        if let Some(tally) = self.admission.lock().get_mut(&self.integration) {
            tally.downloads = tally.downloads.saturating_sub(1);
        }
    }
}

/// A `429` saying why and when to retry.
pub(crate) fn too_many(message: String, retry_after_s: u64) -> ApiError {
    ApiError::new(ErrorKind::QuotaExceeded, message)
        .with_header(header::RETRY_AFTER, HeaderValue::from(retry_after_s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_without_a_valid_key_past_their_rate_are_answered_429() {
        let admission = Admission::new(ApiLimits::default());
        let unauthorized = || ApiError::new(ErrorKind::Unauthorized, "no key");
        let kinds: Vec<ErrorKind> = (0..60)
            .map(|_| admission.refuse_unknown_key(unauthorized()).kind)
            .collect();
        assert!(kinds[..50].iter().all(|k| *k == ErrorKind::Unauthorized));
        assert!(kinds[50..].iter().all(|k| *k == ErrorKind::QuotaExceeded));
        assert!(
            admission.admit("in_a").is_ok(),
            "valid keys are not held up"
        );
    }

    fn limits() -> ApiLimits {
        ApiLimits {
            in_flight_per_integration: 2,
            requests_per_second: 1,
            burst: 3,
            downloads_per_integration: 1,
            downloads: 1,
            ..ApiLimits::default()
        }
    }

    #[test]
    fn requests_in_flight_and_bursts_are_bounded_per_integration() {
        let admission = Admission::new(limits());
        let a = admission.admit("in_a").expect("first");
        let b = admission.admit("in_a").expect("second");
        let err = admission.admit("in_a").err().expect("a third at once");
        assert_eq!(err.kind, ErrorKind::QuotaExceeded);
        assert!(
            err.message.contains("2 requests being answered"),
            "{}",
            err.message
        );
        assert!(
            admission.admit("in_b").is_ok(),
            "another integration is not held up"
        );
        drop(a);
        let c = admission.admit("in_a").expect("one ended");
        drop((b, c));
        let err = admission
            .admit("in_a")
            .err()
            .expect("the burst of 3 is spent");
        assert!(
            err.message.contains("faster than the 1 per second"),
            "{}",
            err.message
        );
        assert!(
            err.headers
                .iter()
                .any(|(name, _)| name == header::RETRY_AFTER)
        );
    }

    #[test]
    fn downloads_are_bounded_per_integration_and_in_all() {
        let admission = Admission::new(limits());
        let _request = admission.admit("in_a").expect("request");
        let _other = admission.admit("in_b").expect("request");
        let download = admission.admit_download("in_a").expect("first download");
        assert!(
            admission.admit_download("in_a").is_err(),
            "one per integration"
        );
        let err = admission.admit_download("in_b").err().expect("one in all");
        assert!(
            err.message.contains("1 file downloads are running"),
            "{}",
            err.message
        );
        drop(download);
        assert!(admission.admit_download("in_b").is_ok());
    }

    #[test]
    fn the_users_downloads_are_bounded_as_an_integrations_and_count_in_all() {
        let admission = Admission::new(ApiLimits {
            downloads_per_integration: 2,
            downloads: 3,
            ..ApiLimits::default()
        });
        let first = admission.admit_user_download().expect("first");
        let _second = admission.admit_user_download().expect("second");
        let err = admission.admit_user_download().err().expect("two at once");
        assert_eq!(err.kind, ErrorKind::QuotaExceeded);
        let _a = admission.admit("in_a").expect("request");
        let _b = admission.admit("in_b").expect("request");
        let _theirs = admission.admit_download("in_a").expect("the third in all");
        assert!(
            admission.admit_download("in_b").is_err(),
            "the user's two and in_a's one take all three"
        );
        drop(first);
        assert!(admission.admit_download("in_b").is_ok());
    }
}
