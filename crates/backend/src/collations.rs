//! The collation of each text column a merge compares: it decides how the shards sorted the
//! column and which of its values are one group, and the protocol does not carry it. MySQL
//! describes a text column in the connection's collation, not its own: it is read from
//! `information_schema.COLUMNS`, a table's columns at once, per data source, and read again
//! after [`REREAD`] so that a column altered beside the proxy is not compared by its old
//! collation for long. PostgreSQL text takes its database's collation (a column declared with
//! another is not told apart): read once per data source from `pg_database`. The tables are
//! kept in one bounded cache (`props.collation-cache-entries` and `-bytes`): which tables a
//! statement names is the client's choice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::cache::{Bounds, Cache, CacheStats};
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
/// A table: its data source, database (empty: the data source's own) and name, as the shard
/// named them.
type Table = (String, Bytes, Bytes);

/// The collations of the tables' text columns, by table.
#[derive(Debug)]
pub(crate) struct Collations {
    /// Within `props.collation-cache-entries` and `-bytes`: the tables a client's statements
    /// name are not bounded by the configuration.
    known: Mutex<Cache<Table, Known>>,
    /// Per PostgreSQL data source: what its database says of collations (`None`: not read),
    /// and when it was read.
    databases: Mutex<HashMap<String, (Option<Database>, Instant)>>,
}

/// What a PostgreSQL database says of collations.
#[derive(Debug, Clone)]
struct Database {
    /// Its own collation, `None` where it orders text by bytes (C, POSIX, C.UTF-8, the
    /// builtin provider's).
    collation: Option<Arc<str>>,
    /// Some user column has another collation that does not order by bytes: an expression
    /// may take it.
    other_collations: bool,
}

/// A column collation of a PostgreSQL table: the database's.
const DEFAULT: &str = "default";
/// A column collation of a PostgreSQL table that orders text by bytes.
const BYTES: &str = "bytes";
/// A collation that could not be read, or an expression's that is not known.
pub(crate) const UNKNOWN: &str = "nd:unknown";
/// The column name under which a failed read remembers every column's collation as
/// [`UNKNOWN`] (no column is named so).
const ANY: &[u8] = b"";

/// Column name → its collation (text columns only).
type Columns = HashMap<Bytes, Arc<str>>;

#[derive(Debug)]
struct Known {
    columns: Columns,
    since: Instant,
}

/// What a read that failed leaves known: every column's collation is [`UNKNOWN`].
fn none_known() -> Columns {
    HashMap::from([(Bytes::from_static(ANY), Arc::from(UNKNOWN))])
}

/// The collation of `column` among a table's `columns` (`None`: it has none).
fn collation_of(columns: &Columns, column: &Bytes) -> Option<Arc<str>> {
    columns.get(column).or_else(|| columns.get(ANY)).cloned()
}

impl Collations {
    /// Nothing known yet; at most `bounds` of tables kept.
    pub(crate) fn new(bounds: Bounds) -> Self {
        Self {
            known: Mutex::new(Cache::new(bounds)),
            databases: Mutex::default(),
        }
    }

