//! A value other than an array in the text format of its type, as PostgreSQL writes it.

use keyshard_types::Value;

use super::oid;

/// Text that is either a string or, for BYTEA and non-UTF-8 bytes, raw bytes.
pub(super) enum Text {
    String(String),
    Raw,
}

impl Text {
    pub(super) fn into_bytes_or(self, value: &Value) -> Vec<u8> {
        match (self, value) {
            (Text::String(s), _) => s.into_bytes(),
            (Text::Raw, Value::Bytes(b)) => b.clone(),
            (Text::Raw, _) => Vec::new(),
        }
    }
}

/// Writes `value` as type `oid` in the text format; an array is written by
/// [`super::encode_text`], element by element, and never reaches this.
pub(super) fn scalar(value: &Value, oid: u32) -> Text {
    Text::String(match value {
        // Unreachable (see above); empty text rather than a panic on a client's path.
        Value::Array(_) => String::new(),
        Value::Wire(wire) => match crate::postgres::wire_text::text_of_binary(wire, oid) {
            Some(text) if wire.binary => text,
            _ => match wire.text() {
                Some(text) => text.to_owned(),
                None => return Text::Raw,
            },
        },
        Value::Null => String::new(),
        Value::Int(v) if oid == oid::BOOL => if *v != 0 { "t" } else { "f" }.to_owned(),
        Value::Bool(b) if oid == oid::BOOL => if *b { "t" } else { "f" }.to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Int(v) => v.to_string(),
        Value::UInt(v) => v.to_string(),
        Value::Double(v) => float_text(*v, oid),
        Value::Text(s) => s.clone(),
        Value::Bytes(b) if oid == oid::BYTEA => {
            let mut out = String::with_capacity(2 + 2 * b.len());
            out.push_str("\\x");
            for byte in b {
                out.push_str(&format!("{byte:02x}"));
            }
            out
        }
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => s.to_owned(),
            Err(_) => return Text::Raw,
        },
    })
}

/// A float Keyshard holds as a number (a merged SUM, an array element) as PostgreSQL writes
/// one of type `oid` with the default `extra_float_digits`: a float4's digits are a float4's.
fn float_text(v: f64, oid: u32) -> String {
    keyshard_types::float_text::postgres(v, oid == oid::FLOAT4, 1)
}
