//! Quarry's OCR engine: PP-OCRv6 (small) text detection and recognition, and PP-OCR's line
//! orientation classifier, run in process with ONNX Runtime (the library the embedding model
//! loads). The models come from PyPI's `rapidocr` wheel (`scripts/fetch-model.sh`, docs/ocr.md).
//!
//! It reads only grayscale pixel buffers: connectors decode images and PDFs inside their
//! sandbox and hand the pixels over (`quarry:connector/host.recognize-text`), so no parser of
//! an untrusted file runs in the host. A page is read in three steps: detection finds the lines
//! (`detect.rs`), recognition reads each (`read.rs`), and the lines are put in reading order,
//! a column at a time (`columns.rs`, `layout.rs`). A page turned a quarter (its lines found standing) is turned back and read
//! again; one upside down (most lines so classified) is turned half round.

mod columns;
mod detect;
mod error;
mod layout;
mod onnx;
mod raster;
mod read;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use quarry_core::ocr::{GrayImage, OcrRefusal, Recognized, TextLine, TextRecognizer};

pub use error::OcrError;

use detect::LineBox;
use raster::Raster;
use read::Alphabet;

/// The name results are kept under: a change of models reads documents again. Detection runs
/// quantized to int8 (`scripts/ocr_int8.py`, docs/ocr.md).
pub const MODELS: &str = "ppocr-v6-small-int8-det";
/// The files of the models folder.
const DETECTION: &str = "det.onnx";
const RECOGNITION: &str = "rec.onnx";
const ORIENTATION: &str = "cls.onnx";
/// A page whose lines are askew by this much or more is straightened before it is read.
const MIN_SKEW_DEGREES: f32 = 0.2;
/// Lines the orientation classifier looks at per page at most (the widest).
const ORIENTATION_SAMPLE: usize = 16;

/// The loaded models. Pages are read one at a time (each run uses every thread it is given).
pub struct Ocr {
    detection: Mutex<Session>,
    recognition: Mutex<Session>,
    orientation: Mutex<Session>,
    alphabet: Alphabet,
}

impl std::fmt::Debug for Ocr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ocr").finish_non_exhaustive()
    }
}

impl Ocr {
    /// Loads the models of `dir` (`det.onnx`, `rec.onnx` with its dictionary, `cls.onnx`) on
    /// ONNX Runtime from `library`, each run on at most `threads` threads.
    pub fn load(dir: &Path, library: &Path, threads: usize) -> Result<Ocr, OcrError> {
        let env = quarry_embed::onnx_runtime(library)?;
        let open = |name: &'static str| -> Result<(Session, PathBuf), OcrError> {
            let path = dir.join(name);
            if !path.is_file() {
                return Err(OcrError::MissingFile {
                    dir: dir.to_owned(),
                    wanted: name,
                });
            }
            let bad = |e: &dyn std::fmt::Display| OcrError::BadModel {
                path: path.clone(),
                message: e.to_string(),
            };
            let session = Session::builder(env)
                .map_err(|e| bad(&e))?
                .with_optimization_level(GraphOptimizationLevel::Level3)
                .map_err(|e| bad(&e))?
                .with_intra_threads(threads.max(1))
                .map_err(|e| bad(&e))?
                .with_intra_op_spinning(false)
                .map_err(|e| bad(&e))?
                // Page sizes vary: no memory pattern planned for one input size, and the arena
                // is shrunk after every run (`onnx::run`), so a page's buffers go when it is
                // read.
                .with_execution_providers([ort::ep::CPU::default()
                    .with_arena_allocator(true)
                    .build()])
                .map_err(|e| bad(&e))?
                .with_memory_pattern(false)
                .map_err(|e| bad(&e))?
                .commit_from_file(&path)
                .map_err(|e| bad(&e))?;
            Ok((session, path))
        };
        let (detection, _) = open(DETECTION)?;
        let (recognition, rec_path) = open(RECOGNITION)?;
        let (orientation, _) = open(ORIENTATION)?;
        let dictionary = recognition
            .metadata()
            .ok()
            .and_then(|m| m.custom("character"))
            .ok_or_else(|| OcrError::BadModel {
                path: rec_path.clone(),
                message: "it has no dictionary (metadata key `character`)".into(),
            })?;
        Ok(Ocr {
            detection: Mutex::new(detection),
            recognition: Mutex::new(recognition),
            orientation: Mutex::new(orientation),
            alphabet: Alphabet::new(&dictionary),
        })
    }

    /// Reads `page`, turning it upright first when its lines say it is turned.
    fn read(&self, page: Raster) -> Result<Recognized, String> {
        let started = std::time::Instant::now();
        let mut detection = self
            .detection
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut page = page;
        let mut map = detect::text_map(&mut detection, &page)?;
        let (mut boxes, mut skew) = map.lines();
        let mut turned = 0;
        if mostly_standing(&boxes) {
            page = page.turned(90);
            turned = 90;
            map = detect::text_map(&mut detection, &page)?;
            (boxes, skew) = map.lines();
        }
        // A page scanned a little askew is straightened, so that each line's box holds that
        // line alone. The text map turns with it: the model need not see the page again.
        let straightened = skew.abs() >= MIN_SKEW_DEGREES;
        if straightened {
            page = page.rotated(-skew);
            (boxes, _) = map.rotated(-skew).lines();
        }
        drop(map);
        if self.upside_down(&page, &boxes)? {
            page = page.turned(180);
            turned = (turned + 180) % 360;
            (boxes, _) = detect::text_map(&mut detection, &page)?.lines();
        }
        drop(detection);
        let detected = started.elapsed();
        let mut recognition = self
            .recognition
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let reads = read::lines(&mut recognition, &self.alphabet, &page, &boxes)?;
        drop(recognition);
        let (mut sum, mut chars) = (0.0f32, 0usize);
        let lines: Vec<TextLine> = boxes
            .iter()
            .zip(reads)
            .filter_map(|(b, read)| {
                let read = read?;
                sum += read.confidence * read.chars as f32;
                chars += read.chars;
                Some(TextLine {
                    text: read.text,
                    confidence: read.confidence,
                    bounds: [b.left, b.top, b.width, b.height].map(|v| v as u32),
                    spans: read
                        .spans
                        .iter()
                        .map(|s| s.map(|x| x.round() as u32))
                        .collect(),
                })
            })
            .collect();
        let (text, lines) = layout::reading_order(lines);
        tracing::debug!(
            width = page.width,
            height = page.height,
            lines = lines.len(),
            turned,
            skew = if straightened { skew } else { 0.0 },
            detection_ms = detected.as_millis() as u64,
            recognition_ms = (started.elapsed() - detected).as_millis() as u64,
            "page read"
        );
        Ok(Recognized {
            text,
            lines,
            confidence: if chars == 0 { 0.0 } else { sum / chars as f32 },
            turned,
        })
    }

    /// Whether most of the widest lines of `page` are upside down.
    fn upside_down(&self, page: &Raster, boxes: &[LineBox]) -> Result<bool, String> {
        let mut widest: Vec<LineBox> = boxes
            .iter()
            .copied()
            .filter(|b| b.width >= 2 * b.height)
            .collect();
        widest.sort_by_key(|b| std::cmp::Reverse(b.width));
        widest.truncate(ORIENTATION_SAMPLE);
        if widest.is_empty() {
            return Ok(false);
        }
        let mut orientation = self
            .orientation
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let probs = read::upside_down(&mut orientation, page, &widest)?;
        let down = probs.iter().filter(|&&p| p > 0.5).count();
        Ok(down * 2 > probs.len())
    }
}