    /// What the cache of tables' collations holds and has done.
    pub(crate) fn stats(&self) -> CacheStats {
        self.known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stats()
    }

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
            column.collation = self.column(backend, &table, &name).await;
        }
    }

    /// Gives the text columns at `compared` of a PostgreSQL result from `data_source` their
    /// collation where it does not order text by bytes (what the merge otherwise assumes):
    /// a table column's own (`COLLATE "en-x-icu"`) or its database's; an expression's its
    /// database's, unless the data source has columns of other collations. Where `sql` writes
    /// COLLATE (`ORDER BY status COLLATE "…"` sorts by another than the column's) none is
    /// known.
    pub(crate) async fn give_postgres(
        &self,
        backend: &Backend,
        data_source: &str,
        sql: &str,
        columns: &mut [Column],
        compared: &[usize],
    ) {
        let database = match contains_collate(sql) {
            true => None,
            false => self.postgres(backend, data_source).await,
        };
        let Some(database) = database else {
            for &index in compared {
                if let Some(column) = columns.get_mut(index) {
                    column.collation = Some(Arc::from(UNKNOWN));
                }
            }
            return;
        };
        for &index in compared {
            let Some(column) = columns.get_mut(index) else {
                continue;
            };
            column.collation = match column.pg_origin {
                Some((table, number)) => {
                    let table = (
                        data_source.to_owned(),
                        Bytes::new(),
                        Bytes::from(table.to_string()),
                    );
                    let name = Bytes::from(number.to_string());
                    let own = self.column(backend, &table, &name).await;
                    match own.as_deref() {
                        // The database's.
                        Some(DEFAULT) => database.collation.clone(),
                        Some(BYTES) | None => None,
                        Some(_) => own,
                    }
                }
                None if database.other_collations => Some(Arc::from(UNKNOWN)),
                None => database.collation.clone(),
            };
        }
    }

    /// What `data_source`'s database says of collations; `None` when it could not be read.
    async fn postgres(&self, backend: &Backend, data_source: &str) -> Option<Database> {
        let known = self
            .databases
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(data_source)
            .filter(|(_, since)| since.elapsed() < REREAD)
            .map(|(database, _)| database.clone());
        if let Some(database) = known {
            return database;
        }
        let database = database_collations(backend, data_source).await.ok();
        self.databases
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(data_source.to_owned(), (database.clone(), Instant::now()));
        database
    }

    /// Reads the collation of each column of a PostgreSQL table (its OID as `table`'s name),
    /// by attribute number: [`DEFAULT`], [`BYTES`], `nd:…` for a nondeterministic one, or
    /// another's name.
    async fn read_postgres(&self, backend: &Backend, table: &Table) -> Option<Columns> {
        let (data_source, _, relation) = table;
        let Ok(Pool::Postgres(pool)) = backend.pool(data_source) else {
            return None;
        };
        let relation: i64 = String::from_utf8_lossy(relation).parse().unwrap_or(0);
        let read = pool.with(async |conn| {
            sqlx::query_as::<_, (i16, String)>(
                "SELECT a.attnum, CASE \
                   WHEN a.attcollation = 100 THEN 'default' \
                   WHEN c.collname IN ('C', 'POSIX', 'ucs_basic') OR c.collprovider = 'b' \
                     OR (c.collprovider = 'c' AND c.collcollate IN ('C', 'POSIX', 'C.UTF-8', 'C.utf8')) \
                     THEN 'bytes' \
                   WHEN NOT c.collisdeterministic THEN 'nd:' || c.collname \
                   ELSE c.collname::text END \
                 FROM pg_catalog.pg_attribute a \
                 JOIN pg_catalog.pg_collation c ON c.oid = a.attcollation \
                 WHERE a.attrelid = $1::oid AND a.attnum > 0",
            )
            .bind(relation)
            .fetch_all(conn)
            .await
        });
        apart(read).await.map(|rows| {
            rows.into_iter()
                .map(|(number, collation)| (Bytes::from(number.to_string()), Arc::from(collation)))
                .collect()
        })
    }

    /// The collation of column `name` of `table` (a PostgreSQL one's by attribute number),
    /// read with the rest of its table's when it is not known.
    async fn column(&self, backend: &Backend, table: &Table, name: &Bytes) -> Option<Arc<str>> {
        if let Some(known) = self.known(table, name) {
            return known;
        }
        let read = match backend.pool(&table.0) {
            Ok(Pool::MySql(_)) => self.read_mysql(backend, table).await,
            Ok(Pool::Postgres(_)) => self.read_postgres(backend, table).await,
            _ => return Some(Arc::from(UNKNOWN)),
        };
        let columns = read.unwrap_or_else(none_known);
        let collation = collation_of(&columns, name);
        self.remember(table, columns);
        collation
    }

    /// The column's collation as last read (`Some(None)`: read, and it has none); `None` when
    /// its table is not known or known for too long.
    fn known(&self, table: &Table, column: &Bytes) -> Option<Option<Arc<str>>> {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = known.get(table).filter(|k| k.since.elapsed() < REREAD)?;
        Some(collation_of(&entry.columns, column))
    }

    async fn read_mysql(&self, backend: &Backend, table: &Table) -> Option<Columns> {
        let (data_source, schema, name) = table;
        let Ok(Pool::MySql(pool)) = backend.pool(data_source) else {
            return None;
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
        apart(read).await.map(|rows| {
            rows.into_iter()
                .filter_map(|(column, collation)| {
                    Some((Bytes::from(column), Arc::from(collation?)))
                })
                .collect()
        })
    }

    /// Remembers a table's collations (a read that failed, [`none_known`], for as long as a
    /// good one).
    fn remember(&self, table: &Table, columns: Columns) {
        // What the entry holds on the heap, about: its names and collations.
        let weight = table.0.len()
            + table.1.len()
            + table.2.len()
            + columns
                .iter()
                .map(|(name, collation)| name.len() + collation.len() + 64)
                .sum::<usize>();
        let known = Known {
            columns,
            since: Instant::now(),
        };
        (self.known.lock().unwrap_or_else(PoisonError::into_inner)).insert(
            table.clone(),
            known,
            weight,
        );
    }
}

