//! Downloads within bounds: every request has a deadline for the whole and for each wait on the
//! network, every body a cap read as it arrives (a server that sends 10 GB is cut off at the
//! cap, whatever its `Content-Length` says), and every redirect is checked as the first
//! address was (never from `https://` down to `http://` on the network).

use std::time::Duration;

use reqwest::Url;
use reqwest::redirect::Policy;

use crate::address::check_web_url;
use crate::error::PackageError;

/// How long one download may take at most, by default.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(300);
/// How long the server may send nothing.
const IDLE: Duration = Duration::from_secs(30);
/// Redirects followed at most.
const MAX_REDIRECTS: usize = 5;

/// An HTTP client for plugin downloads and registries.
#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    deadline: Duration,
}

impl Fetcher {
    /// A client whose requests each end within `deadline`. HTTPS trusts the system's
    /// certificate authorities (and `SSL_CERT_FILE`, `SSL_CERT_DIR`).
    pub fn new(deadline: Duration) -> Result<Fetcher, PackageError> {
        let policy = Policy::custom(|attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
            }
            match check_web_url(attempt.url()) {
                Ok(()) => attempt.follow(),
                Err(e) => attempt.error(e.to_string()),
            }
        });
        let mut builder = reqwest::Client::builder()
            .redirect(policy)
            .connect_timeout(Duration::from_secs(10).min(deadline))
            .user_agent(concat!("quarry/", env!("CARGO_PKG_VERSION")));
        if deadline > IDLE {
            builder = builder.read_timeout(IDLE);
        }
        let client = builder.build().map_err(|e| PackageError::Fetch {
            url: String::new(),
            message: format!("cannot start an HTTP client: {e}"),
        })?;
        Ok(Fetcher { client, deadline })
    }

    /// The client, for requests built by hand (the registry's).
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// The deadline of each request.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// GETs `url` and reads its body, at most `max` bytes.
    pub async fn get(&self, url: &Url, max: u64) -> Result<Vec<u8>, PackageError> {
        check_web_url(url)?;
        let request = self.client.get(url.clone());
        self.within_deadline(url, async {
            let response = request.send().await.map_err(|e| fetch_error(url, &e))?;
            let status = response.status();
            if !status.is_success() {
                return Err(PackageError::Fetch {
                    url: url.to_string(),
                    message: format!("the server answered {status}"),
                });
            }
            read_body(url, response, max).await
        })
        .await
    }

    /// Runs `work` for `url` within the deadline.
    pub async fn within_deadline<T>(
        &self,
        url: &Url,
        work: impl Future<Output = Result<T, PackageError>>,
    ) -> Result<T, PackageError> {
        tokio::time::timeout(self.deadline, work)
            .await
            .unwrap_or_else(|_| {
                Err(PackageError::Fetch {
                    url: url.to_string(),
                    message: format!(
                        "no answer within {} s; try again later, or give more time with --timeout",
                        self.deadline.as_secs()
                    ),
                })
            })
    }
}

/// Reads `response`'s body, refusing it as soon as it passes `max` bytes.
pub async fn read_body(
    url: &Url,
    mut response: reqwest::Response,
    max: u64,
) -> Result<Vec<u8>, PackageError> {
    let too_large = || PackageError::Fetch {
        url: url.to_string(),
        message: format!(
            "the answer is larger than {}, the most Quarry reads for it; nothing was installed",
            if max >= 1 << 20 {
                format!("{} MiB", max >> 20)
            } else {
                format!("{} KiB", max >> 10)
            }
        ),
    };
    if response.content_length().is_some_and(|len| len > max) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| fetch_error(url, &e))? {
        if (body.len() + chunk.len()) as u64 > max {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A failed request, in words: the cause chain, not only its top.
pub fn fetch_error(url: &Url, error: &reqwest::Error) -> PackageError {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    if error.is_timeout() {
        message.push_str("; the server sent nothing for too long");
    }
    PackageError::Fetch {
        url: url.to_string(),
        message,
    }
}
