//! A thread that works through a queue the store keeps, in the background, at the lowest
//! priority: it takes one piece of work at a time, parks when none is left (woken by a sync's
//! commit, or after a while), pauses after an error, and stops when dropped, after the piece
//! under way.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};
use std::thread::Thread;
use std::time::Duration;

use crate::{SyncError, Syncer};

/// How long the thread waits after an error before trying again.
const RETRY_AFTER: Duration = Duration::from_secs(30);
/// How long dropping it waits for the piece of work under way.
const STOP_WAIT: Duration = Duration::from_secs(3);

/// What a background thread does.
pub(crate) trait Work: Send + 'static {
    /// Its name, for the thread and the log ("the OCR queue").
    const WHAT: &'static str;
    /// How often it looks for work when it has none.
    const IDLE_LOOK: Duration;
    /// Does the next piece of work; `false` when none is left. Sees `stop` between steps.
    fn next(&mut self, syncer: &Syncer, stop: &AtomicBool) -> Result<bool, SyncError>;
    /// Called when no work is left, before the thread parks.
    fn idle(&mut self) {}
}

/// A running background thread; stopped when dropped.
pub(crate) struct Background {
    stop: Arc<AtomicBool>,
    thread: Thread,
    ended: Receiver<()>,
}

impl Background {
    /// Starts `work` over `syncer`, woken by each batch a sync commits.
    pub(crate) fn start<W: Work>(
        thread_name: &str,
        syncer: Arc<Syncer>,
        mut work: W,
    ) -> Result<Background, SyncError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (end, ended) = sync_channel(1);
        let thread = {
            let stop = Arc::clone(&stop);
            let syncer = Arc::clone(&syncer);
            std::thread::Builder::new()
                .name(thread_name.into())
                .spawn(move || {
                    run(&syncer, &mut work, &stop);
                    let _ = end.send(());
                })
                .map_err(|source| SyncError::Thread {
                    what: W::WHAT,
                    source,
                })?
        };
        syncer.wake_on_batch(thread.thread().clone());
        Ok(Background {
            stop,
            thread: thread.thread().clone(),
            ended,
        })
    }
}

impl Drop for Background {
    /// Stops the thread after the piece of work under way.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.unpark();
        let _ = self.ended.recv_timeout(STOP_WAIT);
    }
}

fn run<W: Work>(syncer: &Syncer, work: &mut W, stop: &AtomicBool) {
    quarry_core::priority::run_when_idle();
    while !stop.load(Ordering::Relaxed) {
        match work.next(syncer, stop) {
            Ok(true) => {}
            Ok(false) => {
                work.idle();
                std::thread::park_timeout(W::IDLE_LOOK);
            }
            Err(e) => {
                tracing::warn!("{} paused: {e}", W::WHAT);
                std::thread::park_timeout(RETRY_AFTER);
            }
        }
    }
}
