//! Keyword first, OCR after: a sync indexes what text a document has at once and queues the
//! pages that have none (`quarry_store` table `ocr`); this thread reads them in the
//! background, newest documents first, at the lowest priority, one document at a time. The
//! queue lives in the store, so a crash or a stop loses nothing: the next start carries on
//! from the last page recorded.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use quarry_core::ocr::TextRecognizer;

use crate::background::{Background, Work};
use crate::{SyncError, Syncer};

/// The background thread that reads pending scans; stopped when dropped (after the page being
/// read; what was read so far is kept).
pub struct OcrQueue {
    _thread: Background,
}

impl OcrQueue {
    /// Starts the queue over `syncer`, woken by each batch it commits; `engine`'s models are
    /// let go whenever nothing waits.
    pub fn start(
        syncer: Arc<Syncer>,
        engine: Arc<dyn TextRecognizer>,
    ) -> Result<OcrQueue, SyncError> {
        Ok(OcrQueue {
            _thread: Background::start("quarry-ocr", syncer, Scans { engine })?,
        })
    }
}

/// Reading scans, one document at a time.
struct Scans {
    engine: Arc<dyn TextRecognizer>,
}

impl Work for Scans {
    const WHAT: &'static str = "the OCR queue";
    const IDLE_LOOK: Duration = Duration::from_secs(5);

    fn next(&mut self, syncer: &Syncer, stop: &AtomicBool) -> Result<bool, SyncError> {
        syncer.read_next_scans(stop)
    }

    fn idle(&mut self) {
        self.engine.release();
    }
}
