//! The data folder's id, kept in its database: random, made at the first open, it names the
//! folder's sealing key outside the folder. A team database also keeps a value sealed with
//! that key, by which a host with another key is told at open.

use crate::StoreError;
use crate::db::{Pool, scalar, sql};
use crate::keys::random_id;
use crate::secrets::SecretBox;

/// The key of the id in the `data_folder` table.
const ID: &str = "id";
/// The key of the sealed check value in the `data_folder` table.
const KEY_CHECK: &str = "sealing_key_check";
/// What the check value holds, and the place it is sealed for.
const KEY_CHECK_TEXT: &str = "quarry:sealing-key-check";

/// The data folder's id, made now if it has none (of two processes making it at once, one
/// wins and both get its id).
pub(crate) async fn id(pool: &Pool) -> Result<String, StoreError> {
    let made = random_id("df_")?;
    sql("INSERT INTO data_folder (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING")
        .bind(ID)
        .bind(&made)
        .execute(pool)
        .await?;
    Ok(value(pool, ID).await?.unwrap_or(made))
}

/// Whether a host already sealed the check value (so the team's key exists somewhere).
pub(crate) async fn key_checked(pool: &Pool) -> Result<bool, StoreError> {
    Ok(value(pool, KEY_CHECK).await?.is_some())
}

/// Checks that `secrets` holds the key the database's check value was sealed with, sealing
/// it first if no host has (of two hosts sealing it at once, one wins and the other is
/// checked against it).
pub(crate) async fn check_key(
    pool: &Pool,
    secrets: &SecretBox,
    database: &str,
) -> Result<(), StoreError> {
    let sealed = secrets.seal(KEY_CHECK, KEY_CHECK_TEXT)?;
    sql("INSERT INTO data_folder (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING")
        .bind(KEY_CHECK)
        .bind(&sealed)
        .execute(pool)
        .await?;
    let stored = value(pool, KEY_CHECK).await?.unwrap_or(sealed);
    match secrets.open(KEY_CHECK, &stored) {
        Ok(text) if text == KEY_CHECK_TEXT => Ok(()),
        _ => Err(StoreError::Connect {
            database: database.to_owned(),
            message: format!(
                "the sealing key {} is not the one this team database's secrets are sealed \
                 with: replace it with the key file of a host of the team",
                secrets.path().display()
            ),
        }),
    }
}

async fn value(pool: &Pool, key: &str) -> Result<Option<String>, StoreError> {
    Ok(scalar("SELECT value FROM data_folder WHERE key = ?")
        .bind(key)
        .fetch_optional(pool)
        .await?)
}
