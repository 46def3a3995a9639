//! A gathered read (see `keyshard_router::gather`): each sharded table's rows copied from its
//! nodes into a temporary table of the logic table's name on a connection of the gathering
//! data source, the statement run there, the temporary tables dropped. What one statement may
//! gather is bounded by `props` (rows and bytes; rows only for what the database copies
//! itself).

mod columns;
mod fill;
mod literals;

use std::fmt::Write as _;

use keyshard_config::DatabaseKind;
use keyshard_router::ExecutionUnit;
use keyshard_router::gather::{Gather, GatheredTable};
use sqlx::{Executor, MySql, Postgres, Sqlite, Statement as _};

use crate::driver::Driver;
use crate::execute::run_statement;
use crate::outcome::{Column, Outcome};
use crate::reuse::Kind;
use crate::{Backend, BackendError, Pool, Transaction};
use columns::{actual_columns, restore_table_flags, tell_origins};

/// What one statement may gather: `props.gather-max-rows` and `props.gather-max-bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GatherLimits {
    /// Rows over all its tables and nodes.
    pub max_rows: u64,
    /// Bytes of those rows, as the nodes sent them.
    pub max_bytes: u64,
}

/// Rows and bytes gathered so far, against the limits.
struct Tally {
    limits: GatherLimits,
    rows: u64,
    bytes: u64,
}

impl Tally {
    fn add(&mut self, rows: u64, bytes: u64) -> Result<(), BackendError> {
        self.rows += rows;
        self.bytes += bytes;
        if self.rows > self.limits.max_rows {
            return Err(BackendError::GatherLimit {
                limit: "gather-max-rows",
                value: self.limits.max_rows,
            });
        }
        if self.bytes > self.limits.max_bytes {
            return Err(BackendError::GatherLimit {
                limit: "gather-max-bytes",
                value: self.limits.max_bytes,
            });
        }
        Ok(())
    }
}

impl Backend {
    /// Gathers `gather`'s tables and runs its statement (its rows in the binary format when
    /// `binary`); node reads run in `transaction` when there is one. With `describe`, the
    /// tables stay empty and the statement is only described: its columns and (PostgreSQL) its
    /// parameters' types.
    pub async fn gather(
        &self,
        mut transaction: Option<&mut Transaction>,
        gather: &Gather,
        binary: bool,
        describe: bool,
    ) -> Result<(Outcome, Vec<u32>), BackendError> {
        let data_source = gather.data_source.as_str();
        let failed = |e| BackendError::from_sqlx(data_source, e);
        let mut tally = Tally {
            limits: self.gather_limits,
            rows: 0,
            bytes: 0,
        };
        let mut statement = gather.statement.clone();
        statement.binary_results = binary;
        macro_rules! gathered {
            ($connections:expr, $db:ty, $fill:expr) => {{
                let connections = $connections;
                let mut conn = connections.acquire_apart().await.map_err(failed)?;
                // Its temporary tables would hide tables of the same name from whoever took
                // it next: until they are dropped, a cancelled statement closes it.
                conn.holding(true);
                let mut result = async {
                    let actual = actual_columns::<$db>(&mut conn, &gather.tables)
                        .await
                        .map_err(failed)?;
                    create::<$db>(&mut conn, &gather.tables)
                        .await
                        .map_err(failed)?;
                    if !describe {
                        for table in &gather.tables {
                            let within = transaction.as_deref_mut();
                            $fill(self, within, &mut conn, gather, table, &mut tally).await?;
                        }
                    }
                    let mut answered = answer::<$db>(&mut conn, &statement, describe)
                        .await
                        .map_err(failed)?;
                    restore_table_flags(&mut answered.0.columns, &actual);
                    let columns = &mut answered.0.columns;
                    tell_origins::<$db>(self, &mut conn, &gather.tables, columns)
                        .await
                        .map_err(failed)?;
                    Ok(answered)
                }
                .await;
                let dropped = drop_tables::<$db>(&mut conn, &gather.tables).await;
                match (&mut result, dropped) {
                    (_, Ok(())) => {
                        conn.holding(false);
                        connections.release_apart(conn);
                    }
                    (Ok(_), Err(e)) => {
                        conn.close();
                        result = Err(failed(e));
                    }
                    (Err(_), Err(_)) => conn.close(),
                }
                result
            }};
        }
        match self.pool(data_source)? {
            Pool::MySql(c) => gathered!(c, MySql, Backend::fill_by_inserts::<MySql>),
            Pool::Postgres(c) => gathered!(c, Postgres, Backend::fill_by_copy),
            Pool::Sqlite(c) => gathered!(c, Sqlite, Backend::fill_by_inserts::<Sqlite>),
        }
    }
}

/// Creates each table, empty, with the columns of the actual table it stands for.
async fn create<DB: Kind>(
    conn: &mut DB::Connection,
    tables: &[GatheredTable],
) -> Result<(), sqlx::Error> {
    let mut sql = String::new();
    for table in tables {
        let _ = write!(
            sql,
            "CREATE TEMPORARY TABLE {} AS {} LIMIT 0;",
            quoted(DB::KIND, &table.name),
            table.like
        );
    }
    DB::run_text(conn, &sql).await
}

/// Drops the tables [`create`] made, so the connection goes back as it came.
async fn drop_tables<DB: Kind>(
    conn: &mut DB::Connection,
    tables: &[GatheredTable],
) -> Result<(), sqlx::Error> {
    let mut sql = String::new();
    for table in tables {
        let name = quoted(DB::KIND, &table.name);
        let _ = match DB::KIND {
            DatabaseKind::MySql => write!(sql, "DROP TEMPORARY TABLE IF EXISTS {name};"),
            DatabaseKind::Postgres => write!(sql, "DROP TABLE IF EXISTS pg_temp.{name};"),
            DatabaseKind::Sqlite => write!(sql, "DROP TABLE IF EXISTS temp.{name};"),
        };
    }
    DB::run_text(conn, &sql).await
}

/// Runs (or with `describe`, only describes) the gathered statement.
async fn answer<D: Driver + Kind>(
    conn: &mut D::Connection,
    statement: &ExecutionUnit,
    describe: bool,
) -> Result<(Outcome, Vec<u32>), sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
{
    let mut outcome = Outcome::default();
    if !describe {
        let result = run_statement::<D>(conn, statement).await?;
        outcome.affected_rows = result.affected_rows;
        outcome.columns = result.columns;
        outcome.rows = result.rows;
    }
    let mut params = Vec::new();
    if outcome.columns.is_empty() {
        // No row, so no columns came: the statement's description has them. Its own key
        // (a line added) keeps it apart from the execution's cached statement.
        let key = format!("{}\n", statement.sql);
        let described = conn.prepare(&key).await?;
        outcome.columns = described
            .columns()
            .iter()
            .map(D::column)
            .collect::<Vec<Column>>();
        params = D::parameter_oids(&described);
    }
    Ok((outcome, params))
}

fn quoted(kind: DatabaseKind, name: &str) -> String {
    let quote = match kind {
        DatabaseKind::MySql => '`',
        DatabaseKind::Postgres | DatabaseKind::Sqlite => '"',
    };
    let mut out = String::with_capacity(name.len() + 2);
    keyshard_router::names::push_identifier(&mut out, name, Some(quote));
    out
}
