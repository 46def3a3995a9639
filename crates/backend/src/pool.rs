//! One sqlx pool per data source, by URL scheme, behind our own type.

use std::str::FromStr;
use std::time::Duration;

use keyshard_config::{DataSource, DatabaseKind};
use sqlx::mysql::{MySql, MySqlConnectOptions};
use sqlx::pool::PoolOptions;
use sqlx::postgres::{PgConnectOptions, Postgres};
use sqlx::sqlite::{Sqlite, SqliteConnectOptions};

use crate::BackendError;
use crate::reuse::{Connections, PoolStats};

/// ShardingSphere's (HikariCP's) defaults where the configuration says nothing.
const DEFAULT_MAX_SIZE: u32 = 50;
const DEFAULT_CONNECTION_TIMEOUT_MS: u64 = 30_000;
const DEFAULT_IDLE_TIMEOUT_MS: u64 = 60_000;
const DEFAULT_MAX_LIFETIME_MS: u64 = 1_800_000;
/// Prepared statements cached per connection. Every multi-row shape of an INSERT is a distinct
/// statement, so the cache must be bounded; sqlx evicts the least recently used.
pub(crate) const STATEMENT_CACHE_CAPACITY: usize = 256;

/// A data source's connection pool.
#[derive(Debug)]
pub enum Pool {
    /// MySQL or MariaDB.
    MySql(Connections<MySql>),
    /// PostgreSQL.
    Postgres(Connections<Postgres>),
    /// SQLite.
    Sqlite(Connections<Sqlite>),
}

impl Pool {
    /// The database behind it.
    pub fn kind(&self) -> DatabaseKind {
        match self {
            Pool::MySql(_) => DatabaseKind::MySql,
            Pool::Postgres(_) => DatabaseKind::Postgres,
            Pool::Sqlite(_) => DatabaseKind::Sqlite,
        }
    }

    /// The session's statement ended here just now, on a connection not its own (a batch's,
    /// see `batching`): noted like one on its own.
    pub(crate) fn noted_write(&self) {
        let session = crate::session_state::current();
        let session = session.as_deref();
        match self {
            Pool::MySql(c) => c.noted_write(session),
            Pool::Postgres(c) => c.noted_write(session),
            Pool::Sqlite(c) => c.noted_write(session),
        }
    }

    /// Notes each session's statements here: the primary of replicas (see `replicas`).
    pub(crate) fn note_writes(&mut self) {
        match self {
            Pool::MySql(c) => c.note_writes(),
            Pool::Postgres(c) => c.note_writes(),
            Pool::Sqlite(c) => c.note_writes(),
        }
    }

    /// Its connections and waiting statements now.
    pub fn stats(&self) -> PoolStats {
        match self {
            Pool::MySql(c) => c.stats(),
            Pool::Postgres(c) => c.stats(),
            Pool::Sqlite(c) => c.stats(),
        }
    }

    /// A pool for `source` that connects on first use, so a database that is down at start
    /// fails the statements that need it rather than the whole proxy.
    pub fn connect_lazy(source: &DataSource) -> Result<Self, BackendError> {
        Self::connect(source, false)
    }

    /// [`Pool::connect_lazy`] for a replica: its sessions are read-only too, so that a write
    /// that reached it anyway is refused rather than applied where the primary never sees it
    /// (MariaDB's `read_only` lets privileged users write).
    pub(crate) fn connect_replica(source: &DataSource) -> Result<Self, BackendError> {
        Self::connect(source, true)
    }

