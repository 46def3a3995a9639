//! Rows read from a node written as SQL literals, for the INSERTs that fill a temporary table
//! of the same database.

use std::fmt::Write as _;

use keyshard_config::DatabaseKind;
use keyshard_types::Value;

/// Writes `value`, read from a node in the text protocol, as a literal the same database
/// reads back as the column's value. MySQL strings go as hexadecimal with their character
/// set, whatever the connection's `sql_mode` says of backslashes; binary values (BIT, BLOB)
/// as binary strings.
pub(super) fn push_literal(out: &mut String, kind: DatabaseKind, value: &Value) {
    let hex = |out: &mut String, bytes: &[u8]| {
        out.push_str("X'");
        for b in bytes {
            let _ = write!(out, "{b:02x}");
        }
        out.push('\'');
    };
    match (kind, value) {
        (_, Value::Null) => out.push_str("NULL"),
        (_, Value::Int(v)) => {
            let _ = write!(out, "{v}");
        }
        (_, Value::UInt(v)) => {
            let _ = write!(out, "{v}");
        }
        (_, Value::Double(v)) => {
            let _ = write!(out, "{v:?}");
        }
        (_, Value::Bool(b)) => out.push_str(if *b { "TRUE" } else { "FALSE" }),
        (_, Value::Bytes(bytes)) => hex(out, bytes),
        (DatabaseKind::MySql, Value::Wire(wire))
            if wire.kind == keyshard_types::WireKind::Bytewise =>
        {
            hex(out, &wire.bytes)
        }
        (DatabaseKind::MySql, Value::Text(text)) => {
            out.push_str("_utf8mb4 ");
            hex(out, text.as_bytes());
        }
        (DatabaseKind::MySql, Value::Wire(wire)) => {
            out.push_str("_utf8mb4 ");
            hex(out, &wire.bytes);
        }
        (_, Value::Text(text)) => push_quoted(out, text),
        (_, Value::Wire(wire)) => push_quoted(out, &String::from_utf8_lossy(&wire.bytes)),
        (_, Value::Array(array)) => push_quoted(
            out,
            &keyshard_types::array::write_text(array, keyshard_types::array::plain_element_text),
        ),
    }
}

fn push_quoted(out: &mut String, text: &str) {
    out.push('\'');
    for c in text.chars() {
        if c == '\'' {
            out.push('\'');
        }
        out.push(c);
    }
    out.push('\'');
}
