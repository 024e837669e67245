//! `quarry migrate --to postgres://...`: a data folder's SQLite database copied, table by
//! table, into an empty team database, in one transaction (a copy that fails leaves the team
//! database empty). The data folder's id goes with it, so its sealing key opens the copied
//! secrets; the index stays in the data folder, in step with the copied catalog.

use std::path::Path;
use std::str::FromStr;

use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions, SqliteRow};
use sqlx::{Column as _, Row as _, TypeInfo as _, ValueRef as _};

use crate::db::{Arg, Conn, On, Pool, Sql, scalar, sql};
use quarry_core::team_log::LogChange;

use crate::team_index::append_in;
use crate::{Store, StoreError, team_database};

/// The tables copied, parents before children (foreign keys hold at every insert).
const TABLES: [&str; 14] = [
    "data_folder",
    "integrations",
    "api_keys",
    "usage",
    "connectors",
    "integration_connectors",
    "documents",
    "ocr",
    "ocr_kept",
    "audit_log",
    "counters",
    "admin_sessions",
    "admin_login_links",
    "admin_token",
];

/// Values bound per insert statement at most (PostgreSQL takes 65,535).
const VALUES_PER_INSERT: usize = 20_000;

/// Rows copied per table, in the order copied.
pub type Copied = Vec<(&'static str, u64)>;

impl Store {
    /// Copies the data folder's database at `sqlite` (brought up to date first; the keys of
    /// `keys_dir`) into the team database at `url`, which must hold no data yet, and its
    /// index's `documents` into the team's index log, all in one transaction; `progress`
    /// hears of each table copied. The data folder's database is left as it was.
    pub async fn copy_to_postgres(
        sqlite: &Path,
        keys_dir: &Path,
        url: &str,
        documents: impl Iterator<Item = Result<LogChange, BoxedError>>,
        mut progress: impl FnMut(&str, u64),
    ) -> Result<Copied, StoreError> {
        // Opened as a store once, so its schema is the newest this Quarry knows.
        Store::open(sqlite, keys_dir).await?.close().await;
        let source = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(
                SqliteConnectOptions::from_str("sqlite:")?
                    .filename(sqlite)
                    .read_only(true),
            )
            .await?;
        let (target, shown) = team_database::connect(url, "--to", 2).await?;
        let target = Pool::Postgres(target);
        refuse_unless_empty(&target, &shown).await?;
        // One read transaction: every table as it was at one instant.
        let mut snapshot = source.begin().await?;
        let mut tx = target.begin("BEGIN").await?;
        let mut copied = Copied::new();
        for table in TABLES {
            let rows = copy_table(&mut snapshot, &mut tx, table).await?;
            progress(table, rows);
            copied.push((table, rows));
        }
        let logged = copy_documents(&mut tx, documents).await?;
        progress(TEAM_INDEX, logged);
        copied.push((TEAM_INDEX, logged));
        // New audit entries number on from the copied ones.
        sql("SELECT setval(pg_get_serial_sequence('audit_log', 'id'),
                           coalesce((SELECT max(id) FROM audit_log), 0) + 1, false)")
        .execute(&mut tx)
        .await?;
        tx.commit().await?;
        snapshot.rollback().await?;
        source.close().await;
        target.close().await;
        Ok(copied)
    }
}

/// A failure of what the copy reads besides the database (the index).
pub type BoxedError = Box<dyn std::error::Error + Send + Sync>;

/// The team's index log, as the copy names it.
const TEAM_INDEX: &str = "team_index";

/// Documents appended to the team's index log per statement batch.
const DOCUMENTS_PER_APPEND: usize = 256;

/// Appends the index's `documents` to the team's log in `tx`; how many.
async fn copy_documents(
    tx: &mut Conn,
    documents: impl Iterator<Item = Result<LogChange, BoxedError>>,
) -> Result<u64, StoreError> {
    let mut logged = 0;
    let mut batch = Vec::with_capacity(DOCUMENTS_PER_APPEND);
    let mut documents = documents.peekable();
    while let Some(change) = documents.next() {
        batch.push(change.map_err(|source| StoreError::System {
            what: "reading the data folder's index",
            source,
        })?);
        if batch.len() == DOCUMENTS_PER_APPEND || documents.peek().is_none() {
            logged += batch.len() as u64;
            append_in(tx, std::mem::take(&mut batch)).await?;
        }
    }
    Ok(logged)
}

/// Refuses a team database that holds data already: the copy would mix two data folders.
async fn refuse_unless_empty(target: &Pool, shown: &str) -> Result<(), StoreError> {
    let counts = [
        ("data_folder", "SELECT count(*) FROM data_folder"),
        ("integrations", "SELECT count(*) FROM integrations"),
        ("connectors", "SELECT count(*) FROM connectors"),
        (TEAM_INDEX, "SELECT count(*) FROM team_index"),
    ];
    for (table, count) in counts {
        let rows: i64 = scalar(count).fetch_one(target).await?;
        if rows > 0 {
            return Err(StoreError::Invalid(format!(
                "the team database {shown} already holds data ({rows} row(s) in {table}): \
                 a data folder is copied only into an empty database; create a new one \
                 (CREATE DATABASE) and name it with --to"
            )));
        }
    }
    Ok(())
}

/// Copies one table's rows; returns how many.
async fn copy_table(
    source: &mut sqlx::SqliteConnection,
    tx: &mut Conn,
    table: &'static str,
) -> Result<u64, StoreError> {
    let columns: Vec<(String, String)> =
        sqlx::query_as("SELECT name, upper(type) FROM pragma_table_info(?) ORDER BY cid")
            .bind(table)
            .fetch_all(&mut *source)
            .await?;
    let names: Vec<&str> = columns.iter().map(|(name, _)| name.as_str()).collect();
    let select = format!("SELECT {} FROM {table}", names.join(", "));
    let rows: Vec<SqliteRow> = sqlx::query(sqlx::AssertSqlSafe(select))
        .fetch_all(&mut *source)
        .await?;
    let per_insert = (VALUES_PER_INSERT / names.len().max(1)).max(1);
    for chunk in rows.chunks(per_insert) {
        let mut insert = Sql::build(&format!(
            "INSERT INTO {table} ({}) VALUES ",
            names.join(", ")
        ));
        for (n, row) in chunk.iter().enumerate() {
            if n > 0 {
                insert.push(", ");
            }
            let values = columns
                .iter()
                .enumerate()
                .map(|(i, (_, declared))| value(row, i, declared, table))
                .collect::<Result<Vec<Arg>, StoreError>>()?;
            insert.push_tuple(values);
        }
        insert.execute(On::from(&mut *tx)).await?;
    }
    Ok(u64::try_from(rows.len()).unwrap_or(u64::MAX))
}

/// Column `i` of `row`, as its declared type (`INTEGER`, `TEXT`, `BLOB`) binds it.
fn value(row: &SqliteRow, i: usize, declared: &str, table: &str) -> Result<Arg, StoreError> {
    let raw = row.try_get_raw(i)?;
    let unreadable =
        |e: sqlx::Error| StoreError::unreadable(format!("{table}.{}", row.columns()[i].name()), e);
    if raw.is_null() {
        return Ok(match declared {
            "INTEGER" => Arg::Int(None),
            "BLOB" => Arg::Bytes(None),
            _ => Arg::Text(None),
        });
    }
    let stored = raw.type_info().name().to_owned();
    Ok(match declared {
        "INTEGER" => Arg::from(row.try_get::<i64, _>(i).map_err(unreadable)?),
        "BLOB" => Arg::from(row.try_get::<Vec<u8>, _>(i).map_err(unreadable)?),
        "TEXT" => Arg::from(row.try_get::<String, _>(i).map_err(unreadable)?),
        _ => {
            return Err(StoreError::corrupt(format!(
                "{table}: a column of type {declared:?} (stored as {stored}) has no place in \
                 the team database"
            )));
        }
    })
}
