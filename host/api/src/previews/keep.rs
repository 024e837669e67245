//! What the previews keep between requests: the renderer (loaded at the first preview), the
//! pages drawn lately, the turns to draw.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use quarry_runtime::{Renderer, Runtime, renderer_limits};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::cache::PreviewCache;
use crate::error::ApiError;
use crate::extractors::limits::too_many;

/// Pages drawn at once, service-wide (each holds a renderer instance and a blocking thread).
const DRAWN_AT_ONCE: usize = 2;
/// The most bytes of cached previews.
const CACHE_BYTES: usize = 64 << 20;
/// How long a preview waits for a turn to be drawn before it is answered 429 (a page of search
/// results asks for several at once).
const TURN_WAIT: Duration = Duration::from_secs(10);

/// The previews' state: the renderer (loaded at the first preview), the cache, the turns.
pub(crate) struct Previews {
    component: Option<PathBuf>,
    renderer: OnceLock<Result<Renderer, String>>,
    pub(super) cache: PreviewCache,
    turns: Arc<Semaphore>,
}

impl Previews {
    /// Previews drawn by the renderer component at `component`; none without one.
    pub(crate) fn new(component: Option<PathBuf>) -> Previews {
        Previews {
            component,
            renderer: OnceLock::new(),
            cache: PreviewCache::new(CACHE_BYTES),
            turns: Arc::new(Semaphore::new(DRAWN_AT_ONCE)),
        }
    }

    /// A turn to draw a page: one of [`DRAWN_AT_ONCE`], waited for up to [`TURN_WAIT`], else
    /// `429` with `Retry-After`.
    pub(super) async fn turn(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        tokio::time::timeout(TURN_WAIT, self.turns.clone().acquire_owned())
            .await
            .ok()
            .and_then(Result::ok)
            .ok_or_else(|| {
                too_many(
                    "previews are being drawn, the most the service draws at once; retry shortly"
                        .to_owned(),
                    1,
                )
            })
    }

    /// The renderer, loaded by `runtime` the first time; why there is none otherwise.
    pub(super) fn renderer(&self, runtime: &Runtime) -> Result<Renderer, String> {
        self.renderer
            .get_or_init(|| {
                let Some(path) = &self.component else {
                    return Err(
                        "no page renderer is installed (`make plugins` builds it; --renderer names it)"
                            .to_owned(),
                    );
                };
                runtime
                    .load_renderer(path, renderer_limits())
                    .map_err(|e| format!("the page renderer {} does not load: {e}", path.display()))
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn two_pages_are_drawn_at_once_and_a_third_waits_ten_seconds_then_is_refused() {
        let previews = Previews::new(None);
        let first = previews.turn().await.expect("a turn");
        let _second = previews.turn().await.expect("a turn");
        let started = tokio::time::Instant::now();
        let refused = previews.turn().await.expect_err("no third turn");
        assert_eq!(started.elapsed(), TURN_WAIT);
        assert_eq!(refused.kind.status(), 429, "{}", refused.message);
        // A turn given back within the wait is taken.
        let waiting = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(3)).await;
            drop(first);
        });
        let started = tokio::time::Instant::now();
        let _freed = previews.turn().await.expect("the freed turn");
        assert_eq!(started.elapsed(), Duration::from_secs(3));
        waiting.await.expect("the holder ends");
    }
}
