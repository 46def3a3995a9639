//! SQLite's side of execution: values bound as SQLite stores them, result values read as each
//! value is typed.

use keyshard_config::DatabaseKind;
use keyshard_types::Value;
use sqlx::sqlite::{Sqlite, SqliteQueryResult, SqliteRow};
use sqlx::{Arguments, Row, TypeInfo, ValueRef};

use super::{Args, Bound, Decoded, Driver, array_text, bind_wire};

impl Driver for Sqlite {
    const KIND: DatabaseKind = DatabaseKind::Sqlite;

    fn bind<'q>(args: &mut Args<'q, Self>, value: &'q Value) -> Bound {
        match value {
            Value::Null => Arguments::add(args, None::<&str>),
            Value::Int(v) => Arguments::add(args, *v),
            // SQLite integers are 64-bit signed; larger values are stored as text.
            Value::UInt(v) => match i64::try_from(*v) {
                Ok(v) => Arguments::add(args, v),
                Err(_) => Arguments::add(args, v.to_string()),
            },
            Value::Double(v) => Arguments::add(args, *v),
            Value::Bool(b) => Arguments::add(args, *b),
            Value::Text(s) => Arguments::add(args, s.as_str()),
            Value::Bytes(b) => Arguments::add(args, b.as_slice()),
            Value::Array(a) => Arguments::add(args, array_text(a)),
            Value::Wire(w) => bind_wire::<Self>(args, w),
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
