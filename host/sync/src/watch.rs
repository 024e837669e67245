//! Watching the folders connectors were granted, so a change reaches the index within a couple
//! of seconds. The sandboxed plugin cannot watch; the host does (inotify on Linux, through
//! `notify`) and asks for a sync of the connector, whose listing then finds what changed.
//!
//! Events are coalesced per connector: a burst (an editor's save by rename, a `git checkout`,
//! a copied folder) becomes one sync once it has been quiet for [`QUIET`], or at the latest
//! [`MAX_DELAY`] after it began. Reads (open, access, close without writing) are not changes, so
//! a sync reading the files never wakes itself. A lost event (the kernel's queue overflowed) or
//! a watch error also asks for a sync: a listing is a rescan. A folder that cannot be watched
//! (watch limit reached, a file system without events) is logged and rescanned every
//! [`RESCAN_EVERY`] instead.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use notify::event::{CreateKind, ModifyKind, RenameMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use quarry_core::ConnectorId;
use tokio::sync::Notify;

use crate::watch_tree::{self, Identity};

/// How long a burst of events must be quiet before its sync is asked for.
pub const QUIET: Duration = Duration::from_millis(150);

/// How long after its first event a burst gets its sync, however busy the folder stays.
pub const MAX_DELAY: Duration = Duration::from_secs(1);

/// How often a folder that cannot be watched is rescanned.
pub const RESCAN_EVERY: Duration = Duration::from_secs(60);

/// Paths a burst keeps at most; a larger burst (a checkout, a copied tree) is a rescan.
pub const MAX_HINTED_PATHS: usize = 4096;

/// Folders one connector's watch covers at most; a larger tree is rescanned instead.
pub const MAX_WATCHED_FOLDERS: usize = 200_000;

/// New folders waiting to be watched, at most; past that, the connector's whole tree is walked
/// again once they are (a flood of new folders costs one walk, not memory).
pub const MAX_PENDING_FOLDERS: usize = 4096;

/// What a burst of events says changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    /// These paths (each once).
    Paths(Vec<PathBuf>),
    /// Anything: events were lost, or too many paths to keep.
    Unknown,
}

impl Changed {
    /// Both changes together.
    pub fn merge(self, other: Changed) -> Changed {
        match (self, other) {
            (Changed::Paths(mut a), Changed::Paths(b)) => {
                a.extend(b);
                a.sort_unstable();
                a.dedup();
                if a.len() > MAX_HINTED_PATHS {
                    Changed::Unknown
                } else {
                    Changed::Paths(a)
                }
            }
            _ => Changed::Unknown,
        }
    }
}

/// Watches connectors' granted folders and collects their bursts of changes.
pub struct FolderWatcher {
    shared: Arc<Shared>,
    watches: Arc<Mutex<HashMap<ConnectorId, Watch>>>,
    ignore: Arc<Vec<PathBuf>>,
    /// The identities of Quarry's own folders: never watched.
    protected: Arc<Vec<Identity>>,
    /// Folders that appeared in a watched tree, for the thread that watches them.
    appeared: SyncSender<(ConnectorId, PathBuf)>,
}

/// What the event handlers (on notify's thread) share with the scheduler.
#[derive(Default)]
struct Shared {
    bursts: Mutex<HashMap<ConnectorId, Burst>>,
    wake: Notify,
    /// Connectors whose new folders were more than the thread that watches them could be told
    /// of: their trees are walked again.
    rewalk: Mutex<BTreeSet<ConnectorId>>,
}

struct Burst {
    first: Instant,
    last: Instant,
    /// The paths of its events, while they are few enough to keep.
    paths: BTreeSet<PathBuf>,
    /// True when what changed is not known (lost events, too many paths).
    unknown: bool,
}

impl Burst {
    fn add(&mut self, changed: Changed) {
        match changed {
            _ if self.unknown => {}
            Changed::Paths(paths) => {
                self.paths.extend(paths);
                if self.paths.len() > MAX_HINTED_PATHS {
                    self.unknown = true;
                    self.paths.clear();
                }
            }
            Changed::Unknown => {
                self.unknown = true;
                self.paths.clear();
            }
        }
    }

    fn changed(self) -> Changed {
        if self.unknown {
            Changed::Unknown
        } else {
            Changed::Paths(self.paths.into_iter().collect())
        }
    }
}

struct Watch {
    dirs: Vec<PathBuf>,
    /// How many folders are watched (at most [`MAX_WATCHED_FOLDERS`]).
    folders: usize,
    /// `None` when the folders could not be watched: rescanned every [`RESCAN_EVERY`].
    watcher: Option<RecommendedWatcher>,
}