/// What `data_source`'s database says of collations; `Err` when it could not be read.
async fn database_collations(backend: &Backend, data_source: &str) -> Result<Database, ()> {
    let Ok(Pool::Postgres(pool)) = backend.pool(data_source) else {
        return Err(());
    };
    // `datlocprovider` exists from PostgreSQL 15: read through to_jsonb, NULL before.
    let read = pool.with(async |conn| {
        sqlx::query_as::<_, (String, Option<String>, bool)>(
            "SELECT datcollate::text, to_jsonb(d) ->> 'datlocprovider', EXISTS ( \
               SELECT 1 FROM pg_catalog.pg_attribute a \
               JOIN pg_catalog.pg_class r ON r.oid = a.attrelid \
               JOIN pg_catalog.pg_collation c ON c.oid = a.attcollation \
               WHERE a.attnum > 0 AND a.attcollation <> 100 \
               AND r.relnamespace NOT IN ('pg_catalog'::regnamespace, \
                                          'information_schema'::regnamespace) \
               AND c.collname NOT IN ('C', 'POSIX', 'ucs_basic')) \
             FROM pg_catalog.pg_database d WHERE datname = current_database()",
        )
        .fetch_one(conn)
        .await
    });
    let (collation, provider, other_collations) = apart(read).await.ok_or(())?;
    let bytes = match provider.as_deref() {
        // The builtin provider's locales (C, C.UTF-8, PG_UNICODE_FAST) order by code point.
        Some("b") => true,
        None | Some("c") => matches!(collation.as_str(), "C" | "POSIX" | "C.UTF-8" | "C.utf8"),
        Some(_) => false,
    };
    let provider = provider.unwrap_or_else(|| "c".to_owned());
    Ok(Database {
        collation: (!bytes).then(|| Arc::from(format!("{provider}:{collation}"))),
        other_collations,
    })
}

/// Runs `read`, the proxy's own, outside any session (no settings, no kept connection), waiting
/// at most [`WAIT`]; `None` when it failed or waited too long.
async fn apart<T>(read: impl Future<Output = Result<T, sqlx::Error>>) -> Option<T> {
    let fresh = Arc::new(SessionState::default());
    let read = tokio::time::timeout(WAIT, session_state::serve(fresh, read)).await;
    read.ok()?.ok()
}

/// Whether `sql` may write a COLLATE clause.
fn contains_collate(sql: &str) -> bool {
    sql.as_bytes()
        .windows(7)
        .any(|w| w.eq_ignore_ascii_case(b"collate"))
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
    use super::*;

    /// A read that failed leaves every column of its table unknown (compared only where every
    /// collation agrees), never taken for one that orders by bytes.
    #[test]
    fn a_failed_read_knows_no_column() {
        let collations = Collations::new(keyshard_config::Props::default().collation_cache);
        let table = (
            "ds_0".to_owned(),
            Bytes::new(),
            Bytes::from_static(b"16384"),
        );
        collations.remember(&table, none_known());
        let known = collations.known(&table, &Bytes::from_static(b"2"));
        assert_eq!(known.flatten().as_deref(), Some(UNKNOWN));
        let read = HashMap::from([(Bytes::from_static(b"2"), Arc::from("en-x-icu"))]);
        collations.remember(&table, read);
        let known = |column: &'static [u8]| collations.known(&table, &Bytes::from_static(column));
        assert_eq!(known(b"2").flatten().as_deref(), Some("en-x-icu"));
        assert_eq!(known(b"3"), Some(None));
    }

    /// The tables a client's statements name are its to choose: what is kept of them stays
    /// within the cache's bounds, the tables used most kept longest.
    #[test]
    fn the_tables_kept_stay_within_the_bounds() {
        let bounds = keyshard_config::CacheBounds {
            entries: 8,
            bytes: 1 << 20,
        };
        let collations = Collations::new(bounds);
        let table = |n: usize| {
            (
                "ds_0".to_owned(),
                Bytes::new(),
                Bytes::from(format!("t_{n}")),
            )
        };
        let column = Bytes::from_static(b"status");
        let read = || HashMap::from([(Bytes::from_static(b"status"), Arc::from("utf8mb4_bin"))]);
        for n in 0..100 {
            collations.remember(&table(n), read());
            // t_0 is read between every other table's.
            assert!(
                collations.known(&table(0), &column).is_some(),
                "t_0 after t_{n}"
            );
        }
        let stats = collations.stats();
        assert_eq!(stats.entries, 8);
        assert_eq!(stats.evictions, 92);
        assert!(collations.known(&table(1), &column).is_none());
        assert!(collations.known(&table(99), &column).is_some());
    }

    #[test]
    fn extremes_name_their_argument() {
        assert_eq!(extreme_of("MIN(status)"), Some("status"));
        assert_eq!(extreme_of("max( `code` )"), Some("code"));
        assert_eq!(extreme_of("MIN(o.status)"), None);
        assert_eq!(extreme_of("COUNT(status)"), None);
        assert_eq!(extreme_of("MIN(UPPER(status))"), None);
    }
}
