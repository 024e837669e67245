//! One way to run the store's SQL on either database: an embedded SQLite file (one user's
//! data folder) or a PostgreSQL server (a team's hosts).
//!
//! Statements are written once, with `?` placeholders, in the SQL both dialects share:
//! qualified columns in upserts, `CASE` for a maximum of two values, `lower(name)` for names
//! without regard to case, flags as integers (0 or 1). For PostgreSQL each `?` becomes `$1`,
//! `$2`, ... (and `?N` becomes `$N`), once per static statement. Values are bound as [`Arg`]s
//! and rows read with [`Row::try_get`] for any type both drivers decode; the few statements
//! that must differ (SQLite's PRAGMAs, PostgreSQL's row locks) ask [`Pool::dialect`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, LazyLock, Mutex};

use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgArguments, PgConnection, PgPool, PgRow};
use sqlx::query::Query;
use sqlx::sqlite::{SqliteArguments, SqliteConnection, SqlitePool, SqliteRow};
use sqlx::{AssertSqlSafe, ColumnIndex, Decode, Postgres, Row as _, Sqlite, Transaction, Type};

/// Which database the store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// An embedded SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

/// A pool of connections to the store's database.
#[derive(Clone)]
pub(crate) enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Pool {
    /// The database's dialect.
    pub(crate) fn dialect(&self) -> Dialect {
        match self {
            Pool::Sqlite(_) => Dialect::Sqlite,
            Pool::Postgres(_) => Dialect::Postgres,
        }
    }

    /// A connection of the pool, for several statements outside a transaction.
    pub(crate) async fn acquire(&self) -> Result<Conn, sqlx::Error> {
        Ok(match self {
            Pool::Sqlite(pool) => Conn::Sqlite(pool.acquire().await?),
            Pool::Postgres(pool) => Conn::Postgres(pool.acquire().await?),
        })
    }

    /// Begins a transaction; on SQLite with `sqlite_begin` (`BEGIN IMMEDIATE` takes the write
    /// lock at once).
    pub(crate) async fn begin(&self, sqlite_begin: &'static str) -> Result<Conn, sqlx::Error> {
        Ok(match self {
            Pool::Sqlite(pool) => Conn::SqliteTx(pool.begin_with(sqlite_begin).await?),
            Pool::Postgres(pool) => Conn::PostgresTx(pool.begin().await?),
        })
    }

    /// Closes every connection, waiting for running queries.
    pub(crate) async fn close(&self) {
        match self {
            Pool::Sqlite(pool) => pool.close().await,
            Pool::Postgres(pool) => pool.close().await,
        }
    }
}

/// A connection taken from the pool: alone, or in a transaction.
pub(crate) enum Conn {
    Sqlite(PoolConnection<Sqlite>),
    Postgres(PoolConnection<Postgres>),
    SqliteTx(Transaction<'static, Sqlite>),
    PostgresTx(Transaction<'static, Postgres>),
}

impl Conn {
    /// Commits the transaction (a connection outside one has nothing to commit).
    pub(crate) async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Conn::SqliteTx(tx) => tx.commit().await,
            Conn::PostgresTx(tx) => tx.commit().await,
            Conn::Sqlite(_) | Conn::Postgres(_) => Ok(()),
        }
    }
}

