//! Reaching a team's PostgreSQL database: the pool, the schema brought up to date, and the
//! address as it may be shown.

use std::str::FromStr;
use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::StoreError;

/// How a PostgreSQL address starts (sqlx itself reads any scheme).
const SCHEMES: [&str; 2] = ["postgres://", "postgresql://"];

/// How long a statement waits for a connection at most: while the database fails over, a
/// request waits this long, and is then answered 503 with Retry-After.
const WAIT: Duration = Duration::from_secs(3);

/// A pool of at most `connections` to the database at `url` (the value of `option`), its schema
/// brought up to date (hosts starting together migrate it once: sqlx takes an advisory lock),
/// and its address as shown.
pub(crate) async fn connect(
    url: &str,
    option: &str,
    connections: u32,
) -> Result<(PgPool, String), StoreError> {
    let not_postgres = |why: String| {
        StoreError::Invalid(format!(
            "{option}: not a PostgreSQL address ({why}); write postgres://USER@HOST:PORT/DATABASE"
        ))
    };
    if !SCHEMES.iter().any(|scheme| url.starts_with(scheme)) {
        return Err(not_postgres(
            "it must start with postgres:// or postgresql://".to_owned(),
        ));
    }
    let options = PgConnectOptions::from_str(url)
        .map_err(|e| not_postgres(e.to_string()))?
        .application_name("quarry");
    let shown = shown(&options);
    let failed = |message: String| StoreError::Connect {
        database: shown.clone(),
        message,
    };
    let pool = PgPoolOptions::new()
        .max_connections(connections)
        .acquire_timeout(WAIT)
        .connect_with(options)
        .await
        .map_err(|e| failed(e.to_string()))?;
    sqlx::migrate!("./migrations/postgres")
        .run(&pool)
        .await
        .map_err(|e| failed(format!("migrating the schema: {e}")))?;
    Ok((pool, shown))
}

/// A PostgreSQL address as it may be shown (user, host, port, database; never a password).
pub fn shown_address(url: &str) -> String {
    PgConnectOptions::from_str(url).map_or_else(
        |_| "(not a PostgreSQL address)".to_owned(),
        |options| shown(&options),
    )
}

fn shown(options: &PgConnectOptions) -> String {
    format!(
        "postgres://{}@{}:{}/{}",
        options.get_username(),
        options.get_host(),
        options.get_port(),
        options.get_database().unwrap_or(options.get_username())
    )
}
