//! Quarry's page renderer (`wit/preview@0.1.0`, built from `plugins/preview`): one page of a
//! PDF file or an image drawn as a PNG, in a sandbox of its own. It is handed the file's bytes
//! and nothing else: no folder, no host, no OCR, no settings; each call gets a new instance,
//! bounded in memory and time like a connector's call, so that no PDF or image parser runs in
//! the host and a hostile file stops only its own preview.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use wasmtime::{Engine, Store};
use wasmtime_wasi::WasiCtxBuilder;

use crate::engine::{EpochTicker, Runtime};
use crate::error::{RuntimeError, RuntimeErrorKind};
use crate::limits::{Limits, MAX_STDIO_BYTES};
use crate::plugin_files::{MAX_COMPONENT_BYTES, read_bounded};
use crate::policy::grant::Plaintext;
use crate::policy::hosts::HostGrant;
use crate::policy::protected::ProtectedPaths;
use crate::policy::secrets::Secrets;
use crate::sandbox::files::guard::FileGuard;
use crate::sandbox::http::NetworkGate;
use crate::sandbox::instance::HostState;
use crate::sandbox::limiter::MemoryLimiter;
use crate::sandbox::ocr::OcrGate;
use crate::sandbox::reports::Reports;
use crate::sandbox::stdio::TailCapture;
use crate::sandbox::stopped::{classify, deadline_ticks};
use crate::sandbox::streams::StreamGate;

mod bindings {
    wasmtime::component::bindgen!({
        path: "../../wit/preview@0.1.0",
        world: "previewer",
    });
}

use bindings::exports::quarry::preview::render as wit;

/// The renderer's name in errors and logs.
pub const RENDERER: &str = "(page renderer)";
/// The call in errors.
const CALL: &str = "render";
/// The largest PNG the renderer may return.
const MAX_PNG_BYTES: usize = 32 << 20;
/// The most word boxes kept of one page.
const MAX_BOXES: usize = 10_000;

/// The renderer's bounds: more memory than a connector's (a page drawn 2,400 pixels wide and
/// four times as tall is 92 MB of pixels), the same time.
pub fn renderer_limits() -> Limits {
    Limits {
        memory_bytes: 512 << 20,
        call_timeout: Duration::from_secs(20),
        ..Limits::default()
    }
}

/// A page drawn.
#[derive(Debug, Clone)]
pub struct PageImage {
    /// The PNG file.
    pub png: Vec<u8>,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
    /// The document's pages.
    pub page_count: u32,
    /// Where the words asked for are, in pixels of the image.
    pub boxes: Vec<WordBox>,
}

/// A word's box on a page image, in pixels from its top-left corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordBox {
    /// Left.
    pub x: u32,
    /// Top.
    pub y: u32,
    /// Width.
    pub w: u32,
    /// Height.
    pub h: u32,
}

/// Why the renderer drew no page, in its own words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unrendered {
    /// The type is not drawn.
    #[error("{0}")]
    Unsupported(String),
    /// The document has fewer pages: how many.
    #[error("the document has {0} page(s)")]
    NoSuchPage(u32),
    /// The file is not what its type says.
    #[error("{0}")]
    Malformed(String),
    /// Over the renderer's bounds.
    #[error("{0}")]
    TooLarge(String),
}

/// The page renderer, compiled and linked once; [`Renderer::render`] makes an instance per call.
#[derive(Clone)]
pub struct Renderer {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    pre: bindings::PreviewerPre<HostState>,
    limits: Limits,
    protected: Arc<ProtectedPaths>,
    ticker: Arc<EpochTicker>,
}

impl Runtime {
    /// Loads the renderer component at `path`, to run with `limits` ([`renderer_limits`]).
    pub fn load_renderer(&self, path: &Path, limits: Limits) -> Result<Renderer, RuntimeError> {
        let component_error =
            |message: String| RuntimeError::of(RENDERER, RuntimeErrorKind::Component { message });
        let bytes = read_bounded(path, MAX_COMPONENT_BYTES).map_err(|e| {
            component_error(format!("cannot read the component {}: {e}", path.display()))
        })?;
        let component = self.compile(RENDERER, &bytes)?;
        let pre = self
            .linker
            .instantiate_pre(&component)
            .and_then(bindings::PreviewerPre::new)
            .map_err(|e| component_error(format!("cannot be linked: {e:#}")))?;
        Ok(Renderer {
            inner: Arc::new(Inner {
                engine: self.engine.clone(),
                pre,
                limits,
                protected: self.protected.clone(),
                ticker: self.ticker.clone(),
            }),
        })
    }
}

