//! A whole conversation over an in-memory stream: handshake, a query, a prepared statement.

use std::collections::HashMap;
use std::sync::Arc;

use keyshard_types::Value;
use mysql_common::Value as MyValue;
use mysql_common::auth::plugins::mysql_native_password::scramble_native;
use mysql_common::constants::{CapabilityFlags as Caps, ColumnType, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    AuthPlugin, Column, ComStmtExecuteRequestBuilder, HandshakePacket, HandshakeResponse,
    StmtPacket,
};
use mysql_common::proto::{Binary, MySerialize, Text};
use mysql_common::row::RowDeserializer;
use mysql_common::value::ServerSide;
use tokio::io::{DuplexStream, duplex};

use super::command::*;
use super::error::*;
use super::handshake::*;
use super::packet::*;
use super::response::*;

/// The server half: what the frontend's session loop does, reduced to these commands.
async fn serve(mut io: PacketIo<DuplexStream>) -> Result<(), ProtocolError> {
    let greeting = Greeting {
        connection_id: 1,
        server_version: "8.0.36-Keyshard".into(),
        mariadb: false,
    };
    let client = accept(
        &mut io,
        &greeting,
        None,
        "localhost",
        |u| Ok((u == "app").then(|| "pw".to_owned())),
        |_, _| Ok(()),
    )
    .await?;
    let caps = client.capabilities;
    let status = StatusFlags::SERVER_STATUS_AUTOCOMMIT;
    let mut types = Vec::new();
    let mut long_data = HashMap::new();
    loop {
        io.reset_sequence();
        let Some(payload) = io.read_packet().await? else {
            return Ok(());
        };
        match decode_command(payload)? {
            Command::Query(sql) => {
                assert_eq!(sql, "SELECT id, name FROM t_order");
                let columns = [ResultColumn::int("id"), ResultColumn::text("name")];
                let rows = vec![vec![Value::Int(1), Value::Text("a".into())]];
                write_result_set(&mut io, caps, false, &columns, &rows, false, status);
            }
            Command::StmtPrepare(sql) => {
                assert_eq!(sql, "SELECT ?, ?");
                let columns = [ResultColumn::int("a"), ResultColumn::text("b")];
                write_prepare_ok(&mut io, caps, false, 1, 2, &columns);
            }
            Command::StmtExecute(req) => {
                let params = decode_params(&req, 2, &mut types, &mut long_data)?;
                let columns = [ResultColumn::int("a"), ResultColumn::text("b")];
                write_result_set(&mut io, caps, false, &columns, &[params], true, status);
            }
            Command::Quit => return Ok(()),
            other => panic!("unexpected {other:?}"),
        }
        io.flush().await?;
    }
}

/// Reads packets until the terminating EOF/OK of a result set (DEPRECATE_EOF negotiated).
async fn read_result(c: &mut PacketIo<DuplexStream>) -> (Arc<[Column]>, Vec<Vec<u8>>) {
    let count = c.read_packet().await.unwrap().unwrap();
    let mut columns = Vec::new();
    for _ in 0..count[0] {
        let def = c.read_packet().await.unwrap().unwrap();
        columns.push(ParseBuf(&def).parse::<Column>(()).unwrap());
    }
    let mut rows = Vec::new();
    loop {
        let p = c.read_packet().await.unwrap().unwrap();
        if p[0] == 0xFE && p.len() < 9 {
            return (columns.into(), rows);
        }
        rows.push(p);
    }
}

async fn send(c: &mut PacketIo<DuplexStream>, payload: &[u8]) {
    c.reset_sequence();
    c.write_packet(payload);
    c.flush().await.unwrap();
}

async fn client(mut c: PacketIo<DuplexStream>) {
    let greeting = c.read_packet().await.unwrap().unwrap();
    let hs: HandshakePacket<'_> = ParseBuf(&greeting).parse(()).unwrap();
    let caps = Caps::CLIENT_PROTOCOL_41
        | Caps::CLIENT_SECURE_CONNECTION
        | Caps::CLIENT_DEPRECATE_EOF
        | Caps::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;
    let auth = scramble_native(&hs.nonce(), b"pw").unwrap();
    let response = HandshakeResponse::new(
        Some(&auth[..]),
        (8, 0, 36),
        Some(&b"app"[..]),
        None::<&[u8]>,
        Some(AuthPlugin::MysqlNativePassword),
        caps,
        None,
        1 << 24,
    );
    let mut payload = Vec::new();
    response.serialize(&mut payload);
    c.write_packet(&payload);
    c.flush().await.unwrap();
    assert_eq!(
        c.read_packet().await.unwrap().unwrap()[0],
        0x00,
        "OK after auth"
    );

    send(&mut c, b"\x03SELECT id, name FROM t_order").await;
    let (columns, rows) = read_result(&mut c).await;
    assert_eq!(columns[1].name_str(), "name");
    let row: RowDeserializer<ServerSide, Text> = ParseBuf(&rows[0]).parse(columns).unwrap();
    assert_eq!(
        row.into_inner().unwrap(),
        [MyValue::Bytes(b"1".to_vec()), MyValue::Bytes(b"a".to_vec())]
    );

    send(&mut c, b"\x16SELECT ?, ?").await;
    let ok = c.read_packet().await.unwrap().unwrap();
    let stmt: StmtPacket = ParseBuf(&ok).parse(()).unwrap();
    assert_eq!((stmt.num_params(), stmt.num_columns()), (2, 2));
    for _ in 0..4 {
        c.read_packet().await.unwrap().unwrap();
    }

    let params = [
        MyValue::Int(1_234_567_890_123),
        MyValue::Bytes(b"x".to_vec()),
    ];
    let (req, _) = ComStmtExecuteRequestBuilder::new(stmt.statement_id()).build(&params);
    let mut payload = Vec::new();
    req.serialize(&mut payload);
    send(&mut c, &payload).await;
    let (columns, rows) = read_result(&mut c).await;
    assert_eq!(columns[0].column_type(), ColumnType::MYSQL_TYPE_LONGLONG);
    let row: RowDeserializer<ServerSide, Binary> = ParseBuf(&rows[0]).parse(columns).unwrap();
    assert_eq!(row.into_inner().unwrap(), params);

    send(&mut c, b"\x01").await;
}

#[tokio::test]
async fn handshake_query_prepare_execute() {
    let (c, s) = duplex(1 << 16);
    let (served, ()) = tokio::join!(serve(PacketIo::new(s)), client(PacketIo::new(c)));
    served.unwrap();
}
