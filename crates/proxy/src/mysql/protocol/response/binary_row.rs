//! ProtocolBinary::ResultsetRow: each value encoded as its column's declared type.
//!
//! Values come from backends that may not agree with the declared type (SQLite stores any
//! value in any column, a PostgreSQL BOOL arrives as text …), so each value is converted to the
//! column's type; one that cannot be (text that is not a number, in an INT column) is sent as
//! NULL rather than as a made-up number.

use keyshard_types::{Value, Wire, WireKind};
use mysql_common::constants::{ColumnFlags, ColumnType};
use mysql_common::packets::NullBitmap;
use mysql_common::value::ServerSide;

use super::column::ResultColumn;
use super::text_row::put_value_text;
use crate::mysql::protocol::temporal::{DateTime, Time};
use crate::mysql::protocol::wire::put_lenenc_bytes;

/// Encodes one row; missing values are NULL, extra ones dropped.
pub(super) fn encode_row(buf: &mut Vec<u8>, columns: &[ResultColumn], row: &[Value]) {
    let mut bitmap = NullBitmap::<ServerSide>::new(columns.len());
    let mut values = Vec::new();
    for (i, column) in columns.iter().enumerate() {
        let value = row.get(i).unwrap_or(&Value::Null);
        if !encode_value(&mut values, column, value) {
            bitmap.set(i, true);
        }
    }
    buf.push(0x00);
    buf.extend_from_slice(bitmap.as_ref());
    buf.extend_from_slice(&values);
}

/// Appends `value` as `column`'s type; false (and nothing appended) when it is to be NULL.
fn encode_value(buf: &mut Vec<u8>, column: &ResultColumn, value: &Value) -> bool {
    use ColumnType::*;
    if matches!(value, Value::Null) {
        return false;
    }
    if let Value::Wire(wire) = value
        && wire.binary
    {
        put_wire(buf, wire);
        return true;
    }
    let unsigned = column.flags.contains(ColumnFlags::UNSIGNED_FLAG);
    match column.column_type {
        MYSQL_TYPE_NULL => false,
        MYSQL_TYPE_TINY => put_int(buf, value, 1, unsigned),
        MYSQL_TYPE_SHORT | MYSQL_TYPE_YEAR => put_int(buf, value, 2, unsigned),
        MYSQL_TYPE_LONG | MYSQL_TYPE_INT24 => put_int(buf, value, 4, unsigned),
        MYSQL_TYPE_LONGLONG => put_int(buf, value, 8, unsigned),
        MYSQL_TYPE_FLOAT => as_f64(value)
            .map(|v| buf.extend_from_slice(&(v as f32).to_le_bytes()))
            .is_some(),
        MYSQL_TYPE_DOUBLE => as_f64(value)
            .map(|v| buf.extend_from_slice(&v.to_le_bytes()))
            .is_some(),
        MYSQL_TYPE_DATE | MYSQL_TYPE_NEWDATE => as_text(value)
            .and_then(DateTime::parse)
            .map(|v| {
                let date = DateTime {
                    year: v.year,
                    month: v.month,
                    day: v.day,
                    ..DateTime::default()
                };
                date.encode(buf)
            })
            .is_some(),
        MYSQL_TYPE_DATETIME
        | MYSQL_TYPE_DATETIME2
        | MYSQL_TYPE_TIMESTAMP
        | MYSQL_TYPE_TIMESTAMP2 => as_text(value)
            .and_then(DateTime::parse)
            .map(|v| v.encode(buf))
            .is_some(),
        MYSQL_TYPE_TIME | MYSQL_TYPE_TIME2 => as_text(value)
            .and_then(Time::parse)
            .map(|v| v.encode(buf))
            .is_some(),
        _ => {
            put_value_text(buf, value);
            true
        }
    }
}

/// Appends a value the shard sent in the binary protocol, as it came: temporal values with
/// their length byte, YEAR as its two bytes, floats as their 4 or 8, the rest as
/// length-encoded strings.
fn put_wire(buf: &mut Vec<u8>, wire: &Wire) {
    match wire.kind {
        WireKind::MySqlDateTime
        | WireKind::MySqlTime
        | WireKind::MySqlYear
        | WireKind::MySqlFloat => {
            buf.extend_from_slice(&wire.bytes);
        }
        _ => put_lenenc_bytes(buf, &wire.bytes),
    }
}

/// Appends an integer of `width` bytes, clamped to the column's range.
fn put_int(buf: &mut Vec<u8>, value: &Value, width: u32, unsigned: bool) -> bool {
    let Some(v) = as_i128(value) else {
        return false;
    };
    let bits = width * 8;
    let (min, max) = if unsigned {
        (0, (1i128 << bits) - 1)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    };
    // Two's complement: the low `width` bytes of the clamped value are its encoding.
    let bytes = v.clamp(min, max).to_le_bytes();
    buf.extend_from_slice(&bytes[..width as usize]);
    true
}

fn as_text(value: &Value) -> Option<&str> {
    match value {
        Value::Text(v) => Some(v),
        Value::Wire(w) => w.text(),
        Value::Bytes(v) => std::str::from_utf8(v).ok(),
        _ => None,
    }
}

fn as_i128(value: &Value) -> Option<i128> {
    match value {
        Value::Null => None,
        Value::Int(v) => Some(i128::from(*v)),
        Value::UInt(v) => Some(i128::from(*v)),
        Value::Bool(b) => Some(i128::from(*b)),
        // `as` saturates; NaN has no integer value.
        Value::Double(v) => (!v.is_nan()).then_some(v.trunc() as i128),
        Value::Array(_) => None,
        Value::Text(_) | Value::Bytes(_) | Value::Wire(_) => {
            let text = as_text(value)?.trim();
            match text.to_ascii_lowercase().as_str() {
                "t" | "true" => return Some(1),
                "f" | "false" => return Some(0),
                _ => {}
            }
            text.parse::<i128>().ok().or_else(|| {
                let v: f64 = text.parse().ok()?;
                (!v.is_nan()).then_some(v.trunc() as i128)
            })
        }
    }
}

fn as_f64(value: &Value) -> Option<f64> {
    match value {
        Value::Null => None,
        Value::Int(v) => Some(*v as f64),
        Value::UInt(v) => Some(*v as f64),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Double(v) => Some(*v),
        Value::Array(_) => None,
        Value::Text(_) | Value::Bytes(_) | Value::Wire(_) => as_text(value)?.trim().parse().ok(),
    }
}
