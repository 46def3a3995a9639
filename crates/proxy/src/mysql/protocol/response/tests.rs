//! Responses decoded back with mysql_common's client-side parsers.

use std::sync::Arc;

use keyshard_types::Value;
use mysql_common::Value as MyValue;
use mysql_common::constants::{CapabilityFlags as Caps, ColumnFlags, ColumnType, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    Column, CommonOkPacket, ErrPacket, OkPacket, OkPacketDeserializer, OldEofPacket,
    ResultSetTerminator, StmtPacket,
};
use mysql_common::proto::{Binary, Text};
use mysql_common::row::RowDeserializer;
use mysql_common::value::ServerSide;
use tokio::io::duplex;

use super::*;
use crate::mysql::protocol::packet::PacketIo;

const MODERN: Caps = Caps::CLIENT_PROTOCOL_41
    .union(Caps::CLIENT_TRANSACTIONS)
    .union(Caps::CLIENT_DEPRECATE_EOF);
const CLASSIC: Caps = Caps::CLIENT_PROTOCOL_41.union(Caps::CLIENT_TRANSACTIONS);
const AUTOCOMMIT: StatusFlags = StatusFlags::SERVER_STATUS_AUTOCOMMIT;

/// An OK packet's payload, as [`put_ok`] writes it.
fn ok(
    capabilities: Caps,
    affected_rows: u64,
    last_insert_id: u64,
    status: StatusFlags,
    warnings: u16,
    info: &str,
) -> Vec<u8> {
    let mut buf = Vec::new();
    put_ok(
        &mut buf,
        capabilities,
        affected_rows,
        last_insert_id,
        status,
        warnings,
        info,
    );
    buf
}

/// An EOF packet's payload, as [`put_eof`] writes it.
fn eof(capabilities: Caps, status: StatusFlags) -> Vec<u8> {
    let mut buf = Vec::new();
    put_eof(&mut buf, capabilities, status);
    buf
}

/// The packets an encoder wrote, as the client receives them.
async fn packets(write: impl FnOnce(&mut PacketIo<tokio::io::DuplexStream>)) -> Vec<Vec<u8>> {
    let (client, server) = duplex(1 << 20);
    let mut server = PacketIo::new(server);
    write(&mut server);
    server.flush().await.unwrap();
    drop(server);
    let mut client = PacketIo::new(client);
    let mut out = Vec::new();
    while let Some(p) = client.read_packet().await.unwrap() {
        out.push(p);
    }
    out
}

fn parse_ok<'a>(payload: &'a [u8], caps: Caps) -> OkPacket<'a> {
    ParseBuf(payload)
        .parse::<OkPacketDeserializer<'_, CommonOkPacket>>(caps)
        .unwrap()
        .into_inner()
}

fn parse_columns(defs: &[Vec<u8>]) -> Arc<[Column]> {
    defs.iter()
        .map(|d| ParseBuf(d).parse::<Column>(()).unwrap())
        .collect::<Vec<_>>()
        .into()
}

#[test]
fn ok_packet_decodes() {
    for caps in [MODERN, CLASSIC] {
        let status = AUTOCOMMIT | StatusFlags::SERVER_STATUS_IN_TRANS;
        let payload = ok(
            caps,
            3,
            1_000_000_007,
            status,
            1,
            "Rows matched: 3  Changed: 3  Warnings: 1",
        );
        let ok = parse_ok(&payload, caps);
        assert_eq!(ok.affected_rows(), 3);
        assert_eq!(ok.last_insert_id(), Some(1_000_000_007));
        assert_eq!(ok.status_flags(), status);
        assert_eq!(ok.warnings(), 1);
        assert_eq!(
            ok.info_str().as_deref(),
            Some("Rows matched: 3  Changed: 3  Warnings: 1")
        );
    }
    let bare = ok(MODERN, 0, 0, AUTOCOMMIT, 0, "");
    assert_eq!(bare, [0, 0, 0, 2, 0, 0, 0]);
}

#[test]
fn err_packet_decodes() {
    let payload = err(1064, "42000", "You have an error in your SQL syntax");
    let packet: ErrPacket<'_> = ParseBuf(&payload).parse(CLASSIC).unwrap();
    let e = packet.server_error();
    assert_eq!(e.error_code(), 1064);
    assert_eq!(e.sql_state_ref().unwrap().as_str(), "42000");
    assert_eq!(e.message_str(), "You have an error in your SQL syntax");
    let payload = err(1105, "bad", "x");
    let packet: ErrPacket<'_> = ParseBuf(&payload).parse(CLASSIC).unwrap();
    assert_eq!(
        packet.server_error().sql_state_ref().unwrap().as_str(),
        "HY000"
    );
}

