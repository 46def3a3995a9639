//! Random and truncated bytes through every decoder: errors are fine, panics are not.

use std::collections::HashMap;

use keyshard_types::Value;
use mysql_common::Value as MyValue;
use mysql_common::constants::{CapabilityFlags, ColumnType, StatusFlags};
use mysql_common::packets::{AuthPlugin, ComStmtExecuteRequestBuilder, HandshakeResponse};
use mysql_common::proto::MySerialize;
use tokio::io::{AsyncWriteExt, duplex};

use super::command::*;
use super::packet::*;
use super::response::*;
use super::{handshake, response};
use crate::fuzzing::{Rng, seeds};

/// Every prefix of `payload`, and copies with random bytes overwritten.
fn mutations(rng: &mut Rng, payload: &[u8]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = (0..=payload.len()).map(|n| payload[..n].to_vec()).collect();
    for _ in 0..200 {
        let mut m = payload.to_vec();
        for _ in 0..=rng.below(4) {
            if !m.is_empty() {
                let i = rng.below(m.len());
                m[i] = rng.interesting_byte();
            }
        }
        out.push(m);
    }
    out
}

fn exercise_command(rng: &mut Rng, payload: &[u8]) {
    let Ok(Command::StmtExecute(req)) = decode_command(payload.to_vec()) else {
        return;
    };
    for param_count in [0, 1, 2, 3, 8, 9, 17, rng.below(64)] {
        let mut types = if rng.below(2) == 0 {
            Vec::new()
        } else {
            vec![(ColumnType::MYSQL_TYPE_LONGLONG, false); param_count]
        };
        let mut long = HashMap::new();
        if rng.below(3) == 0 {
            long.insert(rng.below(4) as u16, rng.bytes(8));
        }
        let _ = decode_params(&req, param_count, &mut types, &mut long);
    }
}

#[test]
fn random_commands_never_panic() {
    for seed in seeds(0x9E37_79B9_7F4A_7C15) {
        let mut rng = Rng::new(seed);
        for _ in 0..20_000 {
            let mut payload = rng.bytes(48);
            if let Some(first) = payload.first_mut() {
                // Favour the commands that carry payloads.
                const CODES: [u8; 9] = [0x02, 0x03, 0x04, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b];
                if rng.below(4) != 0 {
                    *first = CODES[rng.below(CODES.len())];
                }
            }
            exercise_command(&mut rng, &payload);
        }
    }
}

#[test]
fn mutated_executes_never_panic() {
    for seed in seeds(7) {
        let mut rng = Rng::new(seed);
        let params = [
            MyValue::Int(-1),
            MyValue::UInt(u64::MAX),
            MyValue::Bytes(b"text".to_vec()),
            MyValue::NULL,
            MyValue::Double(1.0),
            MyValue::Float(2.0),
            MyValue::Date(2024, 1, 2, 3, 4, 5, 6),
            MyValue::Time(true, 1, 2, 3, 4, 5),
        ];
        for n in 0..=params.len() {
            let (req, _) = ComStmtExecuteRequestBuilder::new(1).build(&params[..n]);
            let mut payload = Vec::new();
            req.serialize(&mut payload);
            for m in mutations(&mut rng, &payload) {
                exercise_command(&mut rng, &m);
            }
        }
    }
}

#[test]
fn mutated_handshake_responses_never_panic() {
    for seed in seeds(11) {
        let mut rng = Rng::new(seed);
        let mut attrs = HashMap::new();
        attrs.insert("_os".to_owned(), "linux".to_owned());
        let caps = handshake::server_capabilities();
        let response = HandshakeResponse::new(
            Some(&[1u8; 20][..]),
            (8, 0, 36),
            Some(&b"root"[..]),
            Some(&b"db"[..]),
            Some(AuthPlugin::CachingSha2Password),
            caps,
            Some(attrs),
            1 << 24,
        );
        let mut payload = Vec::new();
        response.serialize(&mut payload);
        for m in mutations(&mut rng, &payload) {
            let _ = handshake::parse_response(&m, false);
        }
        for _ in 0..5_000 {
            let _ = handshake::parse_response(&rng.bytes(80), false);
        }
    }
}

#[tokio::test]
async fn random_streams_never_panic() {
    for seed in seeds(13) {
        let mut rng = Rng::new(seed);
        for _ in 0..300 {
            let mut bytes = rng.bytes(64);
            // Now and then a plausible header, so that payloads get read too.
            if rng.below(2) == 0 && bytes.len() >= 4 {
                bytes[0] = rng.below(bytes.len()) as u8;
                bytes[1] = 0;
                bytes[2] = 0;
            }
            let (mut client, server) = duplex(256);
            client.write_all(&bytes).await.unwrap();
            drop(client);
            let mut io = PacketIo::with_max_payload(server, 32);
            while let Ok(Some(_)) = io.read_packet().await {}
        }
    }
}

fn random_value(rng: &mut Rng) -> Value {
    match rng.below(8) {
        0 => Value::Null,
        1 => Value::Int(rng.next() as i64),
        2 => Value::UInt(rng.next()),
        3 => Value::Double(f64::from_bits(rng.next())),
        4 => Value::Bytes(rng.bytes(12)),
        5 => Value::Text(
            ["2024-01-02 03:04:05", "-838:59:59.1", "t", "12.5", "1e400"][rng.below(5)].into(),
        ),
        _ => Value::Text(String::from_utf8_lossy(&rng.bytes(12)).into_owned()),
    }
}

#[tokio::test]
async fn any_value_in_any_column_type_encodes() {
    for seed in seeds(17) {
        let mut rng = Rng::new(seed);
        let types: Vec<ColumnType> = (0..=255u8)
            .filter_map(|b| ColumnType::try_from(b).ok())
            .collect();
        let (_client, server) = duplex(64);
        let mut io = PacketIo::new(server);
        for _ in 0..500 {
            let columns: Vec<ResultColumn> = (0..rng.below(6))
                .map(|i| {
                    let mut c = ResultColumn::text(format!("c{i}"));
                    c.column_type = types[rng.below(types.len())];
                    c.flags =
                        mysql_common::constants::ColumnFlags::from_bits_truncate(rng.next() as u16);
                    c
                })
                .collect();
            let rows: Vec<Vec<Value>> = (0..3)
                .map(|_| (0..rng.below(8)).map(|_| random_value(&mut rng)).collect())
                .collect();
            let caps = CapabilityFlags::from_bits_truncate(rng.next() as u32);
            let extended = rng.next().is_multiple_of(2);
            for binary in [false, true] {
                response::write_result_set(
                    &mut io,
                    caps,
                    extended,
                    &columns,
                    &rows,
                    binary,
                    StatusFlags::empty(),
                );
            }
            response::write_prepare_ok(&mut io, caps, extended, 1, rng.below(4), &columns);
        }
    }
}
