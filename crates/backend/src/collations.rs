//! The collation of each text column a merge compares: it decides how the shards sorted the
//! column and which of its values are one group, and the protocol does not carry it. MySQL
//! describes a text column in the connection's collation, not its own: it is read from
//! `information_schema.COLUMNS`, a table's columns at once, per data source, and read again
//! after [`REREAD`] so that a column altered beside the proxy is not compared by its old
//! collation for long. PostgreSQL text takes its database's collation (a column declared with
//! another is not told apart): read once per data source from `pg_database`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::outcome::Column;
use crate::session_state::{self, SessionState};
use crate::{Backend, Pool};

/// How long a table's collations are believed before they are read again (and how long a
/// read that failed is not tried again).
const REREAD: Duration = Duration::from_secs(30);
/// How long a read may wait for a connection: a session in a transaction may hold the last
/// one of its pool, and its statement must not stall on it. Past it the texts are compared
/// as those of a column whose collation is not known.
const WAIT: Duration = Duration::from_millis(200);
/// Tables remembered; past that the memory starts over.
const MAX_TABLES: usize = 1_000;

/// A table: its data source, database (empty: the data source's own) and name, as the shard
/// named them.
type Table = (String, Bytes, Bytes);

/// The collations of the MySQL tables' text columns, by table.
#[derive(Debug, Default)]
pub(crate) struct Collations {
    known: Mutex<HashMap<Table, Known>>,
    /// Per PostgreSQL data source: its database's collation.
    databases: Mutex<HashMap<String, Database>>,
}

/// A PostgreSQL database's collation, `None` where it orders text by bytes (C, POSIX,
/// C.UTF-8, the builtin provider's); with the time of a read that failed, which is tried
/// again after [`REREAD`].
type Database = (Option<Arc<str>>, Option<Instant>);

#[derive(Debug)]
struct Known {
    /// Column name → its collation (text columns only).
    columns: HashMap<Bytes, Arc<str>>,
    since: Instant,
}

impl Collations {
    /// Gives the text columns of `columns` at `compared` their collation
    /// ([`Column::collation`]): one read from a table of `data_source` its own; `MIN(c)` and
    /// `MAX(c)` those of column `c` of `table`, the actual table the statement reads on it. A
    /// table whose collations cannot be read leaves its columns without one, which the merge
    /// then compares only where every collation agrees.
    pub(crate) async fn give(
        &self,
        backend: &Backend,
        data_source: &str,
        table: &str,
        columns: &mut [Column],
        compared: &[usize],
    ) {
        for &index in compared {
            let Some(column) = columns.get_mut(index) else {
                continue;
            };
            let Some(described) = column.mysql.as_deref() else {
                continue;
            };
            // 63: bytes, whatever the column's collation.
            if described.collation == 63 {
                continue;
            }
            let origin = &described.origin;
            let (table, name) = if !origin.table.is_empty() && !origin.schema.is_empty() {
                let table = (
                    data_source.to_owned(),
                    origin.schema.clone(),
                    origin.table.clone(),
                );
                (table, origin.name.clone())
            } else if let Some(argument) = extreme_of(&column.name) {
                let table = (
                    data_source.to_owned(),
                    Bytes::new(),
                    Bytes::from(table.to_owned()),
                );
                (table, Bytes::from(argument.to_owned()))
            } else {
                continue;
            };
            column.collation = match self.known(&table, &name) {
                Some(known) => known,
                None => {
                    self.read(backend, &table).await;
                    self.known(&table, &name).flatten()
                }
            };
        }
    }

    /// Gives the columns at `compared` of a PostgreSQL result from `data_source` its
    /// database's collation when that does not order text by bytes (what the merge otherwise
    /// assumes).
    pub(crate) async fn give_database(
        &self,
        backend: &Backend,
        data_source: &str,
        columns: &mut [Column],
        compared: &[usize],
    ) {
        let known = self
            .databases
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(data_source)
            .filter(|(_, failed)| failed.is_none_or(|at| at.elapsed() < REREAD))
            .map(|(collation, _)| collation.clone());
        let collation = match known {
            Some(collation) => collation,
            None => {
                // Not read: not known to order by bytes.
                let (collation, failed) = match database_collation(backend, data_source).await {
                    Ok(collation) => (collation, None),
                    Err(()) => (Some(Arc::from("unknown")), Some(Instant::now())),
                };
                self.databases
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(data_source.to_owned(), (collation.clone(), failed));
                collation
            }
        };
        if let Some(collation) = collation {
            for &index in compared {
                if let Some(column) = columns.get_mut(index) {
                    column.collation = Some(Arc::clone(&collation));
                }
            }
        }
    }

