//! Sources that tell of their own changes (WIT 0.5.0 `watch`: IMAP's IDLE): while the server
//! runs, one thread per such connector calls its plugin's `watch` in a loop, each call waiting
//! at most [`WAIT`], and asks for a sync as soon as one answers `changed`. A plugin that answers
//! `unsupported` is not asked again until its connector changes or the server restarts; one
//! that fails is asked again after a pause that grows to [`MOST_PAUSE`], and its first failure
//! asks for a sync, so that the connector's status tells of it (a password changed on the
//! server) without waiting for the schedule. At most
//! [`MAX_WATCHED`] connectors are watched this way (each holds a thread, a plugin instance and
//! a connection); the others sync on their schedule.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use quarry_core::ConnectorId;
use quarry_runtime::{Grant, Watched};
use quarry_store::{Connector, ConnectorStatus, now_ms};

use crate::Syncer;

/// The longest one `watch` call waits (IMAP servers end an IDLE after 30 minutes at the
/// earliest; a shorter wait also looks at the other folders more often).
pub const WAIT: Duration = Duration::from_secs(20);
/// The longest pause after failures before asking again.
const MOST_PAUSE: Duration = Duration::from_secs(300);
/// The pause after a first failure, doubled after each failure that follows.
const FIRST_PAUSE: Duration = Duration::from_secs(5);
/// Connectors watched at once.
pub const MAX_WATCHED: usize = 32;
/// How long after asking for a sync the watcher waits for it before watching again.
const SYNC_WAIT: Duration = Duration::from_secs(60);

/// The watches, by connector, with the settings they were started with (one whose plugin
/// cannot watch stays here, ended, so that it is not started again for the same settings).
#[derive(Default)]
pub(crate) struct SourceWatches {
    running: Mutex<HashMap<ConnectorId, Running>>,
    /// Watches cancelled whose thread has not ended yet (a `watch` call finishing its wait):
    /// each still holds an instance, so each still counts.
    stopping: Mutex<Vec<Arc<AtomicBool>>>,
    /// Connectors left unwatched past [`MAX_WATCHED`], once told in the log.
    told: Mutex<std::collections::HashSet<ConnectorId>>,
}

struct Running {
    /// The connector as the watch started with it: a change of settings starts a new watch.
    seen: (Vec<(String, String)>, Vec<String>),
    cancel: Arc<AtomicBool>,
    /// True while its thread runs (an ended watch, `unsupported`, stays in the table but holds
    /// nothing).
    alive: Arc<AtomicBool>,
}

/// Marks a watch's thread ended when it ends, however it ends.
struct Alive(Arc<AtomicBool>);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

impl SourceWatches {
    /// Watches the sources of `connectors` whose plugins can (WIT 0.5.0 and a network source:
    /// a plugin of local folders has the host's file watcher), and no others.
    pub(crate) fn keep(
        &self,
        syncer: &Arc<Syncer>,
        connectors: &[Connector],
        stop: &Arc<AtomicBool>,
    ) {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        let wanted: HashMap<&ConnectorId, &Connector> = connectors
            .iter()
            .filter(|c| c.status != ConnectorStatus::Disabled)
            .filter(|c| {
                syncer
                    .plugins()
                    .get(&c.plugin_id)
                    .is_some_and(|p| p.wit_version().watches() && p.manifest().reaches_network())
            })
            .map(|c| (&c.id, c))
            .collect();
        let mut stopping = self.stopping.lock().unwrap_or_else(PoisonError::into_inner);
        running.retain(|id, watch| {
            let keep = wanted.get(id).is_some_and(|c| settings_of(c) == watch.seen);
            if !keep {
                watch.cancel.store(true, Ordering::Relaxed);
                stopping.push(watch.alive.clone());
            }
            keep
        });
        stopping.retain(|alive| alive.load(Ordering::Relaxed));
        let mut live = stopping.len()
            + running
                .values()
                .filter(|w| w.alive.load(Ordering::Relaxed))
                .count();
        let mut told = self.told.lock().unwrap_or_else(PoisonError::into_inner);
        told.retain(|id| wanted.contains_key(id) && !running.contains_key(id));
        for (id, connector) in wanted {
            if running.contains_key(id) {
                continue;
            }
            if live >= MAX_WATCHED {
                if told.insert(id.clone()) {
                    tracing::info!(connector = %connector.name, "{MAX_WATCHED} sources are watched already; this one syncs on its schedule");
                }
                continue;
            }
            let cancel = Arc::new(AtomicBool::new(false));
            let watch = Watch {
                syncer: syncer.clone(),
                id: id.clone(),
                cancel: cancel.clone(),
                stop: stop.clone(),
            };
            let alive = Arc::new(AtomicBool::new(true));
            let ends = Alive(alive.clone());
            let started = std::thread::Builder::new()
                .name(format!("watch {}", connector.name))
                .spawn(move || {
                    let _ends = ends;
                    watch.run();
                });
            if let Err(e) = started {
                tracing::warn!(connector = %connector.name, "cannot watch its source: {e}");
                continue;
            }
            live += 1;
            running.insert(
                id.clone(),
                Running {
                    seen: settings_of(connector),
                    cancel,
                    alive,
                },
            );
        }
    }
}