    fn connect(source: &DataSource, read_only: bool) -> Result<Self, BackendError> {
        let invalid = |e: sqlx::Error| BackendError::Connect {
            data_source: source.name.clone(),
            message: format!("invalid URL {}: {e}", source.redacted_url()),
        };
        Ok(match source.kind {
            DatabaseKind::MySql => {
                // A shard session begins as a direct client's would: sqlx's own settings
                // (time zone UTC, PIPES_AS_CONCAT) would change what clients read and how their
                // SQL is understood. A client's settings reach it through its session.
                let options = MySqlConnectOptions::from_str(&source.url)
                    .map_err(invalid)?
                    .statement_cache_capacity(STATEMENT_CACHE_CAPACITY)
                    .pipes_as_concat(false)
                    .no_engine_substitution(false)
                    .timezone(None);
                // sqlx logs in with the IGNORE_SPACE capability, which adds IGNORE_SPACE to
                // the session's sql_mode; a direct client's session has the server's.
                let pool = pool_options(source).after_connect(move |conn, _| {
                    Box::pin(async move {
                        sqlx::Executor::execute(
                            &mut *conn,
                            "SET SESSION sql_mode = @@GLOBAL.sql_mode",
                        )
                        .await?;
                        if read_only {
                            sqlx::Executor::execute(conn, "SET SESSION TRANSACTION READ ONLY")
                                .await?;
                        }
                        Ok(())
                    })
                });
                Pool::MySql(connections(source, pool, options))
            }
            DatabaseKind::Postgres => {
                let mut options = PgConnectOptions::from_str(&source.url)
                    .map_err(invalid)?
                    .statement_cache_capacity(STATEMENT_CACHE_CAPACITY);
                if read_only {
                    options = options.options([("default_transaction_read_only", "on")]);
                }
                Pool::Postgres(connections(source, pool_options(source), options))
            }
            DatabaseKind::Sqlite => {
                let options = SqliteConnectOptions::from_str(&source.url)
                    .map_err(invalid)?
                    .create_if_missing(true)
                    // Concurrent writers wait for each other instead of failing at once.
                    .busy_timeout(Duration::from_millis(
                        source
                            .pool
                            .connection_timeout_ms
                            .unwrap_or(DEFAULT_CONNECTION_TIMEOUT_MS),
                    ))
                    // No statement cache: sqlx keeps a cached statement's column count, and a
                    // column added since (ALTER TABLE … ADD COLUMN, then `RETURNING *` or
                    // `SELECT *` with the same text) panics its worker thread and loses the
                    // rows. SQLite prepares cheaply; the shards that take load are servers.
                    .statement_cache_capacity(0);
                if let Some(dir) = options.get_filename().parent()
                    && !dir.as_os_str().is_empty()
                {
                    std::fs::create_dir_all(dir).map_err(|e| BackendError::Connect {
                        data_source: source.name.clone(),
                        message: format!("cannot create {}: {e}", dir.display()),
                    })?;
                }
                Pool::Sqlite(connections(source, pool_options(source), options))
            }
        })
    }

    /// Opens a new connection (outside the pool, so the database's own error comes back
    /// rather than the pool's time-out) and pings it: a data source check.
    pub async fn check(&self) -> Result<(), sqlx::Error> {
        use sqlx::{ConnectOptions, Connection};
        match self {
            Pool::MySql(c) => c.pool().connect_options().connect().await?.ping().await,
            Pool::Postgres(c) => c.pool().connect_options().connect().await?.ping().await,
            Pool::Sqlite(c) => c.pool().connect_options().connect().await?.ping().await,
        }
    }

    /// Closes every connection, waiting for those in use to be returned.
    pub async fn close(&self) {
        match self {
            Pool::MySql(c) => c.close().await,
            Pool::Postgres(c) => c.close().await,
            Pool::Sqlite(c) => c.close().await,
        }
    }
}

fn connections<DB: crate::reuse::Kind>(
    source: &DataSource,
    pool: PoolOptions<DB>,
    options: <DB::Connection as sqlx::Connection>::Options,
) -> Connections<DB> {
    let idle_timeout = Duration::from_millis(
        source
            .pool
            .idle_timeout_ms
            .unwrap_or(DEFAULT_IDLE_TIMEOUT_MS),
    );
    Connections::new(
        &source.name,
        pool.connect_lazy_with(options),
        idle_timeout,
        source.pool.strict_session_state,
    )
}

fn pool_options<DB: sqlx::Database>(source: &DataSource) -> PoolOptions<DB> {
    let settings = &source.pool;
    PoolOptions::new()
        .max_connections(settings.max_size.unwrap_or(DEFAULT_MAX_SIZE))
        .min_connections(settings.min_size.unwrap_or(0))
        .acquire_timeout(Duration::from_millis(
            settings
                .connection_timeout_ms
                .unwrap_or(DEFAULT_CONNECTION_TIMEOUT_MS),
        ))
        .idle_timeout(Duration::from_millis(
            settings.idle_timeout_ms.unwrap_or(DEFAULT_IDLE_TIMEOUT_MS),
        ))
        .max_lifetime(Duration::from_millis(
            settings.max_lifetime_ms.unwrap_or(DEFAULT_MAX_LIFETIME_MS),
        ))
        // The ping before each checkout is one more round trip per statement (6-8 µs on
        // loopback here, ~140 µs reported elsewhere). Without it a broken connection surfaces
        // as that statement's error, and idle/lifetime limits retire connections before servers
        // drop them.
        .test_before_acquire(false)
}