/// Where a statement runs: on any connection of a pool, or on one connection.
pub(crate) enum On<'a> {
    SqlitePool(&'a SqlitePool),
    PostgresPool(&'a PgPool),
    Sqlite(&'a mut SqliteConnection),
    Postgres(&'a mut PgConnection),
}

impl<'a> From<&'a Pool> for On<'a> {
    fn from(pool: &'a Pool) -> On<'a> {
        match pool {
            Pool::Sqlite(pool) => On::SqlitePool(pool),
            Pool::Postgres(pool) => On::PostgresPool(pool),
        }
    }
}

impl<'a> From<&'a mut Conn> for On<'a> {
    fn from(conn: &'a mut Conn) -> On<'a> {
        match conn {
            Conn::Sqlite(c) => On::Sqlite(c),
            Conn::Postgres(c) => On::Postgres(c),
            Conn::SqliteTx(tx) => On::Sqlite(tx),
            Conn::PostgresTx(tx) => On::Postgres(tx),
        }
    }
}

/// A value bound to a placeholder.
#[derive(Debug, Clone)]
pub(crate) enum Arg {
    Int(Option<i64>),
    Text(Option<String>),
    Bytes(Option<Vec<u8>>),
}

impl From<i64> for Arg {
    fn from(v: i64) -> Arg {
        Arg::Int(Some(v))
    }
}

impl From<&i64> for Arg {
    fn from(v: &i64) -> Arg {
        Arg::Int(Some(*v))
    }
}

impl From<Option<i64>> for Arg {
    fn from(v: Option<i64>) -> Arg {
        Arg::Int(v)
    }
}

impl From<u32> for Arg {
    fn from(v: u32) -> Arg {
        Arg::Int(Some(i64::from(v)))
    }
}

/// A flag is stored as 1 or 0 in both dialects (so SQLite's partial indexes on `x = 0` serve
/// the same statements on both).
impl From<bool> for Arg {
    fn from(v: bool) -> Arg {
        Arg::Int(Some(i64::from(v)))
    }
}

impl From<&str> for Arg {
    fn from(v: &str) -> Arg {
        Arg::Text(Some(v.to_owned()))
    }
}

impl From<String> for Arg {
    fn from(v: String) -> Arg {
        Arg::Text(Some(v))
    }
}

impl From<&String> for Arg {
    fn from(v: &String) -> Arg {
        Arg::Text(Some(v.clone()))
    }
}

impl From<Option<&str>> for Arg {
    fn from(v: Option<&str>) -> Arg {
        Arg::Text(v.map(str::to_owned))
    }
}

impl From<Option<String>> for Arg {
    fn from(v: Option<String>) -> Arg {
        Arg::Text(v)
    }
}

impl From<&Option<String>> for Arg {
    fn from(v: &Option<String>) -> Arg {
        Arg::Text(v.clone())
    }
}

impl From<&[u8]> for Arg {
    fn from(v: &[u8]) -> Arg {
        Arg::Bytes(Some(v.to_vec()))
    }
}

impl From<Vec<u8>> for Arg {
    fn from(v: Vec<u8>) -> Arg {
        Arg::Bytes(Some(v))
    }
}

/// A type both drivers decode a column into.
pub(crate) trait Value:
    for<'r> Decode<'r, Sqlite> + Type<Sqlite> + for<'r> Decode<'r, Postgres> + Type<Postgres>
{
}

impl<T> Value for T where
    T: for<'r> Decode<'r, Sqlite> + Type<Sqlite> + for<'r> Decode<'r, Postgres> + Type<Postgres>
{
}

/// A row of either database.
pub(crate) enum Row {
    Sqlite(SqliteRow),
    Postgres(PgRow),
}

impl Row {
    /// The value of a column, by name or position.
    pub(crate) fn try_get<T, I>(&self, index: I) -> Result<T, sqlx::Error>
    where
        T: Value,
        I: ColumnIndex<SqliteRow> + ColumnIndex<PgRow>,
    {
        match self {
            Row::Sqlite(row) => row.try_get(index),
            Row::Postgres(row) => row.try_get(index),
        }
    }

    /// An integer column holding a flag (0 or 1).
    pub(crate) fn flag(&self, column: &str) -> Result<bool, sqlx::Error> {
        Ok(self.try_get::<i64, _>(column)? != 0)
    }
}

/// A statement's text: written in the source, or built for its arguments (an `IN` list).
enum Text {
    Static(&'static str),
    Built(String),
}

/// A statement with its arguments, ready to run on either database.
pub(crate) struct Sql {
    text: Text,
    args: Vec<Arg>,
}

/// A statement written in the source.
pub(crate) fn sql(text: &'static str) -> Sql {
    Sql {
        text: Text::Static(text),
        args: Vec::new(),
    }
}

/// A statement that answers one column: its first.
pub(crate) fn scalar<T: Value>(text: &'static str) -> Scalar<T> {
    Scalar {
        sql: sql(text),
        value: PhantomData,
    }
}

impl Sql {
    /// A statement built piece by piece from `start` ([`Sql::push`], [`Sql::push_bind`]).
    pub(crate) fn build(start: &str) -> Sql {
        Sql {
            text: Text::Built(start.to_owned()),
            args: Vec::new(),
        }
    }

    /// Binds the next placeholder.
    pub(crate) fn bind(mut self, value: impl Into<Arg>) -> Sql {
        self.args.push(value.into());
        self
    }

    /// Appends text to a built statement.
    pub(crate) fn push(&mut self, text: &str) -> &mut Sql {
        if let Text::Built(built) = &mut self.text {
            built.push_str(text);
        }
        self
    }

    /// Appends a placeholder to a built statement and binds it.
    pub(crate) fn push_bind(&mut self, value: impl Into<Arg>) -> &mut Sql {
        self.push("?");
        self.args.push(value.into());
        self
    }

    /// Appends `(?, ?, ...)`, one placeholder per value, and binds them.
    pub(crate) fn push_tuple(&mut self, values: Vec<Arg>) -> &mut Sql {
        let marks = vec!["?"; values.len()].join(", ");
        self.push("(").push(&marks).push(")");
        self.args.extend(values);
        self
    }

    /// Runs the statement; returns the rows it changed.
    pub(crate) async fn execute<'a>(self, on: impl Into<On<'a>>) -> Result<u64, sqlx::Error> {
        let Sql { text, args } = self;
        Ok(match on.into() {
            On::SqlitePool(p) => sqlite(text, &args).execute(p).await?.rows_affected(),
            On::Sqlite(c) => sqlite(text, &args).execute(c).await?.rows_affected(),
            On::PostgresPool(p) => postgres(text, &args).execute(p).await?.rows_affected(),
            On::Postgres(c) => postgres(text, &args).execute(c).await?.rows_affected(),
        })
    }

    /// Every row the statement answers.
    pub(crate) async fn fetch_all<'a>(
        self,
        on: impl Into<On<'a>>,
    ) -> Result<Vec<Row>, sqlx::Error> {
        let Sql { text, args } = self;
        Ok(match on.into() {
            On::SqlitePool(p) => rows(sqlite(text, &args).fetch_all(p).await?, Row::Sqlite),
            On::Sqlite(c) => rows(sqlite(text, &args).fetch_all(c).await?, Row::Sqlite),
            On::PostgresPool(p) => rows(postgres(text, &args).fetch_all(p).await?, Row::Postgres),
            On::Postgres(c) => rows(postgres(text, &args).fetch_all(c).await?, Row::Postgres),
        })
    }

    /// The first row the statement answers, if any.
    pub(crate) async fn fetch_optional<'a>(
        self,
        on: impl Into<On<'a>>,
    ) -> Result<Option<Row>, sqlx::Error> {
        let Sql { text, args } = self;
        Ok(match on.into() {
            On::SqlitePool(p) => sqlite(text, &args)
                .fetch_optional(p)
                .await?
                .map(Row::Sqlite),
            On::Sqlite(c) => sqlite(text, &args)
                .fetch_optional(c)
                .await?
                .map(Row::Sqlite),
            On::PostgresPool(p) => {
                (postgres(text, &args).fetch_optional(p).await?).map(Row::Postgres)
            }
            On::Postgres(c) => (postgres(text, &args).fetch_optional(c).await?).map(Row::Postgres),
        })
    }

    /// The first row the statement answers; an error when it answers none.
    pub(crate) async fn fetch_one<'a>(self, on: impl Into<On<'a>>) -> Result<Row, sqlx::Error> {
        self.fetch_optional(on)
            .await?
            .ok_or(sqlx::Error::RowNotFound)
    }
}

