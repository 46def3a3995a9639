use keyshard_config::DatabaseKind;
use keyshard_types::{SqlType, Value, Wire, WireKind, numeric};

use super::*;

fn pg(name: &str) -> SqlType {
    SqlType::of(name, DatabaseKind::Postgres)
}

/// `'{sad,"not ok",NULL}'::mood[]` in the binary format, the element type `element`.
fn moods(element: u32) -> Vec<u8> {
    let mut bytes = Vec::new();
    for word in [1i32, 1, element as i32, 3, 1] {
        bytes.extend(word.to_be_bytes());
    }
    for label in [&b"sad"[..], b"not ok"] {
        bytes.extend((label.len() as i32).to_be_bytes());
        bytes.extend(label);
    }
    bytes.extend((-1i32).to_be_bytes());
    bytes
}

#[test]
fn enum_labels_and_arrays_reach_text_and_binary_clients() {
    let label = Value::Wire(Wire::new(WireKind::PgEnum, true, b"sad").with_oid(16_400));
    assert_eq!(encode(&label, 16_400, false).unwrap().unwrap(), b"sad");
    assert_eq!(encode(&label, 16_400, true).unwrap().unwrap(), b"sad");
    let wire = Wire::new(WireKind::PgEnumArray, true, &moods(16_401)).with_oid(16_402);
    let array = Value::Wire(wire.clone());
    assert_eq!(
        encode(&array, 16_402, false).unwrap().unwrap(),
        b"{sad,\"not ok\",NULL}"
    );
    // Another data source's element OID becomes the described one's; nothing else changes.
    assert_eq!(enum_array_as(&wire, 16_500).unwrap(), moods(16_500));
    assert_eq!(enum_array_as(&wire, 0), None);
    let cut = Wire::new(WireKind::PgEnumArray, true, &[0, 0, 0, 1]);
    assert_eq!(enum_array_as(&cut, 16_500), None);
    assert!(encode(&Value::Wire(cut), 16_402, false).is_err());
}

#[test]
fn types_map_to_postgres_oids() {
    assert_eq!(oid_of(pg("INT8")), oid::INT8);
    assert_eq!(oid_of(pg("bigint")), oid::INT8);
    assert_eq!(oid_of(pg("VARCHAR(32)")), oid::VARCHAR);
    assert_eq!(oid_of(pg("int4")), oid::INT4);
    assert_eq!(oid_of(pg("real")), oid::FLOAT4);
    assert_eq!(oid_of(pg("DOUBLE PRECISION")), oid::FLOAT8);
    assert_eq!(
        oid_of(SqlType::of("BIGINT UNSIGNED", DatabaseKind::MySql)),
        oid::INT8
    );
    assert_eq!(oid_of(pg("timestamptz")), oid::TEXT);
    assert_eq!(
        oid_of(SqlType::of("INTEGER", DatabaseKind::Sqlite)),
        oid::INT8
    );
}

#[test]
fn text_that_is_not_utf8_is_refused_in_either_format_and_bytes_are_not() {
    for binary in [false, true] {
        for oid in [oid::TEXT, oid::VARCHAR, oid::BPCHAR] {
            let error = decode_param(Some(b"ok\xc3("), oid, binary).unwrap_err();
            assert_eq!(
                error.to_string(),
                "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28"
            );
        }
    }
    let cut = decode_param(Some(b"ok\xe2\x82"), oid::TEXT, true).unwrap_err();
    assert_eq!(cut, TypeError::Encoding("0xe2 0x82".into()));
    assert_eq!(
        decode_param(Some(b"\xff"), oid::BYTEA, true),
        Ok(Value::Bytes(vec![0xff]))
    );
}

#[test]
fn integers_widen_when_they_do_not_fit() {
    let big = [Value::Int(1 << 40)];
    assert_eq!(oid_for_values(pg("INTEGER"), big.iter()), oid::INT8);
    assert_eq!(
        oid_for_values(pg("INTEGER"), [Value::Int(7)].iter()),
        oid::INT4
    );
    assert_eq!(
        oid_for_values(pg("INTEGER"), [Value::Text("x".into())].iter()),
        oid::TEXT
    );
}

