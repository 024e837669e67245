//! Quarry's store, through sqlx: an embedded SQLite file in WAL mode (one user's data folder,
//! the default) or a PostgreSQL server (a team's hosts), with embedded migrations for each,
//! run at open.
//!
//! It holds integrations and their keys (only hashes), usage per integration per UTC month,
//! admin sessions and login links of the settings page (hashes only),
//! connectors with their settings, grants and sync state, the document catalog (versions for
//! change detection, locators for downloads, listing generations for pruning), and the audit log.
//! The CLI and a running server may use the same database at once.

mod admin;
mod audit;
mod catalog;
mod connectors;
mod copy;
mod data_folder;
mod db;
mod doc_ids;
mod error;
mod integrations;
mod keys;
mod month;
mod ocr;
mod originals;
mod secrets;
mod sync_turn;
mod team_database;
mod team_index;
mod usage;

use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::db::{Conn, Pool, sql};
use crate::secrets::SecretBox;

pub use admin::{AdminSession, NewAdminSession};
pub use audit::{AuditEntry, AuditFilter};
pub use catalog::{CatalogDoc, CommitBatch, NotedDoc};
pub use connectors::{
    Connector, ConnectorGrant, ConnectorScope, ConnectorStatus, CredentialMode, CredentialPolicy,
    ListingState, NewConnector, PluginUsage, Schedule, SyncFailure, SyncProgress, check_host_name,
};
pub use copy::{BoxedError, Copied};
pub use db::Dialect;
pub use error::StoreError;
pub use integrations::{Integration, IntegrationSummary, Quota, Sharing};
pub use keys::{ApiKey, KEY_PREFIX, looks_like_key};
pub use month::UsageMonth;
pub use ocr::{NO_TEXT_FOUND_BY_OCR, OcrJob, OcrRequest};
pub use originals::{APPLICATION_ID, Fingerprint, Original, PendingOriginal, is_quarry_database};
pub use secrets::LEGACY_KEY_FILE;
pub use sync_turn::{ConnectorClaim, SyncTurn};
pub use team_database::shown_address;
pub use team_index::TeamIndexChanges;

/// The database file inside a data folder.
pub const DB_FILE: &str = "quarry.db";

/// Connections a team host keeps to PostgreSQL at most.
const POSTGRES_CONNECTIONS: u32 = 16;

/// The store: a pool of connections to one database. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    pool: Pool,
    /// Writers of this process take turns here, first come first served, before asking SQLite
    /// for its write lock. SQLite makes a waiting writer sleep and retry with growing pauses, so
    /// a request counting itself could wait tens of milliseconds behind a sync's back-to-back
    /// transactions; in this queue it waits for the one transaction ahead of it. PostgreSQL
    /// locks rows, not the database: its writers take no turn.
    write_turn: Arc<Mutex<()>>,
    /// The key that seals secret settings (kept outside the data folder).
    secrets: Arc<SecretBox>,
    /// On a team database, this host's name ([`Store::living_on`]).
    host_name: Option<Arc<str>>,
}

/// A transaction that writes, holding this process's write turn until it ends.
pub(crate) struct WriteTx {
    tx: Conn,
    _turn: Option<OwnedMutexGuard<()>>,
}

impl WriteTx {
    /// Commits, and gives the turn to the next writer.
    pub(crate) async fn commit(self) -> Result<(), StoreError> {
        self.tx.commit().await?;
        Ok(())
    }
}

impl Deref for WriteTx {
    type Target = Conn;

    fn deref(&self) -> &Conn {
        &self.tx
    }
}