#[test]
fn eof_follows_the_negotiated_style() {
    let status = AUTOCOMMIT | StatusFlags::SERVER_MORE_RESULTS_EXISTS;
    let modern = eof(MODERN, status);
    assert_eq!(modern[0], 0xFE);
    assert!(
        modern.len() < 9,
        "clients tell EOF from a row by its length"
    );
    let parsed = ParseBuf(&modern)
        .parse::<OkPacketDeserializer<'_, ResultSetTerminator>>(MODERN)
        .unwrap()
        .into_inner();
    assert_eq!(parsed.status_flags(), status);
    let classic = eof(CLASSIC, status);
    assert_eq!(classic.len(), 5);
    let parsed = ParseBuf(&classic)
        .parse::<OkPacketDeserializer<'_, OldEofPacket>>(CLASSIC)
        .unwrap()
        .into_inner();
    assert_eq!(parsed.status_flags(), status);
}

#[tokio::test]
async fn text_result_set_decodes() {
    for caps in [MODERN, CLASSIC] {
        let columns = [ResultColumn::int("id"), ResultColumn::text("name")];
        let rows = vec![
            vec![Value::Int(1), Value::Text("ünïcode".into())],
            vec![Value::UInt(u64::MAX), Value::Null],
            vec![Value::Double(1.5)],
        ];
        let p = packets(|io| write_result_set(io, caps, false, &columns, &rows, false, AUTOCOMMIT))
            .await;
        let eofs = usize::from(!caps.contains(Caps::CLIENT_DEPRECATE_EOF));
        assert_eq!(p.len(), 1 + 2 + eofs + 3 + 1);
        assert_eq!(p[0], [2]);
        let cols = parse_columns(&p[1..3]);
        assert_eq!(cols[0].name_str(), "id");
        assert_eq!(cols[1].column_type(), ColumnType::MYSQL_TYPE_VAR_STRING);
        let rows: Vec<Vec<MyValue>> = p[3 + eofs..6 + eofs]
            .iter()
            .map(|r| {
                let row: RowDeserializer<ServerSide, Text> =
                    ParseBuf(r).parse(cols.clone()).unwrap();
                row.into_inner().unwrap()
            })
            .collect();
        assert_eq!(
            rows[0],
            [
                MyValue::Bytes(b"1".to_vec()),
                MyValue::Bytes("ünïcode".into())
            ]
        );
        assert_eq!(
            rows[1],
            [MyValue::Bytes(u64::MAX.to_string().into()), MyValue::NULL]
        );
        assert_eq!(rows[2], [MyValue::Bytes(b"1.5".to_vec()), MyValue::NULL]);
        assert_eq!(p.last().unwrap()[0], 0xFE);
    }
}

fn column(name: &str, ty: ColumnType, unsigned: bool) -> ResultColumn {
    let mut c = ResultColumn::text(name);
    c.column_type = ty;
    if unsigned {
        c.flags |= ColumnFlags::UNSIGNED_FLAG;
    }
    c
}

async fn binary_row(columns: &[ResultColumn], row: Vec<Value>) -> Vec<MyValue> {
    let rows = vec![row];
    let p =
        packets(|io| write_result_set(io, MODERN, false, columns, &rows, true, AUTOCOMMIT)).await;
    let cols = parse_columns(&p[1..=columns.len()]);
    let row: RowDeserializer<ServerSide, Binary> =
        ParseBuf(&p[columns.len() + 1]).parse(cols).unwrap();
    row.into_inner().unwrap()
}