    /// The column's collation as last read (`Some(None)`: read, and it has none); `None` when
    /// its table is not known or known for too long.
    fn known(&self, table: &Table, column: &Bytes) -> Option<Option<Arc<str>>> {
        let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = known.get(table).filter(|k| k.since.elapsed() < REREAD)?;
        Some(entry.columns.get(column).cloned())
    }

    async fn read(&self, backend: &Backend, table: &Table) {
        let (data_source, schema, name) = table;
        let Ok(Pool::MySql(pool)) = backend.pool(data_source) else {
            return;
        };
        let (schema, name) = (
            String::from_utf8_lossy(schema).into_owned(),
            String::from_utf8_lossy(name).into_owned(),
        );
        let read = pool.with(async |conn| {
            sqlx::query_as::<_, (String, Option<String>)>(
                "SELECT CAST(COLUMN_NAME AS CHAR), CAST(COLLATION_NAME AS CHAR) \
                 FROM information_schema.COLUMNS \
                 WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ?",
            )
            .bind(schema)
            .bind(name)
            .fetch_all(conn)
            .await
        });
        // The proxy's own read: no session's settings or kept connections.
        let fresh = Arc::new(SessionState::default());
        let rows = tokio::time::timeout(WAIT, session_state::serve(fresh, read)).await;
        // A failed read is remembered as knowing no column, for as long as a good one.
        let columns = match rows {
            Ok(Ok(rows)) => rows
                .into_iter()
                .filter_map(|(column, collation)| {
                    Some((Bytes::from(column), Arc::from(collation?)))
                })
                .collect(),
            _ => HashMap::new(),
        };
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if known.len() >= MAX_TABLES {
            known.clear();
        }
        known.insert(
            table.clone(),
            Known {
                columns,
                since: Instant::now(),
            },
        );
    }
}

/// The collation of `data_source`'s database, as `provider:collation`, `None` when it orders
/// text by bytes; `Err` when it could not be read.
async fn database_collation(backend: &Backend, data_source: &str) -> Result<Option<Arc<str>>, ()> {
    let Ok(Pool::Postgres(pool)) = backend.pool(data_source) else {
        return Err(());
    };
    // `datlocprovider` exists from PostgreSQL 15: read through to_jsonb, NULL before.
    let read = pool.with(async |conn| {
        sqlx::query_as::<_, (String, Option<String>)>(
            "SELECT datcollate::text, to_jsonb(d) ->> 'datlocprovider' \
             FROM pg_catalog.pg_database d WHERE datname = current_database()",
        )
        .fetch_one(conn)
        .await
    });
    let fresh = Arc::new(SessionState::default());
    let row = tokio::time::timeout(WAIT, session_state::serve(fresh, read)).await;
    let (collation, provider) = row.map_err(|_| ())?.map_err(|_| ())?;
    let bytes = match provider.as_deref() {
        // The builtin provider's locales (C, C.UTF-8, PG_UNICODE_FAST) order by code point.
        Some("b") => true,
        None | Some("c") => matches!(collation.as_str(), "C" | "POSIX" | "C.UTF-8" | "C.utf8"),
        Some(_) => false,
    };
    let provider = provider.unwrap_or_else(|| "c".to_owned());
    Ok((!bytes).then(|| Arc::from(format!("{provider}:{collation}"))))
}

/// The column `MIN(c)` or `MAX(c)` (as MySQL names such a result column) takes its collation
/// from: `c`, unqualified and unquoted or quoted with backquotes.
fn extreme_of(name: &str) -> Option<&str> {
    let open = name.find('(')?;
    if !matches!(
        name[..open].trim().to_ascii_lowercase().as_str(),
        "min" | "max"
    ) {
        return None;
    }
    let argument = name[open + 1..].strip_suffix(')')?.trim();
    let argument = argument
        .strip_prefix('`')
        .and_then(|a| a.strip_suffix('`'))
        .unwrap_or(argument);
    let plain = !argument.is_empty()
        && argument
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$');
    plain.then_some(argument)
}

#[cfg(test)]
mod tests {
    #[test]
    fn extremes_name_their_argument() {
        assert_eq!(super::extreme_of("MIN(status)"), Some("status"));
        assert_eq!(super::extreme_of("max( `code` )"), Some("code"));
        assert_eq!(super::extreme_of("MIN(o.status)"), None);
        assert_eq!(super::extreme_of("COUNT(status)"), None);
        assert_eq!(super::extreme_of("MIN(UPPER(status))"), None);
    }
}