/// What a watch restarts on: the connector's settings and grant.
fn settings_of(connector: &Connector) -> (Vec<(String, String)>, Vec<String>) {
    let settings = connector
        .config
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (settings, connector.grant.hosts.clone())
}

/// One connector's watch.
struct Watch {
    syncer: Arc<Syncer>,
    id: ConnectorId,
    cancel: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Watch {
    fn stopped(&self) -> bool {
        self.cancel.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed)
    }

    fn run(self) {
        let mut pause = FIRST_PAUSE;
        // `changed` answered at once, time after time, with syncs that list nothing new: a
        // plugin whose every look sees a change (a checkpoint it cannot compare) must not sync
        // without pause. A source that keeps changing moves the checkpoint each time.
        let mut at_once = 0u32;
        while !self.stopped() {
            let asked = Instant::now();
            match self.once() {
                Ok(Some((Watched::Changed, retry))) => {
                    let before = self.checkpoint();
                    self.sync_now();
                    let idle =
                        asked.elapsed() < Duration::from_secs(1) && self.checkpoint() == before;
                    at_once = if idle { at_once + 1 } else { 0 };
                    if retry || at_once >= 3 {
                        self.sleep(pause);
                        pause = (pause * 2).min(MOST_PAUSE);
                    } else {
                        pause = FIRST_PAUSE;
                    }
                }
                Ok(Some((Watched::Quiet, _))) => pause = FIRST_PAUSE,
                Ok(Some((Watched::Unsupported, _))) | Ok(None) => break,
                Err(message) => {
                    tracing::info!(connector = %self.id, "watching its source failed (again in {} s): {message}", pause.as_secs());
                    if pause == FIRST_PAUSE {
                        // The source failed where it answered before (a password changed, a
                        // server gone): a sync says so in the connector's status, naming the fix.
                        self.sync_now();
                    }
                    self.sleep(pause);
                    pause = (pause * 2).min(MOST_PAUSE);
                }
            }
        }
        // A watch that ended stays in the table, so it is not started again for the same
        // settings.
    }

    /// One `watch` call, and whether it stands for a retry of a sync that failed or stopped
    /// half-way; `None` when the connector or its plugin is gone.
    fn once(&self) -> Result<Option<(Watched, bool)>, String> {
        let store = self.syncer.store();
        let connector = match self.syncer.block(store.connector(&self.id)) {
            Ok(Some(c)) if c.status != ConnectorStatus::Disabled => c,
            Ok(_) => return Ok(None),
            Err(e) => return Err(e.to_string()),
        };
        let Some(plugin) = self.syncer.plugins().get(&connector.plugin_id) else {
            return Ok(None);
        };
        // Mid-listing, the checkpoint says where a listing stands, not what it saw: wait for
        // the sync to finish it.
        let checkpoint = (!connector.listing.more)
            .then_some(connector.listing.checkpoint.as_deref())
            .flatten();
        let grant = Grant::from_stored(&connector.grant.dirs, &connector.grant.hosts);
        let mut session = plugin
            .session(&connector.config, &grant, None)
            .map_err(|e| e.to_string())?;
        // A sync that failed, or stopped half-way, is asked for again as soon as the source
        // answers.
        let unfinished = connector.status == ConnectorStatus::Error || connector.listing.more;
        let wait = if unfinished { Duration::ZERO } else { WAIT };
        let watched = session
            .watch(checkpoint, wait)
            .map(|w| match w {
                Watched::Quiet if unfinished => Watched::Changed,
                other => other,
            })
            .map_err(|e| e.to_string());
        let usage = crate::plugin_usage(&session.usage());
        if let Err(e) = self.syncer.block(store.add_plugin_usage(&self.id, &usage)) {
            tracing::debug!(connector = %self.id, "could not count a watch's usage: {e}");
        }
        watched.map(|w| Some((w, unfinished)))
    }

    /// Asks for a sync, and waits (a while) for it to end, so that the next look compares
    /// with what it listed.
    fn sync_now(&self) {
        let store = self.syncer.store();
        let before = self
            .syncer
            .block(store.connector(&self.id))
            .ok()
            .flatten()
            .and_then(|c| c.last_sync_ms);
        if let Err(e) = self.syncer.block(store.request_sync(&self.id, now_ms())) {
            tracing::warn!(connector = %self.id, "could not ask for a sync: {e}");
            return;
        }
        let until = Instant::now() + SYNC_WAIT;
        while Instant::now() < until && !self.stopped() {
            std::thread::sleep(Duration::from_millis(100));
            let synced = self
                .syncer
                .block(store.connector(&self.id))
                .ok()
                .flatten()
                .is_none_or(|c| {
                    c.last_sync_ms != before
                        && c.schedule.sync_requested_ms.is_none()
                        && c.status != ConnectorStatus::Syncing
                });
            if synced {
                return;
            }
        }
    }

    /// The connector's checkpoint now (`None` when it cannot be read).
    fn checkpoint(&self) -> Option<String> {
        self.syncer
            .block(self.syncer.store().connector(&self.id))
            .ok()
            .flatten()
            .and_then(|c| c.listing.checkpoint)
    }

    fn sleep(&self, pause: Duration) {
        let until = Instant::now() + pause;
        while Instant::now() < until && !self.stopped() {
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}