/// A statement that answers one column, with its arguments.
pub(crate) struct Scalar<T> {
    sql: Sql,
    value: PhantomData<fn() -> T>,
}

impl<T: Value> Scalar<T> {
    /// Binds the next placeholder.
    pub(crate) fn bind(mut self, value: impl Into<Arg>) -> Scalar<T> {
        self.sql = self.sql.bind(value);
        self
    }

    /// The first column of every row.
    pub(crate) async fn fetch_all<'a>(self, on: impl Into<On<'a>>) -> Result<Vec<T>, sqlx::Error> {
        let rows = self.sql.fetch_all(on).await?;
        rows.iter().map(|row| row.try_get(0)).collect()
    }

    /// The first column of the first row, if any.
    pub(crate) async fn fetch_optional<'a>(
        self,
        on: impl Into<On<'a>>,
    ) -> Result<Option<T>, sqlx::Error> {
        let row = self.sql.fetch_optional(on).await?;
        row.map(|row| row.try_get(0)).transpose()
    }

    /// The first column of the first row; an error when there is none.
    pub(crate) async fn fetch_one<'a>(self, on: impl Into<On<'a>>) -> Result<T, sqlx::Error> {
        self.sql.fetch_one(on).await?.try_get(0)
    }
}

fn rows<R>(found: Vec<R>, wrap: fn(R) -> Row) -> Vec<Row> {
    found.into_iter().map(wrap).collect()
}

