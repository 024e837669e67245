//! Keyword first, meaning after: syncs write documents without vectors, and this queue computes
//! them in the background at the lowest priority (searches and syncs come first), in the order
//! a person is likely to search by meaning: the connectors put first, then prose before code,
//! other files, data and logs, within each kind every document's first passages before the rest
//! of long ones, the newest first (`SearchIndex::pending_vectors`). The index is the queue: a document lacking vectors
//! of the loaded model is pending, so a crash or a stop loses nothing and the next start
//! carries on. Vectors computed from a version of a document that changed meanwhile are not
//! stored (`SearchIndex::add_vectors`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::Thread;
use std::time::{Duration, Instant};

use quarry_core::ConnectorId;
use quarry_embed::Embedder;
use quarry_index::SearchIndex;

use crate::SyncError;
use crate::embed::{Reach, embed_docs_until};

/// Documents taken from the index per round (one commit).
const ROUND_DOCS: usize = 256;
/// Text taken per round at most (a long document alone may exceed it): a round of long
/// documents ends within seconds, so work of a higher tier that arrives meanwhile waits little.
const ROUND_BYTES: usize = 1 << 20;
/// How long the queue waits after an error before trying again.
const RETRY_AFTER: Duration = Duration::from_secs(30);
/// How long dropping the queue waits for a batch being embedded to finish.
const STOP_WAIT: Duration = Duration::from_secs(2);

/// The connectors whose documents the queue embeds before all others (the user's choice,
/// `quarry connector embed-first`), shared by the scheduler, which reads them from the store,
/// and the queue, which reads them every round.
#[derive(Debug, Clone, Default)]
pub struct EmbeddingOrder(Arc<Mutex<Vec<ConnectorId>>>);

impl EmbeddingOrder {
    /// Puts `connectors` first from the next round on.
    pub fn set_first(&self, connectors: Vec<ConnectorId>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = connectors;
    }

    /// The connectors put first.
    pub fn first(&self) -> Vec<ConnectorId> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The background thread that computes pending vectors; stopped when dropped.
pub struct EmbeddingQueue {
    stop: Arc<AtomicBool>,
    thread: Thread,
    ended: Receiver<()>,
}

impl EmbeddingQueue {
    /// Starts the queue over a writable index, in `order`.
    pub fn start(
        index: Arc<SearchIndex>,
        embedder: Arc<Embedder>,
        order: EmbeddingOrder,
    ) -> Result<EmbeddingQueue, SyncError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (end, ended) = sync_channel(1);
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("quarry-embedding".into())
                .spawn(move || {
                    run(&index, &embedder, &order, &stop);
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

fn run(index: &SearchIndex, embedder: &Embedder, order: &EmbeddingOrder, stop: &AtomicBool) {
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
        match embed_round(index, embedder, &order.first(), stop) {
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

/// Embeds one round of pending documents in the queue's order (the connectors `first` before
/// the others) and stores their vectors: the first passages of documents without any, or the
/// rest of those whose first passages have theirs. Returns how many were taken (0: nothing is
/// pending). [`SyncError::Stopped`] when `stop` is set during the round.
pub fn embed_round(
    index: &SearchIndex,
    embedder: &Embedder,
    first: &[ConnectorId],
    stop: &AtomicBool,
) -> Result<usize, SyncError> {
    let mut pending = index.pending_vectors(embedder.id(), first, ROUND_DOCS, ROUND_BYTES)?;
    let taken = pending.len();
    // The round's passages together, sorted by length: embedded in groups of 16 documents,
    // their batches padded a third of the model's time away (`make bench`, embedding_queue).
    let mut docs: Vec<_> = pending.iter_mut().map(|p| &mut p.doc).collect();
    embed_docs_until(embedder, &mut docs, Reach::FirstPassages, stop)?;
    if stop.load(Ordering::Relaxed) {
        return Err(SyncError::Stopped);
    }
    index.add_vectors(pending)?;
    Ok(taken)
}

/// Embeds every pending document in the queue's order (for a command that syncs without a
/// server); `progress` is told how many documents have all their vectors so far and how many
/// lacked some at the start. Returns the former.
pub fn embed_all_pending(
    index: &SearchIndex,
    embedder: &Embedder,
    first: &[ConnectorId],
    stop: &AtomicBool,
    mut progress: impl FnMut(u64, u64),
) -> Result<u64, SyncError> {
    let total = index.pending_count(embedder.id(), None)?;
    loop {
        let taken = embed_round(index, embedder, first, stop)?;
        let done = total.saturating_sub(index.pending_count(embedder.id(), None)?);
        if taken == 0 {
            return Ok(done);
        }
        progress(done, total);
    }
}
