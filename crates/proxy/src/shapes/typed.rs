//! A shape's literals sent to PostgreSQL or MariaDB/MySQL shards as the parameters of a
//! prepared statement, instead of written back into the text: the server then neither parses
//! nor plans each INSERT again (straight to the server, pgbench inserts 15–25 % more rows per
//! second prepared than as text, sysbench 13–24 % more on MariaDB).
//!
//! A literal becomes a parameter only where the server makes the same of both: the whole
//! value of a column whose type takes the literal's value unchanged. PostgreSQL reads a quoted
//! literal with the column type's input function and converts a number by an assignment cast;
//! a parameter is typed by its value (`Value::Int` as `int8`, `Value::Text` as `text`) and
//! converted to the column by the same assignment cast. MariaDB stores a string or an integer,
//! literal or parameter, into a column by the same conversion. Whatever this module cannot map
//! exactly (a date, a decimal fraction, a string into a number column that is not plainly an
//! integer) keeps the statement in text, where the server reads it as it always did.

use keyshard_backend::Backend;
use keyshard_config::DatabaseKind;
use keyshard_router::{PreparedInsert, Shape};
use keyshard_types::SqlType;
use keyshard_types::Value;

/// How a column takes a literal as a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Integer and decimal types: an integer, as a 64-bit integer.
    Integer,
    /// `double precision`, MySQL's `DOUBLE`: a number, as a double.
    Float,
    /// `text`, `varchar`, `char(n)` and MySQL's `…TEXT`: text.
    Text,
}

impl Slot {
    /// The slot of a column of type `ty`. Single precision is left out: a literal rounds to it
    /// differently than to a double.
    fn of(ty: SqlType) -> Option<Slot> {
        match ty {
            SqlType::Int { .. } | SqlType::Decimal { .. } => Some(Slot::Integer),
            SqlType::Double => Some(Slot::Float),
            SqlType::Char | SqlType::VarChar | SqlType::Text => Some(Slot::Text),
            _ => None,
        }
    }

    /// The parameter for `literal` in a column of this slot; `None` when the server would not
    /// read the literal as exactly that value. Each slot always yields one kind of [`Value`],
    /// so every statement of a shape prepares alike.
    fn bind(self, literal: &Value) -> Option<Value> {
        match (self, literal) {
            (Slot::Integer, Value::Int(v)) => Some(Value::Int(*v)),
            // `int8in` takes what `i64::from_str` takes (an optional sign and digits), and
            // more (spaces, `_`), which stays text.
            (Slot::Integer, Value::Text(s)) => s.parse().ok().map(Value::Int),
            // A number literal becomes `float8` by rounding its decimal text once, as Rust's
            // parse and cast do.
            (Slot::Float, Value::Double(v)) => Some(Value::Double(*v)),
            (Slot::Float, Value::Int(v)) => Some(Value::Double(*v as f64)),
            (Slot::Float, Value::UInt(v)) => Some(Value::Double(*v as f64)),
            (Slot::Text, Value::Text(s)) => Some(Value::Text(s.clone())),
            // An integer literal is an `int4`/`int8`/`numeric` whose text is its digits; a
            // fraction keeps its written scale (`1.50`), which a double does not.
            (Slot::Text, Value::Int(v)) => Some(Value::Text(v.to_string())),
            (Slot::Text, Value::UInt(v)) => Some(Value::Text(v.to_string())),
            _ => None,
        }
    }
}

/// How each parameter of `insert` (prepared from a shape) goes to its shards; `None` when its
/// literals stay text: the table has a shard that is SQLite or of another server than the
/// others, a parameter is not the whole value of a column of a known type, or the statement
/// inserts several rows (each row count and spread over the shards is one more statement for
/// the shards to prepare and keep).
pub(crate) fn slots(insert: &PreparedInsert, backend: &Backend) -> Option<Box<[Slot]>> {
    let rule = insert.table_rule();
    if insert.row_count() != 1 {
        return None;
    }
    // SQLite takes any value in any column: a literal stays text for it.
    let server_of = |data_source: &str| {
        let kind = backend.pool(data_source).ok()?.kind();
        (kind != DatabaseKind::Sqlite).then_some(kind)
    };
    let server = server_of(&rule.data_nodes.first()?.data_source)?;
    if rule
        .data_nodes
        .iter()
        .any(|node| server_of(&node.data_source) != Some(server))
    {
        return None;
    }
    let metadata = backend.metadata();
    let slot = |column: &str| Slot::of(metadata.column_type(&rule.logic_table, column)?);
    // A generated key goes as a parameter too: an integer for a number, text for a UUID.
    if let Some(key) = &rule.key_generate {
        slot(&key.column)?;
    }
    insert.value_columns()?.iter().map(|c| slot(c)).collect()
}

/// The parameters the literals of `shape`'s statement go as; `None` when one of them must stay
/// text, or the statement has several rows folded into the one the slots are for.
pub(crate) fn bind(shape: &Shape, slots: &[Slot]) -> Option<Vec<Value>> {
    let literals = shape.values();
    if literals.len() != slots.len() || shape.folded_rows().is_some() {
        return None;
    }
    literals
        .iter()
        .zip(slots)
        .map(|(literal, slot)| slot.bind(literal))
        .collect()
}

#[cfg(test)]
mod tests;
