//! Runs a plan's units: one unit on a pooled connection; several in one local transaction per
//! data source, committed on all of them only when every unit succeeded.

use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::TryStreamExt;
use futures_util::future::join_all;
use keyshard_router::{ExecutionUnit, Value};
use sqlx::{Column as _, Connection, Either, Executor, IntoArguments, Row};
use tokio::sync::{Barrier, oneshot};

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

/// The result columns of `sql`, from the database's description of it.
pub(crate) async fn describe(pool: &Pool, sql: &str) -> Result<Vec<Column>, sqlx::Error> {
    async fn columns<D: Driver>(
        conn: &mut D::Connection,
        sql: &str,
    ) -> Result<Vec<Column>, sqlx::Error>
    where
        for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    {
        let description = conn.describe(sql).await?;
        Ok(description
            .columns()
            .iter()
            .map(|c| Column {
                name: c.name().to_owned(),
                type_name: c.type_info().to_string(),
            })
            .collect())
    }
    match pool {
        Pool::MySql(c) => {
            c.with(async |conn| columns::<sqlx::MySql>(conn, sql).await)
                .await
        }
        Pool::Postgres(c) => {
            c.with(async |conn| columns::<sqlx::Postgres>(conn, sql).await)
                .await
        }
        Pool::Sqlite(c) => {
            c.with(async |conn| columns::<sqlx::Sqlite>(conn, sql).await)
                .await
        }
    }
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
        Pool::MySql(c) => {
            c.with(async |conn| run_units::<sqlx::MySql>(conn, units).await)
                .await
        }
        Pool::Postgres(c) => {
            c.with(async |conn| run_units::<sqlx::Postgres>(conn, units).await)
                .await
        }
        Pool::Sqlite(c) => {
            c.with(async |conn| run_units::<sqlx::Sqlite>(conn, units).await)
                .await
        }
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

/// A data source's place in the order in which a statement takes its connections.
struct Turn {
    mine: oneshot::Receiver<()>,
    next: Option<oneshot::Sender<()>>,
}

/// What the data sources of one statement agree on before committing: every one runs its units
/// in a local transaction, says whether they succeeded, and waits for the others.
struct Vote {
    all_in: Barrier,
    failed: AtomicBool,
}

impl Vote {
    /// Casts this data source's vote and waits for the others': whether to commit.
    async fn commit(&self, succeeded: bool) -> bool {
        if !succeeded {
            self.failed.store(true, Ordering::SeqCst);
        }
        self.all_in.wait().await;
        !self.failed.load(Ordering::SeqCst)
    }
}

/// Runs each group's units in a local transaction on its data source, all data sources at
/// once, and commits every transaction only if every unit succeeded; otherwise rolls every one
/// back. Returns the results in the plan's unit order.
pub(crate) async fn atomically(
    groups: &[Group<'_>],
    unit_count: usize,
) -> Result<Vec<UnitResult>, BackendError> {
    let vote = Vote {
        all_in: Barrier::new(groups.len()),
        failed: AtomicBool::new(false),
    };
    // Connections are taken one data source after the other, in data node order — one order
    // for every statement — so two statements never hold one shard each while waiting for the
    // other's (with small pools that would stall both until the acquire time-out).
    let (turns, waits): (Vec<_>, Vec<_>) =
        (0..groups.len()).map(|_| oneshot::channel::<()>()).unzip();
    let mut turns = turns.into_iter();
    if let Some(first) = turns.next() {
        let _ = first.send(());
    }
    let next_turns = turns.map(Some).chain(std::iter::once(None));
    let parts = groups
        .iter()
        .zip(waits)
        .zip(next_turns)
        .map(|((group, mine), next)| {
            let vote = &vote;
            async move {
                let turn = Turn { mine, next };
                let result: Result<Option<Vec<UnitResult>>, sqlx::Error> = match group.pool {
                    Pool::MySql(c) => in_transaction(c, &group.units, turn, vote).await,
                    Pool::Postgres(c) => in_transaction(c, &group.units, turn, vote).await,
                    Pool::Sqlite(c) => in_transaction(c, &group.units, turn, vote).await,
                };
                result.map_err(|e| BackendError::from_sqlx(group.data_source, e))
            }
        });
    let outcomes = join_all(parts).await;
    let mut ordered: Vec<UnitResult> = (0..unit_count).map(|_| UnitResult::default()).collect();
    let mut first_error = None;
    for (outcome, group) in outcomes.into_iter().zip(groups) {
        match outcome {
            Ok(Some(results)) => {
                for (position, result) in group.positions.iter().zip(results) {
                    ordered[*position] = result;
                }
            }
            // Rolled back because another data source failed: that one says why.
            Ok(None) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(error) => Err(error),
        // Every data source voted to commit, so none was rolled back for another's failure.
        None => Ok(ordered),
    }
}

/// One data source's part: begin, run the units, vote, then commit or roll back; `Ok(None)`
/// when it rolled back because another data source failed. The connection is kept for later
/// statements when all of that went through. Should this future be dropped half-way, sqlx's
/// transaction guard rolls back before the connection is used again.
async fn in_transaction<D: Driver>(
    connections: &Connections<D>,
    units: &[&ExecutionUnit],
    turn: Turn,
    vote: &Vote,
) -> Result<Option<Vec<UnitResult>>, sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: IntoArguments<'q, D>,
{
    // A closed channel means an earlier data source's part was dropped: go on regardless.
    let _ = turn.mine.await;
    let acquired = connections.acquire().await;
    if let Some(next) = turn.next {
        let _ = next.send(());
    }
    let mut conn = match acquired {
        Ok(conn) => conn,
        Err(e) => {
            vote.commit(false).await;
            return Err(e);
        }
    };
    let mut tx = match conn.begin().await {
        Ok(tx) => tx,
        Err(e) => {
            vote.commit(false).await;
            return Err(e);
        }
    };
    let results = run_units::<D>(&mut tx, units).await;
    let commit = vote.commit(results.is_ok()).await;
    let results = match (results, commit) {
        (Ok(results), true) => {
            tx.commit().await?;
            Some(results)
        }
        // A rollback that fails leaves the connection to sqlx, which retires it; the error
        // worth reporting is the statement's, not the rollback's.
        (Ok(_), false) => match tx.rollback().await {
            Ok(()) => None,
            Err(_) => return Ok(None),
        },
        (Err(e), _) => {
            let _ = tx.rollback().await;
            return Err(e);
        }
    };
    connections.release(conn);
    Ok(results)
}
