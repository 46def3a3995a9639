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
        let missing = self.give_known(results);
        if missing.is_empty() {
            return;
        }
        if let Err(e) = self.read(conn, &missing).await {
            tracing::warn!("column type modifiers not read: {e}");
            return;
        }
        self.give_known(results);
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

    /// Gives the columns of `results` the type modifiers known (and still believed); answers
    /// the origins of the others. One lock: this runs for every PostgreSQL result.
    fn give_known(&self, results: &mut [UnitResult]) -> Vec<Origin> {
        let mut missing = Vec::new();
        let mut columns = results
            .iter_mut()
            .flat_map(|r| r.columns.iter_mut())
            .filter(|c| c.pg_origin.is_some())
            .peekable();
        if columns.peek().is_none() {
            return missing;
        }
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if known.since.elapsed() > REREAD || known.by_origin.len() > MAX_KNOWN {
            known.by_origin.clear();
            known.since = Instant::now();
        }
        for column in columns {
            let Some(origin) = column.pg_origin else {
                continue;
            };
            match known.by_origin.get(&origin) {
                Some(typmod) => column.typmod = *typmod,
                None => missing.push(origin),
            }
        }
        missing.sort_unstable();
        missing.dedup();
        missing
    }

    async fn read(&self, conn: &mut PgConnection, origins: &[Origin]) -> Result<(), sqlx::Error> {
        let tables: Vec<i64> = origins.iter().map(|(table, _)| i64::from(*table)).collect();
        let numbers: Vec<i16> = origins.iter().map(|(_, number)| *number).collect();
        // Unnamed: nothing is left in the connection's statement cache.
        let rows: Vec<(i64, i16, i32)> = sqlx::query_as(
            // A column of a domain type has no modifier of its own; RowDescription gives the
            // domain's (`getBaseTypeAndTypmod`).
            "SELECT a.attrelid::int8, a.attnum, \
             CASE WHEN a.atttypmod = -1 AND t.typtype = 'd' THEN t.typtypmod \
             ELSE a.atttypmod END \
             FROM pg_catalog.pg_attribute a \
             JOIN unnest($1::int8[], $2::int2[]) AS c(rel, num) \
             ON a.attrelid = c.rel::oid AND a.attnum = c.num \
             JOIN pg_catalog.pg_type t ON t.oid = a.atttypid",
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
        let mut results = [UnitResult {
            columns: vec![
                column(Some((7, 2))),
                column(None),
                column(Some((7, 1))),
                column(Some((7, 2))),
            ],
            ..UnitResult::default()
        }];
        assert_eq!(typmods.give_known(&mut results), vec![(7, 1), (7, 2)]);
        typmods
            .known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_origin
            .insert((7, 1), 24);
        assert_eq!(typmods.give_known(&mut results), vec![(7, 2)]);
        let typmod: Vec<i32> = results[0].columns.iter().map(|c| c.typmod).collect();
        assert_eq!(typmod, [-1, -1, 24, -1]);
        // Believed for a while only: then read again.
        typmods
            .known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .since = Instant::now() - REREAD - Duration::from_secs(1);
        assert_eq!(typmods.give_known(&mut results), vec![(7, 1), (7, 2)]);
    }
}
