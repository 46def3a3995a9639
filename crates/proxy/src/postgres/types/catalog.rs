//! What PostgreSQL's catalog says of a type OID: its names (for messages, and for the column
//! a cast names) and the size RowDescription reports.

use keyshard_types::pg_array::element_oid_of;

use super::oid;

/// PostgreSQL's name of a type OID, for messages.
pub fn name_of(oid: u32) -> &'static str {
    match oid {
        oid::BOOL => "boolean",
        oid::BYTEA => "bytea",
        oid::NAME => "name",
        oid::INT8 => "bigint",
        oid::INT2 => "smallint",
        oid::INT4 => "integer",
        oid::OID => "oid",
        oid::FLOAT4 => "real",
        oid::FLOAT8 => "double precision",
        oid::UNKNOWN => "unknown",
        oid::BPCHAR => "character",
        oid::VARCHAR => "character varying",
        oid::NUMERIC => "numeric",
        1000 => "boolean[]",
        1005 => "smallint[]",
        1007 => "integer[]",
        1016 => "bigint[]",
        1009 => "text[]",
        1015 => "character varying[]",
        other if element_oid_of(other).is_some() => "array",
        _ => "text",
    }
}

/// The name PostgreSQL's catalog gives a built-in type Keyshard reads (`int4`, `bpchar`), which
/// is what it names the column of a cast to it.
pub fn typname(oid: u32) -> Option<&'static str> {
    Some(match oid {
        oid::BOOL => "bool",
        oid::BYTEA => "bytea",
        oid::NAME => "name",
        oid::INT8 => "int8",
        oid::INT2 => "int2",
        oid::INT4 => "int4",
        oid::TEXT => "text",
        oid::OID => "oid",
        oid::FLOAT4 => "float4",
        oid::FLOAT8 => "float8",
        oid::BPCHAR => "bpchar",
        oid::VARCHAR => "varchar",
        oid::NUMERIC => "numeric",
        _ => return None,
    })
}

/// The type size RowDescription reports (negative: variable width).
pub fn size_of(oid: u32) -> i16 {
    match oid {
        oid::BOOL => 1,
        oid::INT2 => 2,
        oid::INT4 | oid::OID | oid::FLOAT4 => 4,
        // time, timestamp, timestamptz, money; date; timetz; interval, uuid; macaddr; macaddr8.
        oid::INT8 | oid::FLOAT8 | 1083 | 1114 | 1184 | 790 => 8,
        1082 => 4,
        1266 => 12,
        1186 | 2950 => 16,
        829 => 6,
        774 => 8,
        oid::NAME => 64,
        // "char".
        18 => 1,
        // xid, cid, regproc and the other reg* types: an OID each.
        24 | 28 | 29 | 2202 | 2203 | 2204 | 2205 | 2206 | 3734 | 3769 | 4089 | 4096 => 4,
        // tid, point, lseg, box, circle, line: fixed widths.
        27 => 6,
        600 => 16,
        601 | 603 => 32,
        628 | 718 => 24,
        _ => -1,
    }
}
