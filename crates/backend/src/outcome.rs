use keyshard_keygen::Key;
use keyshard_router::{Plan, Value};

use crate::BackendError;
use crate::merge::merge;
use crate::mysql_column::MySqlColumnType;
use crate::sql_type::SqlType;

/// A result or table column: its name and type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The column name (or alias).
    pub name: String,
    /// Its type, as the database that reported it means its type name.
    pub ty: SqlType,
    /// The type's OID when a PostgreSQL shard described the column: what a PostgreSQL client
    /// is told, whatever [`SqlType`] makes of it.
    pub oid: Option<u32>,
    /// The column as a MySQL shard described it: what a MySQL client is told. Boxed: it is
    /// large, and the other databases' columns, copied with every result, have none.
    pub mysql: Option<Box<MySqlColumnType>>,
    /// PostgreSQL's type modifier (`varchar(20)`: 24), -1 for none or not known.
    pub typmod: i32,
    /// The type's size a PostgreSQL shard's RowDescription gave (4 for an enum; negative:
    /// variable width); `None` where no shard described the column.
    pub pg_size: Option<i16>,
    /// The table OID and attribute number a PostgreSQL shard gave a column read from a
    /// table, by which its collation is found (see `collations`).
    pub pg_origin: Option<(u32, i16)>,
    /// A column of a user-defined PostgreSQL enum, or an array of one.
    pub pg_enum: Option<PgEnumColumn>,
    /// A MySQL text column's own collation (`utf8mb4_general_ci`), read for a merge that
    /// compares it (see `collations`): the protocol describes text in the connection's.
    pub collation: Option<std::sync::Arc<str>>,
}

/// What a PostgreSQL client is told of a column of a user-defined enum beyond its OID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgEnumColumn {
    /// The enum itself: 4 bytes wide, as its catalog row says.
    Enum,
    /// An array of it.
    Array {
        /// The element type's OID on the data source that described the column: the same
        /// type has another OID on each database, and each value carries its own data
        /// source's in its binary form.
        element: u32,
    },
}

impl Column {
    /// A column named `name` of type `ty`.
    pub fn new(name: impl Into<String>, ty: SqlType) -> Self {
        Self {
            name: name.into(),
            ty,
            oid: None,
            mysql: None,
            typmod: -1,
            pg_size: None,
            pg_origin: None,
            pg_enum: None,
            collation: None,
        }
    }
}

/// What executing a plan did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Affected rows, summed over units.
    pub affected_rows: u64,
    /// Result columns (for `RETURNING`); empty when the statement returns no rows.
    pub columns: Vec<Column>,
    /// Result rows, in the client's original row order when every unit returned one row per
    /// inserted row; otherwise in unit order.
    pub rows: Vec<Vec<Value>>,
    /// The keys the plan generated, in row order.
    pub generated_keys: Vec<Key>,
    /// How many rows went to the client as they arrived (see [`crate::stream`]); `rows` then
    /// holds none.
    pub streamed: Option<u64>,
}

/// One unit's result.
#[derive(Debug, Default)]
pub(crate) struct UnitResult {
    pub(crate) affected_rows: u64,
    pub(crate) columns: Vec<Column>,
    pub(crate) rows: Vec<Vec<Value>>,
    /// Rows sent to the client as they arrived, none kept in `rows`.
    pub(crate) streamed: Option<u64>,
}

/// Rows above which a merge runs on a blocking thread: ordering, grouping or just gathering
/// that many takes long enough to stall the other sessions of the runtime's thread.
const MERGE_APART_ROWS: usize = 20_000;

impl Outcome {
    /// The plan's outcome from its units' results (in unit order): a read's rows merged by its
    /// merge spec, a broadcast write counted once.
    pub(crate) async fn of(plan: &Plan, results: Vec<UnitResult>) -> Result<Self, BackendError> {
        if let Some(spec) = &plan.merge {
            let rows: usize = results.iter().map(|r| r.rows.len()).sum();
            let merged = if rows > MERGE_APART_ROWS {
                let spec = spec.clone();
                tokio::task::spawn_blocking(move || merge(&spec, results))
                    .await
                    .map_err(|_| BackendError::MergeInterrupted)??
            } else {
                merge(spec, results)?
            };
            return Ok(Outcome {
                affected_rows: merged.affected_rows,
                columns: merged.columns,
                rows: merged.rows,
                generated_keys: Vec::new(),
                streamed: None,
            });
        }
        if plan.replicated {
            // Every unit wrote the same rows to its own copy: one unit tells what happened.
            let first = results.into_iter().next().unwrap_or_default();
            return Ok(Outcome {
                affected_rows: first.affected_rows,
                columns: first.columns,
                rows: first.rows,
                generated_keys: plan.generated_keys.clone(),
                streamed: None,
            });
        }
        Ok(Self::in_client_order(plan, results))
    }

    /// The outcome of a read whose rows went to the client as they came (see `stream`): a unit
    /// whose values needed completing kept its rows, which follow the others now (the read
    /// only concatenates).
    pub(crate) async fn streamed(results: Vec<UnitResult>) -> Result<Self, BackendError> {
        let mut sent = 0u64;
        let mut kept = Vec::new();
        for result in results {
            sent = sent.saturating_add(result.streamed.unwrap_or_default());
            sent = sent.saturating_add(result.rows.len() as u64);
            kept.extend(result.rows);
        }
        crate::stream::send_kept(kept).await?;
        Ok(Outcome {
            streamed: Some(sent),
            ..Outcome::default()
        })
    }

    /// Concatenates the units' results, RETURNING rows put back in the client's row order.
    fn in_client_order(plan: &Plan, results: Vec<UnitResult>) -> Self {
        let affected_rows = results.iter().map(|r| r.affected_rows).sum();
        let columns = results
            .iter()
            .find(|r| !r.columns.is_empty())
            .map(|r| r.columns.clone())
            .unwrap_or_default();
        // RETURNING gives one row per inserted row, in the unit's row order; put them back in
        // the client's order. A unit that returned fewer (INSERT IGNORE, ON CONFLICT DO
        // NOTHING) has no such correspondence, so then the rows stay in unit order.
        let one_per_row = results
            .iter()
            .zip(&plan.units)
            .all(|(r, u)| r.rows.len() == u.rows.len());
        let rows = if one_per_row {
            let mut slots: Vec<Option<Vec<Value>>> = vec![None; plan.row_units.len()];
            for (result, unit) in results.into_iter().zip(&plan.units) {
                for (row, values) in unit.rows.iter().zip(result.rows) {
                    if let Some(slot) = slots.get_mut(*row) {
                        *slot = Some(values);
                    }
                }
            }
            slots.into_iter().flatten().collect()
        } else {
            results.into_iter().flat_map(|r| r.rows).collect()
        };
        Outcome {
            affected_rows,
            columns,
            rows,
            generated_keys: plan.generated_keys.clone(),
            streamed: None,
        }
    }
}
