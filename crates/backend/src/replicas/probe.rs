//! The statements that read where a primary and its replicas stand, per kind of database.

use sqlx::Row;

use super::Position;
use crate::pool::Pool;

/// What one check of a replica found.
pub(super) struct ReplicaState {
    /// What it has applied; `None`: it is not a replica (a promoted PostgreSQL standby).
    pub(super) applied: Option<Position>,
    /// Its replication runs (MariaDB: both threads; PostgreSQL: the WAL receiver streams).
    pub(super) replicating: bool,
}

/// The primary's position: every transaction committed before this is asked is at or before
/// it. PostgreSQL's write location is past every commit that has returned (each is flushed
/// first); MariaDB's binlog position holds every committed transaction.
pub(super) async fn primary(pool: &Pool) -> Result<Position, sqlx::Error> {
    let (text, position): (String, fn(&str) -> Option<Position>) = match pool {
        Pool::MySql(c) => (
            c.with_base(async |conn| {
                sqlx::query_scalar("SELECT CAST(@@GLOBAL.gtid_binlog_pos AS CHAR)")
                    .fetch_one(conn)
                    .await
            })
            .await?,
            Position::gtids,
        ),
        Pool::Postgres(c) => (
            c.with_base(async |conn| {
                sqlx::query_scalar("SELECT pg_current_wal_lsn()::text")
                    .fetch_one(conn)
                    .await
            })
            .await?,
            Position::lsn,
        ),
        Pool::Sqlite(_) => return Err(no_replication()),
    };
    position(&text).ok_or_else(|| unreadable(&text))
}

/// What a replica has applied.
pub(super) async fn applied(pool: &Pool) -> Result<Position, sqlx::Error> {
    replica(pool)
        .await?
        .applied
        .ok_or_else(|| unreadable("not a replica"))
}

/// A replica's applied position and whether it replicates.
pub(super) async fn replica(pool: &Pool) -> Result<ReplicaState, sqlx::Error> {
    match pool {
        Pool::MySql(c) => {
            let row = c
                .with_base(async |conn| {
                    sqlx::query(
                        "SELECT CAST(@@GLOBAL.gtid_slave_pos AS CHAR), CAST((SELECT \
                         variable_value FROM information_schema.global_status WHERE \
                         variable_name = 'SLAVE_RUNNING') AS CHAR)",
                    )
                    .fetch_one(conn)
                    .await
                })
                .await?;
            let position: Option<String> = row.try_get(0)?;
            let running: Option<String> = row.try_get(1)?;
            Ok(ReplicaState {
                applied: position.as_deref().and_then(Position::gtids),
                replicating: running.is_some_and(|r| r.eq_ignore_ascii_case("ON")),
            })
        }
        Pool::Postgres(c) => {
            let row = c
                .with_base(async |conn| {
                    sqlx::query(
                        "SELECT pg_last_wal_replay_lsn()::text, EXISTS (SELECT 1 FROM \
                         pg_stat_wal_receiver WHERE status = 'streaming')",
                    )
                    .fetch_one(conn)
                    .await
                })
                .await?;
            let position: Option<String> = row.try_get(0)?;
            let streaming: bool = row.try_get(1)?;
            let applied = position.as_deref().and_then(Position::lsn);
            Ok(ReplicaState {
                replicating: streaming && applied.is_some(),
                applied,
            })
        }
        Pool::Sqlite(_) => Err(no_replication()),
    }
}

fn unreadable(text: &str) -> sqlx::Error {
    sqlx::Error::Protocol(format!("replication position not understood: '{text}'"))
}

fn no_replication() -> sqlx::Error {
    sqlx::Error::Protocol("SQLite has no replication".into())
}
