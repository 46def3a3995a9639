//! Runs units on one connection and reads their results: a statement as text or prepared,
//! several as one multi-statement text, a read without a statement's rows (describe). Several
//! data sources' units together, all or nothing, are `atomic`'s.

use futures_util::TryStreamExt;
use keyshard_router::ExecutionUnit;
use keyshard_types::Value;
use sqlx::{Connection as _, Either, Executor, IntoArguments, Row, Statement as _};

use crate::Pool;
use crate::driver::{Driver, arguments};
use crate::outcome::{Column, UnitResult};
use crate::stream::UnitRows;

/// A statement this long (text and parameters) leaves the connection's buffers grown to its
/// size: they are given back after it.
const GROWS_BUFFERS: usize = 1 << 20;

/// Runs one unit: as plain text when it has no parameters (one round trip, results in the
/// text format), otherwise, or when the client reads results in a binary format, as a
/// prepared statement with typed binds, cached on the connection (results in the binary
/// format).
pub(crate) async fn run_statement<D: Driver>(
    conn: &mut D::Connection,
    unit: &ExecutionUnit,
) -> Result<UnitResult, sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: IntoArguments<'q, D>,
{
    run_statement_as::<D>(conn, unit, unit).await
}

/// As [`run_statement`], its rows kept and counted as `rows_of`'s: a combined read's, whose
/// statement is none of the plan's units (see `combined`).
pub(crate) async fn run_statement_as<D: Driver>(
    conn: &mut D::Connection,
    unit: &ExecutionUnit,
    rows_of: &ExecutionUnit,
) -> Result<UnitResult, sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: IntoArguments<'q, D>,
{
    let result = run_unit::<D>(conn, unit, rows_of).await;
    // Kept grown, the driver's buffers would hold a long statement's size for as long as the
    // pooled connection lives, outside every budget. Not after every statement: shrinking
    // reallocates them.
    let size = unit.sql.len() + unit.params.iter().map(Value::size).sum::<usize>();
    if size > GROWS_BUFFERS {
        conn.shrink_buffers();
    }
    result
}

async fn run_unit<D: Driver>(
    conn: &mut D::Connection,
    unit: &ExecutionUnit,
    rows_of: &ExecutionUnit,
) -> Result<UnitResult, sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: IntoArguments<'q, D>,
{
    let (sql, params) = (unit.sql.as_str(), unit.params.as_slice());
    let binary = !params.is_empty() || unit.binary_results;
    let shard_sql;
    let mut stream = if !binary {
        conn.fetch_many(sqlx::raw_sql(sql))
    } else {
        shard_sql = D::shard_sql(sql, params);
        let sql = &*shard_sql;
        D::fit_cache(conn, sql, params).await?;
        conn.fetch_many(sqlx::query_with::<D, _>(sql, arguments::<D>(params)?))
    };
    // A unit of the read in flight: its rows go to the client as they come, or are kept
    // within the read's limit (see `stream`).
    let mut reading = Reading {
        out: UnitRows::of(rows_of),
        ..Reading::default()
    };
    while let Some(item) = stream.try_next().await? {
        match item {
            Either::Left(done) => {
                reading.result.affected_rows += D::rows_affected(&done);
                // A multi-statement text's next result has columns of its own.
                reading.decoding.clear();
            }
            Either::Right(row) => {
                if reading.push::<D>(Some(unit), &row, binary)? {
                    reading.send().await?;
                }
                // Rows arrive faster than the socket's reads count against the runtime's
                // budget: a long result must let other sessions' statements run between rows.
                tokio::task::consume_budget().await;
            }
        }
    }
    drop(stream);
    let mut result = reading.result;
    if let Some(out) = reading.out {
        out.finish(&mut result).await?;
    }
    if binary {
        D::complete(conn, &mut result).await?;
    }
    Ok(result)
}

/// One unit's result as its rows arrive.
#[derive(Default)]
struct Reading {
    result: UnitResult,
    /// How each column is decoded, learnt from its first value (see `Driver::decode`).
    decoding: Vec<Option<u8>>,
    /// Where the rows go when the unit belongs to the read in flight (see `stream`).
    out: Option<UnitRows>,
    /// Whether the result's columns were taken, from its first row: a unit of several
    /// statements keeps its first statement's.
    described: bool,
}

