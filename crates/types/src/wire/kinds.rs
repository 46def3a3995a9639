//! Which result column types travel in the shard's wire form, and as what kind of
//! [`Wire`](crate::Wire): PostgreSQL's by OID, MySQL's by the name sqlx gives them.

use crate::WireKind;

/// How a PostgreSQL result column of type `oid` travels: `None` for the types Keyshard reads
/// into values (numbers, booleans, text, bytes, arrays of those), else as a
/// [`Wire`](crate::Wire) of this kind.
pub fn pg_wire_kind(oid: u32) -> Option<WireKind> {
    Some(match oid {
        // bool, bytea, name, int8, int2, int4, text, oid, unknown, bpchar, varchar, numeric.
        16 | 17 | 19 | 20 | 21 | 23 | 25 | 26 | 705 | 1042 | 1043 | 1700 => {
            return None;
        }
        // float4, float8: read back and printed again, the text would be Keyshard's, not the
        // shard's (`0.1` read as a double prints `0.10000000149011612`).
        700 | 701 => WireKind::PgFloat,
        oid if crate::pg_array::element_oid_of(oid)
            .is_some_and(crate::pg_array::element_supported) =>
        {
            return None;
        }
        1082 => WireKind::PgDate,
        1083 => WireKind::PgTime,
        1266 => WireKind::PgTimeTz,
        1114 | 1184 => WireKind::PgTimestamp,
        1186 => WireKind::PgInterval,
        790 => WireKind::PgMoney,
        869 | 650 => WireKind::PgInet,
        // uuid (`uuid_cmp` is memcmp), bit and varbit of one length.
        2950 => WireKind::Bytewise,
        _ => WireKind::Opaque,
    })
}

/// How a MySQL result column whose type sqlx names `type_name` travels: `None` for the types
/// Keyshard reads into values, else as a [`Wire`](crate::Wire) of this kind.
pub fn mysql_wire_kind(type_name: &str) -> Option<WireKind> {
    Some(match type_name {
        "DATE" | "DATETIME" | "TIMESTAMP" => WireKind::MySqlDateTime,
        "TIME" => WireKind::MySqlTime,
        "YEAR" => WireKind::MySqlYear,
        // Their text is the shard's: `-3.40282e38`, and `1.500` for a FLOAT(10,3).
        "FLOAT" | "DOUBLE" => WireKind::MySqlFloat,
        // BIT(n) is its n bits in whole bytes, big-endian, in both protocols.
        "BIT" => WireKind::Bytewise,
        "JSON" | "GEOMETRY" => WireKind::Opaque,
        _ => return None,
    })
}
