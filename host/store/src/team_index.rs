//! The team's index log, on a team database: one row per document with its latest record (none
//! once removed) at a position that grows with each change. Writers take a transaction lock
//! before they number their changes, so positions are given in commit order and a host that
//! has applied every change up to a position misses none by reading on after it. A commit that
//! changed something notifies the hosts listening ([`TeamIndexChanges`]).

use quarry_core::team_log::{LogChange, LogEntry};
use quarry_core::{ConnectorId, DocId};
use sqlx::postgres::{PgListener, PgPool};

use crate::db::{Conn, Pool, Row, scalar, sql};
use crate::{Store, StoreError};

/// The transaction lock writers of the log take: "QRYINDX" in ASCII.
const APPEND_LOCK: i64 = 0x0051_5259_494e_4458;

/// The channel a commit to the log notifies.
const CHANNEL: &str = "quarry_team_index";

/// Rows read from the log at most at once.
const MAX_ROWS: i64 = 1_000;

/// Notifications of commits to the team's log, on a connection of their own.
pub struct TeamIndexChanges {
    listener: PgListener,
}

impl TeamIndexChanges {
    /// Resolves at the next commit to the log by any host, taking every notification already
    /// received with it (one read of the log answers them all, and none piles up); an error
    /// when the connection was lost (the next call connects again).
    pub async fn next(&mut self) -> Result<(), StoreError> {
        self.listener.recv().await?;
        while self.listener.next_buffered().is_some() {}
        Ok(())
    }
}

impl Store {
    /// The team database's pool; the team's index log exists only there.
    fn team_pool(&self) -> Result<&PgPool, StoreError> {
        match &self.pool {
            Pool::Postgres(pool) => Ok(pool),
            Pool::Sqlite(_) => Err(StoreError::Invalid(
                "a data folder's index is its own: there is no team index log on SQLite".into(),
            )),
        }
    }

    /// Appends `changes` to the team's index log in one transaction, in order, and returns the
    /// position of the last change made (0 when none was: every conditional change found its
    /// document changed since, every removal found nothing to remove).
    pub async fn append_to_team_index(&self, changes: Vec<LogChange>) -> Result<u64, StoreError> {
        self.team_pool()?;
        let mut tx = self.pool.begin("").await?;
        let last = append_in(&mut tx, changes).await?;
        tx.commit().await?;
        Ok(last)
    }

