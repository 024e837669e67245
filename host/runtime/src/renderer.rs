//! Quarry's page renderer (`wit/preview@0.1.0`, built from `plugins/preview`): one page of a
//! PDF file or an image drawn as a PNG, in a sandbox of its own. It is handed the file's bytes
//! and nothing else: no folder, no host, no OCR, no settings; each call gets a new instance,
//! bounded in memory and time like a connector's call, so that no PDF or image parser runs in
//! the host and a hostile file stops only its own preview.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use quarry_core::ocr::GrayImage;
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
/// The most characters of a page's text layer taken.
const MAX_CHARS: usize = 50_000;

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
    /// The page's text layer, word by word (empty for a scan or an image).
    pub words: Vec<PageWord>,
    /// The image in gray, when asked for.
    pub gray: Option<GrayImage>,
}

/// A word on a page image and where each of its characters is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageWord {
    /// The word.
    pub text: String,
    /// One box per character of `text`, in pixels of the image.
    pub boxes: Vec<PixelBox>,
}

/// A box on a page image, in pixels from its top-left corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PixelBox {
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
    /// pixels wide, with its text layer, and its pixels in gray when `gray`. The outer error
    /// is the sandbox's (the memory cap, the deadline, a crash); the inner one the renderer's.
    pub fn render(
        &self,
        bytes: &[u8],
        mime_type: &str,
        page: u32,
        width: u32,
        gray: bool,
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
            .call_render(&mut store, bytes, mime_type, page, width, gray)
            .map_err(|e| classify(RENDERER, limits, CALL, &e, Some(store.data())))?;
        Ok(match answer {
            Ok(image) => Ok(checked(image, gray)?),
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

/// The renderer's image, checked against the contract: a PNG of the size it says, within
/// bounds, its words' boxes on the image, one per character, and the gray pixels (`gray`) of
/// its size.
fn checked(image: wit::PageImage, gray: bool) -> Result<PageImage, RuntimeError> {
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
    let chars: usize = image.words.iter().map(|w| w.boxes.len()).sum();
    if image.width == 0 || image.height == 0 || chars > MAX_CHARS {
        return Err(output(format!(
            "an image of {} by {} pixels with {chars} characters",
            image.width, image.height,
        )));
    }
    let pixels = u64::from(image.width) * u64::from(image.height);
    let gray = match (gray, image.gray.len() as u64) {
        (false, 0) => None,
        (true, n) if n == pixels => Some(GrayImage {
            width: image.width,
            height: image.height,
            pixels: image.gray,
        }),
        (_, n) => {
            return Err(output(format!(
                "{n} gray pixels for an image of {} by {} pixels (asked: {gray})",
                image.width, image.height
            )));
        }
    };
    let inside = |b: &wit::PixelBox| {
        b.x.checked_add(b.w).is_some_and(|r| r <= image.width)
            && b.y.checked_add(b.h).is_some_and(|r| r <= image.height)
    };
    let mut words = Vec::with_capacity(image.words.len());
    for word in image.words {
        if word.text.chars().count() != word.boxes.len() || !word.boxes.iter().all(inside) {
            return Err(output(format!(
                "a word of {} characters with {} boxes, or boxes off the image",
                word.text.chars().count(),
                word.boxes.len()
            )));
        }
        let boxes = word
            .boxes
            .iter()
            .map(|b| PixelBox {
                x: b.x,
                y: b.y,
                w: b.w,
                h: b.h,
            })
            .collect();
        words.push(PageWord {
            text: word.text,
            boxes,
        });
    }
    Ok(PageImage {
        png: image.png,
        width: image.width,
        height: image.height,
        page_count: image.page_count,
        words,
        gray,
    })
}