impl Reading {
    /// Adds a row of `unit` in the `binary` format (and, with the first, the columns); `true`
    /// when a batch of rows is ready to go out (see [`Reading::send`]).
    fn push<D: Driver>(
        &mut self,
        unit: Option<&ExecutionUnit>,
        row: &D::Row,
        binary: bool,
    ) -> Result<bool, sqlx::Error> {
        let result = &mut self.result;
        if !self.described {
            self.described = true;
            result.columns = row.columns().iter().map(D::column).collect();
            if let Some(out) = &mut self.out {
                // Values completed after the result cannot go out before it ends.
                if binary && D::completes(&result.columns) {
                    out.keep();
                } else if let Some(unit) = unit {
                    // The result's columns go out with its first rows.
                    out.describe(unit, &mut result.columns);
                }
            }
        }
        self.decoding.resize(row.len(), None);
        // Sized once: collecting through `Result` would start small and grow a wide row's.
        let mut values = Vec::with_capacity(row.len());
        for (i, first) in self.decoding.iter_mut().enumerate() {
            values.push(D::decode(row, i, first, binary)?);
        }
        match &mut self.out {
            Some(out) => out.push(values, &mut result.rows),
            None => {
                result.rows.push(values);
                Ok(false)
            }
        }
    }

    /// Sends the ready batch, waiting while the client is behind.
    async fn send(&mut self) -> Result<(), sqlx::Error> {
        match &mut self.out {
            Some(out) => out.send().await,
            None => Ok(()),
        }
    }
}

/// Runs a multi-statement text whose first `skip` statements answer nothing wanted and each
/// of the next statements is one of `units` (see [`batch_text`]): every statement's end
/// (MySQL's OK or EOF, PostgreSQL's CommandComplete) closes one result, with the rows that
/// came before it.
pub(crate) async fn run_batch<D: Driver>(
    conn: &mut D::Connection,
    sql: &str,
    skip: usize,
    units: &[&ExecutionUnit],
) -> Result<Vec<UnitResult>, sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
{
    let mut stream = conn.fetch_many(sqlx::raw_sql(sql));
    let mut skip = skip;
    let mut results = Vec::with_capacity(units.len());
    let mut reading = Reading::default();
    while let Some(item) = stream.try_next().await? {
        match item {
            Either::Left(_) if skip > 0 => {
                skip -= 1;
                reading.decoding.clear();
            }
            Either::Left(done) => {
                let mut result = std::mem::take(&mut reading.result);
                result.affected_rows += D::rows_affected(&done);
                if let Some(out) = reading.out.take() {
                    out.finish(&mut result).await?;
                }
                results.push(result);
                reading.decoding.clear();
                reading.described = false;
            }
            Either::Right(row) => {
                let unit = units.get(results.len()).copied();
                // A unit's first row: where its rows go.
                if !reading.described {
                    reading.out = unit.and_then(UnitRows::of);
                }
                if reading.push::<D>(unit, &row, false)? {
                    reading.send().await?;
                }
                tokio::task::consume_budget().await;
            }
        }
    }
    if results.len() != units.len() {
        return Err(sqlx::Error::Protocol(format!(
            "{} statements sent together answered {} results",
            units.len(),
            results.len()
        )));
    }
    Ok(results)
}

/// `begin` (if any) and the units' texts as one multi-statement text, for a MySQL or
/// PostgreSQL connection, when every unit is plain text; `None` otherwise.
///
/// Each unit is ended by a line break and `;`, so that a trailing line comment cannot swallow
/// the separator; a unit's own final `;` is dropped first, since an empty statement is an
/// error on MySQL. A unit whose tail after its last quote holds a `;` or a comment opener is
/// not batched (it may end `…; -- note`, which would leave an empty statement between).
pub(crate) fn batch_text(begin: Option<&str>, units: &[&ExecutionUnit]) -> Option<String> {
    if units.is_empty()
        || units
            .iter()
            .any(|u| !u.params.is_empty() || u.binary_results)
    {
        return None;
    }
    let mut texts = Vec::with_capacity(units.len());
    for unit in units {
        let sql = unit.sql.trim_end();
        let sql = sql.strip_suffix(';').unwrap_or(sql).trim_end();
        if sql.is_empty() || !ends_plainly(sql.as_bytes()) {
            return None;
        }
        texts.push(sql);
    }
    let begin = begin.unwrap_or_default();
    let mut batch =
        String::with_capacity(begin.len() + texts.iter().map(|t| t.len() + 3).sum::<usize>() + 2);
    batch.push_str(begin);
    for text in texts {
        if !batch.is_empty() {
            batch.push_str(";\n");
        }
        batch.push_str(text);
        batch.push('\n');
    }
    Some(batch)
}

