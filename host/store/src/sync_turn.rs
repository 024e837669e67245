//! The team's sync turn: on a PostgreSQL store, one host at a time runs the syncs and the work
//! that follows them (OCR, judging files), the host holding a session lock of PostgreSQL's. The
//! others wait for it; when that host stops or loses its connection, the lock is released and
//! another host takes the turn, going on from the checkpoints the store keeps.
//!
//! Each sync claims its connector too ([`ConnectorClaim`]), so that one connector is synced
//! by one host at a time whatever the schedulers decide (hosts misnamed alike, a connector
//! moved while it syncs).

use std::time::Duration;

use quarry_core::ConnectorId;
use sqlx::Postgres;
use sqlx::pool::PoolConnection;

use crate::db::{On, Pool, scalar, sql};
use crate::{Store, StoreError};

/// The advisory lock's key: "QRYSYNC" in ASCII, so no other application's lock is taken.
const SYNC_LOCK: i64 = 0x0051_5259_5359_4e43;

/// What a connector's claim locks: the connector's id, hashed by PostgreSQL, in the key space
/// of this number ("QRYSYNC" again, as a 32-bit class).
const CONNECTOR_LOCKS: i32 = 0x5152_5953;

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

/// A connector claimed for one sync, on a connection of the pool's that closes when this value
/// is dropped (so the claim ends with it), or when the host dies.
pub struct ConnectorClaim {
    _conn: Option<PoolConnection<Postgres>>,
}

impl Store {
    /// Claims connector `id` for a sync: `None` when another host of the team holds it (it is
    /// syncing it now). Always granted on SQLite, where one process serves a data folder.
    pub async fn claim_connector(
        &self,
        id: &ConnectorId,
    ) -> Result<Option<ConnectorClaim>, StoreError> {
        let Pool::Postgres(pool) = &self.pool else {
            return Ok(Some(ConnectorClaim { _conn: None }));
        };
        // A session lock lives until its connection closes, which a connection given back to
        // the pool never does: this one closes when dropped, and counts in the pool meanwhile.
        let mut conn = pool.acquire().await?;
        conn.close_on_drop();
        let claimed: i64 =
            scalar("SELECT CASE WHEN pg_try_advisory_lock(CAST(? AS INTEGER), hashtext(?)) THEN CAST(1 AS BIGINT) ELSE CAST(0 AS BIGINT) END")
                .bind(i64::from(CONNECTOR_LOCKS))
                .bind(id.as_str())
                .fetch_one(On::Postgres(&mut conn))
                .await?;
        Ok((claimed == 1).then_some(ConnectorClaim { _conn: Some(conn) }))
    }

    /// Waits for this host's turn to run the syncs. On SQLite it is given at once: one
    /// process serves a data folder.
    pub async fn wait_for_sync_turn(&self) -> Result<SyncTurn, StoreError> {
        let Pool::Postgres(pool) = &self.pool else {
            return Ok(SyncTurn { conn: None });
        };
        // Closed when the turn ends, not given back to the pool still holding the lock.
        let mut conn = pool.acquire().await?;
        conn.close_on_drop();
        sql("SELECT pg_advisory_lock(?)")
            .bind(SYNC_LOCK)
            .execute(On::Postgres(&mut conn))
            .await?;
        Ok(SyncTurn { conn: Some(conn) })
    }
}
