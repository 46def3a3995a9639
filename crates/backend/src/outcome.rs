use keyshard_keygen::Key;
use keyshard_types::Value;

use keyshard_types::MySqlColumnType;
use keyshard_types::SqlType;

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

/// Results of a statement's units, put back in plan order.
pub(crate) fn in_plan_order(
    unit_count: usize,
    parts: impl IntoIterator<Item = (Vec<usize>, Vec<UnitResult>)>,
) -> Vec<UnitResult> {
    let mut ordered: Vec<UnitResult> = (0..unit_count).map(|_| UnitResult::default()).collect();
    for (positions, results) in parts {
        for (position, result) in positions.into_iter().zip(results) {
            ordered[position] = result;
        }
    }
    ordered
}
