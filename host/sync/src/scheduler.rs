//! The server's sync scheduler: it looks at the store when the database is written (at most
//! once per [`TICK`]), when a sync falls due, when a sync ends or a watched folder changes, and
//! starts what is due, so changes made by the CLI or the settings page in another process are
//! picked up within a second, and an idle server wakes for nothing. A sync is due when asked for, when a watched folder changed, when the connector's
//! interval has passed since its last sync (a full listing when its full-listing interval has
//! passed), or every [`RESCAN_EVERY`] for folders that cannot be watched. A connector never
//! syncs twice at once (a change during a sync asks for another); at most `parallel` sync at the
//! same time; removed connectors are purged.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use quarry_core::ConnectorId;
use quarry_runtime::SyncSchedule;
use quarry_store::{Connector, ConnectorScope, ConnectorStatus, SyncFailure, now_ms};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;

use crate::disk_space::{DiskReserve, RESUME_FREE_BYTES};
use crate::embedding_queue::EmbeddingOrder;
use crate::source_watch::SourceWatches;
use crate::store_changes::StoreChanges;
use crate::watch::{Changed, FolderWatcher, RESCAN_EVERY};
use crate::{SyncError, Syncer};

/// How often the scheduler looks for work when it cannot watch the store, and the shortest
/// time between two looks when it can.
pub const TICK: Duration = Duration::from_millis(500);

/// The longest a scheduler that watches the store goes without looking at it (should a write
/// go unseen, or the clock jump).
const LOOK_ANYWAY: Duration = Duration::from_secs(300);

