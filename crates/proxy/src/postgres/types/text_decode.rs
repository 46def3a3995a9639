//! A scalar value read from the text format of its type, and the text forms of floats and
//! booleans PostgreSQL accepts.

use keyshard_types::{Value, ascii_i64};

use super::error::invalid;
use super::{TypeError, oid};

/// Reads the text form of a value of type `oid`: numbers and booleans as what they are, BYTEA
/// from its hex form, any other type as its text.
pub(super) fn scalar(bytes: &[u8], oid: u32) -> Result<Value, TypeError> {
    let text = || std::str::from_utf8(bytes).map_err(|e| TypeError::encoding(bytes, e));
    Ok(match oid {
        // Plain digits (nearly every parameter) need neither the UTF-8 check nor the trim.
        oid::INT2 | oid::INT4 | oid::INT8 | oid::OID if let Some(v) = ascii_i64(bytes) => {
            Value::Int(v)
        }
        oid::INT2 | oid::INT4 | oid::INT8 | oid::OID => {
            let s = text()?;
            Value::Int(s.trim().parse().map_err(|_| invalid(oid, s))?)
        }
        oid::FLOAT4 | oid::FLOAT8 => {
            let s = text()?;
            Value::Double(parse_float(s).ok_or_else(|| invalid(oid, s))?)
        }
        oid::BOOL => {
            let s = text()?;
            Value::Bool(parse_bool(s).ok_or_else(|| invalid(oid, s))?)
        }
        oid::BYTEA => Value::Bytes(match bytes.strip_prefix(b"\\x") {
            Some(hex) => decode_hex(hex).ok_or_else(|| invalid(oid, "bad hex digits"))?,
            None => bytes.to_vec(),
        }),
        _ => Value::Text(text()?.to_owned()),
    })
}

fn decode_hex(hex: &[u8]) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    hex.chunks(2)
        .map(|pair| {
            let digit = |c: u8| (c as char).to_digit(16);
            Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8)
        })
        .collect()
}

pub(super) fn parse_float(s: &str) -> Option<f64> {
    match s.trim().to_ascii_lowercase().as_str() {
        "nan" => Some(f64::NAN),
        "infinity" | "inf" | "+infinity" => Some(f64::INFINITY),
        "-infinity" | "-inf" => Some(f64::NEG_INFINITY),
        other => other.parse().ok(),
    }
}

pub(super) fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "t" | "true" | "y" | "yes" | "on" | "1" => Some(true),
        "f" | "false" | "n" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}
