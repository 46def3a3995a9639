//! A scalar value (not NULL, an array or a value in wire form) in the binary format of its
//! type: numbers from any number or their text, NUMERIC from its text.

use keyshard_types::{Value, numeric};

use super::error::{invalid, out_of_range};
use super::text_decode::{parse_bool, parse_float};
use super::{Text, TypeError, encode_text, oid};

/// Writes `value` as type `oid` in the binary format.
pub(super) fn scalar(value: &Value, oid: u32) -> Result<Vec<u8>, TypeError> {
    Ok(match oid {
        oid::INT2 => i16::try_from(integer(value, oid)?)
            .map_err(|_| out_of_range(value, oid))?
            .to_be_bytes()
            .to_vec(),
        oid::INT4 => i32::try_from(integer(value, oid)?)
            .map_err(|_| out_of_range(value, oid))?
            .to_be_bytes()
            .to_vec(),
        // An OID is unsigned: 4294967295 is one.
        oid::OID => u32::try_from(integer(value, oid)?)
            .map_err(|_| out_of_range(value, oid))?
            .to_be_bytes()
            .to_vec(),
        oid::INT8 => integer(value, oid)?.to_be_bytes().to_vec(),
        // Narrowing to f32 is what a FLOAT4 column means.
        oid::FLOAT4 => (float(value, oid)? as f32).to_be_bytes().to_vec(),
        oid::FLOAT8 => float(value, oid)?.to_be_bytes().to_vec(),
        oid::BOOL => vec![u8::from(boolean(value, oid)?)],
        oid::NUMERIC => {
            let text = match encode_text(value, oid) {
                Text::String(s) => s,
                Text::Raw => String::new(),
            };
            numeric::text_to_binary(&text).ok_or_else(|| invalid(oid, &text))?
        }
        oid::BYTEA => match value {
            Value::Bytes(b) => b.clone(),
            other => encode_text(other, oid::TEXT).into_bytes_or(other),
        },
        _ => encode_text(value, oid).into_bytes_or(value),
    })
}

fn integer(value: &Value, oid: u32) -> Result<i64, TypeError> {
    match value {
        Value::Int(v) => Ok(*v),
        Value::UInt(v) => i64::try_from(*v).map_err(|_| out_of_range(value, oid)),
        Value::Double(v) if v.fract() == 0.0 && v.abs() < 9.2e18 => Ok(*v as i64),
        Value::Text(s) => s.trim().parse().map_err(|_| invalid(oid, s)),
        _ => Err(invalid(oid, &format!("{value:?}"))),
    }
}

fn float(value: &Value, oid: u32) -> Result<f64, TypeError> {
    match value {
        Value::Int(v) => Ok(*v as f64),
        Value::UInt(v) => Ok(*v as f64),
        Value::Double(v) => Ok(*v),
        Value::Text(s) => parse_float(s).ok_or_else(|| invalid(oid, s)),
        _ => Err(invalid(oid, &format!("{value:?}"))),
    }
}

fn boolean(value: &Value, oid: u32) -> Result<bool, TypeError> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::Int(v) => Ok(*v != 0),
        Value::UInt(v) => Ok(*v != 0),
        Value::Text(s) => parse_bool(s).ok_or_else(|| invalid(oid, s)),
        _ => Err(invalid(oid, &format!("{value:?}"))),
    }
}