/// Whether the lines found stand rather than lie: a page turned a quarter (a short note of two
/// lines as much as a page of forty).
fn mostly_standing(boxes: &[LineBox]) -> bool {
    let standing = boxes.iter().filter(|b| b.height >= 3 * b.width).count();
    let lying = boxes.iter().filter(|b| b.width >= 3 * b.height).count();
    standing > 2 * lying
}

impl TextRecognizer for Ocr {
    fn recognize(&self, image: &GrayImage) -> Result<Recognized, OcrRefusal> {
        image.check()?;
        self.read(Raster::of(image)).map_err(OcrRefusal::Failed)
    }

    fn models(&self) -> &str {
        MODELS
    }
}

/// The models of a folder, loaded at their first use (or by [`LazyOcr::load_now`]) and let go
/// by [`TextRecognizer::release`] when there is nothing to read: a command that never reads an
/// image never pays for loading them, and an idle server holds none of their memory.
pub struct LazyOcr {
    dir: PathBuf,
    library: PathBuf,
    threads: usize,
    engine: Mutex<Option<Arc<Ocr>>>,
}

impl LazyOcr {
    /// The models of `dir` on ONNX Runtime from `library`, each run on at most `threads`
    /// threads; nothing is loaded yet.
    pub fn new(dir: &Path, library: &Path, threads: usize) -> LazyOcr {
        LazyOcr {
            dir: dir.to_owned(),
            library: library.to_owned(),
            threads,
            engine: Mutex::new(None),
        }
    }

    /// The loaded models, loading them now if they are not. They are loaded on a thread of
    /// the lowest priority: ONNX Runtime starts its threads there and they inherit it, so OCR
    /// yields to searches, syncs and embeddings.
    pub fn load_now(&self) -> Result<Arc<Ocr>, String> {
        let mut slot = self.engine.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(engine) = &*slot {
            return Ok(Arc::clone(engine));
        }
        let loaded = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    quarry_core::priority::run_when_idle();
                    Ocr::load(&self.dir, &self.library, self.threads).map_err(|e| e.to_string())
                })
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })?;
        let engine = Arc::new(loaded);
        *slot = Some(Arc::clone(&engine));
        Ok(engine)
    }
}

impl TextRecognizer for LazyOcr {
    fn recognize(&self, image: &GrayImage) -> Result<Recognized, OcrRefusal> {
        let read = self
            .load_now()
            .map_err(OcrRefusal::Unavailable)?
            .recognize(image);
        // A page's buffers are hundreds of megabytes: handed back to the system at once.
        quarry_core::memory::give_back();
        read
    }

    fn models(&self) -> &str {
        MODELS
    }

    fn release(&self) {
        if quarry_core::memory::release(&self.engine) {
            tracing::debug!("released the OCR models: nothing to read");
        }
    }
}
