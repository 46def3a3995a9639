//! One data source's part of a transaction: a connection held from the first statement there
//! until the transaction ends, with a local transaction or an XA branch open on it.
//!
//! Transaction control is sent as plain SQL rather than through sqlx's transaction type, which
//! knows nothing of XA. A branch dropped before it ended (a cancelled statement, a failed
//! command) takes its connection out of the pool and closes it: the server then rolls back
//! what was active and keeps what was prepared, for recovery to finish.

use std::sync::Arc;

use keyshard_router::ExecutionUnit;
use sqlx::{Executor, MySql, Postgres, Sqlite};

use crate::Pool;
use crate::characteristics::Characteristics;
use crate::execute::{batch_text, run_batch, run_statement};
use crate::outcome::UnitResult;
use crate::reuse::Leased;
use crate::session_state::Settings;

/// An open local transaction or XA branch on a held connection.
#[derive(Debug)]
pub(crate) struct Branch {
    data_source: String,
    /// `None` once the branch ended and gave its connection back.
    conn: Option<Conn>,
    /// How the XA commands name this branch (`'gtrid','bqual'` for MySQL, `'gid'` for
    /// PostgreSQL), when the transaction may commit in two phases.
    xid: Option<String>,
    prepared: bool,
    /// MySQL: the connection holds the session's table locks, which START TRANSACTION would
    /// let go of: the branch runs with autocommit off instead, which keeps them.
    keeps_table_locks: bool,
}

#[derive(Debug)]
enum Conn {
    MySql(Leased<MySql>),
    Postgres(Leased<Postgres>),
    Sqlite(Leased<Sqlite>),
}

/// Runs `$body` with `$c` bound to the concrete connection.
macro_rules! on_conn {
    ($conn:expr, $c:ident => $body:expr) => {
        match $conn {
            Conn::MySql($c) => $body,
            Conn::Postgres($c) => $body,
            Conn::Sqlite($c) => $body,
        }
    };
}

impl Branch {
    /// Takes a connection from `pool` for a branch named by `xid` (from
    /// [`crate::xa::XaTransaction::branch`]) when the transaction may commit in two phases;
    /// [`Branch::begin`] opens it.
    pub(crate) async fn acquire(
        data_source: &str,
        pool: &Pool,
        xid: Option<String>,
    ) -> Result<Self, sqlx::Error> {
        let conn = match pool {
            Pool::MySql(c) => Conn::MySql(c.acquire().await?),
            Pool::Postgres(c) => Conn::Postgres(c.acquire().await?),
            Pool::Sqlite(c) => Conn::Sqlite(c.acquire().await?),
        };
        Ok(Self {
            data_source: data_source.to_owned(),
            conn: Some(conn),
            xid,
            prepared: false,
            keeps_table_locks: false,
        })
    }

    /// Opens the transaction with `characteristics`: `XA START` on MySQL when it is an XA
    /// branch, else `BEGIN` (PostgreSQL prepares an ordinary transaction). SQLite is always
    /// serializable and has no read-only transactions.
    pub(crate) async fn begin(
        &mut self,
        characteristics: Characteristics,
    ) -> Result<(), sqlx::Error> {
        let (begin, _) = self.begin_sql(characteristics);
        self.command(&begin).await
    }

    /// The statements that open the transaction, and how many results they answer.
    fn begin_sql(&self, characteristics: Characteristics) -> (String, usize) {
        let set = characteristics.sql();
        match (&self.conn, &self.xid) {
            (Some(Conn::MySql(_)), _) if self.keeps_table_locks => {
                ("SET autocommit = 0".to_owned(), 1)
            }
            (Some(Conn::MySql(_)), xid) => {
                let start = match xid {
                    Some(xid) => format!("XA START {xid}"),
                    None => "START TRANSACTION".to_owned(),
                };
                match set.is_empty() {
                    true => (start, 1),
                    // MySQL takes them for the next transaction only, before it starts.
                    false => (format!("SET TRANSACTION {set}; {start}"), 2),
                }
            }
            (Some(Conn::Postgres(_)), _) => (format!("BEGIN {set}"), 1),
            _ => ("BEGIN".to_owned(), 1),
        }
    }

