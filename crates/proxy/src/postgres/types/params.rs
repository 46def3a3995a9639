//! Bind parameters: which types are read into the router's values, and which keep their type
//! to reach the shard as the client sent them.

use keyshard_types::pg_array::{element_oid_of, element_supported};
use keyshard_types::wire::pg_wire_kind;
use keyshard_types::{Value, Wire, WireKind, numeric};

use super::{TypeError, decode, oid};

/// Whether parameters of type `oid` are decoded as what they are (others are read as text).
pub fn is_native(oid: u32) -> bool {
    matches!(
        oid,
        oid::BOOL
            | oid::INT2
            | oid::INT4
            | oid::INT8
            | oid::OID
            | oid::FLOAT4
            | oid::FLOAT8
            | oid::NUMERIC
            | oid::BYTEA
            | oid::TEXT
            | oid::VARCHAR
            | oid::BPCHAR
            | oid::NAME
    )
}

/// Reads a Bind parameter sent as type `oid` in the given format. A value of a type the
/// router does not compute with (NUMERIC, dates, UUIDs, JSON …) keeps its type: sent in binary,
/// it reaches the shard as the same bytes; a NUMERIC sent as text is bound as NUMERIC's binary
/// form, any other as its text with a cast to its type (sqlx binds in the binary format only,
/// and plain TEXT would meet `numeric < text` or a `jsonb` column).
pub fn decode_param(bytes: Option<&[u8]>, oid: u32, binary: bool) -> Result<Value, TypeError> {
    let typed = |binary: bool, bytes: &[u8]| {
        Value::Wire(Wire::new(wire_kind(oid), binary, bytes).with_oid(oid))
    };
    match bytes {
        Some(bytes)
            if element_oid_of(oid).is_some_and(element_supported) || router_computes(oid) =>
        {
            decode(Some(bytes), oid, binary)
        }
        Some(bytes) if binary => Ok(typed(true, bytes)),
        Some(bytes) => {
            let text = std::str::from_utf8(bytes).map_err(|e| TypeError::encoding(bytes, e))?;
            match (oid == oid::NUMERIC).then(|| numeric::text_to_binary(text.trim())) {
                Some(Some(binary)) => Ok(typed(true, &binary)),
                _ => Ok(typed(false, bytes)),
            }
        }
        None => Ok(Value::Null),
    }
}

/// Whether the router computes with values of type `oid` (routes by them, compares them):
/// numbers, booleans, text and bytes, which it reads into its own values.
fn router_computes(oid: u32) -> bool {
    matches!(
        oid,
        oid::INT2
            | oid::INT4
            | oid::INT8
            | oid::OID
            | oid::FLOAT4
            | oid::FLOAT8
            | oid::BOOL
            | oid::BYTEA
            | oid::TEXT
            | oid::VARCHAR
            | oid::BPCHAR
            | oid::NAME
            | oid::UNKNOWN
            // Unknown to the client too: the shard types it, from the bytes as they are.
            | 0
    )
}

fn wire_kind(oid: u32) -> WireKind {
    pg_wire_kind(oid).unwrap_or(WireKind::Opaque)
}
