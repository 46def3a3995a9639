//! One parameter value of COM_STMT_EXECUTE, in the binary protocol, as a router [`Value`].

use keyshard_types::Value;
use mysql_common::constants::ColumnType;

use crate::mysql::protocol::error::ProtocolError;
use crate::mysql::protocol::temporal::{DateTime, Time};
use crate::mysql::protocol::wire::Reader;

/// Decodes a value of type `ty` from the head of `r`.
pub(super) fn decode_value(
    r: &mut Reader<'_>,
    ty: ColumnType,
    unsigned: bool,
) -> Result<Value, ProtocolError> {
    use ColumnType::*;
    let value = match ty {
        MYSQL_TYPE_NULL => Value::Null,
        MYSQL_TYPE_TINY => small_int(r.u8()?.into(), 8, unsigned),
        MYSQL_TYPE_SHORT | MYSQL_TYPE_YEAR => small_int(r.u16()?.into(), 16, unsigned),
        MYSQL_TYPE_LONG | MYSQL_TYPE_INT24 => small_int(r.u32()?.into(), 32, unsigned),
        MYSQL_TYPE_LONGLONG => {
            let v = r.u64()?;
            match (unsigned, i64::try_from(v)) {
                (true, Err(_)) => Value::UInt(v),
                (true, Ok(v)) => Value::Int(v),
                (false, _) => Value::Int(v as i64),
            }
        }
        // Through the shortest decimal text, so that a FLOAT 0.1 becomes the double 0.1 the
        // client meant rather than 0.10000000149011612.
        MYSQL_TYPE_FLOAT => Value::Double(r.f32()?.to_string().parse().unwrap_or_default()),
        MYSQL_TYPE_DOUBLE => Value::Double(r.f64()?),
        MYSQL_TYPE_DATE | MYSQL_TYPE_NEWDATE => Value::Text(DateTime::decode(r)?.date_string()),
        MYSQL_TYPE_DATETIME
        | MYSQL_TYPE_DATETIME2
        | MYSQL_TYPE_TIMESTAMP
        | MYSQL_TYPE_TIMESTAMP2 => Value::Text(DateTime::decode(r)?.to_string()),
        MYSQL_TYPE_TIME | MYSQL_TYPE_TIME2 => Value::Text(Time::decode(r)?.to_string()),
        other => from_bytes(other, r.lenenc_bytes()?)?,
    };
    Ok(value)
}

/// An integer of `width` bits, which the client sends as bits: the column's sign flag says
/// whether the top bit is a sign.
fn small_int(bits: u64, width: u32, unsigned: bool) -> Value {
    let shift = 64 - width;
    Value::Int(if unsigned {
        bits as i64
    } else {
        ((bits << shift) as i64) >> shift
    })
}

/// Whether a value of type `ty` stays bytes, whatever they hold.
fn is_binary(ty: ColumnType) -> bool {
    use ColumnType::*;
    matches!(
        ty,
        MYSQL_TYPE_TINY_BLOB
            | MYSQL_TYPE_MEDIUM_BLOB
            | MYSQL_TYPE_LONG_BLOB
            | MYSQL_TYPE_BLOB
            | MYSQL_TYPE_GEOMETRY
            | MYSQL_TYPE_BIT
            | MYSQL_TYPE_VECTOR
    )
}

/// A value sent as COM_STMT_SEND_LONG_DATA chunks, taken over without a copy: it may be
/// megabytes. As [`from_bytes`] reads it, where a type it does not know reads as text or bytes.
pub(super) fn from_long_data(ty: ColumnType, bytes: Vec<u8>) -> Value {
    if is_binary(ty) {
        return Value::Bytes(bytes);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Value::Text(text),
        Err(e) => Value::Bytes(e.into_bytes()),
    }
}

/// A value that arrives as bytes: a length-encoded field, or COM_STMT_SEND_LONG_DATA chunks.
pub(super) fn from_bytes(ty: ColumnType, bytes: &[u8]) -> Result<Value, ProtocolError> {
    use ColumnType::*;
    match ty {
        ty if is_binary(ty) => Ok(Value::Bytes(bytes.to_vec())),
        MYSQL_TYPE_DECIMAL
        | MYSQL_TYPE_NEWDECIMAL
        | MYSQL_TYPE_VARCHAR
        | MYSQL_TYPE_VAR_STRING
        | MYSQL_TYPE_STRING
        | MYSQL_TYPE_ENUM
        | MYSQL_TYPE_SET
        | MYSQL_TYPE_JSON => Ok(text_or_bytes(bytes)),
        other => Err(ProtocolError::Unsupported(format!(
            "parameter of type {other:?}"
        ))),
    }
}

/// Text when the bytes are UTF-8 (the session's character set), raw bytes otherwise.
fn text_or_bytes(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(text) => Value::Text(text.to_owned()),
        Err(_) => Value::Bytes(bytes.to_vec()),
    }
}
