//! SQLite's side of execution: values bound as SQLite stores them, result values read as each
//! value is typed.

use keyshard_config::DatabaseKind;
use keyshard_types::Value;
use sqlx::sqlite::{Sqlite, SqliteQueryResult, SqliteRow};
use sqlx::{Row, TypeInfo, ValueRef};

use super::{BoundQuery, Decoded, Driver, array_text, bind_wire};

impl Driver for Sqlite {
    const KIND: DatabaseKind = DatabaseKind::Sqlite;

    fn bind<'q>(query: BoundQuery<'q, Self>, value: &'q Value) -> BoundQuery<'q, Self> {
        match value {
            Value::Null => query.bind(None::<&str>),
            Value::Int(v) => query.bind(*v),
            // SQLite integers are 64-bit signed; larger values are stored as text.
            Value::UInt(v) => match i64::try_from(*v) {
                Ok(v) => query.bind(v),
                Err(_) => query.bind(v.to_string()),
            },
            Value::Double(v) => query.bind(*v),
            Value::Bool(b) => query.bind(*b),
            Value::Text(s) => query.bind(s.as_str()),
            Value::Bytes(b) => query.bind(b.as_slice()),
            Value::Array(a) => query.bind(array_text(a)),
            Value::Wire(w) => bind_wire(query, w),
        }
    }

    fn decode(row: &SqliteRow, index: usize, _: &mut Option<u8>, _: bool) -> Decoded {
        // SQLite types each value, not the column: nothing is kept between rows.
        first_decodable!(row.try_get_raw(index)?, index, &mut None,
            i64 => Value::Int,
            f64 => Value::Double,
            String => Value::Text,
            Vec<u8> => Value::Bytes,
        )
    }

    fn rows_affected(result: &SqliteQueryResult) -> u64 {
        result.rows_affected()
    }
}
