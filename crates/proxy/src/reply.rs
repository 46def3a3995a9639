//! What a statement answers, before a frontend encodes it.

use keyshard_backend::Column;
use keyshard_types::SqlType;
use keyshard_types::Value;

/// A statement's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Done, nothing to return but counts.
    Ok {
        /// Rows changed.
        affected_rows: u64,
        /// The first key the statement generated, or 0.
        last_insert_id: u64,
    },
    /// A result set.
    Rows {
        /// Its columns.
        columns: Vec<Column>,
        /// Its rows.
        rows: Vec<Vec<Value>>,
    },
    /// A result set whose columns and rows already went to the frontend as they arrived
    /// (see `Session::stream`); the frontend ends it.
    Streamed {
        /// How many rows it had.
        rows: u64,
    },
}

impl Reply {
    /// How many rows a result set had; `None` for an OK.
    pub fn rows_returned(&self) -> Option<u64> {
        match self {
            Reply::Ok { .. } => None,
            Reply::Rows { rows, .. } => Some(rows.len() as u64),
            Reply::Streamed { rows } => Some(*rows),
        }
    }

    /// OK with nothing changed.
    pub fn done() -> Self {
        Reply::Ok {
            affected_rows: 0,
            last_insert_id: 0,
        }
    }

    /// A result set of one row whose values are all text or integers, named `names`.
    pub fn one_row(names: impl IntoIterator<Item = String>, values: Vec<Value>) -> Self {
        let columns = names
            .into_iter()
            .zip(&values)
            .map(|(name, value)| column(name, value))
            .collect();
        Reply::Rows {
            columns,
            rows: vec![values],
        }
    }

    /// A result set of text columns.
    pub fn text_rows(names: &[&str], rows: Vec<Vec<Value>>) -> Self {
        let columns = names
            .iter()
            .map(|n| Column::new(*n, SqlType::VarChar))
            .collect();
        Reply::Rows { columns, rows }
    }

    /// `PREVIEW`'s answer: each unit's data source and actual SQL.
    pub fn preview(rows: Vec<Vec<Value>>) -> Self {
        Self::text_rows(&["data_source_name", "actual_sql"], rows)
    }
}

fn column(name: String, value: &Value) -> Column {
    let ty = match value {
        Value::Int(_) => SqlType::Int {
            bytes: 8,
            unsigned: false,
        },
        Value::UInt(_) => SqlType::Int {
            bytes: 8,
            unsigned: true,
        },
        Value::Double(_) => SqlType::Double,
        // A float a shard sent (a user variable set from a query) is a float still.
        Value::Wire(w) if w.float().is_some() => SqlType::Double,
        Value::Bool(_) => SqlType::Bool,
        Value::Bytes(_) => SqlType::Blob,
        Value::Array(a) => SqlType::Array { element: a.element },
        Value::Text(_) | Value::Null | Value::Wire(_) => SqlType::VarChar,
    };
    Column::new(name, ty)
}