/// Starts syncs and purges as the store asks for them.
pub struct Scheduler {
    syncer: Arc<Syncer>,
    busy: Arc<Mutex<HashSet<ConnectorId>>>,
    slots: Arc<Semaphore>,
    stop: Arc<AtomicBool>,
    tasks: Mutex<JoinSet<()>>,
    watcher: Option<Arc<FolderWatcher>>,
    /// Told when a job ends, so a sync asked for meanwhile starts at once.
    finished: Arc<Notify>,
    /// Paths the watcher saw change, per connector, not yet synced (kept while the connector's
    /// sync runs). Only in memory: after a crash, every connector is listed whole anyway.
    changes: Mutex<HashMap<ConnectorId, Vec<PathBuf>>>,
    /// The data folder's disk reserve, given up when the disk fills ([`crate::disk_space`]).
    reserve: Option<DiskReserve>,
    /// Connectors whose sync the full disk stopped: no sync starts until there is room again,
    /// then these are synced.
    waiting_for_space: Arc<Mutex<HashSet<ConnectorId>>>,
    /// Writes to the database (by the CLI, the settings page, a sync), when they can be
    /// watched: then the scheduler looks at the store when it changed or something falls due,
    /// not every tick.
    store_changes: Option<StoreChanges>,
    /// When the next sync falls due by its schedule (milliseconds since the epoch), as the last
    /// look found.
    next_due_ms: Mutex<Option<i64>>,
    /// Sources that tell of their changes (IMAP IDLE), watched while it runs.
    sources: SourceWatches,
    /// The embedding queue's order, kept in step with the connectors put first.
    embedding_order: Option<EmbeddingOrder>,
    /// The connectors it looks after.
    scope: ConnectorScope,
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
            watcher: None,
            finished: Arc::default(),
            changes: Mutex::default(),
            reserve: None,
            waiting_for_space: Arc::default(),
            store_changes: None,
            next_due_ms: Mutex::default(),
            sources: SourceWatches::default(),
            embedding_order: None,
            scope: ConnectorScope::All,
        }
    }

    /// Looks after the connectors of `scope` only (a team host's own folders, or the team's
    /// other connectors on the host holding the turn); removed connectors are purged by a
    /// scheduler of every connector or of those of any host.
    pub fn scoped(mut self, scope: ConnectorScope) -> Scheduler {
        self.scope = scope;
        self
    }

    /// Keeps `order` in step with the connectors the user put first for embedding, at every
    /// look at the store.
    pub fn ordering_embeddings(mut self, order: EmbeddingOrder) -> Scheduler {
        self.embedding_order = Some(order);
        self
    }

    /// Looks at the store when the database `db` is written (and when a sync falls due), not
    /// every [`TICK`]: an idle server then wakes for nothing. Without a watch on its folder,
    /// every tick it is.
    pub fn woken_by_store_changes(mut self, db: &std::path::Path) -> Scheduler {
        self.store_changes = StoreChanges::watch(db);
        self
    }

    /// When to look at the store next without being woken: every tick without a watch on the
    /// store or while syncs wait for disk space; otherwise when the next sync falls due, or after
    /// [`LOOK_ANYWAY`] at the latest.
    fn next_look(&self) -> Instant {
        let now = Instant::now();
        if self.store_changes.is_none() || self.waits_for_space() {
            return now + TICK;
        }
        let due = *self
            .next_due_ms
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let until_due = due.map_or(LOOK_ANYWAY, |at| {
            Duration::from_millis(u64::try_from(at - now_ms()).unwrap_or(0))
        });
        now + until_due.min(LOOK_ANYWAY)
    }

    /// Keeps a disk reserve in the data folder `data_dir`, so that a sync the full disk stops
    /// is recorded as such, syncs pause, and they resume by themselves once space is free.
    pub fn keeping_disk_reserve(mut self, data_dir: &std::path::Path) -> Scheduler {
        let reserve = DiskReserve::of(data_dir);
        reserve.make();
        self.reserve = Some(reserve);
        self
    }

    /// Whether syncs wait for the disk to have room (a sync stopped on a full disk).
    pub fn waits_for_space(&self) -> bool {
        !self
            .waiting_for_space
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    /// When syncs wait for space: resumes them if there is room again (the reserve made again,
    /// each stopped connector asked to sync); returns whether they still wait.
    async fn still_waiting_for_space(&self) -> Result<bool, SyncError> {
        let Some(reserve) = &self.reserve else {
            return Ok(false);
        };
        if !self.waits_for_space() {
            return Ok(false);
        }
        if !reserve.room_to_resume() {
            return Ok(true);
        }
        reserve.make();
        let waiting: Vec<ConnectorId> = self
            .waiting_for_space
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect();
        for id in &waiting {
            self.syncer.store().request_sync(id, now_ms()).await?;
        }
        tracing::info!(
            connectors = waiting.len(),
            "the data folder's disk has room again: syncs resume"
        );
        Ok(false)
    }

    /// Also watches connectors' granted folders and syncs them when their files change;
    /// changes under `ignore` (Quarry's data folder, caches) are not watched for.
    pub fn watching(mut self, ignore: Vec<PathBuf>) -> Scheduler {
        self.watcher = Some(Arc::new(FolderWatcher::new(ignore)));
        self
    }

    /// Prepares for serving: syncs interrupted by a crash or a stop resume (followed by a full
    /// listing), and every connector gets a sync (unchanged documents are skipped, so this
    /// costs a listing): changes made while no server watched are found.
    pub async fn start(&self) -> Result<(), SyncError> {
        let store = self.syncer.store();
        store
            .resume_interrupted_syncs(&self.scope, now_ms())
            .await?;
        for connector in store.connectors().await? {
            if connector.status == ConnectorStatus::Disabled || !self.scope.contains(&connector) {
                continue;
            }
            // An interrupted full listing resumes, and a fresh one follows it (the syncer sees
            // to that): what changed while Quarry was stopped may lie in the part already listed.
            store.request_sync(&connector.id, now_ms()).await?;
        }
        Ok(())
    }

    /// Runs until `shutdown` completes, then stops running syncs at their next document and waits
    /// for them.
    /// It may run again after it ended (a team host that took the sync turn back).
    pub async fn run(&self, shutdown: impl std::future::Future<Output = ()>) {
        self.stop.store(false, Ordering::Relaxed);
        tokio::pin!(shutdown);
        let mut last_look = Instant::now();
        // The store was written since the last look: look again, at most once per tick
        // however often it is written (an integration's searches write the activity log).
        let mut store_written = false;
        self.tick_logged().await;
        loop {
            let burst_due = self.watcher.as_ref().and_then(|w| w.next_due());
            let next_look = if store_written {
                self.next_look().min(last_look + TICK)
            } else {
                self.next_look()
            };
            tokio::select! {
                () = &mut shutdown => break,
                () = sleep_until(Some(next_look)) => {
                    store_written = false;
                    last_look = Instant::now();
                    self.tick_logged().await;
                }
                () = self.finished.notified() => {
                    last_look = Instant::now();
                    self.tick_logged().await;
                }
                () = store_changed(self.store_changes.as_ref()), if !store_written => {
                    store_written = true;
                }
                () = changed(self.watcher.as_deref()) => {}
                () = sleep_until(burst_due) => {
                    if let Some(watcher) = &self.watcher {
                        for (id, changed) in watcher.take_due(Instant::now()) {
                            self.note_changes(&id, changed).await;
                        }
                    }
                    self.tick_logged().await;
                }
            }
        }
        self.stop.store(true, Ordering::Relaxed);
        let mut tasks =
            std::mem::take(&mut *self.tasks.lock().unwrap_or_else(PoisonError::into_inner));
        while tasks.join_next().await.is_some() {}
    }

    /// Keeps the paths that changed for the connector's next sync, which lists only those when
    /// its plugin can; changes it cannot place ask for a sync that lists everything.
    async fn note_changes(&self, id: &ConnectorId, changed: Changed) {
        let unknown = {
            let mut changes = self.changes.lock().unwrap_or_else(PoisonError::into_inner);
            let kept = changes.remove(id).unwrap_or_default();
            match Changed::Paths(kept).merge(changed) {
                Changed::Paths(paths) => {
                    changes.insert(id.clone(), paths);
                    false
                }
                Changed::Unknown => true,
            }
        };
        if unknown && let Err(e) = self.syncer.store().request_sync(id, now_ms()).await {
            tracing::warn!(connector = %id, "sync scheduler: {e}");
        }
    }

    async fn tick_logged(&self) {
        if let Err(e) = self.tick().await {
            tracing::warn!("sync scheduler: {e}");
        }
    }

    /// One look at the store: purges removed connectors, keeps the watches in step, asks for
    /// the syncs whose time has come, and starts requested ones.
    pub async fn tick(&self) -> Result<(), SyncError> {
        let store = self.syncer.store();
        if !matches!(self.scope, ConnectorScope::LivingOn(_)) {
            for id in store.removed_connectors().await? {
                if self.claim(&id) {
                    self.spawn(id, Job::Purge);
                }
            }
        }
        if self.still_waiting_for_space().await? {
            return Ok(());
        }
        let connectors: Vec<Connector> = store
            .connectors()
            .await?
            .into_iter()
            .filter(|c| c.status != ConnectorStatus::Disabled)
            .collect();
        if let Some(order) = &self.embedding_order {
            order.set_first(
                connectors
                    .iter()
                    .filter(|c| c.embed_first)
                    .map(|c| c.id.clone())
                    .collect(),
            );
        }
        let connectors: Vec<Connector> = connectors
            .into_iter()
            .filter(|c| self.scope.contains(c))
            .collect();
        let unwatchable = self.update_watches(&connectors).await;
        self.sources.keep(&self.syncer, &connectors, &self.stop);
        let now = now_ms();
        let mut next_due: Option<i64> = None;
        for connector in connectors {
            let mut due = connector.schedule.sync_requested_ms.is_some();
            // A running sync is not timed again: its start would still look overdue.
            if !due && !self.is_busy(&connector.id) {
                let schedule = self.schedule(&connector);
                // A last time in the future means the clock went back (NTP, a machine resumed
                // with a wrong clock): overdue, rather than waiting for the clock to catch up.
                let overdue = |t: Option<i64>, every: i64| {
                    let since = now - t.unwrap_or(connector.created_ms);
                    since < 0 || since >= every
                };
                if overdue(connector.listing.last_full_ms, schedule.full_every_ms)
                    && !connector.schedule.full_requested
                {
                    store.request_full_sync(&connector.id, now).await?;
                    due = true;
                } else if overdue(connector.last_sync_ms, schedule.every_ms)
                    || (unwatchable.contains(&connector.id)
                        && overdue(connector.last_sync_ms, millis(RESCAN_EVERY)))
                {
                    store.request_sync(&connector.id, now).await?;
                    due = true;
                } else {
                    let last_sync = connector.last_sync_ms.unwrap_or(connector.created_ms);
                    let mut at = last_sync.saturating_add(schedule.every_ms);
                    if !connector.schedule.full_requested {
                        let last_full = connector
                            .listing
                            .last_full_ms
                            .unwrap_or(connector.created_ms);
                        at = at.min(last_full.saturating_add(schedule.full_every_ms));
                    }
                    if unwatchable.contains(&connector.id) {
                        at = at.min(last_sync.saturating_add(millis(RESCAN_EVERY)));
                    }
                    next_due = Some(next_due.map_or(at, |n| n.min(at)));
                }
            }
            if due && self.claim(&connector.id) {
                // A listing of everything covers the changes seen so far.
                self.take_changes(&connector.id);
                self.spawn(connector.id, Job::Sync);
            } else if !due && self.has_changes(&connector.id) && self.claim(&connector.id) {
                let changed = self.take_changes(&connector.id);
                self.spawn(connector.id, Job::Changes(changed));
            }
        }
        *self
            .next_due_ms
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = next_due;
        Ok(())
    }

    /// Watches the granted folders of `connectors` (and no others); returns those that cannot be
    /// watched.
    async fn update_watches(&self, connectors: &[Connector]) -> HashSet<ConnectorId> {
        let Some(watcher) = self.watcher.clone() else {
            return HashSet::new();
        };
        let wanted: Vec<(ConnectorId, Vec<PathBuf>)> = connectors
            .iter()
            .map(|c| {
                let dirs = c.grant.dirs.values().map(PathBuf::from).collect();
                (c.id.clone(), dirs)
            })
            .collect();
        let watched = tokio::task::spawn_blocking(move || {
            watcher.watch_only(&wanted);
            watcher.unwatchable()
        })
        .await;
        match watched {
            Ok(ids) => ids.into_iter().collect(),
            Err(e) => {
                tracing::error!("updating folder watches failed: {e}");
                HashSet::new()
            }
        }
    }

    /// The connector's intervals: its own, or its plugin manifest's.
    fn schedule(&self, connector: &Connector) -> Intervals {
        let defaults = self
            .syncer
            .plugins()
            .get(&connector.plugin_id)
            .map(|p| p.manifest().sync)
            .unwrap_or_default();
        Intervals::of(connector, defaults)
    }

    fn has_changes(&self, id: &ConnectorId) -> bool {
        self.changes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(id)
    }

    fn take_changes(&self, id: &ConnectorId) -> Vec<PathBuf> {
        self.changes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
            .unwrap_or_default()
    }

    fn is_busy(&self, id: &ConnectorId) -> bool {
        self.busy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(id)
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
        let finished = self.finished.clone();
        let full_disk = self.reserve.clone().map(|reserve| {
            (
                reserve,
                self.waiting_for_space.clone(),
                self.syncer.store().clone(),
            )
        });
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        tasks.spawn(async move {
            let permit = slots.acquire_owned().await;
            // One host at a time syncs a connector of a team; held until the job ends.
            let claim = match syncer.store().claim_connector(&id).await {
                Ok(Some(claim)) => Some(claim),
                Ok(None) => {
                    tracing::debug!(connector = %id, "another host of the team is syncing it");
                    None
                }
                Err(e) => {
                    tracing::warn!(connector = %id, "cannot claim it for a sync: {e}");
                    None
                }
            };
            let Some(claim) = claim else {
                drop(permit);
                busy.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&id);
                return;
            };
            let task_id = id.clone();
            // A thread of its own at background priority (not a pooled blocking thread, which
            // could not get its priority back to serve a search afterwards).
            let (done, outcome) = tokio::sync::oneshot::channel();
            let started = std::thread::Builder::new()
                .name("quarry-sync".into())
                .spawn(move || {
                    quarry_core::priority::run_in_background();
                    let outcome = match job {
                        Job::Sync => syncer.sync(&task_id, &stop).map(|_| ()),
                        Job::Changes(paths) => {
                            syncer.sync_changes(&task_id, &paths, &stop).map(|_| ())
                        }
                        Job::Purge => syncer.purge(&task_id),
                    };
                    // What the sync held (its listing, the plugin's buffers, the index
                    // writer's) is free now: an idle server should not keep it.
                    quarry_core::memory::give_back();
                    let _ = done.send(outcome);
                });
            match started {
                Ok(_) => match outcome.await {
                    Ok(Ok(())) | Ok(Err(SyncError::Stopped | SyncError::Gone)) => {}
                    Ok(Err(e)) if e.is_disk_full() && full_disk.is_some() => {
                        if let Some((reserve, waiting, store)) = &full_disk {
                            stopped_by_full_disk(store, &id, reserve, waiting, &e).await;
                        }
                    }
                    Ok(Err(e)) => tracing::warn!(connector = %id, "{e}"),
                    Err(_) => tracing::error!(connector = %id, "the sync thread panicked"),
                },
                Err(e) => tracing::error!(connector = %id, "cannot start a sync thread: {e}"),
            }
            drop(claim);
            drop(permit);
            busy.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id);
            finished.notify_one();
        });
        // Reap finished tasks so the set does not grow.
        while tasks.try_join_next().is_some() {}
    }
}