impl Renderer {
    /// Draws page `page` (1-based) of `bytes`, a file of type `mime_type`, at most `width`
    /// pixels wide, with the boxes of `words` where the page has a text layer. The outer error
    /// is the sandbox's (the memory cap, the deadline, a crash); the inner one the renderer's.
    pub fn render(
        &self,
        bytes: &[u8],
        mime_type: &str,
        page: u32,
        width: u32,
        words: &[String],
    ) -> Result<Result<PageImage, Unrendered>, RuntimeError> {
        let inner = &self.inner;
        let limits = &inner.limits;
        let _deadline_running = inner.ticker.call_running();
        let mut store = self.store()?;
        let instance = inner
            .pre
            .instantiate(&mut store)
            .map_err(|e| classify(RENDERER, limits, CALL, &e, Some(store.data())))?;
        let answer = instance
            .quarry_preview_render()
            .call_render(&mut store, bytes, mime_type, page, width, words)
            .map_err(|e| classify(RENDERER, limits, CALL, &e, Some(store.data())))?;
        Ok(match answer {
            Ok(image) => Ok(checked(image)?),
            Err(wit::RenderError::Unsupported(m)) => Err(Unrendered::Unsupported(m)),
            Err(wit::RenderError::NoSuchPage(n)) => Err(Unrendered::NoSuchPage(n)),
            Err(wit::RenderError::Malformed(m)) => Err(Unrendered::Malformed(m)),
            Err(wit::RenderError::TooLarge(m)) => Err(Unrendered::TooLarge(m)),
        })
    }

    /// A store for one call: WASI with nothing in it but a captured stdout and stderr, no
    /// folder, no host, no OCR; the memory cap and the deadline set.
    fn store(&self) -> Result<Store<HostState>, RuntimeError> {
        let inner = &self.inner;
        let stdio = TailCapture::new(MAX_STDIO_BYTES);
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdout(stdio.clone()).stderr(stdio.clone());
        let id: Arc<str> = RENDERER.into();
        let mut state = HostState::new(
            wasi.build(),
            FileGuard::new(id.clone(), inner.protected.clone(), Vec::new()),
            NetworkGate::new(HostGrant::new(&[]), None, Secrets::default()),
            StreamGate::new(&[], None, Plaintext::NotAsked, Secrets::default()),
            Reports::new(id, Vec::new(), None, stdio, Secrets::default()),
            MemoryLimiter::new(inner.limits.memory_bytes),
            OcrGate::new(None),
            inner.limits.call_timeout,
        )
        .map_err(|e| classify(RENDERER, &inner.limits, CALL, &e, None))?;
        state.begin_call(Duration::ZERO);
        let mut store = Store::new(&inner.engine, state);
        store.limiter(|state| &mut state.limiter);
        store.epoch_deadline_trap();
        store.set_epoch_deadline(deadline_ticks(inner.limits.call_timeout));
        Ok(store)
    }
}

/// The renderer's image, checked against the contract: a PNG of the size it says, within bounds.
fn checked(image: wit::PageImage) -> Result<PageImage, RuntimeError> {
    let output = |message: String| {
        RuntimeError::in_call(RENDERER, CALL, RuntimeErrorKind::Output { message })
    };
    if image.png.len() > MAX_PNG_BYTES || !image.png.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Err(output(format!(
            "not a PNG of at most {} MiB ({} bytes)",
            MAX_PNG_BYTES >> 20,
            image.png.len()
        )));
    }
    if image.width == 0 || image.height == 0 || image.boxes.len() > MAX_BOXES {
        return Err(output(format!(
            "an image of {} by {} pixels with {} boxes",
            image.width,
            image.height,
            image.boxes.len()
        )));
    }
    let inside = |b: &wit::WordBox| {
        b.x.checked_add(b.w).is_some_and(|r| r <= image.width)
            && b.y.checked_add(b.h).is_some_and(|r| r <= image.height)
    };
    let boxes = image
        .boxes
        .iter()
        .filter(|b| inside(b))
        .map(|b| WordBox {
            x: b.x,
            y: b.y,
            w: b.w,
            h: b.h,
        })
        .collect();
    Ok(PageImage {
        png: image.png,
        width: image.width,
        height: image.height,
        page_count: image.page_count,
        boxes,
    })
}
