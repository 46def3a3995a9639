//! PostgreSQL type modifiers of result columns: `varchar(20)`'s 24, `numeric(10,2)`'s 655366,
//! `timestamp(3)`'s 3. A shard's RowDescription carries them, but sqlx drops them while it
//! keeps each column's table and attribute number; a direct client reads them there (Django's
//! `inspectdb` writes `max_length` from them, JDBC's `getPrecision` and `getScale` answer from
//! them). They are read from `pg_attribute` by table and attribute number, on the connection
//! that ran the statement (as sqlx reads a type it has not met), once per column and data
//! source, and read again after [`REREAD`] so that a column altered beside the proxy is not
//! described by its old type for long.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use sqlx::postgres::PgConnection;

use crate::outcome::{Column, UnitResult};

/// How long a type modifier is believed before it is read again.
const REREAD: Duration = Duration::from_secs(30);
/// Columns remembered per data source; past that the memory starts over.
const MAX_KNOWN: usize = 10_000;

/// A table column: its table's OID and its attribute number.
pub(crate) type Origin = (u32, i16);

/// One data source's type modifiers, by the column they belong to.
#[derive(Debug)]
pub(crate) struct Typmods {
    known: Mutex<Known>,
}

#[derive(Debug)]
struct Known {
    by_origin: HashMap<Origin, i32, foldhash::fast::RandomState>,
    since: Instant,
}

impl Default for Typmods {
    fn default() -> Self {
        Self {
            known: Mutex::new(Known {
                by_origin: HashMap::default(),
                since: Instant::now(),
            }),
        }
    }
}

impl Typmods {
    /// Gives each column of `results` that comes from a table its type modifier, reading the
    /// ones not known yet on `conn`, which is between statements. A failed read leaves them
    /// without one (-1, as for an expression) rather than fail a statement that ran: the
    /// client is told what it did.
    pub(crate) async fn describe(&self, conn: &mut PgConnection, results: &mut [UnitResult]) {
        let columns = || results.iter().flat_map(|r| r.columns.iter());
        if columns().all(|c| c.pg_origin.is_none()) {
            return;
        }
        let missing = self.missing(columns());
        if !missing.is_empty()
            && let Err(e) = self.read(conn, &missing).await
        {
            tracing::warn!("column type modifiers not read: {e}");
            return;
        }
        let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        for column in results.iter_mut().flat_map(|r| r.columns.iter_mut()) {
            column.typmod = known.typmod(column);
        }
    }

    /// [`Self::describe`] for the columns of one statement's description.
    pub(crate) async fn describe_columns(
        &self,
        conn: &mut PgConnection,
        columns: Vec<Column>,
    ) -> Vec<Column> {
        let mut results = [UnitResult {
            columns,
            ..UnitResult::default()
        }];
        self.describe(conn, &mut results).await;
        let [result] = results;
        result.columns
    }

    /// The origins among `columns` not known (or no longer believed).
    fn missing<'a>(&self, columns: impl Iterator<Item = &'a Column>) -> Vec<Origin> {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if known.since.elapsed() > REREAD || known.by_origin.len() > MAX_KNOWN {
            known.by_origin.clear();
            known.since = Instant::now();
        }
        let mut missing: Vec<Origin> = columns
            .filter_map(|c| c.pg_origin)
            .filter(|origin| !known.by_origin.contains_key(origin))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        missing
    }

    async fn read(&self, conn: &mut PgConnection, origins: &[Origin]) -> Result<(), sqlx::Error> {
        let tables: Vec<i64> = origins.iter().map(|(table, _)| i64::from(*table)).collect();
        let numbers: Vec<i16> = origins.iter().map(|(_, number)| *number).collect();
        // Unnamed: nothing is left in the connection's statement cache.
        let rows: Vec<(i64, i16, i32)> = sqlx::query_as(
            "SELECT a.attrelid::int8, a.attnum, a.atttypmod \
             FROM pg_catalog.pg_attribute a \
             JOIN unnest($1::int8[], $2::int2[]) AS c(rel, num) \
             ON a.attrelid = c.rel::oid AND a.attnum = c.num",
        )
        .bind(tables)
        .bind(numbers)
        .persistent(false)
        .fetch_all(conn)
        .await?;
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        // A column no longer there (dropped since) is remembered as having no modifier.
        for origin in origins {
            known.by_origin.insert(*origin, -1);
        }
        for (table, number, typmod) in rows {
            if let Ok(table) = u32::try_from(table) {
                known.by_origin.insert((table, number), typmod);
            }
        }
        Ok(())
    }
}

impl Known {
    fn typmod(&self, column: &Column) -> i32 {
        column
            .pg_origin
            .and_then(|origin| self.by_origin.get(&origin).copied())
            .unwrap_or(-1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SqlType;

    fn column(origin: Option<Origin>) -> Column {
        let mut column = Column::new("c", SqlType::Text);
        column.pg_origin = origin;
        column
    }

    #[test]
    fn only_unknown_table_columns_are_read_and_each_once() {
        let typmods = Typmods::default();
        let columns = [
            column(Some((7, 2))),
            column(None),
            column(Some((7, 1))),
            column(Some((7, 2))),
        ];
        assert_eq!(typmods.missing(columns.iter()), vec![(7, 1), (7, 2)]);
        {
            let mut known = typmods.known.lock().unwrap_or_else(PoisonError::into_inner);
            known.by_origin.insert((7, 1), 24);
            assert_eq!(known.typmod(&columns[2]), 24);
            assert_eq!(known.typmod(&columns[1]), -1);
        }
        assert_eq!(typmods.missing(columns.iter()), vec![(7, 2)]);
        // Believed for a while only: then read again.
        typmods
            .known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .since = Instant::now() - REREAD - Duration::from_secs(1);
        assert_eq!(typmods.missing(columns.iter()), vec![(7, 1), (7, 2)]);
    }
}
