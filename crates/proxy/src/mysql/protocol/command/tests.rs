//! Command decoding, and COM_STMT_EXECUTE parameters built by mysql_common's client side.

use std::collections::HashMap;

use keyshard_types::Value;
use mysql_common::Value as MyValue;
use mysql_common::constants::ColumnType;
use mysql_common::packets::{ComStmtExecuteRequestBuilder, ComStmtSendLongData};
use mysql_common::proto::MySerialize;

use super::*;

#[test]
fn decodes_simple_commands() {
    assert_eq!(
        decode_command(b"\x03SELECT 1".to_vec()).unwrap(),
        Command::Query("SELECT 1".into())
    );
    assert_eq!(
        decode_command(b"\x02shop".to_vec()).unwrap(),
        Command::InitDb("shop".into())
    );
    assert_eq!(decode_command(b"\x0e".to_vec()).unwrap(), Command::Ping);
    assert_eq!(decode_command(b"\x01".to_vec()).unwrap(), Command::Quit);
    assert_eq!(
        decode_command(b"\x09".to_vec()).unwrap(),
        Command::Statistics
    );
    assert_eq!(
        decode_command(b"\x1f".to_vec()).unwrap(),
        Command::ResetConnection
    );
    assert_eq!(
        decode_command(b"\x16INSERT INTO t VALUES (?)".to_vec()).unwrap(),
        Command::StmtPrepare("INSERT INTO t VALUES (?)".into())
    );
    assert_eq!(
        decode_command(b"\x19\x07\0\0\0".to_vec()).unwrap(),
        Command::StmtClose(7)
    );
    assert_eq!(
        decode_command(b"\x1a\x07\0\0\0".to_vec()).unwrap(),
        Command::StmtReset(7)
    );
    assert_eq!(
        decode_command(b"\x1b\x01\x00".to_vec()).unwrap(),
        Command::SetOption(1)
    );
    assert_eq!(
        decode_command(b"\x04t_order\0%".to_vec()).unwrap(),
        Command::FieldList("t_order".into())
    );
    assert_eq!(
        decode_command(b"\x11whatever".to_vec()).unwrap(),
        Command::Unknown(0x11)
    );
}

#[test]
fn decodes_long_data() {
    assert_eq!(
        decode_command(b"\x18\x02\0\0\0\x01\0chunk".to_vec()).unwrap(),
        Command::StmtSendLongData {
            stmt_id: 2,
            param: 1,
            data: b"chunk".to_vec()
        }
    );
}

#[test]
fn rejects_bad_payloads() {
    assert!(decode_command(b"".to_vec()).is_err());
    assert!(decode_command(b"\x03\xff\xfe".to_vec()).is_err());
    assert!(decode_command(b"\x19\x07\0".to_vec()).is_err());
    assert!(decode_command(b"\x18\x02\0\0\0\x01".to_vec()).is_err());
    assert!(decode_command(b"\x17\x01\0\0\0\0\x01\0\0".to_vec()).is_err());
}

fn execute(payload: &[u8]) -> ExecuteRequest {
    match decode_command(payload.to_vec()).unwrap() {
        Command::StmtExecute(req) => req,
        other => panic!("not an execute: {other:?}"),
    }
}

/// COM_STMT_EXECUTE as mysql_common's client library builds it.
fn client_execute(stmt_id: u32, params: &[MyValue]) -> ExecuteRequest {
    let (req, _) = ComStmtExecuteRequestBuilder::new(stmt_id).build(params);
    let mut payload = Vec::new();
    req.serialize(&mut payload);
    execute(&payload)
}

/// COM_STMT_EXECUTE by hand, for the types mysql_common never sends: `(type, unsigned, value)`,
/// a `None` value being NULL. Types are included only when `bind` is set.
fn hand_execute(params: &[(ColumnType, bool, Option<Vec<u8>>)], bind: bool) -> ExecuteRequest {
    let mut p = vec![0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0];
    let mut bitmap = vec![0u8; params.len().div_ceil(8)];
    for (i, (_, _, v)) in params.iter().enumerate() {
        if v.is_none() {
            bitmap[i / 8] |= 1 << (i % 8);
        }
    }
    p.extend_from_slice(&bitmap);
    p.push(u8::from(bind));
    if bind {
        for (ty, unsigned, _) in params {
            p.extend_from_slice(&[*ty as u8, if *unsigned { 0x80 } else { 0 }]);
        }
    }
    for (_, _, v) in params {
        p.extend_from_slice(v.as_deref().unwrap_or_default());
    }
    execute(&p)
}

fn lenenc(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![bytes.len() as u8];
    out.extend_from_slice(bytes);
    out
}

fn decode(req: &ExecuteRequest, n: usize) -> Vec<Value> {
    decode_params(req, n, &mut Vec::new(), &mut HashMap::new()).unwrap()
}

