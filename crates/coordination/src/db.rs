//! A database reached through sqlx, whichever of the three kinds: the pool, and the SQL that
//! differs between them. The JDBC repository and the fleet records on the shards share it.

use std::str::FromStr;
use std::time::Duration;

use keyshard_config::{DataSource, DatabaseKind};
use sqlx::mysql::{MySqlConnectOptions, MySqlPool};
use sqlx::pool::PoolOptions;
use sqlx::postgres::{PgConnectOptions, PgPool};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};

use crate::CoordinationError;

#[derive(Debug)]
pub(crate) enum Pool {
    MySql(MySqlPool),
    Postgres(PgPool),
    Sqlite(SqlitePool),
}

/// The SQL that differs between the three databases.
pub(crate) struct Dialect {
    /// The database's clock in milliseconds since the Unix epoch.
    pub now: &'static str,
    /// `GREATEST` (SQLite's two-argument `MAX` is the same).
    pub greatest: &'static str,
    /// Inserts a row unless its key exists.
    pub insert_ignore: fn(table: &str, columns: &str, values: &str) -> String,
}

pub(crate) const MYSQL: Dialect = Dialect {
    now: "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)",
    greatest: "GREATEST",
    insert_ignore: |t, c, v| format!("INSERT IGNORE INTO {t} ({c}) VALUES {v}"),
};
pub(crate) const POSTGRES: Dialect = Dialect {
    now: "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
    greatest: "GREATEST",
    insert_ignore: |t, c, v| format!("INSERT INTO {t} ({c}) VALUES {v} ON CONFLICT DO NOTHING"),
};
pub(crate) const SQLITE: Dialect = Dialect {
    now: "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
    greatest: "MAX",
    insert_ignore: |t, c, v| format!("INSERT OR IGNORE INTO {t} ({c}) VALUES {v}"),
};

/// Runs `$body` with `$pool` bound to the concrete sqlx pool of `$of` (a [`Pool`]), so one
/// text of each query serves all three databases.
macro_rules! on_pool {
    ($of:expr, $pool:ident => $body:expr) => {
        match $of {
            $crate::db::Pool::MySql($pool) => $body,
            $crate::db::Pool::Postgres($pool) => $body,
            $crate::db::Pool::Sqlite($pool) => $body,
        }
    };
}
pub(crate) use on_pool;

impl Pool {
    /// A pool of at most `max_connections` to `source`, connecting on first use; `what` names
    /// its use in errors.
    pub(crate) fn connect_lazy(
        source: &DataSource,
        max_connections: u32,
        acquire_timeout: Duration,
        what: &str,
    ) -> Result<Self, CoordinationError> {
        fn options<DB: sqlx::Database>(max: u32, acquire: Duration) -> PoolOptions<DB> {
            PoolOptions::new()
                .max_connections(max)
                .min_connections(0)
                .acquire_timeout(acquire)
        }
        let invalid = |e: sqlx::Error| {
            CoordinationError::Config(format!("invalid {what} URL {}: {e}", source.redacted_url()))
        };
        let (max, acquire) = (max_connections, acquire_timeout);
        Ok(match source.kind {
            DatabaseKind::MySql => {
                Pool::MySql(options(max, acquire).connect_lazy_with(
                    MySqlConnectOptions::from_str(&source.url).map_err(invalid)?,
                ))
            }
            DatabaseKind::Postgres => Pool::Postgres(
                options(max, acquire)
                    .connect_lazy_with(PgConnectOptions::from_str(&source.url).map_err(invalid)?),
            ),
            DatabaseKind::Sqlite => {
                let file = SqliteConnectOptions::from_str(&source.url)
                    .map_err(invalid)?
                    .create_if_missing(true)
                    .busy_timeout(acquire);
                // The first start of the embedded default: data/ does not exist yet.
                if let Some(dir) = file.get_filename().parent()
                    && !dir.as_os_str().is_empty()
                {
                    std::fs::create_dir_all(dir).map_err(|e| {
                        CoordinationError::Config(format!("cannot create {}: {e}", dir.display()))
                    })?;
                }
                Pool::Sqlite(options(max, acquire).connect_lazy_with(file))
            }
        })
    }

    pub(crate) fn dialect(&self) -> &'static Dialect {
        match self {
            Pool::MySql(_) => &MYSQL,
            Pool::Postgres(_) => &POSTGRES,
            Pool::Sqlite(_) => &SQLITE,
        }
    }

    /// Placeholder `n` (1-based): `?` for MySQL, `$n` for PostgreSQL and SQLite.
    pub(crate) fn p(&self, n: usize) -> String {
        match self {
            Pool::MySql(_) => "?".to_owned(),
            _ => format!("${n}"),
        }
    }
}
