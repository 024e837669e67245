//! The data folder's id, kept in its database: random, made at the first open, it names the
//! folder's sealing key outside the folder.

use sqlx::SqlitePool;

use crate::StoreError;
use crate::keys::random_id;

/// The key of the id in the `data_folder` table.
const ID: &str = "id";

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
