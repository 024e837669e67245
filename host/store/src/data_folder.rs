//! Facts about the data folder kept in its database: its id (random, made at the first open,
//! naming its sealing key outside the folder) and the version of the credential rules its index
//! was last checked with.

use sqlx::SqlitePool;

use crate::keys::random_id;
use crate::{Store, StoreError};

const ID: &str = "id";
const CREDENTIAL_RULES: &str = "credential_rules";

/// The data folder's id, made now if it has none (of two processes making it at once, one
/// wins and both get its id).
pub(crate) async fn id(pool: &SqlitePool) -> Result<String, StoreError> {
    let made = random_id("df_")?;
    sqlx::query("INSERT OR IGNORE INTO data_folder (key, value) VALUES (?, ?)")
        .bind(ID)
        .bind(&made)
        .execute(pool)
        .await?;
    let id: String = sqlx::query_scalar("SELECT value FROM data_folder WHERE key = ?")
        .bind(ID)
        .fetch_one(pool)
        .await?;
    Ok(id)
}

impl Store {
    /// The version of the credential rules the index was last checked with; 0 when never.
    pub async fn credential_rules_checked(&self) -> Result<u32, StoreError> {
        let value: Option<String> =
            sqlx::query_scalar("SELECT value FROM data_folder WHERE key = ?")
                .bind(CREDENTIAL_RULES)
                .fetch_optional(&self.pool)
                .await?;
        Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    /// Records that the index was checked with version `version` of the credential rules.
    pub async fn set_credential_rules_checked(&self, version: u32) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        sqlx::query(
            "INSERT INTO data_folder (key, value) VALUES (?, ?)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(CREDENTIAL_RULES)
        .bind(version.to_string())
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