/// `query` with `args` bound in order (for either driver: the same code, two types).
macro_rules! bind_all {
    ($query:ident, $args:expr) => {{
        let mut query = $query;
        for arg in $args {
            query = match arg {
                Arg::Int(v) => query.bind(*v),
                Arg::Text(v) => query.bind(v.as_deref()),
                Arg::Bytes(v) => query.bind(v.as_deref()),
            };
        }
        query
    }};
}

/// The statement for SQLite, which reads `?` and `?N` itself.
fn sqlite(text: Text, args: &[Arg]) -> Query<'_, Sqlite, SqliteArguments> {
    let query = match text {
        Text::Static(text) => sqlx::query(text),
        Text::Built(text) => sqlx::query(AssertSqlSafe(text)),
    };
    bind_all!(query, args)
}

/// The statement for PostgreSQL, its placeholders numbered.
fn postgres(text: Text, args: &[Arg]) -> Query<'_, Postgres, PgArguments> {
    let query = match text {
        Text::Static(text) => sqlx::query(AssertSqlSafe(numbered_once(text))),
        Text::Built(text) => sqlx::query(AssertSqlSafe(numbered(&text).into_owned())),
    };
    bind_all!(query, args)
}

/// A static statement with numbered placeholders, numbered once per process. The cache holds one
/// entry per SQL text written in the source, a fixed set; built statements are not cached.
fn numbered_once(text: &'static str) -> Arc<str> {
    static DONE: LazyLock<Mutex<HashMap<&'static str, Arc<str>>>> = LazyLock::new(Mutex::default);
    let mut done = DONE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    done.entry(text)
        .or_insert_with(|| Arc::from(numbered(text).as_ref()))
        .clone()
}

/// The statement with `?` as `$1`, `$2`, ... in order, and `?N` as `$N`; question marks inside
/// quoted strings and names are left alone.
pub(crate) fn numbered(text: &str) -> Cow<'_, str> {
    if !text.contains('?') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut next = 0u32;
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c);
            }
            (Some(_), c) => out.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                out.push(c);
            }
            (None, '?') => {
                out.push('$');
                if chars.peek().is_some_and(char::is_ascii_digit) {
                    while let Some(d) = chars.next_if(char::is_ascii_digit) {
                        out.push(d);
                    }
                } else {
                    next += 1;
                    out.push_str(&next.to_string());
                }
            }
            (None, c) => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::numbered;

    #[test]
    fn placeholders_are_numbered_in_order_and_quoted_question_marks_stay() {
        assert_eq!(
            numbered("SELECT a FROM t WHERE b = ? AND c = ? LIMIT ?"),
            "SELECT a FROM t WHERE b = $1 AND c = $2 LIMIT $3"
        );
        assert_eq!(
            numbered("SELECT ?1 UNION ALL SELECT ?2 WHERE x = ?1"),
            "SELECT $1 UNION ALL SELECT $2 WHERE x = $1"
        );
        assert_eq!(
            numbered("SELECT '?', \"a?b\" FROM t WHERE v = ? AND w = 'it''s ?'"),
            "SELECT '?', \"a?b\" FROM t WHERE v = $1 AND w = 'it''s ?'"
        );
        assert_eq!(numbered("SELECT 1"), "SELECT 1");
    }
}