    /// Opens the transaction and runs `units` in it. On MySQL and PostgreSQL, when no unit has
    /// parameters, the opening statements and the units go as one multi-statement text: one
    /// round trip where each would take its own (both servers stop at the first error, which
    /// the caller answers with a rollback). Otherwise, one after the other.
    ///
    /// The error says whether the transaction may be open (so the branch is worth rolling
    /// back) or failed to begin (the branch is dropped, which closes its connection).
    pub(crate) async fn begin_and_run(
        &mut self,
        characteristics: Characteristics,
        units: &[&ExecutionUnit],
    ) -> Result<Vec<UnitResult>, (bool, sqlx::Error)> {
        let (begin, begin_results) = self.begin_sql(characteristics);
        // SQLite runs in process: there is no round trip to save.
        let batch = match &self.conn {
            Some(Conn::MySql(_) | Conn::Postgres(_)) => batch_text(Some(&begin), units),
            _ => None,
        };
        if let Some(batch) = batch {
            let done = match self.conn.as_mut() {
                Some(Conn::MySql(c)) => run_batch::<MySql>(c, &batch, begin_results, units).await,
                Some(Conn::Postgres(c)) => {
                    run_batch::<Postgres>(c, &batch, begin_results, units).await
                }
                _ => Err(sqlx::Error::PoolClosed),
            };
            return done.map_err(|e| (true, e));
        }
        self.command(&begin).await.map_err(|e| (false, e))?;
        let mut results = Vec::with_capacity(units.len());
        for unit in units {
            results.push(self.run(unit).await.map_err(|e| (true, e))?);
        }
        Ok(results)
    }

    /// The data source it runs on.
    pub(crate) fn data_source(&self) -> &str {
        &self.data_source
    }

    /// Runs one unit of a plan.
    pub(crate) async fn run(&mut self, unit: &ExecutionUnit) -> Result<UnitResult, sqlx::Error> {
        let conn = self.conn.as_mut().ok_or_else(|| sqlx::Error::PoolClosed)?;
        match conn {
            Conn::MySql(c) => run_statement::<MySql>(c, unit).await,
            Conn::Postgres(c) => run_statement::<Postgres>(c, unit).await,
            Conn::Sqlite(c) => run_statement::<Sqlite>(c, unit).await,
        }
    }

    /// Runs the branch with autocommit off rather than in a transaction it begins (see the
    /// field).
    pub(crate) fn keep_table_locks(&mut self) {
        self.keeps_table_locks = true;
    }

    /// Closes its connection, whose state is no longer known: the server rolls back what it
    /// did; any statement but a rollback then fails, so the transaction can only end.
    pub(crate) fn close_connection(&mut self) {
        if let Some(conn) = self.conn.take() {
            close(conn);
        }
    }

    /// Its connection, when the data source is PostgreSQL.
    pub(crate) fn postgres(&mut self) -> Option<&mut sqlx::postgres::PgConnection> {
        match self.conn.as_mut() {
            Some(Conn::Postgres(c)) => Some(c),
            _ => None,
        }
    }

    /// Its connection, when the data source is MySQL.
    pub(crate) fn mysql(&mut self) -> Option<&mut sqlx::mysql::MySqlConnection> {
        match self.conn.as_mut() {
            Some(Conn::MySql(c)) => Some(c),
            _ => None,
        }
    }

    /// Its connection, when the data source is SQLite.
    pub(crate) fn sqlite(&mut self) -> Option<&mut sqlx::sqlite::SqliteConnection> {
        match self.conn.as_mut() {
            Some(Conn::Sqlite(c)) => Some(c),
            _ => None,
        }
    }

    /// Sends `sql` (one or more statements) as text.
    pub(crate) async fn command(&mut self, sql: &str) -> Result<(), sqlx::Error> {
        let conn = self.conn.as_mut().ok_or_else(|| sqlx::Error::PoolClosed)?;
        on_conn!(conn, c => c.execute(sqlx::raw_sql(sql)).await.map(|_| ()))
    }

    /// Phase one: the branch's work is made durable, to be committed or rolled back later,
    /// by this instance or by any other.
    pub(crate) async fn prepare(&mut self) -> Result<(), sqlx::Error> {
        let sql = match (&self.conn, &self.xid) {
            (Some(Conn::MySql(_)), Some(xid)) => format!("XA END {xid}; XA PREPARE {xid}"),
            (Some(Conn::Postgres(_)), Some(xid)) => format!("PREPARE TRANSACTION {xid}"),
            _ => {
                return Err(sqlx::Error::Protocol(format!(
                    "data source '{}' cannot prepare a transaction",
                    self.data_source
                )));
            }
        };
        self.command(&sql).await?;
        self.prepared = true;
        // PostgreSQL keeps a prepared transaction's changes of settings on the session at once.
        if let Some(conn) = self.conn.as_mut() {
            on_conn!(conn, c => c.transaction_ended(true));
        }
        Ok(())
    }