impl FolderWatcher {
    /// A watcher that ignores changes under `ignore` (Quarry's own data folder and caches, which
    /// may sit inside a watched folder: their changes must not trigger syncs).
    pub fn new(ignore: Vec<PathBuf>) -> FolderWatcher {
        let ignore: Vec<PathBuf> = ignore
            .into_iter()
            .map(|p| p.canonicalize().unwrap_or(p))
            .collect();
        let protected: Arc<Vec<Identity>> = Arc::new(
            ignore
                .iter()
                .filter_map(|p| watch_tree::identity(p))
                .collect(),
        );
        let watches: Arc<Mutex<HashMap<ConnectorId, Watch>>> = Arc::default();
        let shared: Arc<Shared> = Arc::default();
        let (appeared, arrivals) = sync_channel(MAX_PENDING_FOLDERS);
        let weak = Arc::downgrade(&watches);
        let guarded = protected.clone();
        let told = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("quarry-watch-new".to_owned())
            .spawn(move || watch_arrivals(&arrivals, &weak, &guarded, &told));
        if let Err(e) = spawned {
            tracing::warn!("cannot start the thread that watches new folders: {e}");
        }
        FolderWatcher {
            shared,
            watches,
            ignore: Arc::new(ignore),
            protected,
            appeared,
        }
    }

    /// Watches exactly these connectors' folders: new ones are watched, changed ones watched
    /// anew, and connectors not listed are no longer watched. Blocks while it adds watches (a
    /// recursive watch visits every sub-folder): call it from a blocking thread.
    pub fn watch_only(&self, wanted: &[(ConnectorId, Vec<PathBuf>)]) {
        let mut watches = self.watches.lock().unwrap_or_else(PoisonError::into_inner);
        watches.retain(|id, watch| {
            wanted
                .iter()
                .any(|(wanted_id, dirs)| wanted_id == id && *dirs == watch.dirs)
        });
        for (id, dirs) in wanted {
            if watches.contains_key(id) || dirs.is_empty() {
                continue;
            }
            let (watcher, folders) = match self.start(id, dirs) {
                Ok((watcher, folders)) => {
                    tracing::info!(connector = %id, folders = ?dirs, watched = folders, "watching for changes");
                    (Some(watcher), folders)
                }
                Err(e) => {
                    tracing::warn!(
                        connector = %id,
                        "cannot watch {dirs:?} ({e}); rescanning every {} s instead",
                        RESCAN_EVERY.as_secs()
                    );
                    (None, 0)
                }
            };
            watches.insert(
                id.clone(),
                Watch {
                    dirs: dirs.clone(),
                    folders,
                    watcher,
                },
            );
        }
    }