#[test]
fn execute_header_decodes() {
    let req = client_execute(77, &[MyValue::Int(1)]);
    assert_eq!((req.stmt_id, req.flags), (77, 0));
    let req = client_execute(5, &[]);
    assert_eq!(decode(&req, 0), []);
}

#[test]
fn client_built_params_decode() {
    let params = [
        MyValue::Int(-42),
        MyValue::UInt(u64::MAX),
        MyValue::UInt(7),
        MyValue::Double(2.5),
        MyValue::Float(0.1),
        MyValue::Bytes("héllo".into()),
        MyValue::Bytes(vec![0xff, 0xfe]),
        MyValue::NULL,
        MyValue::Date(2024, 1, 2, 0, 0, 0, 0),
        MyValue::Date(2024, 1, 2, 3, 4, 5, 0),
        MyValue::Date(2024, 1, 2, 3, 4, 5, 60),
        MyValue::Time(false, 0, 1, 2, 3, 0),
        MyValue::Time(true, 2, 3, 4, 5, 500_000),
        MyValue::Time(false, 0, 0, 0, 0, 0),
    ];
    let req = client_execute(1, &params);
    assert_eq!(
        decode(&req, params.len()),
        [
            Value::Int(-42),
            Value::UInt(u64::MAX),
            Value::Int(7),
            Value::Double(2.5),
            Value::Double(0.1),
            Value::Text("héllo".into()),
            Value::Bytes(vec![0xff, 0xfe]),
            Value::Null,
            Value::Text("2024-01-02 00:00:00".into()),
            Value::Text("2024-01-02 03:04:05".into()),
            Value::Text("2024-01-02 03:04:05.000060".into()),
            Value::Text("01:02:03".into()),
            Value::Text("-51:04:05.500000".into()),
            Value::Text("00:00:00".into()),
        ]
    );
}

