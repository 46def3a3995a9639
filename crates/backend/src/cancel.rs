//! Cancelling what a session runs on the shards, for another session (`KILL QUERY`,
//! `pg_cancel_backend`) or its own client (a PostgreSQL cancel request).
//!
//! Every shard connection a session holds is recorded in its [`SessionState`] with the
//! server's own id of it (MySQL's thread id, PostgreSQL's backend pid), from the moment the
//! session takes it until another session may: a cancel then goes to each of them from a
//! connection of its own, as `KILL QUERY id` or `pg_cancel_backend(pid)`. The shard ends the
//! statement with its own error (1317, 57014), which reaches the client as it would from a
//! direct connection; a connection that runs nothing ignores it.
//!
//! A statement cancelled before it took all its connections (a read of several data sources
//! whose last has not started) takes no more: it stops with the error the shard would have
//! given, until the session's next statement ([`SessionState::statement_started`]).
//!
//! A cancel sent to a connection whose statement ended meanwhile must not stop another
//! session's: a connection a cancel was sent to never goes to another session, it is closed
//! when its session lets go of it.

use keyshard_config::DatabaseKind;
use sqlx::{ConnectOptions, Connection, Executor};

use crate::session_state::SessionState;
use crate::{Backend, Pool};

impl Backend {
    /// Cancels whatever `session` runs on the shards now; answers to how many connections a
    /// cancel went. A cancel that cannot be sent is logged: the statement then runs on.
    pub async fn cancel(&self, session: &SessionState) -> usize {
        let targets = session.holdings().cancel_all();
        let sent = targets.iter().map(|(data_source, id)| async move {
            match self.cancel_one(data_source, *id).await {
                Ok(sent) => sent,
                Err(e) => {
                    tracing::warn!("cancel on {data_source} (connection {id}) not sent: {e}");
                    false
                }
            }
        });
        futures_util::future::join_all(sent)
            .await
            .into_iter()
            .filter(|sent| *sent)
            .count()
    }

    /// Cancels what connection `id` of `data_source` runs, from a new connection (the pool's
    /// may all be busy with what is to be cancelled).
    async fn cancel_one(&self, data_source: &str, id: u32) -> Result<bool, sqlx::Error> {
        match self
            .pool(data_source)
            .map_err(|e| sqlx::Error::Protocol(e.to_string()))?
        {
            Pool::MySql(c) => {
                let mut conn = c.pool().connect_options().connect().await?;
                let killed = conn.execute(&*cancel_sql(DatabaseKind::MySql, id)).await;
                let _ = conn.close().await;
                match killed {
                    Ok(_) => Ok(true),
                    // ER_NO_SUCH_THREAD: the connection closed meanwhile.
                    Err(sqlx::Error::Database(e))
                        if e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
                            .is_some_and(|e| e.number() == 1094) =>
                    {
                        Ok(false)
                    }
                    Err(e) => Err(e),
                }
            }
            Pool::Postgres(c) => {
                let mut conn = c.pool().connect_options().connect().await?;
                let sent = conn.execute(&*cancel_sql(DatabaseKind::Postgres, id)).await;
                let _ = conn.close().await;
                sent.map(|_| true)
            }
            // In the proxy's own process: nothing runs apart to cancel.
            Pool::Sqlite(_) => Ok(false),
        }
    }
}

/// A connection asked for by a statement already cancelled: it stops as the shard stops a
/// cancelled statement.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.codes().2)]
pub(crate) struct Interrupted(pub(crate) DatabaseKind);

impl Interrupted {
    /// The database's error number (MySQL), SQLSTATE and message for a cancelled statement.
    pub(crate) fn codes(&self) -> (Option<u16>, &'static str, &'static str) {
        match self.0 {
            DatabaseKind::MySql => (Some(1317), "70100", "Query execution was interrupted"),
            DatabaseKind::Postgres | DatabaseKind::Sqlite => {
                (None, "57014", "canceling statement due to user request")
            }
        }
    }
}

/// The statement that cancels what connection `id` runs.
fn cancel_sql(kind: DatabaseKind, id: u32) -> String {
    match kind {
        DatabaseKind::MySql => format!("KILL QUERY {id}"),
        DatabaseKind::Postgres | DatabaseKind::Sqlite => {
            format!("SELECT pg_cancel_backend({id})")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancels_name_the_connection() {
        assert_eq!(cancel_sql(DatabaseKind::MySql, 42), "KILL QUERY 42");
        assert_eq!(
            cancel_sql(DatabaseKind::Postgres, 42),
            "SELECT pg_cancel_backend(42)"
        );
    }
}