    /// The watched connectors whose folders could not be watched.
    pub fn unwatchable(&self) -> Vec<ConnectorId> {
        let watches = self.watches.lock().unwrap_or_else(PoisonError::into_inner);
        watches
            .iter()
            .filter(|(_, w)| w.watcher.is_none())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Takes the connectors whose bursts are over (quiet for [`QUIET`], or begun [`MAX_DELAY`]
    /// ago) at `now`, with what changed.
    pub fn take_due(&self, now: Instant) -> Vec<(ConnectorId, Changed)> {
        let mut bursts = self
            .shared
            .bursts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let due: Vec<ConnectorId> = bursts
            .iter()
            .filter(|(_, b)| due_at(b) <= now)
            .map(|(id, _)| id.clone())
            .collect();
        due.into_iter()
            .filter_map(|id| bursts.remove(&id).map(|b| (id, b.changed())))
            .collect()
    }

    /// When the next burst will be due, if any is under way.
    pub fn next_due(&self) -> Option<Instant> {
        let bursts = self
            .shared
            .bursts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        bursts.values().map(due_at).min()
    }

    /// Completes when an event arrived since the last call (or was pending before it).
    pub async fn changed(&self) {
        self.shared.wake.notified().await;
    }

    /// Starts watching `dirs` for the connector `id`: the watcher, and how many folders it
    /// watches.
    fn start(
        &self,
        id: &ConnectorId,
        dirs: &[PathBuf],
    ) -> notify::Result<(RecommendedWatcher, usize)> {
        let shared = self.shared.clone();
        let ignore = self.ignore.clone();
        let connector = id.clone();
        let appeared = self.appeared.clone();
        let handler = move |event: notify::Result<Event>| {
            if let Ok(event) = &event
                && let Some(dir) = new_folder(event)
                && appeared
                    .try_send((connector.clone(), dir.to_path_buf()))
                    .is_err()
            {
                // Too many at once: the whole tree is walked again once those are watched.
                let mut rewalk = shared.rewalk.lock().unwrap_or_else(PoisonError::into_inner);
                rewalk.insert(connector.clone());
            }
            let changed = match event {
                Ok(event) if !is_change(&event, &ignore) => return,
                Ok(event) if event.need_rescan() => {
                    tracing::warn!(
                        connector = %connector,
                        "file events were lost (the queue overflowed): rescanning the folder"
                    );
                    Changed::Unknown
                }
                Ok(event) if event.paths.is_empty() => Changed::Unknown,
                Ok(event) => {
                    let ignored = |path: &PathBuf| ignore.iter().any(|i| path.starts_with(i));
                    Changed::Paths(event.paths.into_iter().filter(|p| !ignored(p)).collect())
                }
                Err(e) => {
                    tracing::warn!(connector = %connector, "watching: {e}; rescanning");
                    Changed::Unknown
                }
            };
            shared.note(&connector, changed);
        };
        // Each folder is watched on its own (not recursively): which folders, `watch_tree`
        // decides, and no link is followed.
        let config = notify::Config::default().with_follow_symlinks(false);
        let mut watcher = RecommendedWatcher::new(handler, config)?;
        let mut watched = 0;
        for dir in dirs {
            let (folders, whole) =
                watch_tree::folders(dir, &self.protected, MAX_WATCHED_FOLDERS - watched)
                    .map_err(|e| notify::Error::io(e).add_path(dir.clone()))?;
            if !whole {
                return Err(notify::Error::generic(&format!(
                    "more than {MAX_WATCHED_FOLDERS} folders"
                )));
            }
            watched += watch_each(&mut watcher, &folders)?;
        }
        Ok((watcher, watched))
    }
}

/// The folder an event says appeared (created, or moved in), if any.
fn new_folder(event: &Event) -> Option<&Path> {
    match event.kind {
        EventKind::Create(CreateKind::Folder | CreateKind::Any) => event.paths.first(),
        EventKind::Modify(ModifyKind::Name(RenameMode::To)) => event.paths.first(),
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => event.paths.get(1),
        _ => None,
    }
    .map(PathBuf::as_path)
    .filter(|path| path.is_dir())
}

/// Watches each of `folders` on its own; a folder gone meanwhile (or unreadable) is passed
/// over, the watch limit is an error. How many were watched.
fn watch_each(watcher: &mut RecommendedWatcher, folders: &[PathBuf]) -> notify::Result<usize> {
    let mut watched = 0;
    for folder in folders {
        match watcher.watch(folder, RecursiveMode::NonRecursive) {
            Ok(()) => watched += 1,
            Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => return Err(e),
            Err(e) => tracing::debug!("not watching {}: {e}", folder.display()),
        }
    }
    Ok(watched)
}

/// The thread that watches folders as they appear in watched trees: until the watcher is gone.
fn watch_arrivals(
    arrivals: &Receiver<(ConnectorId, PathBuf)>,
    watches: &Weak<Mutex<HashMap<ConnectorId, Watch>>>,
    protected: &[Identity],
    shared: &Shared,
) {
    while let Ok(first) = arrivals.recv() {
        let Some(watches) = watches.upgrade() else {
            return;
        };
        let mut watches = watches.lock().unwrap_or_else(PoisonError::into_inner);
        let mut first = Some(first);
        loop {
            // Connectors with more new folders than the queue held: their trees are walked
            // again once the queue is drained, and what is queued for them is left to the walk.
            let rewalk =
                std::mem::take(&mut *shared.rewalk.lock().unwrap_or_else(PoisonError::into_inner));
            let queued = first
                .take()
                .into_iter()
                .chain(arrivals.try_iter().take(MAX_PENDING_FOLDERS));
            for (id, dir) in queued {
                if !rewalk.contains(&id)
                    && let Some(watch) = watches.get_mut(&id)
                {
                    watch_new(watch, &id, &dir, protected);
                }
            }
            for id in &rewalk {
                if let Some(watch) = watches.get_mut(id) {
                    walk_again(watch, id, protected);
                }
            }
            // A flood that overflowed the queue while it was drained is walked now: no later
            // folder may come to wake this thread.
            if shared
                .rewalk
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_empty()
            {
                break;
            }
        }
    }
}

/// Watches `dir`, a folder that appeared in `watch`'s tree, with the folders it holds.
fn watch_new(watch: &mut Watch, id: &ConnectorId, dir: &Path, protected: &[Identity]) {
    let Some(root) = watch.dirs.iter().find(|root| dir.starts_with(root)) else {
        return;
    };
    if !watch_tree::admits(root, dir, protected) {
        return;
    }
    let room = MAX_WATCHED_FOLDERS.saturating_sub(watch.folders);
    // Gone again: its parent's listing covers it.
    let Ok((folders, whole)) = watch_tree::folders(dir, protected, room) else {
        return;
    };
    let Some(watcher) = watch.watcher.as_mut() else {
        return;
    };
    match watch_each(watcher, &folders) {
        Ok(added) if whole => watch.folders += added,
        _ => give_up(watch, id),
    }
}

/// Walks `watch`'s whole tree again, watching every folder (those watched already stay so).
fn walk_again(watch: &mut Watch, id: &ConnectorId, protected: &[Identity]) {
    let Some(watcher) = watch.watcher.as_mut() else {
        return;
    };
    let mut watched = 0;
    for dir in &watch.dirs {
        let walked = watch_tree::folders(dir, protected, MAX_WATCHED_FOLDERS - watched);
        match walked.map(|(folders, whole)| (watch_each(watcher, &folders), whole)) {
            Ok((Ok(added), true)) => watched += added,
            _ => return give_up(watch, id),
        }
    }
    watch.folders = watched;
}

/// Stops watching `watch`'s folders, which are rescanned every [`RESCAN_EVERY`] instead.
fn give_up(watch: &mut Watch, id: &ConnectorId) {
    tracing::warn!(
        connector = %id,
        "cannot watch every folder any more; rescanning every {} s instead",
        RESCAN_EVERY.as_secs()
    );
    watch.watcher = None;
}

impl Shared {
    fn note(&self, id: &ConnectorId, changed: Changed) {
        let now = Instant::now();
        let mut bursts = self.bursts.lock().unwrap_or_else(PoisonError::into_inner);
        let burst = bursts.entry(id.clone()).or_insert(Burst {
            first: now,
            last: now,
            paths: BTreeSet::new(),
            unknown: false,
        });
        burst.last = now;
        burst.add(changed);
        drop(bursts);
        self.wake.notify_one();
    }
}

fn due_at(burst: &Burst) -> Instant {
    (burst.last + QUIET).min(burst.first + MAX_DELAY)
}

/// Whether an event may mean the folder's documents changed.
fn is_change(event: &Event, ignore: &[PathBuf]) -> bool {
    if event.need_rescan() {
        return true;
    }
    if matches!(event.kind, EventKind::Access(_)) {
        return false;
    }
    let ignored = |path: &PathBuf| ignore.iter().any(|i| path.starts_with(i));
    event.paths.is_empty() || !event.paths.iter().all(ignored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_quarrys_own_files_are_not_changes() {
        let ignore = vec![PathBuf::from("/data/quarry")];
        let event = |kind, path: &str| Event::new(kind).add_path(PathBuf::from(path));
        use notify::event::{AccessKind, CreateKind, ModifyKind};
        assert!(!is_change(
            &event(EventKind::Access(AccessKind::Any), "/docs/a.md"),
            &ignore
        ));
        assert!(!is_change(
            &event(EventKind::Create(CreateKind::File), "/data/quarry/index/x"),
            &ignore
        ));
        assert!(is_change(
            &event(EventKind::Modify(ModifyKind::Any), "/docs/a.md"),
            &ignore
        ));
        let overflow = Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        assert!(is_change(&overflow, &ignore));
    }

    fn id(name: &str) -> ConnectorId {
        ConnectorId::parse(name).expect("valid id")
    }

    /// Waits up to 5 s for a due burst.
    fn due_within(watcher: &FolderWatcher) -> Vec<(ConnectorId, Changed)> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let due = watcher.take_due(Instant::now());
            if !due.is_empty() || Instant::now() > deadline {
                return due;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn writes_make_one_burst_and_reads_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let own = dir.path().join("quarry-data");
        std::fs::create_dir_all(&own).expect("mkdir");
        let watcher = FolderWatcher::new(vec![own.clone()]);
        let notes = id("cn_notes");
        watcher.watch_only(&[(notes.clone(), vec![dir.path().to_owned()])]);
        assert!(watcher.unwatchable().is_empty());

        for i in 0..20 {
            std::fs::write(dir.path().join(format!("{i}.md")), "text").expect("write");
        }
        let due = due_within(&watcher);
        let expected: Vec<PathBuf> = {
            let mut paths: Vec<PathBuf> = (0..20)
                .map(|i| dir.path().join(format!("{i}.md")))
                .collect();
            paths.sort();
            paths
        };
        assert_eq!(
            due,
            vec![(notes, Changed::Paths(expected))],
            "one sync for 20 writes, naming each file once"
        );
        // Let any straggling event of the writes arrive and be taken.
        std::thread::sleep(MAX_DELAY);
        watcher.take_due(Instant::now() + MAX_DELAY);

        // Reading (as a sync does) and Quarry's own files are not changes.
        for i in 0..20 {
            std::fs::read(dir.path().join(format!("{i}.md"))).expect("read");
        }
        std::fs::write(own.join("index-segment"), "bytes").expect("write");
        std::thread::sleep(QUIET * 3);
        assert!(watcher.next_due().is_none(), "nothing to sync");

        // Unwatching: changes no longer count.
        watcher.watch_only(&[]);
        std::fs::write(dir.path().join("late.md"), "text").expect("write");
        std::thread::sleep(QUIET * 3);
        assert!(watcher.take_due(Instant::now()).is_empty());
    }

    #[test]
    fn a_flood_of_new_folders_is_watched_whole_by_walking_the_tree_again() {
        let dir = tempfile::tempdir().expect("temp dir");
        let watcher = FolderWatcher::new(Vec::new());
        let flood = id("cn_flood");
        watcher.watch_only(&[(flood.clone(), vec![dir.path().to_path_buf()])]);
        // The thread that watches new folders is held while they appear: more of them than it
        // can be told of.
        let count = MAX_PENDING_FOLDERS + 500;
        {
            let _held = watcher.watches.lock().expect("watches");
            for i in 0..count {
                std::fs::create_dir(dir.path().join(format!("d{i}"))).expect("mkdir");
            }
            std::thread::sleep(QUIET * 2);
        }
        let watched = || {
            let watches = watcher.watches.lock().expect("watches");
            watches.get(&flood).map_or(0, |w| w.folders)
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while watched() < count + 1 {
            assert!(
                Instant::now() < deadline,
                "{} of {} watched",
                watched(),
                count + 1
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // Every one of them is watched: a file written in the last is a change.
        watcher.take_due(Instant::now() + MAX_DELAY);
        let last = dir.path().join(format!("d{}", count - 1)).join("note.md");
        std::fs::write(&last, "text").expect("write");
        std::thread::sleep(QUIET * 3);
        let due = watcher.take_due(Instant::now());
        assert!(
            matches!(&due[..], [(_, Changed::Paths(paths))] if paths.contains(&last)),
            "{due:?}"
        );
    }

    #[test]
    fn a_folder_that_cannot_be_watched_is_reported_for_rescans() {
        let watcher = FolderWatcher::new(Vec::new());
        let gone = id("cn_gone");
        let missing = PathBuf::from("/nonexistent/quarry-watch-test");
        watcher.watch_only(&[(gone.clone(), vec![missing])]);
        assert_eq!(watcher.unwatchable(), [gone]);
        watcher.watch_only(&[]);
        assert!(watcher.unwatchable().is_empty());
    }

    #[test]
    fn a_burst_is_due_when_quiet_or_old() {
        let start = Instant::now();
        let burst = |last| Burst {
            first: start,
            last,
            paths: BTreeSet::new(),
            unknown: false,
        };
        assert_eq!(due_at(&burst(start)), start + QUIET);
        assert_eq!(
            due_at(&burst(start + Duration::from_secs(5))),
            start + MAX_DELAY
        );
    }

    #[test]
    fn a_burst_of_too_many_paths_or_lost_events_is_a_rescan() {
        let start = Instant::now();
        let mut burst = Burst {
            first: start,
            last: start,
            paths: BTreeSet::new(),
            unknown: false,
        };
        let paths = |from: usize, n: usize| {
            Changed::Paths(
                (from..from + n)
                    .map(|i| PathBuf::from(format!("/d/{i}")))
                    .collect(),
            )
        };
        burst.add(paths(0, MAX_HINTED_PATHS));
        burst.add(paths(0, 10));
        assert_eq!(burst.paths.len(), MAX_HINTED_PATHS, "each path once");
        burst.add(paths(MAX_HINTED_PATHS, 1));
        assert!(burst.unknown && burst.paths.is_empty(), "no more kept");
        burst.add(paths(0, 1));
        assert_eq!(burst.changed(), Changed::Unknown);
        assert_eq!(
            paths(0, 2).merge(Changed::Unknown),
            Changed::Unknown,
            "lost events absorb known paths"
        );
        assert_eq!(paths(0, 2).merge(paths(1, 2)), paths(0, 3));
    }
}
