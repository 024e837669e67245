//! A team host's index: a copy of the team's, following the team's index log in the team
//! database. The host's writes (its syncs, vectors, held-back documents) go to the log
//! ([`StoreLog`]); the follower applies every host's changes from the log in order, so a
//! search on any host sees every document synced by any host, ranked as the embedded index
//! ranks them. A host that was away catches up from the position its index last committed; an
//! index of another team database (a data folder moved in, a host moved between teams), or of
//! one that went back in time (restored from a backup), is emptied and filled from the log.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use quarry_core::team_log::LogChange;
use quarry_index::{Applied, IndexError, SearchIndex, TeamLog};
use quarry_store::{Store, TeamIndexChanges};
use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// Records read from the log at once at most (one at least, whatever its size).
const READ_BYTES: u64 = 32 << 20;

/// How long the follower waits for a notification before it looks at the log anyway.
const LOOK_EVERY: Duration = Duration::from_secs(2);

/// How long the follower waits after the database failed it.
const RETRY_AFTER: Duration = Duration::from_secs(2);

/// The team's log as the index writes to it: through the store, from the blocking threads the
/// index is written on.
struct StoreLog {
    store: Store,
    runtime: Handle,
    /// Wakes this host's follower at once after its own appends.
    appended: Arc<Notify>,
}

impl TeamLog for StoreLog {
    fn append(&self, changes: Vec<LogChange>) -> Result<u64, IndexError> {
        let position = self
            .runtime
            .block_on(self.store.append_to_team_index(changes))
            .map_err(|e| IndexError::Team(e.to_string()))?;
        self.appended.notify_one();
        Ok(position)
    }
}

/// The follower of the team's log; it stops when dropped.
pub struct Follower {
    task: JoinHandle<()>,
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Where a host's index starts following the log.
struct Start {
    team: String,
    position: u64,
    /// The index holds documents of another log (or of this one as it was before it went
    /// back): it is emptied first.
    reset: bool,
}

/// Makes `index` (opened for writing) a copy of the team's index: brings it up to date with
/// the log (saying how far it is), then follows the log in the background.
pub async fn join(
    store: &Store,
    index: SearchIndex,
) -> anyhow::Result<(Arc<SearchIndex>, Follower)> {
    if store.catalog_without_team_index().await? {
        tracing::warn!(
            "the team's catalog lists documents its index log lacks (indexed before the team database kept its index): the team's sources are indexed again"
        );
        store.forget_index(quarry_store::now_ms()).await?;
    }
    let start = start_of(store, &index).await?;
    let appended = Arc::new(Notify::new());
    let log = StoreLog {
        store: store.clone(),
        runtime: Handle::current(),
        appended: appended.clone(),
    };
    let index = Arc::new(index.join_team(Arc::new(log), start.position));
    let mut follow = Following {
        store: store.clone(),
        index: index.clone(),
        team: start.team,
        position: start.position,
    };
    if start.reset {
        follow.apply(true, Vec::new(), 0).await?;
    }
    follow.catch_up().await?;
    let task = tokio::spawn(follow.run(appended));
    Ok((index, Follower { task }))
}

/// Where `index` stands in the team's log.
async fn start_of(store: &Store, index: &SearchIndex) -> anyhow::Result<Start> {
    let team = store.database_id().await?;
    let end = store.team_index_end().await?;
    let applied = index.applied()?;
    let (position, reset) = match applied {
        Some(Applied { team: of, position }) if of == team && position <= end => (position, false),
        Some(Applied { team: of, position }) if of == team => {
            tracing::warn!(
                "this host's index holds the team's changes up to {position}, the team database only up to {end} (restored from a backup, or a failover lost its last commits): the index is filled again from the team's log"
            );
            (0, true)
        }
        _ if index.num_docs()? > 0 => {
            tracing::warn!(
                "this host's index holds documents of its own data folder or of another team: it is replaced by the team's index"
            );
            (0, true)
        }
        _ => (0, false),
    };
    Ok(Start {
        team,
        position,
        reset,
    })
}

/// The follower's state: the log's position the index holds.
struct Following {
    store: Store,
    index: Arc<SearchIndex>,
    team: String,
    position: u64,
}

impl Following {
    /// Applies `entries` (after emptying the index, with `reset`) and records `through`.
    async fn apply(
        &mut self,
        reset: bool,
        entries: Vec<quarry_core::team_log::LogEntry>,
        through: u64,
    ) -> anyhow::Result<()> {
        let index = self.index.clone();
        let applied = Applied {
            team: self.team.clone(),
            position: through,
        };
        tokio::task::spawn_blocking(move || index.follow(reset, entries, applied))
            .await
            .context("applying the team's index log")??;
        self.position = through;
        Ok(())
    }

    /// Reads and applies the log's next changes; false when there were none.
    async fn step(&mut self) -> anyhow::Result<bool> {
        let entries = self
            .store
            .team_index_after(self.position, READ_BYTES)
            .await?;
        let Some(through) = entries.last().map(|e| e.position) else {
            return Ok(false);
        };
        self.apply(false, entries, through).await?;
        Ok(true)
    }

    /// Applies the log up to its end as it is now, saying how far it got.
    async fn catch_up(&mut self) -> anyhow::Result<()> {
        let end = self.store.team_index_end().await?;
        if end <= self.position {
            return Ok(());
        }
        tracing::info!(
            from = self.position,
            to = end,
            "bringing this host's index up to date with the team's"
        );
        let mut said = std::time::Instant::now();
        while self.position < end && self.step().await? {
            if said.elapsed() >= Duration::from_secs(5) {
                tracing::info!(
                    at = self.position,
                    to = end,
                    "catching up with the team's index"
                );
                said = std::time::Instant::now();
            }
        }
        tracing::info!(
            at = self.position,
            "this host's index is up to date with the team's"
        );
        Ok(())
    }

    /// Follows the log until dropped: after each commit any host notifies, after this host's
    /// own appends, and every few seconds whatever happens. After a failure it checks first
    /// that the database did not go back in time (a failover that lost commits, a restore).
    async fn run(mut self, appended: Arc<Notify>) {
        let mut changes: Option<TeamIndexChanges> = None;
        let mut failed = false;
        loop {
            let stepped = match failed {
                true => self.recover().await.map(|()| true),
                false => self.step().await,
            };
            match stepped {
                Ok(true) => {
                    failed = false;
                    continue;
                }
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!("following the team's index log failed, retrying: {e:#}");
                    failed = true;
                    changes = None;
                    tokio::time::sleep(RETRY_AFTER).await;
                    continue;
                }
            }
            if changes.is_none() {
                changes = self.store.team_index_changes().await.ok();
            }
            let notified = async {
                match &mut changes {
                    Some(listener) => listener.next().await.is_ok(),
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                ok = notified => if !ok { changes = None },
                () = appended.notified() => {}
                () = tokio::time::sleep(LOOK_EVERY) => {}
            }
        }
    }

    /// After a failure: empties the index and starts again from the log's beginning when the
    /// database now ends before the index's position.
    async fn recover(&mut self) -> anyhow::Result<()> {
        let end = self.store.team_index_end().await?;
        if end < self.position {
            tracing::warn!(
                at = self.position,
                end,
                "the team database ends before this host's index (a failover lost its last commits): the index is filled again from the team's log"
            );
            self.apply(true, Vec::new(), 0).await?;
        }
        Ok(())
    }
}
