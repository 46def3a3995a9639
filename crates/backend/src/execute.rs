//! Runs a plan's units: one unit on a pooled connection; several in one local transaction per
//! data source, committed on all of them only when every unit succeeded.

use std::future::Future;
use std::pin::Pin;

use futures_util::TryStreamExt;
use futures_util::future::join_all;
use keyshard_router::{ExecutionUnit, Value};
use sqlx::{Column as _, Either, Executor, IntoArguments, Row, Transaction};

use crate::driver::Driver;
use crate::outcome::{Column, UnitResult};
use crate::reuse::Connections;
use crate::{BackendError, Pool};

/// Runs one statement: as plain text when it has no parameters (one round trip), otherwise
/// as a prepared statement with typed binds, cached on the connection.
pub(crate) async fn run_statement<D: Driver>(
    conn: &mut D::Connection,
    sql: &str,
    params: &[Value],
) -> Result<UnitResult, sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: IntoArguments<'q, D>,
{
    let mut stream = if params.is_empty() {
        conn.fetch_many(sqlx::raw_sql(sql))
    } else {
        let mut query = sqlx::query::<D>(sql);
        for param in params {
            query = D::bind(query, param);
        }
        conn.fetch_many(query)
    };
    let mut result = UnitResult::default();
    while let Some(item) = stream.try_next().await? {
        match item {
            Either::Left(done) => result.affected_rows += D::rows_affected(&done),
            Either::Right(row) => {
                if result.columns.is_empty() {
                    result.columns = row
                        .columns()
                        .iter()
                        .map(|c| Column {
                            name: c.name().to_owned(),
                            type_name: c.type_info().to_string(),
                        })
                        .collect();
                }
                let values = (0..row.len())
                    .map(|i| D::decode(&row, i))
                    .collect::<Result<Vec<_>, _>>()?;
                result.rows.push(values);
            }
        }
    }
    Ok(result)
}

async fn run_units<D: Driver>(
    conn: &mut D::Connection,
    units: &[&ExecutionUnit],
) -> Result<Vec<UnitResult>, sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: IntoArguments<'q, D>,
{
    let mut results = Vec::with_capacity(units.len());
    for unit in units {
        results.push(run_statement::<D>(conn, &unit.sql, &unit.params).await?);
    }
    Ok(results)
}

/// Runs `units` (all on `pool`) on one connection in autocommit mode.
pub(crate) async fn autocommit(
    pool: &Pool,
    units: &[&ExecutionUnit],
) -> Result<Vec<UnitResult>, sqlx::Error> {
    match pool {
        Pool::MySql(c) => kept(c, units).await,
        Pool::Postgres(c) => kept(c, units).await,
        Pool::Sqlite(c) => kept(c, units).await,
    }
}

/// Runs `units` on a kept connection, keeping it again when they all succeeded.
async fn kept<D: Driver>(
    connections: &Connections<D>,
    units: &[&ExecutionUnit],
) -> Result<Vec<UnitResult>, sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: IntoArguments<'q, D>,
{
    let mut conn = connections.acquire().await?;
    let results = run_units::<D>(&mut conn, units).await?;
    connections.release(conn);
    Ok(results)
}

/// An open local transaction on one data source.
pub(crate) enum Tx {
    MySql(Transaction<'static, sqlx::MySql>),
    Postgres(Transaction<'static, sqlx::Postgres>),
    Sqlite(Transaction<'static, sqlx::Sqlite>),
}

impl Tx {
    pub(crate) async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Tx::MySql(tx) => tx.commit().await,
            Tx::Postgres(tx) => tx.commit().await,
            Tx::Sqlite(tx) => tx.commit().await,
        }
    }

    pub(crate) async fn rollback(self) -> Result<(), sqlx::Error> {
        match self {
            Tx::MySql(tx) => tx.rollback().await,
            Tx::Postgres(tx) => tx.rollback().await,
            Tx::Sqlite(tx) => tx.rollback().await,
        }
    }
}

type InTx<'a> =
    Pin<Box<dyn Future<Output = Result<(Tx, Vec<UnitResult>), sqlx::Error>> + Send + 'a>>;

/// Begins a transaction on `pool` and runs `units` in it, leaving it open.
pub(crate) fn in_transaction<'a>(pool: &'a Pool, units: &'a [&'a ExecutionUnit]) -> InTx<'a> {
    async fn begin_and_run<D: Driver>(
        pool: &sqlx::Pool<D>,
        units: &[&ExecutionUnit],
    ) -> Result<(Transaction<'static, D>, Vec<UnitResult>), sqlx::Error>
    where
        for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
        for<'q> D::Arguments<'q>: IntoArguments<'q, D>,
    {
        let mut tx = pool.begin().await?;
        let results = run_units::<D>(&mut tx, units).await?;
        Ok((tx, results))
    }
    match pool {
        Pool::MySql(c) => Box::pin(async move {
            begin_and_run(c.pool(), units)
                .await
                .map(|(tx, r)| (Tx::MySql(tx), r))
        }),
        Pool::Postgres(c) => Box::pin(async move {
            begin_and_run(c.pool(), units)
                .await
                .map(|(tx, r)| (Tx::Postgres(tx), r))
        }),
        Pool::Sqlite(c) => Box::pin(async move {
            begin_and_run(c.pool(), units)
                .await
                .map(|(tx, r)| (Tx::Sqlite(tx), r))
        }),
    }
}

/// The units of one statement that run on one data source.
pub(crate) struct Group<'a> {
    pub(crate) data_source: &'a str,
    pub(crate) pool: &'a Pool,
    pub(crate) units: Vec<&'a ExecutionUnit>,
    /// Each unit's position in the plan.
    pub(crate) positions: Vec<usize>,
}

/// Runs each group's units in its own transaction, all data sources at once, then commits
/// every transaction if every unit succeeded, or rolls every one back. Returns the results in
/// the plan's unit order.
pub(crate) async fn atomically(
    groups: &[Group<'_>],
    unit_count: usize,
) -> Result<Vec<UnitResult>, BackendError> {
    let attempts = join_all(groups.iter().map(|g| in_transaction(g.pool, &g.units))).await;
    let mut open = Vec::with_capacity(attempts.len());
    let mut error = None;
    for (attempt, group) in attempts.into_iter().zip(groups) {
        match attempt {
            Ok((tx, results)) => open.push((group, tx, results)),
            Err(e) if error.is_none() => {
                error = Some(BackendError::from_sqlx(group.data_source, e))
            }
            Err(_) => {}
        }
    }
    if let Some(error) = error {
        // Best effort: a rollback that fails leaves the connection to be closed by the pool,
        // which rolls the transaction back server-side.
        join_all(open.into_iter().map(|(_, tx, _)| tx.rollback())).await;
        return Err(error);
    }
    let mut ordered: Vec<UnitResult> = (0..unit_count).map(|_| UnitResult::default()).collect();
    let mut commits = Vec::with_capacity(open.len());
    for (group, tx, results) in open {
        for (position, result) in group.positions.iter().zip(results) {
            ordered[*position] = result;
        }
        commits.push(async move {
            tx.commit()
                .await
                .map_err(|e| BackendError::from_sqlx(group.data_source, e))
        });
    }
    // A commit that fails after others succeeded cannot be undone without XA; it is reported.
    join_all(commits)
        .await
        .into_iter()
        .collect::<Result<Vec<()>, _>>()?;
    Ok(ordered)
}
