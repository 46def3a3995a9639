//! A scalar value read from the binary format of its type.

use keyshard_types::{Value, numeric};

use super::catalog::name_of;
use super::{TypeError, oid};

/// Reads the binary form of a value of type `oid`.
pub(super) fn scalar(bytes: &[u8], oid: u32) -> Result<Value, TypeError> {
    let wrong_size = || TypeError::Invalid {
        type_name: name_of(oid),
        detail: format!("{} bytes in binary format", bytes.len()),
    };
    Ok(match oid {
        oid::INT2 => {
            Value::Int(i16::from_be_bytes(bytes.try_into().map_err(|_| wrong_size())?).into())
        }
        oid::INT4 => {
            Value::Int(i32::from_be_bytes(bytes.try_into().map_err(|_| wrong_size())?).into())
        }
        oid::OID => {
            Value::Int(u32::from_be_bytes(bytes.try_into().map_err(|_| wrong_size())?).into())
        }
        oid::INT8 => Value::Int(i64::from_be_bytes(
            bytes.try_into().map_err(|_| wrong_size())?,
        )),
        oid::FLOAT4 => {
            Value::Double(f32::from_be_bytes(bytes.try_into().map_err(|_| wrong_size())?).into())
        }
        oid::FLOAT8 => Value::Double(f64::from_be_bytes(
            bytes.try_into().map_err(|_| wrong_size())?,
        )),
        oid::BOOL => match bytes {
            [b] => Value::Bool(*b != 0),
            _ => return Err(wrong_size()),
        },
        oid::BYTEA => Value::Bytes(bytes.to_vec()),
        oid::NUMERIC => Value::Text(numeric::binary_to_text(bytes).ok_or_else(wrong_size)?),
        oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::NAME => Value::Text(
            std::str::from_utf8(bytes)
                .map_err(|e| TypeError::encoding(bytes, e))?
                .to_owned(),
        ),
        // Text, in any of its types; a type this cannot read stays bytes.
        _ => match crate::postgres::wire_text::binary_to_text(oid, bytes) {
            Some(text) => Value::Text(text),
            None => match std::str::from_utf8(bytes) {
                Ok(s) => Value::Text(s.to_owned()),
                Err(_) => Value::Bytes(bytes.to_vec()),
            },
        },
    })
}