    /// Commits: a prepared branch in phase two, an unprepared one in one phase.
    pub(crate) async fn commit(self, pool: &Pool) -> Result<(), sqlx::Error> {
        let sql = match (&self.conn, &self.xid, self.prepared) {
            (Some(Conn::MySql(_)), Some(xid), true) => format!("XA COMMIT {xid}"),
            (Some(Conn::MySql(_)), Some(xid), false) => {
                format!("XA END {xid}; XA COMMIT {xid} ONE PHASE")
            }
            (_, Some(xid), true) => format!("COMMIT PREPARED {xid}"),
            (Some(Conn::MySql(_)), _, _) if self.keeps_table_locks => {
                "COMMIT; SET autocommit = 1".to_owned()
            }
            _ => "COMMIT".to_owned(),
        };
        self.end(&sql, true, pool).await
    }

    /// Rolls back, prepared or not.
    pub(crate) async fn rollback(self, pool: &Pool) -> Result<(), sqlx::Error> {
        // A connection closed mid-transaction rolled back with it (see `close_connection`).
        if self.conn.is_none() && !self.prepared {
            return Ok(());
        }
        let sql = match (&self.conn, &self.xid, self.prepared) {
            (Some(Conn::MySql(_)), Some(xid), true) => format!("XA ROLLBACK {xid}"),
            (Some(Conn::MySql(_)), Some(xid), false) => {
                format!("XA END {xid}; XA ROLLBACK {xid}")
            }
            (_, Some(xid), true) => format!("ROLLBACK PREPARED {xid}"),
            (Some(Conn::MySql(_)), _, _) if self.keeps_table_locks => {
                "ROLLBACK; SET autocommit = 1".to_owned()
            }
            _ => "ROLLBACK".to_owned(),
        };
        self.end(&sql, false, pool).await
    }

    /// Runs a session's `SET …` in the branch, whose connection then has `settings` (at once,
    /// or when `undone` by a rollback, once the transaction commits).
    pub(crate) async fn set(
        &mut self,
        sql: &str,
        settings: Option<Arc<Settings>>,
        undone: bool,
    ) -> Result<(), sqlx::Error> {
        self.command(sql).await?;
        if let Some(conn) = self.conn.as_mut() {
            on_conn!(conn, c => c.set_in_transaction(settings, undone));
        }
        Ok(())
    }

    /// The transaction rolled back to a savepoint, which may have undone a change of settings.
    pub(crate) fn rolled_back_to_savepoint(&mut self) {
        if let Some(conn) = self.conn.as_mut() {
            on_conn!(conn, c => c.rolled_back_to_savepoint());
        }
    }

    /// Sends the statement that ends the branch and, when it went through, keeps the
    /// connection for the next statement.
    async fn end(mut self, sql: &str, committed: bool, pool: &Pool) -> Result<(), sqlx::Error> {
        self.command(sql).await?;
        if let Some(conn) = self.conn.as_mut() {
            on_conn!(conn, c => c.transaction_ended(committed));
        }
        match (self.conn.take(), pool) {
            (Some(Conn::MySql(conn)), Pool::MySql(c)) => c.release(conn),
            (Some(Conn::Postgres(conn)), Pool::Postgres(c)) => c.release(conn),
            (Some(Conn::Sqlite(conn)), Pool::Sqlite(c)) => c.release(conn),
            // Another data source's pool: never kept in the wrong one.
            (Some(other), _) => drop(other),
            (None, _) => {}
        }
        Ok(())
    }

    /// Leaves a prepared branch to recovery: the connection is closed, the branch stays.
    pub(crate) fn abandon(mut self) {
        if let Some(conn) = self.conn.take() {
            close(conn);
        }
    }
}

impl Drop for Branch {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            close(conn);
        }
    }
}

/// Closes the connection instead of giving it back to the pool with a transaction open.
fn close(conn: Conn) {
    on_conn!(conn, c => c.close());
}
