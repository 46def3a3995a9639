//! ProtocolText::ResultsetRow: every value as a length-encoded string, NULL as 0xFB.

use std::borrow::Cow;

use keyshard_types::{Value, Wire, WireKind, float_text};

use crate::mysql::protocol::temporal::{DateTime, Time};
use crate::mysql::protocol::wire::Reader;

use crate::mysql::protocol::wire::put_lenenc_bytes;

/// The marker of a NULL value in a text row.
const NULL: u8 = 0xFB;

/// Encodes a row of `width` columns; missing values are NULL, extra ones dropped.
pub(super) fn encode_row(buf: &mut Vec<u8>, width: usize, row: &[Value]) {
    for i in 0..width {
        match row.get(i) {
            None | Some(Value::Null) => buf.push(NULL),
            Some(value) => put_value_text(buf, value),
        }
    }
}

/// Writes a value's text form as a length-encoded string; integers, most of a result's
/// values, without a string apart.
pub(super) fn put_value_text(buf: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Int(v) => put_lenenc_bytes(buf, itoa::Buffer::new().format(*v).as_bytes()),
        Value::UInt(v) => put_lenenc_bytes(buf, itoa::Buffer::new().format(*v).as_bytes()),
        _ => put_lenenc_bytes(buf, &value_text(value)),
    }
}

/// The text form of a value the shard sent in the binary protocol (a text result is read in
/// the text protocol, so only a statement run otherwise comes here). A DATETIME's fraction is
/// printed when it is not zero: the column's declared precision is not known here.
fn binary_wire_text(wire: &Wire) -> String {
    let mut reader = Reader::new(&wire.bytes, "value");
    let text = match wire.kind {
        WireKind::MySqlDateTime => DateTime::decode(&mut reader).map(|v| v.to_string()),
        WireKind::MySqlTime => Time::decode(&mut reader).map(|v| v.to_string()),
        WireKind::MySqlYear => reader.u16().map(|v| format!("{v:04}")),
        // A FLOAT's 4 bytes or a DOUBLE's 8.
        WireKind::MySqlFloat => {
            return wire
                .float()
                .map(|v| float_text::mysql(v, wire.bytes.len() == 4))
                .unwrap_or_default();
        }
        _ => return String::from_utf8_lossy(&wire.bytes).into_owned(),
    };
    text.unwrap_or_default()
}

/// A value's text form, as MySQL prints it; bytes pass through unchanged.
fn value_text(value: &Value) -> Cow<'_, [u8]> {
    match value {
        Value::Null => Cow::Borrowed(b"NULL"),
        Value::Int(v) => Cow::Owned(v.to_string().into_bytes()),
        Value::UInt(v) => Cow::Owned(v.to_string().into_bytes()),
        // Computed (a merged SUM or AVG): a DOUBLE, as MySQL writes one.
        Value::Double(v) => Cow::Owned(float_text::mysql(*v, false).into_bytes()),
        Value::Bool(b) => Cow::Borrowed(if *b { b"1" } else { b"0" }),
        Value::Text(v) => Cow::Borrowed(v.as_bytes()),
        Value::Bytes(v) => Cow::Borrowed(v),
        Value::Wire(wire) if !wire.binary => Cow::Borrowed(&wire.bytes),
        Value::Wire(wire) => Cow::Owned(binary_wire_text(wire).into_bytes()),
        // MySQL has no arrays: PostgreSQL's text form, as `SELECT ARRAY[1,2]::text` prints it.
        Value::Array(a) => Cow::Owned(
            keyshard_types::array::write_text(a, keyshard_types::array::plain_element_text)
                .into_bytes(),
        ),
    }
}
