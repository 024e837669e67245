//! Writes the audit log and keys' last-used times in the background, in batches, so requests do
//! not wait for them. `flush` waits until everything recorded so far is written (at shutdown).

use std::collections::HashMap;
use std::time::Duration;

use quarry_store::{AuditEntry, Store};
use tokio::sync::{mpsc, oneshot};

/// Entries waiting at most; beyond that, entries are dropped with a warning.
const QUEUE: usize = 10_000;
/// Entries written per transaction at most.
const BATCH: usize = 512;
/// How long an entry may wait before its batch is written.
const DELAY: Duration = Duration::from_millis(200);

enum Message {
    Entry(AuditEntry, String),
    Flush(oneshot::Sender<()>),
}

/// Where request handlers send audit entries.
pub(crate) struct AuditSink {
    tx: mpsc::Sender<Message>,
}

impl AuditSink {
    /// Starts the writer task on the current tokio runtime.
    pub(crate) fn start(store: Store) -> AuditSink {
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(write_loop(store, rx));
        AuditSink { tx }
    }

    /// Queues an entry, with the lookup of the key used.
    pub(crate) fn record(&self, entry: AuditEntry, key_lookup: String) {
        if self.tx.try_send(Message::Entry(entry, key_lookup)).is_err() {
            tracing::warn!("audit log queue full or closed; an entry was dropped");
        }
    }

    /// Waits until every entry queued so far is written.
    pub(crate) async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Message::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

async fn write_loop(store: Store, mut rx: mpsc::Receiver<Message>) {
    let mut entries = Vec::new();
    // The latest use of each key in the batch.
    let mut uses: HashMap<String, i64> = HashMap::new();
    let mut flushes = Vec::new();
    while let Some(first) = rx.recv().await {
        let deadline = tokio::time::sleep(DELAY);
        tokio::pin!(deadline);
        let mut next = Some(first);
        loop {
            match next.take() {
                Some(Message::Entry(entry, lookup)) => {
                    let last = uses.entry(lookup).or_insert(entry.time_ms);
                    *last = (*last).max(entry.time_ms);
                    entries.push(entry);
                }
                Some(Message::Flush(done)) => {
                    flushes.push(done);
                    break;
                }
                None => {}
            }
            if entries.len() >= BATCH {
                break;
            }
            tokio::select! {
                () = &mut deadline => break,
                message = rx.recv() => match message {
                    Some(message) => next = Some(message),
                    None => break,
                },
            }
        }
        if !entries.is_empty() {
            if let Err(e) = store.record_audit(&entries).await {
                tracing::error!("writing {} audit entries failed: {e}", entries.len());
            }
            let uses: Vec<(String, i64)> = uses.drain().collect();
            if let Err(e) = store.touch_keys(&uses).await {
                tracing::error!("recording keys' last use failed: {e}");
            }
            entries.clear();
        }
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
    }
}