impl DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.tx
    }
}

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date. The
    /// key that seals secret settings lives in `keys_dir`, outside the data folder, named by the
    /// data folder's id (created if needed): a copy of the data folder does not carry it. A key
    /// an older Quarry kept beside the database ([`LEGACY_KEY_FILE`]) is moved there.
    pub async fn open(path: &Path, keys_dir: &Path) -> Result<Store, StoreError> {
        let options = SqliteConnectOptions::from_str("sqlite:")
            .map_err(StoreError::Sql)?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // With WAL, NORMAL never corrupts the database; a power cut may lose the last
            // transactions, a crash of the process loses nothing.
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await
            .map_err(|e| StoreError::Open {
                path: path.to_owned(),
                message: e.to_string(),
            })?;
        sqlx::migrate!("./migrations/sqlite")
            .run(&pool)
            .await
            .map_err(|e| StoreError::Open {
                path: path.to_owned(),
                message: format!("migrating the schema: {e}"),
            })?;
        let pool = Pool::Sqlite(pool);
        let id = data_folder::id(&pool).await?;
        let secrets = Arc::new(SecretBox::open_for(
            keys_dir,
            &id,
            &path.with_file_name(LEGACY_KEY_FILE),
        )?);
        let store = Store {
            pool,
            write_turn: Arc::default(),
            secrets,
            host_name: None,
        };
        store.mark_as_quarrys().await?;
        Ok(store)
    }

    /// Opens the team database at the PostgreSQL address `url` (`postgres://user@host/db`,
    /// with any of libpq's parameters) and brings its schema up to date; hosts that start
    /// together migrate it once. The key that seals secret settings is read from `keys_dir`,
    /// named by the database's id: every host needs the same key file, which the first host
    /// made (copy it to the others). A host with another key is refused at open, before it
    /// could seal a setting the others cannot read.
    pub async fn open_postgres(url: &str, keys_dir: &Path) -> Result<Store, StoreError> {
        let (pool, shown) = team_database::connect(url, "--database", POSTGRES_CONNECTIONS).await?;
        let pool = Pool::Postgres(pool);
        let id = data_folder::id(&pool).await?;
        let may_create = !data_folder::key_checked(&pool).await?;
        let secrets = SecretBox::open_shared(keys_dir, &id, may_create)?;
        data_folder::check_key(&pool, &secrets, &shown).await?;
        Ok(Store {
            pool,
            write_turn: Arc::default(),
            secrets: Arc::new(secrets),
            host_name: None,
        })
    }

    /// The database's id (`df_...`): a data folder's, or the team database's, the same for
    /// every host.
    pub async fn database_id(&self) -> Result<String, StoreError> {
        data_folder::id(&self.pool).await
    }

    /// This store as the team host named `name` uses it: the connectors it adds with local
    /// folders live on it ([`Connector::host`]).
    pub fn living_on(mut self, name: &str) -> Store {
        self.host_name = Some(Arc::from(name));
        self
    }

    /// The name of the team host this store serves, if any.
    pub fn host_name(&self) -> Option<&str> {
        self.host_name.as_deref()
    }

    /// The database this store runs on.
    pub fn dialect(&self) -> Dialect {
        self.pool.dialect()
    }

    /// Begins a transaction that writes. It takes the write lock at once (`BEGIN IMMEDIATE`),
    /// waiting for it under the busy timeout: a deferred transaction that reads first and then
    /// writes fails with "database is locked" when another writer committed in between.
    pub(crate) async fn write_tx(&self) -> Result<WriteTx, StoreError> {
        let turn = self.write_turn().await;
        Ok(WriteTx {
            tx: self.pool.begin("BEGIN IMMEDIATE").await?,
            _turn: turn,
        })
    }

    /// Waits for this process's write turn, for a single statement that writes (on SQLite;
    /// PostgreSQL's writers take none).
    pub(crate) async fn write_turn(&self) -> Option<OwnedMutexGuard<()>> {
        match self.pool.dialect() {
            Dialect::Sqlite => Some(self.write_turn.clone().lock_owned().await),
            Dialect::Postgres => None,
        }
    }

    /// Answers once the database answers a query: what a service manager's watchdog asks
    /// before it is told the service is alive.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sql("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// Closes every connection, waiting for running queries.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
