//! The state only a MySQL (or MariaDB) session has: what `FOUND_ROWS()`, `ROW_COUNT()` and
//! the session's `SHOW STATUS` answer, its user variables, its `LOCK TABLES` and the MariaDB
//! sequences it advanced. Apart from [`Session`](super::Session), which holds what both
//! dialects share, so that a PostgreSQL session's code cannot reach state it never has.

use std::collections::BTreeSet;

use keyshard_types::Value;

use crate::memory::KeptMap;
use crate::metrics::SessionCounts;

/// What a MySQL session holds beside what every session does.
#[derive(Debug)]
pub struct MySqlSession {
    /// `FOUND_ROWS()`: the rows the last statement with rows returned, or would have without
    /// its LIMIT (`SQL_CALC_FOUND_ROWS`).
    pub found_rows: u64,
    /// The count a `SELECT SQL_CALC_FOUND_ROWS` running now made, for `found_rows` once it
    /// is answered.
    pub(crate) calculated_found_rows: Option<u64>,
    /// `ROW_COUNT()`: the rows the last statement changed, -1 after a result set or an error.
    pub row_count: i64,
    /// Its statements by kind, for the session's `SHOW STATUS`.
    pub(crate) statements: SessionCounts,
    /// User variables (`SET @x = …`), by lower-cased name, charged to the session's memory
    /// (`Session::memory`) as they are set.
    pub(crate) variables: KeptMap<String, Value>,
    /// The data sources its `LOCK TABLES` took locks on, while it holds them.
    pub(crate) table_locks_on: Vec<String>,
    /// MariaDB: the sequences the session advanced on the connections it keeps, the only ones
    /// it may read the last value of (see `pinning::Effect::Sequences`).
    pub(crate) sequences_advanced: BTreeSet<String>,
}

impl Default for MySqlSession {
    fn default() -> Self {
        Self {
            found_rows: 0,
            calculated_found_rows: None,
            // As after a result set: no statement has changed rows yet.
            row_count: -1,
            statements: SessionCounts::default(),
            variables: KeptMap::default(),
            table_locks_on: Vec::new(),
            sequences_advanced: BTreeSet::new(),
        }
    }
}
