//! Keyword first, meaning after: syncs write documents without vectors, and this queue computes
//! them in the background, newest documents first, at the lowest priority (searches and syncs
//! come first). The index is the queue: a document lacking vectors of the loaded model is
//! pending, so a crash or a stop loses nothing and the next start carries on. Vectors computed
//! from a version of a document that changed meanwhile are not stored (`SearchIndex::add_vectors`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};
use std::thread::Thread;
use std::time::{Duration, Instant};

use quarry_embed::Embedder;
use quarry_index::SearchIndex;

use crate::SyncError;
use crate::embed::embed_docs_until;

/// Documents taken from the index per round (one commit).
const ROUND_DOCS: usize = 256;
/// Text taken per round at most (a long document alone may exceed it).
const ROUND_BYTES: usize = 2 << 20;
/// How long the queue waits after an error before trying again.
const RETRY_AFTER: Duration = Duration::from_secs(30);
/// How long dropping the queue waits for a batch being embedded to finish.
const STOP_WAIT: Duration = Duration::from_secs(2);

/// The background thread that computes pending vectors; stopped when dropped.
pub struct EmbeddingQueue {
    stop: Arc<AtomicBool>,
    thread: Thread,
    ended: Receiver<()>,
}

impl EmbeddingQueue {
    /// Starts the queue over a writable index.
    pub fn start(
        index: Arc<SearchIndex>,
        embedder: Arc<Embedder>,
    ) -> Result<EmbeddingQueue, SyncError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (end, ended) = sync_channel(1);
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("quarry-embedding".into())
                .spawn(move || {
                    run(&index, &embedder, &stop);
                    let _ = end.send(());
                })
                .map_err(|source| SyncError::Thread {
                    what: "the embedding queue",
                    source,
                })?
        };
        Ok(EmbeddingQueue {
            stop,
            thread: thread.thread().clone(),
            ended,
        })
    }
}

impl Drop for EmbeddingQueue {
    /// Stops the queue: a round under way is dropped (its documents stay pending). Waits a
    /// little for the batch being embedded; a longer one ends on its own, its vectors unstored.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.unpark();
        let _ = self.ended.recv_timeout(STOP_WAIT);
    }
}

fn run(index: &SearchIndex, embedder: &Embedder, stop: &AtomicBool) {
    quarry_core::priority::run_when_idle();
    // Parked until a commit (or the stop) wakes it: an idle queue costs no wakeups.
    index.wake_on_commit(std::thread::current());
    // The commit after which nothing was pending: until the next one there is nothing to do.
    let mut idle_at: Option<u64> = None;
    while !stop.load(Ordering::Relaxed) {
        let generation = index.generation();
        if idle_at == Some(generation) {
            std::thread::park();
            continue;
        }
        match embed_round(index, embedder, stop) {
            Ok(0) => {
                // Drained: what embedding passages holds is given back until there is more.
                embedder.release_passages();
                idle_at = Some(generation);
            }
            Ok(_) => idle_at = None,
            Err(SyncError::Stopped) => break,
            Err(e) => {
                tracing::warn!(
                    "computing embeddings failed, trying again in {}s: {e}",
                    RETRY_AFTER.as_secs()
                );
                let until = Instant::now() + RETRY_AFTER;
                while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                    std::thread::park_timeout(until.saturating_duration_since(Instant::now()));
                }
            }
        }
    }
}

/// Embeds one round of pending documents and stores their vectors; returns how many were taken
/// (0: nothing is pending). [`SyncError::Stopped`] when `stop` is set during the round.
pub fn embed_round(
    index: &SearchIndex,
    embedder: &Embedder,
    stop: &AtomicBool,
) -> Result<usize, SyncError> {
    let mut pending = index.pending_vectors(embedder.id(), ROUND_DOCS, ROUND_BYTES)?;
    let taken = pending.len();
    // The round's passages together, sorted by length: embedded in groups of 16 documents,
    // their batches padded a third of the model's time away (`make bench`, embedding_queue).
    let mut docs: Vec<_> = pending.iter_mut().map(|p| &mut p.doc).collect();
    embed_docs_until(embedder, &mut docs, stop)?;
    if stop.load(Ordering::Relaxed) {
        return Err(SyncError::Stopped);
    }
    index.add_vectors(pending)?;
    Ok(taken)
}

/// Embeds every pending document (for a command that syncs without a server); `progress` is
/// told how many were embedded so far and how many remained at the start.
pub fn embed_all_pending(
    index: &SearchIndex,
    embedder: &Embedder,
    stop: &AtomicBool,
    mut progress: impl FnMut(u64, u64),
) -> Result<u64, SyncError> {
    let total = index.pending_count(embedder.id(), None)?;
    let mut done = 0;
    loop {
        let taken = embed_round(index, embedder, stop)? as u64;
        if taken == 0 {
            return Ok(done);
        }
        done += taken;
        progress(done, total);
    }
}
