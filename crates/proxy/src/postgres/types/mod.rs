//! PostgreSQL types on the wire: which OID a column or parameter gets, and how a [`Value`] is
//! written to, or read from, the text and binary formats.
//!
//! This module holds the entry points, which tell the shapes of value apart (NULL, a value in
//! the shard's wire form, an array, a scalar) and hand each to its codec; arrays call back
//! into them for their elements.

mod arrays;
mod binary_decode;
mod binary_encode;
mod catalog;
mod column_types;
mod error;
pub mod oid;
mod params;
mod text_decode;
mod text_encode;
mod wire_value;

use keyshard_types::Value;
use keyshard_types::pg_array::element_oid_of;

pub use catalog::{name_of, size_of, typname};
pub use column_types::{column_oid, oid_for_values, oid_of, wire_oid};
pub use error::TypeError;
pub use params::{decode_param, is_native};
use text_encode::Text;
pub use wire_value::enum_array_as;

/// Writes `value` as type `oid` in the text (`binary == false`) or binary format; `None` is
/// SQL NULL.
pub fn encode(value: &Value, oid: u32, binary: bool) -> Result<Option<Vec<u8>>, TypeError> {
    match value {
        Value::Null => return Ok(None),
        Value::Wire(wire) => return wire_value::encode_wire(wire, oid, binary).map(Some),
        _ => {}
    }
    if let Some(element) = element_oid_of(oid) {
        return arrays::encode(value, element, binary).map(Some);
    }
    if !binary {
        return Ok(Some(encode_text(value, oid).into_bytes_or(value)));
    }
    binary_encode::scalar(value, oid).map(Some)
}

/// Writes `value` as type `oid` in the text format.
fn encode_text(value: &Value, oid: u32) -> Text {
    match value {
        Value::Array(array) => Text::String(arrays::text_of(array)),
        _ => text_encode::scalar(value, oid),
    }
}

/// Reads a value of type `oid` in the given format into the router's values (array elements,
/// COPY fields): NUMERIC as text, and the types the shard's text form covers (dates, UUIDs …)
/// as that text.
pub fn decode(bytes: Option<&[u8]>, oid: u32, binary: bool) -> Result<Value, TypeError> {
    let Some(bytes) = bytes else {
        return Ok(Value::Null);
    };
    if let Some(element) = element_oid_of(oid) {
        return arrays::decode(bytes, element, binary);
    }
    if binary {
        return binary_decode::scalar(bytes, oid);
    }
    text_decode::scalar(bytes, oid)
}

#[cfg(test)]
mod tests;