/// Whether `sql`'s tail after its last quote holds no `;`, `#`, `--` or `/*`. Every merge and
/// bulk INSERT batches its units through here: memchr finds the few bytes that decide.
pub(crate) fn ends_plainly(sql: &[u8]) -> bool {
    let quote = memchr::memrchr3(b'\'', b'"', b'`', sql).max(memchr::memrchr(b'$', sql));
    let tail = quote.map_or(sql, |at| &sql[at + 1..]);
    memchr::memchr2(b';', b'#', tail).is_none()
        && !memchr::memchr2_iter(b'-', b'/', tail).any(|at| {
            matches!(
                (tail[at], tail.get(at + 1)),
                (b'-', Some(b'-')) | (b'/', Some(b'*'))
            )
        })
}

/// The result columns of `sql`, from the database's description of it, and (PostgreSQL) the
/// type OIDs it gives the parameters.
pub(crate) async fn describe(
    pool: &Pool,
    sql: &str,
) -> Result<(Vec<Column>, Vec<u32>), sqlx::Error> {
    async fn columns<D: Driver>(
        conn: &mut D::Connection,
        sql: &str,
    ) -> Result<(Vec<Column>, Vec<u32>), sqlx::Error>
    where
        for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    {
        let description = conn.describe(sql).await?;
        let columns = description.columns().iter().map(D::column).collect();
        Ok((columns, Vec::new()))
    }
    match pool {
        Pool::MySql(c) => {
            c.with(async |conn| columns::<sqlx::MySql>(conn, sql).await)
                .await
        }
        // sqlx's describe on PostgreSQL adds an EXPLAIN (VERBOSE, FORMAT JSON) round trip for
        // the columns' nullability, which is not used: the prepared statement's columns are
        // what is needed (each read that finds no row asks for them).
        // The statement is kept under its own key (a line added): sqlx finds a cached statement
        // by its text alone, and PostgreSQL's inferred parameter types, which a describe
        // reports, are not the types an execution binds, which its cached statement has.
        Pool::Postgres(c) => {
            c.with(async |conn| {
                let key = format!("{sql}\n");
                let statement = conn.prepare(&key).await?;
                let columns = statement
                    .columns()
                    .iter()
                    .map(<sqlx::Postgres as Driver>::column)
                    .collect();
                let params = match statement.parameters() {
                    Some(sqlx::Either::Left(types)) => types
                        .iter()
                        .map(|t| t.oid().map_or(0, |oid| oid.0))
                        .collect(),
                    _ => Vec::new(),
                };
                Ok((columns, params))
            })
            .await
        }
        Pool::Sqlite(c) => {
            c.with(async |conn| columns::<sqlx::Sqlite>(conn, sql).await)
                .await
        }
    }
}

/// Runs `units` on one connection: as one multi-statement text when they are plain text and
/// the database is not SQLite (which runs in process), else one after the other.
async fn run_units<D: Driver>(
    conn: &mut D::Connection,
    units: &[&ExecutionUnit],
) -> Result<Vec<UnitResult>, sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: IntoArguments<'q, D>,
{
    if D::KIND != keyshard_config::DatabaseKind::Sqlite
        && units.len() > 1
        && let Some(text) = batch_text(None, units)
    {
        return run_batch::<D>(conn, &text, 0, units).await;
    }
    let mut results = Vec::with_capacity(units.len());
    for unit in units {
        let result = run_in_autocommit::<D>(conn, unit, unit).await?;
        results.push(result);
    }
    Ok(results)
}

/// PostgreSQL's refusal of a cached statement whose result columns changed.
fn is_stale_plan(e: &sqlx::Error) -> bool {
    e.as_database_error().is_some_and(|e| {
        e.code().as_deref() == Some("0A000")
            && e.message()
                .starts_with("cached plan must not change result type")
    })
}