    /// The log's changes after `position`, in order: at most a thousand, and no more than
    /// `max_bytes` of records (one at least).
    pub async fn team_index_after(
        &self,
        position: u64,
        max_bytes: u64,
    ) -> Result<Vec<LogEntry>, StoreError> {
        self.team_pool()?;
        let after = i64::try_from(position).unwrap_or(i64::MAX);
        let sizes = sql("SELECT position, size FROM team_index WHERE position > ?
                          ORDER BY position LIMIT ?")
        .bind(after)
        .bind(MAX_ROWS)
        .fetch_all(&self.pool)
        .await?;
        let mut through = None;
        let mut bytes: u64 = 0;
        for row in &sizes {
            let size = u64::try_from(row.try_get::<i64, _>("size")?).unwrap_or(0);
            if through.is_some() && bytes.saturating_add(size) > max_bytes {
                break;
            }
            bytes = bytes.saturating_add(size);
            through = Some(row.try_get::<i64, _>("position")?);
        }
        let Some(through) = through else {
            return Ok(Vec::new());
        };
        let rows = sql("SELECT connector, doc_id, position, record FROM team_index
                         WHERE position > ? AND position <= ? ORDER BY position")
        .bind(after)
        .bind(through)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(entry).collect()
    }

    /// The position of the log's last change; 0 when it has none.
    pub async fn team_index_end(&self) -> Result<u64, StoreError> {
        self.team_pool()?;
        let end =
            scalar::<i64>("SELECT CAST(coalesce(max(position), 0) AS BIGINT) FROM team_index")
                .fetch_one(&self.pool)
                .await?;
        Ok(u64::try_from(end).unwrap_or(0))
    }

    /// True when the catalog lists indexed documents (neither held back nor failed) but the
    /// team's index log holds none: a team database whose documents were indexed before it had
    /// the log, in one host's index only.
    pub async fn catalog_without_team_index(&self) -> Result<bool, StoreError> {
        self.team_pool()?;
        let missing = scalar::<i64>(
            "SELECT CAST(CASE WHEN EXISTS (SELECT 1 FROM documents
                                            WHERE held_back IS NULL AND error IS NULL)
                               AND NOT EXISTS (SELECT 1 FROM team_index) THEN 1 ELSE 0 END
                         AS BIGINT)",
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(missing == 1)
    }

    /// Listens for commits to the team's log, on a connection of its own.
    pub async fn team_index_changes(&self) -> Result<TeamIndexChanges, StoreError> {
        let mut listener = PgListener::connect_with(self.team_pool()?).await?;
        listener.listen(CHANNEL).await?;
        Ok(TeamIndexChanges { listener })
    }
}

/// Appends `changes` in the transaction `tx` (on PostgreSQL), after taking the log's
/// transaction lock; the position of the last change made, 0 when none was. Listeners are
/// notified at the commit.
pub(crate) async fn append_in(tx: &mut Conn, changes: Vec<LogChange>) -> Result<u64, StoreError> {
    sql("SELECT pg_advisory_xact_lock(?)")
        .bind(APPEND_LOCK)
        .execute(&mut *tx)
        .await?;
    let mut last: i64 = 0;
    for change in changes {
        for position in append_one(tx, change).await? {
            last = last.max(position);
        }
    }
    if last > 0 {
        sql("SELECT pg_notify(?, '')")
            .bind(CHANNEL)
            .execute(&mut *tx)
            .await?;
    }
    Ok(u64::try_from(last).unwrap_or(0))
}

/// Applies one change in the append's transaction; the positions it gave.
async fn append_one(tx: &mut Conn, change: LogChange) -> Result<Vec<i64>, StoreError> {
    let query = match change {
        LogChange::Put {
            connector,
            doc,
            record,
            over: None,
        } => {
            let size = size_of(&record);
            sql(
                "INSERT INTO team_index (connector, doc_id, position, record, size)
             VALUES (?, ?, nextval('team_index_positions'), ?, ?)
             ON CONFLICT (connector, doc_id) DO UPDATE SET position = excluded.position,
                record = excluded.record, size = excluded.size
             RETURNING position",
            )
            .bind(connector.as_str())
            .bind(doc.as_str())
            .bind(record)
            .bind(size)
        }
        LogChange::Put {
            connector,
            doc,
            record,
            over: Some(over),
        } => sql(
            "UPDATE team_index SET position = nextval('team_index_positions'), size = ?,
                    record = ?
              WHERE connector = ? AND doc_id = ? AND position = ? AND record IS NOT NULL
             RETURNING position",
        )
        .bind(size_of(&record))
        .bind(record)
        .bind(connector.as_str())
        .bind(doc.as_str())
        .bind(i64::try_from(over).unwrap_or(-1)),
        LogChange::Delete { connector, doc } => sql(
            "UPDATE team_index SET position = nextval('team_index_positions'), record = NULL,
                    size = 0
              WHERE connector = ? AND doc_id = ? AND record IS NOT NULL
             RETURNING position",
        )
        .bind(connector.as_str())
        .bind(doc.as_str()),
        LogChange::Purge { connector } => sql(
            "UPDATE team_index SET position = nextval('team_index_positions'), record = NULL,
                    size = 0
              WHERE connector = ? AND record IS NOT NULL
             RETURNING position",
        )
        .bind(connector.as_str()),
    };
    let rows = query.fetch_all(&mut *tx).await?;
    rows.iter()
        .map(|row| Ok(row.try_get::<i64, _>("position")?))
        .collect()
}

/// A record's size as the log keeps it.
fn size_of(record: &[u8]) -> i64 {
    i64::try_from(record.len()).unwrap_or(i64::MAX)
}

/// A row of the log as an entry.
fn entry(row: &Row) -> Result<LogEntry, StoreError> {
    let corrupt = |what: &str, e: quarry_core::CoreError| StoreError::Corrupt {
        what: format!("team_index.{what}"),
        source: Some(Box::new(e)),
    };
    Ok(LogEntry {
        connector: ConnectorId::parse(row.try_get::<String, _>("connector")?)
            .map_err(|e| corrupt("connector", e))?,
        doc: DocId::parse(row.try_get::<String, _>("doc_id")?).map_err(|e| corrupt("doc_id", e))?,
        position: u64::try_from(row.try_get::<i64, _>("position")?).unwrap_or(0),
        record: row.try_get::<Option<Vec<u8>>, _>("record")?,
    })
}
