//! MySQL's (and MariaDB's) side of execution: its values bound as MySQL takes them, its
//! result values read, DECIMAL as its digits and the types passed on in wire form as they came.

use keyshard_config::DatabaseKind;
use keyshard_types::ascii_i64;
use keyshard_types::wire::mysql_wire_kind;
use keyshard_types::{SqlType, Value, Wire, WireKind};
use sqlx::mysql::{MySql, MySqlQueryResult, MySqlRow};
use sqlx::{Arguments, Column as _, Row, TypeInfo, ValueRef};

use super::{Args, Bound, Decoded, Driver, array_text, bind_wire};
use crate::Column;

impl Driver for MySql {
    const KIND: DatabaseKind = DatabaseKind::MySql;

    fn bind<'q>(args: &mut Args<'q, Self>, value: &'q Value) -> Bound {
        match value {
            Value::Null => Arguments::add(args, None::<&str>),
            Value::Int(v) => Arguments::add(args, *v),
            Value::UInt(v) => Arguments::add(args, *v),
            Value::Double(v) => Arguments::add(args, *v),
            Value::Bool(b) => Arguments::add(args, *b),
            Value::Text(s) => Arguments::add(args, s.as_str()),
            Value::Bytes(b) => Arguments::add(args, b.as_slice()),
            Value::Array(a) => Arguments::add(args, array_text(a)),
            Value::Wire(w) => bind_wire::<Self>(args, w),
        }
    }

    fn decode(row: &MySqlRow, index: usize, first: &mut Option<u8>, binary: bool) -> Decoded {
        // DECIMAL, the types passed on in wire form and signed integers in the text protocol
        // are told from the column's type once per result, as the types of `first_decodable!`
        // are.
        const DECIMAL: u8 = u8::MAX;
        const WIRE: u8 = u8::MAX - 1;
        const TEXT_INTEGER: u8 = u8::MAX - 2;
        // The column's type, whether or not this value is NULL. (A point read's every value
        // is its column's first: the quick path below must serve it too.)
        if first.is_none()
            && let Some(column) = row.columns().get(index)
        {
            let type_info = column.type_info();
            let name = type_info.name();
            if name == "DECIMAL" {
                *first = Some(DECIMAL);
            } else if mysql_wire_kind(name).is_some() {
                *first = Some(WIRE);
            } else if !binary && <i64 as sqlx::Type<MySql>>::compatible(type_info) {
                // The text protocol's (a prepared statement's rows are binary).
                *first = Some(TEXT_INTEGER);
            }
        }
        if *first == Some(TEXT_INTEGER) {
            // A signed integer's digits read as they are, without a UTF-8 check (see
            // `ascii_i64`), as PostgreSQL's are.
            match row.try_get_unchecked::<Option<&[u8]>, _>(index) {
                Ok(None) => return Ok(Value::Null),
                Ok(Some(digits)) if let Some(v) = ascii_i64(digits) => return Ok(Value::Int(v)),
                _ => {}
            }
        }
        let raw = row.try_get_raw(index)?;
        if *first == Some(WIRE) {
            // Asked first: sqlx calls a zero date NULL too (`is_null`), since its binary form
            // is a zero length; the bytes are there, and the client is owed them.
            return match row.try_get_unchecked::<&[u8], _>(index) {
                Ok(bytes) => {
                    let kind = mysql_wire_kind(raw.type_info().name()).unwrap_or(WireKind::Opaque);
                    Ok(Value::Wire(Wire::new(kind, binary, bytes)))
                }
                Err(_) if raw.is_null() => Ok(Value::Null),
                Err(e) => Err(e),
            };
        }
        if raw.is_null() {
            return Ok(Value::Null);
        }
        if *first == Some(DECIMAL) {
            // DECIMAL (SUM, AVG) arrives as its digits in both protocols; sqlx decodes it only
            // with a decimal crate, and the proxy passes it on as the text it is.
            return row.try_get_unchecked::<String, _>(index).map(Value::Text);
        }
        // A column read as integer digits comes here with its first value, or one they do not
        // read: sqlx decodes it, and reports what is wrong with it.
        let mut afresh = None;
        let first = match *first {
            Some(TEXT_INTEGER) => &mut afresh,
            _ => first,
        };
        first_decodable!(raw.clone(), index, first,
            i64 => Value::Int,
            u64 => Value::UInt,
            f64 => Value::Double,
            String => Value::Text,
            Vec<u8> => Value::Bytes,
        )
    }

    fn rows_affected(result: &MySqlQueryResult) -> u64 {
        result.rows_affected()
    }

    fn column(described: &sqlx::mysql::MySqlColumn) -> Column {
        use sqlx::Column as _;
        let type_info = described.type_info();
        let mut column = Column::new(described.name(), SqlType::of(type_info.name(), Self::KIND));
        column.mysql = crate::mysql_column::described(described).map(Box::new);
        column
    }
}