#[test]
fn a_column_typed_by_its_values_becomes_an_array_and_leaves_it() {
    let array = |element| {
        Value::Array(keyshard_types::Array {
            element,
            dims: Vec::new(),
            elements: Vec::new(),
        })
    };
    let text = pg("TEXT");
    assert_eq!(
        oid_for_values(text, [array(oid::TEXT)].iter()),
        oid::TEXT_ARRAY
    );
    // An array column keeps its type whatever arrays it holds, and becomes text for a value
    // that is none.
    let mixed = [array(oid::TEXT), Value::Null, array(oid::INT8)];
    assert_eq!(oid_for_values(text, mixed.iter()), oid::TEXT_ARRAY);
    let then_text = [array(oid::TEXT), Value::Int(1)];
    assert_eq!(oid_for_values(text, then_text.iter()), oid::TEXT);
}

#[test]
fn round_trips_in_both_formats() {
    for (value, oid) in [
        (Value::Int(-5), oid::INT2),
        (Value::Int(1 << 20), oid::INT4),
        (Value::Int(1 << 50), oid::INT8),
        (Value::Double(1.5), oid::FLOAT8),
        (Value::Text("héllo".into()), oid::VARCHAR),
        (Value::Bytes(vec![0, 255, 16]), oid::BYTEA),
        (Value::Bool(true), oid::BOOL),
    ] {
        for binary in [false, true] {
            let bytes = encode(&value, oid, binary).unwrap().unwrap();
            assert_eq!(
                decode(Some(&bytes), oid, binary).unwrap(),
                value,
                "{oid} {binary}"
            );
        }
    }
    assert_eq!(encode(&Value::Null, oid::INT4, true).unwrap(), None);
    assert_eq!(decode(None, oid::INT4, true).unwrap(), Value::Null);
}

#[test]
fn parameters_of_types_the_router_does_not_compute_with_keep_their_type() {
    // A binary timestamptz goes to the shard as the same type's same bytes.
    let micros = 757_479_845_123_456_i64.to_be_bytes();
    let Value::Wire(wire) = decode_param(Some(&micros), 1184, true).unwrap() else {
        panic!("a binary timestamptz is kept as it came");
    };
    assert_eq!(
        (wire.oid, wire.binary, &wire.bytes[..]),
        (1184, true, &micros[..])
    );
    // A decimal sent as text is bound as NUMERIC, not as TEXT.
    let Value::Wire(wire) = decode_param(Some(b"12.34"), oid::NUMERIC, false).unwrap() else {
        panic!("a text numeric is bound as NUMERIC");
    };
    assert_eq!(
        (wire.oid, numeric::binary_to_text(&wire.bytes).as_deref()),
        (oid::NUMERIC, Some("12.34"))
    );
    // Any other type sent as text keeps its type, to be cast to it on the shard.
    let Value::Wire(wire) = decode_param(Some(b"{\"a\": 1}"), 3802, false).unwrap() else {
        panic!("a text jsonb keeps its type");
    };
    assert_eq!(
        (wire.oid, wire.binary, wire.text()),
        (3802, false, Some("{\"a\": 1}"))
    );
    assert!(decode_param(Some(&[b'x', 0xff]), 1184, false).is_err());
    // Text in a binary parameter of a text type stays text, for routing.
    assert_eq!(
        decode_param(Some(b"abc"), oid::VARCHAR, true).unwrap(),
        Value::Text("abc".into())
    );
    // An element or COPY field of such a type is its text.
    assert_eq!(
        decode(Some(&micros), 1184, true).unwrap(),
        Value::Text("2024-01-02 03:04:05.123456+00".into())
    );
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    assert!(decode(Some(b"12"), oid::INT8, true).is_err());
    assert!(decode(Some(b"abc"), oid::INT4, false).is_err());
    assert!(decode(Some(b"\\xzz"), oid::BYTEA, false).is_err());
    assert!(decode(Some(&[0xff, 0xfe]), oid::TEXT, false).is_err());
    assert!(encode(&Value::Int(1 << 40), oid::INT4, true).is_err());
    assert!(encode(&Value::Text("x".into()), oid::INT8, true).is_err());
}
