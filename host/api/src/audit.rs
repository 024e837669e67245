//! Writes the audit log and keys' last-used times in the background, in batches, so requests do
//! not wait for them. `flush` waits until everything recorded so far is written (at shutdown).
//!
//! The log is bounded: entries older than the retention are deleted at start and every hour. An
//! entry is never lost silently: one that finds the queue full, or whose batch the database
//! refuses, is counted in the store (`quarry activity` and the settings page show the count).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use quarry_store::{AuditEntry, Store, now_ms};
use tokio::sync::{mpsc, oneshot};

/// Entries waiting at most; beyond that, entries are counted as lost.
const QUEUE: usize = 10_000;
/// The `integration_id` of the user's own entries (searches run "as" an integration on the
/// search page); integration ids never take this form.
pub(crate) const USER: &str = "user";
/// Entries written per transaction at most.
const BATCH: usize = 512;
/// How long an entry may wait before its batch is written.
const DELAY: Duration = Duration::from_millis(200);
/// How often entries older than the retention are deleted.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

enum Message {
    Entry(AuditEntry, String),
    Flush(oneshot::Sender<()>),
}

/// Where request handlers send audit entries.
pub(crate) struct AuditSink {
    tx: mpsc::Sender<Message>,
    /// Entries refused by a full queue, not yet counted in the store.
    lost: Arc<AtomicU64>,
}

impl AuditSink {
    /// Starts the writer task on the current tokio runtime; it keeps `retention` of the log.
    pub(crate) fn start(store: Store, retention: Duration) -> AuditSink {
        AuditSink::with_queue(store, retention, QUEUE)
    }

    fn with_queue(store: Store, retention: Duration, queue: usize) -> AuditSink {
        let (tx, rx) = mpsc::channel(queue);
        let lost = Arc::new(AtomicU64::new(0));
        tokio::spawn(write_loop(store, rx, lost.clone(), retention));
        AuditSink { tx, lost }
    }

    /// Queues an entry of the user's own (the search page's "see as"), made with no key.
    pub(crate) fn record_user(&self, entry: AuditEntry) {
        self.record(entry, String::new());
    }

    /// Queues an entry, with the lookup of the key used.
    pub(crate) fn record(&self, entry: AuditEntry, key_lookup: String) {
        if self.tx.try_send(Message::Entry(entry, key_lookup)).is_err()
            && self.lost.fetch_add(1, Ordering::Relaxed) == 0
        {
            tracing::error!("the audit log's queue is full: entries are lost (and counted)");
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

async fn write_loop(
    store: Store,
    mut rx: mpsc::Receiver<Message>,
    lost: Arc<AtomicU64>,
    retention: Duration,
) {
    let mut entries = Vec::new();
    // The latest use of each key in the batch.
    let mut uses: HashMap<String, i64> = HashMap::new();
    let mut flushes = Vec::new();
    let mut prune = tokio::time::interval(PRUNE_EVERY);
    // The first tick is now: the log is pruned before anything else is written.
    prune.tick().await;
    prune_old(&store, retention).await;
    loop {
        let first = tokio::select! {
            message = rx.recv() => match message {
                Some(message) => message,
                None => break,
            },
            _ = prune.tick() => {
                prune_old(&store, retention).await;
                continue;
            }
        };
        let deadline = tokio::time::sleep(DELAY);
        tokio::pin!(deadline);
        let mut next = Some(first);
        loop {
            match next.take() {
                Some(Message::Entry(entry, lookup)) => {
                    if !lookup.is_empty() {
                        let last = uses.entry(lookup).or_insert(entry.time_ms);
                        *last = (*last).max(entry.time_ms);
                    }
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
                lost.fetch_add(entries.len() as u64, Ordering::Relaxed);
            }
            let uses: Vec<(String, i64)> = uses.drain().collect();
            if let Err(e) = store.touch_keys(&uses).await {
                tracing::error!("recording keys' last use failed: {e}");
            }
            entries.clear();
        }
        let newly_lost = lost.swap(0, Ordering::Relaxed);
        if newly_lost > 0
            && let Err(e) = store.count_lost_audit_entries(newly_lost).await
        {
            tracing::error!("{newly_lost} audit entries were lost and could not be counted: {e}");
        }
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
    }
}

/// Deletes the entries older than `retention`.
async fn prune_old(store: &Store, retention: Duration) {
    let before = now_ms().saturating_sub(i64::try_from(retention.as_millis()).unwrap_or(i64::MAX));
    match store.prune_audit(before).await {
        Ok(0) => {}
        Ok(n) => tracing::info!("deleted {n} audit entries older than the retention"),
        Err(e) => tracing::error!("deleting old audit entries failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(time_ms: i64) -> AuditEntry {
        AuditEntry {
            time_ms,
            request_id: format!("r{time_ms}"),
            integration_id: "in_test".to_owned(),
            endpoint: "GET /api/v1/connectors".to_owned(),
            connector_id: None,
            doc_id: None,
            bytes: 10,
            status: 200,
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn entries_a_full_queue_refuses_are_counted_and_old_ones_pruned() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("quarry.db"), &dir.path().join("keys"))
            .await
            .expect("store");
        let old = now_ms() - 100 * 86_400_000;
        store
            .record_audit(&[entry(old)])
            .await
            .expect("an old entry");
        // The writer cannot run while this task queues: a queue of 3 refuses 7 of 10.
        let sink = AuditSink::with_queue(store.clone(), Duration::from_secs(90 * 86_400), 3);
        for i in 0..10 {
            sink.record(entry(now_ms() + i), "lookup".to_owned());
        }
        sink.flush().await;
        assert_eq!(store.lost_audit_entries().await.expect("count"), 7);
        let kept = store
            .audit(&quarry_store::AuditFilter::default())
            .await
            .expect("entries");
        assert_eq!(
            kept.len(),
            3,
            "the 3 queued are written, the old one pruned"
        );
        assert!(kept.iter().all(|e| e.time_ms > old));
    }
}
