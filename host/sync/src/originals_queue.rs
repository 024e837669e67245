//! Judged before served, for documents a sync did not judge: those an older Quarry indexed
//! (whose originals were never read) and those whose images OCR has since read. This thread
//! judges their files in the background, newest first, at the lowest priority; until then a
//! download refuses them. The queue is the catalog itself (documents without a verdict), so a
//! stop or a crash loses nothing.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::background::{Background, Work};
use crate::{SyncError, Syncer};

/// The background thread that judges originals; stopped when dropped (after the file being
/// read).
pub struct OriginalsQueue {
    _thread: Background,
}

impl OriginalsQueue {
    /// Starts the queue over `syncer`, woken by each batch it commits.
    pub fn start(syncer: Arc<Syncer>) -> Result<OriginalsQueue, SyncError> {
        Ok(OriginalsQueue {
            _thread: Background::start("quarry-judge", syncer, Originals)?,
        })
    }
}

/// Judging originals, a few documents at a time.
struct Originals;

impl Work for Originals {
    const WHAT: &'static str = "the judge of original files";
    const IDLE_LOOK: Duration = Duration::from_secs(5);

    fn next(&mut self, syncer: &Syncer, stop: &AtomicBool) -> Result<bool, SyncError> {
        syncer.judge_next_originals(stop)
    }
}