/// Runs `$run::<D>(conn, …)` on a connection taken from `$pool`, `D` its database's driver.
macro_rules! on_connection {
    ($pool:expr, $run:ident($($arg:expr),*)) => {
        match $pool {
            Pool::MySql(c) => {
                c.with(async |conn| $run::<sqlx::MySql>(conn, $($arg),*).await)
                    .await
            }
            Pool::Postgres(c) => {
                c.with(async |conn| $run::<sqlx::Postgres>(conn, $($arg),*).await)
                    .await
            }
            Pool::Sqlite(c) => {
                c.with(async |conn| $run::<sqlx::Sqlite>(conn, $($arg),*).await)
                    .await
            }
        }
    };
}

/// Runs `units` (all on `pool`) on one connection in autocommit mode; on MySQL and
/// PostgreSQL, several plain-text units go in one round trip (SQLite runs in process: there is
/// no round trip to save). PostgreSQL runs such a text in one implicit transaction.
pub(crate) async fn autocommit(
    pool: &Pool,
    units: &[&ExecutionUnit],
) -> Result<Vec<UnitResult>, sqlx::Error> {
    on_connection!(pool, run_units(units))
}

/// Runs `combined`, several units' read as one statement (see `combined`), in autocommit
/// mode; its rows are kept, and counted, as `first`'s.
pub(crate) async fn read_combined(
    pool: &Pool,
    combined: &ExecutionUnit,
    first: &ExecutionUnit,
) -> Result<UnitResult, sqlx::Error> {
    on_connection!(pool, run_in_autocommit(combined, first))
}

/// Runs `unit` outside a transaction (see [`run_statement_as`]). The table's columns changed
/// since this connection prepared the statement (DDL through the proxy or beside it)?
/// PostgreSQL refused it before it ran, so it runs again, prepared anew.
async fn run_in_autocommit<D: Driver>(
    conn: &mut D::Connection,
    unit: &ExecutionUnit,
    rows_of: &ExecutionUnit,
) -> Result<UnitResult, sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: IntoArguments<'q, D>,
{
    match run_statement_as::<D>(conn, unit, rows_of).await {
        Err(e) if is_stale_plan(&e) => {
            sqlx::Connection::clear_cached_statements(&mut *conn).await?;
            run_statement_as::<D>(conn, unit, rows_of).await
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(sql: &str) -> ExecutionUnit {
        ExecutionUnit {
            data_source: "ds_0".into(),
            table: String::new(),
            sql: sql.into(),
            params: Vec::new(),
            rows: Vec::new(),
            binary_results: false,
        }
    }

    #[test]
    fn units_join_into_one_text_only_when_plain() {
        let (a, b) = (unit("SELECT 1 FROM t_0;"), unit("SELECT 2 FROM t_1 -- x\n"));
        assert_eq!(
            batch_text(Some("BEGIN"), &[&a, &a]).as_deref(),
            Some("BEGIN;\nSELECT 1 FROM t_0\n;\nSELECT 1 FROM t_0\n")
        );
        // A read's units, without an opening statement: no empty statement first.
        assert_eq!(
            batch_text(None, &[&a, &a]).as_deref(),
            Some("SELECT 1 FROM t_0\n;\nSELECT 1 FROM t_0\n")
        );
        // A trailing comment, or parameters, keep the units apart.
        assert_eq!(batch_text(None, &[&a, &b]), None);
        let mut with_params = unit("SELECT ?");
        with_params.params.push(keyshard_types::Value::Int(1));
        assert_eq!(batch_text(None, &[&a, &with_params]), None);
    }

    #[test]
    fn only_the_tail_after_the_last_quote_must_be_plain() {
        for plain in [
            "SELECT 'a;b' FROM t",
            "SELECT '--', \"/*\" FROM t",
            "SELECT a - -1, 2 / 3",
        ] {
            assert!(ends_plainly(plain.as_bytes()), "{plain}");
        }
        for not in [
            "SELECT 1; SELECT 2",
            "SELECT 'x' -- c",
            "SELECT 1 # c",
            "SELECT `a` /* c */",
        ] {
            assert!(!ends_plainly(not.as_bytes()), "{not}");
        }
    }
}