#[test]
fn every_parameter_type_decodes() {
    use ColumnType::*;
    let date = vec![4, 0xe8, 0x07, 1, 2];
    let params = [
        (MYSQL_TYPE_TINY, false, Some(vec![0xff])),
        (MYSQL_TYPE_TINY, true, Some(vec![0xff])),
        (MYSQL_TYPE_SHORT, false, Some(vec![0xfe, 0xff])),
        (MYSQL_TYPE_SHORT, true, Some(vec![0xfe, 0xff])),
        (
            MYSQL_TYPE_LONG,
            false,
            Some((-70_000i32).to_le_bytes().to_vec()),
        ),
        (MYSQL_TYPE_LONG, true, Some(u32::MAX.to_le_bytes().to_vec())),
        (
            MYSQL_TYPE_INT24,
            false,
            Some(1_000_000i32.to_le_bytes().to_vec()),
        ),
        (
            MYSQL_TYPE_LONGLONG,
            false,
            Some(i64::MIN.to_le_bytes().to_vec()),
        ),
        (MYSQL_TYPE_DECIMAL, false, Some(lenenc(b"1.50"))),
        (MYSQL_TYPE_NEWDECIMAL, false, Some(lenenc(b"-0.001"))),
        (MYSQL_TYPE_VARCHAR, false, Some(lenenc(b"v"))),
        (MYSQL_TYPE_STRING, false, Some(lenenc(b"s"))),
        (MYSQL_TYPE_ENUM, false, Some(lenenc(b"red"))),
        (MYSQL_TYPE_SET, false, Some(lenenc(b"a,b"))),
        (MYSQL_TYPE_JSON, false, Some(lenenc(br#"{"k":1}"#))),
        (MYSQL_TYPE_VAR_STRING, false, Some(lenenc(b"\xc3"))),
        (MYSQL_TYPE_STRING, false, Some(lenenc(b"\xc3\x28"))),
        (MYSQL_TYPE_TINY_BLOB, false, Some(lenenc(b"tb"))),
        (MYSQL_TYPE_MEDIUM_BLOB, false, Some(lenenc(b"mb"))),
        (MYSQL_TYPE_LONG_BLOB, false, Some(lenenc(b"lb"))),
        (MYSQL_TYPE_BLOB, false, Some(lenenc(b"text in a blob"))),
        (MYSQL_TYPE_DATE, false, Some(date.clone())),
        (
            MYSQL_TYPE_TIMESTAMP,
            false,
            Some(vec![7, 0xe8, 0x07, 1, 2, 3, 4, 5]),
        ),
        (MYSQL_TYPE_DATETIME, false, Some(vec![0])),
        (MYSQL_TYPE_TIME, false, Some(vec![0])),
        (MYSQL_TYPE_NULL, false, Some(vec![])),
        (MYSQL_TYPE_LONGLONG, false, None),
        (MYSQL_TYPE_FLOAT, false, Some(1.5f32.to_le_bytes().to_vec())),
        (
            MYSQL_TYPE_DOUBLE,
            false,
            Some((-1e300f64).to_le_bytes().to_vec()),
        ),
        (MYSQL_TYPE_YEAR, false, Some(2024u16.to_le_bytes().to_vec())),
    ];
    let values = decode(&hand_execute(&params, true), params.len());
    assert_eq!(
        values,
        [
            Value::Int(-1),
            Value::Int(255),
            Value::Int(-2),
            Value::Int(65_534),
            Value::Int(-70_000),
            Value::Int(i64::from(u32::MAX)),
            Value::Int(1_000_000),
            Value::Int(i64::MIN),
            Value::Text("1.50".into()),
            Value::Text("-0.001".into()),
            Value::Text("v".into()),
            Value::Text("s".into()),
            Value::Text("red".into()),
            Value::Text("a,b".into()),
            Value::Text(r#"{"k":1}"#.into()),
            Value::Bytes(vec![0xc3]),
            Value::Bytes(vec![0xc3, 0x28]),
            Value::Bytes(b"tb".to_vec()),
            Value::Bytes(b"mb".to_vec()),
            Value::Bytes(b"lb".to_vec()),
            Value::Bytes(b"text in a blob".to_vec()),
            Value::Text("2024-01-02".into()),
            Value::Text("2024-01-02 03:04:05".into()),
            Value::Text("0000-00-00 00:00:00".into()),
            Value::Text("00:00:00".into()),
            Value::Null,
            Value::Null,
            Value::Double(1.5),
            Value::Double(-1e300),
            Value::Int(2024),
        ]
    );
}

#[test]
fn types_are_reused_when_not_rebound() {
    use ColumnType::*;
    let mut types = Vec::new();
    let mut long = HashMap::new();
    let first = client_execute(1, &[MyValue::Int(1), MyValue::Bytes(b"a".to_vec())]);
    assert_eq!(
        decode_params(&first, 2, &mut types, &mut long).unwrap(),
        [Value::Int(1), Value::Text("a".into())]
    );
    assert_eq!(
        types,
        [(MYSQL_TYPE_LONGLONG, false), (MYSQL_TYPE_VAR_STRING, false)]
    );
    let params = [
        (
            MYSQL_TYPE_LONGLONG,
            false,
            Some(2i64.to_le_bytes().to_vec()),
        ),
        (MYSQL_TYPE_VAR_STRING, false, None),
    ];
    let second = hand_execute(&params, false);
    assert_eq!(
        decode_params(&second, 2, &mut types, &mut long).unwrap(),
        [Value::Int(2), Value::Null]
    );
    // Without types from an earlier execution there is nothing to reuse.
    assert!(decode_params(&second, 2, &mut Vec::new(), &mut long).is_err());
}

#[test]
fn long_data_replaces_the_parameter() {
    let mut chunks = Vec::new();
    for chunk in [&b"hello "[..], b"world"] {
        let mut payload = Vec::new();
        ComStmtSendLongData::new(3, 1, chunk).serialize(&mut payload);
        match decode_command(payload).unwrap() {
            Command::StmtSendLongData {
                stmt_id: 3,
                param: 1,
                data,
            } => chunks.push(data),
            other => panic!("{other:?}"),
        }
    }
    let mut long = HashMap::from([(1u16, chunks.concat()), (0u16, b"blob".to_vec())]);
    // mysql_common leaves out a parameter sent as long data; build the same by hand.
    let params = [
        (ColumnType::MYSQL_TYPE_BLOB, false, Some(vec![])),
        (ColumnType::MYSQL_TYPE_VAR_STRING, false, Some(vec![])),
        (
            ColumnType::MYSQL_TYPE_LONGLONG,
            false,
            Some(9i64.to_le_bytes().to_vec()),
        ),
    ];
    let req = hand_execute(&params, true);
    let values = decode_params(&req, 3, &mut Vec::new(), &mut long).unwrap();
    assert_eq!(
        values,
        [
            Value::Bytes(b"blob".to_vec()),
            Value::Text("hello world".into()),
            Value::Int(9)
        ]
    );
    assert!(long.is_empty(), "long data lasts one execution");
}

#[test]
fn bad_parameters_are_errors() {
    let req = client_execute(1, &[MyValue::Int(1), MyValue::Int(2)]);
    assert!(decode_params(&req, 3, &mut Vec::new(), &mut HashMap::new()).is_err());
    let unknown = execute(&[0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0x42, 0]);
    assert!(decode_params(&unknown, 1, &mut Vec::new(), &mut HashMap::new()).is_err());
    let bad_date = hand_execute(
        &[(ColumnType::MYSQL_TYPE_DATE, false, Some(vec![3, 1, 2, 3]))],
        true,
    );
    assert!(decode_params(&bad_date, 1, &mut Vec::new(), &mut HashMap::new()).is_err());
}
