//! What the previews keep between requests: the renderer (loaded at the first preview), the
//! pages drawn lately, the turns to draw.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use quarry_runtime::{Renderer, Runtime, renderer_limits};
use tokio::sync::Semaphore;

use super::cache::PreviewCache;

/// Pages drawn at once, service-wide (each holds a renderer instance and a blocking thread).
const DRAWN_AT_ONCE: usize = 2;
/// The most bytes of cached previews.
const CACHE_BYTES: usize = 64 << 20;

/// The previews' state: the renderer (loaded at the first preview), the cache, the turns.
pub(crate) struct Previews {
    component: Option<PathBuf>,
    renderer: OnceLock<Result<Renderer, String>>,
    pub(super) cache: PreviewCache,
    pub(super) turns: Arc<Semaphore>,
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
