//! Requests per integration per UTC calendar month, counted atomically.

use crate::db::scalar;
use crate::{Store, StoreError, UsageMonth};

impl Store {
    /// Counts one request of the integration in the month of `now_ms` and returns the month's
    /// count, this request included. One atomic statement: concurrent requests never lose a
    /// count, and the count survives restarts.
    pub async fn count_request(
        &self,
        integration_id: &str,
        now_ms: i64,
    ) -> Result<(u64, UsageMonth), StoreError> {
        let month = UsageMonth::at(now_ms);
        let _turn = self.write_turn().await;
        let count: i64 = scalar(
            "INSERT INTO usage (integration_id, month, requests) VALUES (?, ?, 1)
             ON CONFLICT (integration_id, month) DO UPDATE SET requests = usage.requests + 1
             RETURNING requests",
        )
        .bind(integration_id)
        .bind(&month.key)
        .fetch_one(&self.pool)
        .await?;
        Ok((u64::try_from(count).unwrap_or(0), month))
    }
}
