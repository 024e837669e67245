//! The audit log: which integration read what, when, and how much.

use crate::db::{Sql, scalar, sql};

use crate::connectors::to_i64;
use crate::{Store, StoreError};

/// One authenticated API request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    /// When it was answered.
    pub time_ms: i64,
    /// Its `X-Request-Id`.
    pub request_id: String,
    /// The integration that made it.
    pub integration_id: String,
    /// Method and route, e.g. `POST /api/v1/search`.
    pub endpoint: String,
    /// The connector read, if any.
    pub connector_id: Option<String>,
    /// The document read, if any.
    pub doc_id: Option<String>,
    /// Bytes of the response body.
    pub bytes: u64,
    /// HTTP status.
    pub status: u16,
}

/// Which entries to list, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// Only this integration (by id).
    pub integration_id: Option<String>,
    /// Only this connector (by id).
    pub connector_id: Option<String>,
    /// Only entries at or after this time.
    pub since_ms: Option<i64>,
    /// At most this many (default 100).
    pub limit: Option<u32>,
}

impl Store {
    /// Appends entries in one transaction.
    pub async fn record_audit(&self, entries: &[AuditEntry]) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        for e in entries {
            sql(
                "INSERT INTO audit_log (time_ms, request_id, integration_id, endpoint,
                                        connector_id, doc_id, bytes, status)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(e.time_ms)
            .bind(&e.request_id)
            .bind(&e.integration_id)
            .bind(&e.endpoint)
            .bind(&e.connector_id)
            .bind(&e.doc_id)
            .bind(to_i64(e.bytes))
            .bind(i64::from(e.status))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Deletes the entries older than `before_ms`, in small transactions (requests waiting to
    /// count themselves never wait long). Returns how many were deleted.
    pub async fn prune_audit(&self, before_ms: i64) -> Result<u64, StoreError> {
        let mut deleted = 0;
        loop {
            let _turn = self.write_turn().await;
            let done = sql("DELETE FROM audit_log WHERE id IN
                     (SELECT id FROM audit_log WHERE time_ms < ? LIMIT 1000)")
            .bind(before_ms)
            .execute(&self.pool)
            .await?;
            deleted += done;
            if done < 1000 {
                return Ok(deleted);
            }
        }
    }

    /// Adds `n` to the count of audit entries that could not be written (kept across restarts).
    pub async fn count_lost_audit_entries(&self, n: u64) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        sql("INSERT INTO counters (name, value) VALUES ('audit_lost', ?)
             ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value")
        .bind(to_i64(n))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// How many audit entries could not be written, ever.
    pub async fn lost_audit_entries(&self) -> Result<u64, StoreError> {
        let value: Option<i64> = scalar("SELECT value FROM counters WHERE name = 'audit_lost'")
            .fetch_optional(&self.pool)
            .await?;
        Ok(value.map_or(0, |v| u64::try_from(v).unwrap_or(0)))
    }

    /// Entries matching `filter`, newest first.
    pub async fn audit(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        let mut query = Sql::build("SELECT * FROM audit_log WHERE 1 = 1");
        if let Some(id) = &filter.integration_id {
            query.push(" AND integration_id = ").push_bind(id);
        }
        if let Some(id) = &filter.connector_id {
            query.push(" AND connector_id = ").push_bind(id);
        }
        if let Some(since) = filter.since_ms {
            query.push(" AND time_ms >= ").push_bind(since);
        }
        query
            .push(" ORDER BY time_ms DESC, id DESC LIMIT ")
            .push_bind(i64::from(filter.limit.unwrap_or(100)));
        let rows = query.fetch_all(&self.pool).await?;
        rows.iter()
            .map(|row| {
                Ok(AuditEntry {
                    time_ms: row.try_get("time_ms")?,
                    request_id: row.try_get("request_id")?,
                    integration_id: row.try_get("integration_id")?,
                    endpoint: row.try_get("endpoint")?,
                    connector_id: row.try_get("connector_id")?,
                    doc_id: row.try_get("doc_id")?,
                    bytes: u64::try_from(row.try_get::<i64, _>("bytes")?).unwrap_or(0),
                    status: u16::try_from(row.try_get::<i64, _>("status")?).unwrap_or(0),
                })
            })
            .collect()
    }
}
