//! Keyword first, OCR after: a sync indexes what text a document has at once and queues the
//! pages that have none (`quarry_store` table `ocr`); this thread reads them in the
//! background, newest documents first, at the lowest priority, one document at a time. The
//! queue lives in the store, so a crash or a stop loses nothing: the next start carries on
//! from the last page recorded.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};
use std::thread::Thread;
use std::time::Duration;

use quarry_core::ocr::TextRecognizer;

use crate::{SyncError, Syncer};

/// How often an idle queue looks for work (a sync's commit also wakes it).
const IDLE_LOOK: Duration = Duration::from_secs(5);
/// How long the queue waits after an error before trying again.
const RETRY_AFTER: Duration = Duration::from_secs(30);
/// How long dropping the queue waits for the page being read.
const STOP_WAIT: Duration = Duration::from_secs(3);

/// The background thread that reads pending scans; stopped when dropped.
pub struct OcrQueue {
    stop: Arc<AtomicBool>,
    thread: Thread,
    ended: Receiver<()>,
}

impl OcrQueue {
    /// Starts the queue over `syncer`, woken by each batch it commits; `engine`'s models are
    /// let go whenever nothing waits.
    pub fn start(
        syncer: Arc<Syncer>,
        engine: Arc<dyn TextRecognizer>,
    ) -> Result<OcrQueue, SyncError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (end, ended) = sync_channel(1);
        let thread = {
            let stop = Arc::clone(&stop);
            let syncer = Arc::clone(&syncer);
            std::thread::Builder::new()
                .name("quarry-ocr".into())
                .spawn(move || {
                    run(&syncer, &*engine, &stop);
                    let _ = end.send(());
                })
                .map_err(|source| SyncError::Thread {
                    what: "the OCR queue",
                    source,
                })?
        };
        syncer.wake_on_batch(thread.thread().clone());
        Ok(OcrQueue {
            stop,
            thread: thread.thread().clone(),
            ended,
        })
    }
}

impl Drop for OcrQueue {
    /// Stops the queue after the page being read; what was read so far is kept.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.unpark();
        let _ = self.ended.recv_timeout(STOP_WAIT);
    }
}

fn run(syncer: &Syncer, engine: &dyn TextRecognizer, stop: &AtomicBool) {
    quarry_core::priority::run_when_idle();
    while !stop.load(Ordering::Relaxed) {
        match syncer.read_next_scans(stop) {
            Ok(true) => {}
            Ok(false) => {
                engine.release();
                std::thread::park_timeout(IDLE_LOOK);
            }
            Err(e) => {
                tracing::warn!("the OCR queue paused: {e}");
                std::thread::park_timeout(RETRY_AFTER);
            }
        }
    }
}
