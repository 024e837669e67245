//! The team's sync turn: on a PostgreSQL store, one host at a time runs the syncs and the work
//! that follows them (OCR, judging files), the host holding a session lock of PostgreSQL's. The
//! others wait for it; when that host stops or loses its connection, the lock is released and
//! another host takes the turn, going on from the checkpoints the store keeps.

use std::time::Duration;

use sqlx::Postgres;
use sqlx::pool::PoolConnection;

use crate::db::{On, Pool, sql};
use crate::{Store, StoreError};

/// The advisory lock's key: "QRYSYNC" in ASCII, so no other application's lock is taken.
const SYNC_LOCK: i64 = 0x0051_5259_5359_4e43;

/// How often the holder of the turn checks that its connection (and so the lock) still stands.
const CHECK_EVERY: Duration = Duration::from_secs(2);

/// The sync turn, held while this value lives (the connection that holds the lock).
pub struct SyncTurn {
    conn: Option<PoolConnection<Postgres>>,
}

impl SyncTurn {
    /// Resolves once the turn is lost: the connection that holds the lock no longer answers (a
    /// server restarted, a failover), so another host may hold it now. Never, on SQLite.
    pub async fn lost(&mut self) {
        let Some(conn) = &mut self.conn else {
            return std::future::pending().await;
        };
        loop {
            tokio::time::sleep(CHECK_EVERY).await;
            let answered = tokio::time::timeout(
                CHECK_EVERY,
                sql("SELECT 1").execute(On::Postgres(&mut *conn)),
            )
            .await;
            if !matches!(answered, Ok(Ok(_))) {
                return;
            }
        }
    }
}

impl Store {
    /// Waits for this host's turn to run the syncs. On SQLite it is given at once: one
    /// process serves a data folder.
    pub async fn wait_for_sync_turn(&self) -> Result<SyncTurn, StoreError> {
        let Pool::Postgres(pool) = &self.pool else {
            return Ok(SyncTurn { conn: None });
        };
        let mut conn = pool.acquire().await?;
        sql("SELECT pg_advisory_lock(?)")
            .bind(SYNC_LOCK)
            .execute(On::Postgres(&mut conn))
            .await?;
        Ok(SyncTurn { conn: Some(conn) })
    }
}