/// A sync stopped because the disk is full: the reserve is given up so that the failure can be
/// recorded, and the connector waits for space.
async fn stopped_by_full_disk(
    store: &quarry_store::Store,
    id: &ConnectorId,
    reserve: &DiskReserve,
    waiting: &Mutex<HashSet<ConnectorId>>,
    error: &SyncError,
) {
    reserve.release();
    waiting
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(id.clone());
    let failure = SyncFailure {
        full: format!(
            "disk full: the file system of Quarry's data folder has no space left; syncs resume by themselves once {} MiB are free ({error})",
            RESUME_FREE_BYTES >> 20
        ),
        public: "the last sync stopped: the disk is full; it resumes by itself once space is freed"
            .to_owned(),
    };
    tracing::warn!(connector = %id, "{}", failure.full);
    if let Err(e) = store.sync_finished(id, Some(&failure), now_ms()).await {
        tracing::error!(connector = %id, "the full disk could not be recorded: {e}");
    }
}

enum Job {
    /// A sync listing as the connector's state says (usually everything).
    Sync,
    /// A sync of what changed at these paths (everything when the plugin cannot tell).
    Changes(Vec<PathBuf>),
    Purge,
}

/// How often a connector syncs, in milliseconds.
struct Intervals {
    every_ms: i64,
    full_every_ms: i64,
}

impl Intervals {
    fn of(connector: &Connector, defaults: SyncSchedule) -> Intervals {
        let seconds = |own: Option<i64>, default: i64| own.filter(|s| *s > 0).unwrap_or(default);
        Intervals {
            every_ms: 1000
                * seconds(
                    connector.schedule.sync_interval_s,
                    60 * i64::from(defaults.interval_minutes),
                ),
            full_every_ms: 1000
                * seconds(
                    connector.schedule.full_interval_s,
                    3600 * i64::from(defaults.full_interval_hours),
                ),
        }
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Completes when the watcher saw an event; never without a watcher.
async fn changed(watcher: Option<&FolderWatcher>) {
    match watcher {
        Some(w) => w.changed().await,
        None => std::future::pending().await,
    }
}

/// Completes when the store changed; never without a watch on it.
async fn store_changed(changes: Option<&StoreChanges>) {
    match changes {
        Some(changes) => changes.changed().await,
        None => std::future::pending().await,
    }
}

/// Completes at `at`; never without it.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}
