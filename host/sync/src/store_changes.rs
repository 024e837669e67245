//! Knowing when the store changed without asking it: the CLI and the settings page write to the
//! database (a sync asked for, a connector added), and every commit writes its write-ahead log.
//! A watch on the data folder turns those writes into a wake-up of the scheduler, so that an
//! idle server asks the database nothing until something happens.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::Notify;

/// A watch on a data folder's database files.
pub struct StoreChanges {
    _watcher: RecommendedWatcher,
    changed: Arc<Notify>,
}

impl StoreChanges {
    /// Watches the database `db` (its folder, for the file and its `-wal` and `-journal`).
    /// `None` when the folder cannot be watched (then the scheduler looks every tick).
    pub fn watch(db: &Path) -> Option<StoreChanges> {
        let dir = db.parent()?.to_owned();
        let name = db.file_name()?.to_string_lossy().into_owned();
        let changed = Arc::new(Notify::new());
        let notify = changed.clone();
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
            let touches_db = |p: &PathBuf| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(name.as_str()))
            };
            match event {
                Ok(event) if !event.kind.is_access() && event.paths.iter().any(touches_db) => {
                    notify.notify_one();
                }
                Ok(_) => {}
                // A lost event may have been a change.
                Err(_) => notify.notify_one(),
            }
        })
        .inspect_err(|e| tracing::warn!("the database cannot be watched, looking every tick: {e}"))
        .ok()?;
        watcher
            .watch(&dir, RecursiveMode::NonRecursive)
            .inspect_err(|e| {
                tracing::warn!("the database cannot be watched, looking every tick: {e}")
            })
            .ok()?;
        Some(StoreChanges {
            _watcher: watcher,
            changed,
        })
    }

    /// Completes once the database was written since the last call.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }
}
