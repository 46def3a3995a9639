//! The databases a pool may hold, each with what a connection needs to change its settings
//! and to be cancelled.

use futures_util::future::BoxFuture;
use keyshard_config::DatabaseKind;
use sqlx::{Database, Executor};

/// The databases a pool may hold, with what a connection needs to change its settings.
pub trait Kind: Database {
    /// Which one it is.
    const KIND: DatabaseKind;

    /// Runs `sql` (statements as text) on `conn`.
    fn run_text<'c>(
        conn: &'c mut Self::Connection,
        sql: &'c str,
    ) -> BoxFuture<'c, Result<(), sqlx::Error>>;

    /// The server's id of `conn`, by which another connection cancels what it runs; `None`
    /// where nothing runs apart from the proxy (SQLite).
    fn server_id(conn: &Self::Connection) -> Option<u32>;
}

macro_rules! kind {
    ($db:ty, $kind:expr, $server_id:expr) => {
        impl Kind for $db {
            const KIND: DatabaseKind = $kind;

            fn server_id(conn: &Self::Connection) -> Option<u32> {
                $server_id(conn)
            }

            fn run_text<'c>(
                conn: &'c mut Self::Connection,
                sql: &'c str,
            ) -> BoxFuture<'c, Result<(), sqlx::Error>> {
                Box::pin(async move { conn.execute(sqlx::raw_sql(sql)).await.map(|_| ()) })
            }
        }
    };
}

kind!(
    sqlx::MySql,
    DatabaseKind::MySql,
    |c: &sqlx::MySqlConnection| Some(c.server_connection_id())
);
kind!(
    sqlx::Postgres,
    DatabaseKind::Postgres,
    |c: &sqlx::PgConnection| Some(c.backend_process_id())
);
kind!(
    sqlx::Sqlite,
    DatabaseKind::Sqlite,
    |_: &sqlx::SqliteConnection| None
);
