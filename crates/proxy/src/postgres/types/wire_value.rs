//! Values in a PostgreSQL shard's own wire form ([`keyshard_types::Value::Wire`]: dates,
//! JSON, enums …), written in the format the client asked for.

use keyshard_types::{Wire, WireKind};

use super::error::invalid;
use super::{TypeError, oid};

/// A value in the shard's wire form, in the format the client asked for: as it came, or from
/// binary to text (see [`crate::postgres::wire_text`]).
pub(super) fn encode_wire(wire: &Wire, oid: u32, binary: bool) -> Result<Vec<u8>, TypeError> {
    if let Some((oid_bytes, text)) = wire.catalog_ref() {
        return Ok(match binary {
            true => oid_bytes.to_vec(),
            false => text.as_bytes().to_vec(),
        });
    }
    match (wire.binary, binary) {
        (from, to) if from == to || wire.kind == WireKind::PgEnum => Ok(wire.bytes.to_vec()),
        // A float that came as text (a simple query's) for a binary column.
        (false, true) if wire.kind == WireKind::PgFloat => {
            let v = wire
                .float()
                .ok_or_else(|| invalid(oid, &String::from_utf8_lossy(&wire.bytes)))?;
            Ok(if oid == oid::FLOAT4 {
                (v as f32).to_be_bytes().to_vec()
            } else {
                v.to_be_bytes().to_vec()
            })
        }
        (true, false) if wire.kind == WireKind::PgEnumArray => {
            crate::postgres::wire_text::label_array(&wire.bytes)
                .map(String::into_bytes)
                .ok_or_else(|| invalid(oid, "a malformed enum array"))
        }
        (true, false) => crate::postgres::wire_text::binary_to_text(oid, &wire.bytes)
            .map(String::into_bytes)
            .ok_or_else(|| {
                TypeError::Unsupported(format!(
                    "Keyshard cannot write a value of type {oid} in the text format from the \
                     shard's binary one; read this column in the binary format"
                ))
            }),
        _ => Err(TypeError::Unsupported(format!(
            "Keyshard cannot write a value of type {oid} in the binary format from the shard's \
             text one; read this column in the text format"
        ))),
    }
}

/// A binary array of enum labels from any data source, its element type named `element` (the
/// OID the client was described), not the OID its own data source gave the type; `None` for
/// another value.
pub fn enum_array_as(wire: &Wire, element: u32) -> Option<Vec<u8>> {
    // ndim, the null flag, then the element type's OID.
    const ELEMENT: std::ops::Range<usize> = 8..12;
    if element == 0
        || wire.kind != WireKind::PgEnumArray
        || !wire.binary
        || wire.bytes.len() < ELEMENT.end
    {
        return None;
    }
    let mut bytes = wire.bytes.to_vec();
    bytes[ELEMENT].copy_from_slice(&element.to_be_bytes());
    Some(bytes)
}
