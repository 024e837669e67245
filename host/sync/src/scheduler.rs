//! The server's sync scheduler: every second it looks at the store and starts what is due, so
//! changes made by the CLI or the settings page in another process are picked up within seconds.
//! A connector never syncs twice at once; at most `parallel` sync at the same time; removed
//! connectors are purged.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use quarry_core::ConnectorId;
use quarry_store::{ConnectorStatus, now_ms};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::{SyncError, Syncer};

/// How often the scheduler looks for work.
pub const TICK: Duration = Duration::from_millis(500);

/// Starts syncs and purges as the store asks for them.
pub struct Scheduler {
    syncer: Arc<Syncer>,
    busy: Arc<Mutex<HashSet<ConnectorId>>>,
    slots: Arc<Semaphore>,
    stop: Arc<AtomicBool>,
    tasks: Mutex<JoinSet<()>>,
}

impl Scheduler {
    /// A scheduler running at most `parallel` syncs at once.
    pub fn new(syncer: Arc<Syncer>, parallel: usize) -> Scheduler {
        Scheduler {
            syncer,
            busy: Arc::default(),
            slots: Arc::new(Semaphore::new(parallel.max(1))),
            stop: Arc::new(AtomicBool::new(false)),
            tasks: Mutex::new(JoinSet::new()),
        }
    }

    /// Prepares for serving: syncs interrupted by a crash or a stop resume, and every connector
    /// gets a sync (unchanged documents are skipped, so this costs a listing).
    pub async fn start(&self) -> Result<(), SyncError> {
        let store = self.syncer.store();
        store.resume_interrupted_syncs(now_ms()).await?;
        for connector in store.connectors().await? {
            if connector.status != ConnectorStatus::Disabled {
                store.request_sync(&connector.id, now_ms()).await?;
            }
        }
        Ok(())
    }

    /// Runs until `shutdown` completes, then stops running syncs at their next batch and waits
    /// for them.
    pub async fn run(&self, shutdown: impl std::future::Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut ticks = tokio::time::interval(TICK);
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                _ = ticks.tick() => {
                    if let Err(e) = self.tick().await {
                        tracing::warn!("sync scheduler: {e}");
                    }
                }
            }
        }
        self.stop.store(true, Ordering::Relaxed);
        let mut tasks =
            std::mem::take(&mut *self.tasks.lock().unwrap_or_else(PoisonError::into_inner));
        while tasks.join_next().await.is_some() {}
    }

    /// One look at the store: purges removed connectors, starts requested syncs.
    pub async fn tick(&self) -> Result<(), SyncError> {
        let store = self.syncer.store();
        for id in store.removed_connectors().await? {
            if self.claim(&id) {
                self.spawn(id, Job::Purge);
            }
        }
        for connector in store.connectors().await? {
            let due = connector.sync_requested_ms.is_some()
                && connector.status != ConnectorStatus::Disabled;
            if due && self.claim(&connector.id) {
                self.spawn(connector.id, Job::Sync);
            }
        }
        Ok(())
    }

    /// True when the connector was free and is now claimed.
    fn claim(&self, id: &ConnectorId) -> bool {
        self.busy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone())
    }

    fn spawn(&self, id: ConnectorId, job: Job) {
        let syncer = self.syncer.clone();
        let busy = self.busy.clone();
        let slots = self.slots.clone();
        let stop = self.stop.clone();
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        tasks.spawn(async move {
            let permit = slots.acquire_owned().await;
            let task_id = id.clone();
            let outcome = tokio::task::spawn_blocking(move || match job {
                Job::Sync => syncer.sync(&task_id, &stop).map(|_| ()),
                Job::Purge => syncer.purge(&task_id),
            })
            .await;
            match outcome {
                Ok(Ok(())) | Ok(Err(SyncError::Stopped | SyncError::Gone)) => {}
                Ok(Err(e)) => tracing::warn!(connector = %id, "{e}"),
                Err(e) => tracing::error!(connector = %id, "sync task failed: {e}"),
            }
            drop(permit);
            busy.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id);
        });
        // Reap finished tasks so the set does not grow.
        while tasks.try_join_next().is_some() {}
    }
}

#[derive(Clone, Copy)]
enum Job {
    Sync,
    Purge,
}