#[tokio::test]
async fn binary_rows_follow_the_declared_types() {
    use ColumnType::*;
    let columns = [
        column("a", MYSQL_TYPE_LONGLONG, false),
        column("b", MYSQL_TYPE_LONGLONG, true),
        column("c", MYSQL_TYPE_LONG, false),
        column("d", MYSQL_TYPE_SHORT, false),
        column("e", MYSQL_TYPE_TINY, true),
        column("f", MYSQL_TYPE_DOUBLE, false),
        column("g", MYSQL_TYPE_FLOAT, false),
        column("h", MYSQL_TYPE_VAR_STRING, false),
        column("i", MYSQL_TYPE_BLOB, false),
        column("j", MYSQL_TYPE_DATETIME, false),
        column("k", MYSQL_TYPE_DATE, false),
        column("l", MYSQL_TYPE_TIME, false),
        column("m", MYSQL_TYPE_NEWDECIMAL, false),
        column("n", MYSQL_TYPE_INT24, false),
    ];
    let row = vec![
        Value::Int(-5),
        Value::UInt(u64::MAX),
        Value::Int(-70_000),
        Value::Int(-300),
        Value::Int(200),
        Value::Double(2.25),
        Value::Double(0.5),
        Value::Text("hello".into()),
        Value::Bytes(vec![0, 159, 146, 150]),
        Value::Text("2024-01-02 03:04:05.000006".into()),
        Value::Text("2024-01-02".into()),
        Value::Text("-838:59:59".into()),
        Value::Text("12.50".into()),
        Value::Null,
    ];
    let got = binary_row(&columns, row).await;
    assert_eq!(
        got,
        [
            MyValue::Int(-5),
            MyValue::UInt(u64::MAX),
            MyValue::Int(-70_000),
            MyValue::Int(-300),
            MyValue::Int(200),
            MyValue::Double(2.25),
            MyValue::Float(0.5),
            MyValue::Bytes(b"hello".to_vec()),
            MyValue::Bytes(vec![0, 159, 146, 150]),
            MyValue::Date(2024, 1, 2, 3, 4, 5, 6),
            MyValue::Date(2024, 1, 2, 0, 0, 0, 0),
            MyValue::Time(true, 34, 22, 59, 59, 0),
            MyValue::Bytes(b"12.50".to_vec()),
            MyValue::NULL,
        ]
    );
}

#[tokio::test]
async fn binary_rows_convert_mismatched_values() {
    use ColumnType::*;
    let columns = [
        column("a", MYSQL_TYPE_VAR_STRING, false),
        column("b", MYSQL_TYPE_LONGLONG, false),
        column("c", MYSQL_TYPE_LONGLONG, false),
        column("d", MYSQL_TYPE_TINY, false),
        column("e", MYSQL_TYPE_DOUBLE, false),
        column("f", MYSQL_TYPE_TINY, false),
        column("g", MYSQL_TYPE_DATETIME, false),
        column("h", MYSQL_TYPE_NULL, false),
        column("i", MYSQL_TYPE_LONGLONG, false),
    ];
    let row = vec![
        Value::Int(42),
        Value::Text("7".into()),
        Value::Text("not a number".into()),
        Value::Int(1000),
        Value::Text("3.5".into()),
        Value::Text("t".into()),
        Value::Text("yesterday".into()),
        Value::Int(1),
        Value::Double(9.99),
    ];
    let got = binary_row(&columns, row).await;
    assert_eq!(
        got,
        [
            MyValue::Bytes(b"42".to_vec()),
            MyValue::Int(7),
            MyValue::NULL,
            MyValue::Int(127),
            MyValue::Double(3.5),
            MyValue::Int(1),
            MyValue::NULL,
            MyValue::NULL,
            MyValue::Int(9),
        ]
    );
}

#[tokio::test]
async fn short_rows_are_padded_with_null() {
    let columns = [ResultColumn::int("a"), ResultColumn::text("b")];
    let got = binary_row(&columns, vec![Value::Int(1)]).await;
    assert_eq!(got, [MyValue::Int(1), MyValue::NULL]);
}

#[tokio::test]
async fn no_columns_is_an_ok_packet() {
    let p =
        packets(|io| write_result_set(io, MODERN, false, &[], &[vec![]], true, AUTOCOMMIT)).await;
    assert_eq!(p.len(), 1);
    assert_eq!(parse_ok(&p[0], MODERN).affected_rows(), 0);
}

#[tokio::test]
async fn prepare_ok_decodes() {
    for caps in [MODERN, CLASSIC] {
        let eofs = usize::from(!caps.contains(Caps::CLIENT_DEPRECATE_EOF));
        let columns = [
            ResultColumn::int("id"),
            ResultColumn::text("name"),
            ResultColumn::text("x"),
        ];
        let p = packets(|io| write_prepare_ok(io, caps, false, 9, 2, &columns)).await;
        assert_eq!(p.len(), 1 + 2 + eofs + 3 + eofs);
        let stmt: StmtPacket = ParseBuf(&p[0]).parse(()).unwrap();
        assert_eq!(
            (stmt.statement_id(), stmt.num_params(), stmt.num_columns()),
            (9, 2, 3)
        );
        let params = parse_columns(&p[1..3]);
        assert_eq!(params[0].name_str(), "?");
        let cols = parse_columns(&p[3 + eofs..6 + eofs]);
        assert_eq!(cols[2].name_str(), "x");

        let p = packets(|io| write_prepare_ok(io, caps, false, 1, 0, &[])).await;
        assert_eq!(
            p.len(),
            1,
            "no definitions and no EOF for an empty statement"
        );
    }
}
