//! The connection phase driven from a hand-written client over an in-memory stream.

use mysql_common::auth::plugins::mysql_native_password::scramble_native;
use mysql_common::constants::CapabilityFlags as Caps;
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    AuthPlugin, AuthSwitchRequest, CommonOkPacket, ErrPacket, HandshakePacket, HandshakeResponse,
    OkPacket, OkPacketDeserializer,
};
use mysql_common::proto::MySerialize;
use tokio::io::{DuplexStream, duplex};

use super::*;

/// The in-memory stream is never offered TLS (the end-to-end tests cover it).
impl crate::tls::Upgrade for DuplexStream {
    async fn start_tls(&mut self, _: &crate::tls::Tls, _: Vec<u8>) -> std::io::Result<()> {
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

fn client_caps() -> Caps {
    Caps::CLIENT_PROTOCOL_41
        | Caps::CLIENT_SECURE_CONNECTION
        | Caps::CLIENT_PLUGIN_AUTH
        | Caps::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | Caps::CLIENT_DEPRECATE_EOF
        | Caps::CLIENT_TRANSACTIONS
        | Caps::CLIENT_LONG_PASSWORD
        | Caps::CLIENT_MULTI_STATEMENTS
        | Caps::CLIENT_SSL_VERIFY_SERVER_CERT
}

fn greeting() -> Greeting {
    Greeting {
        connection_id: 42,
        server_version: "8.0.36-Keyshard".into(),
        mariadb: false,
    }
}

fn passwords(user: &str) -> Result<Option<String>, String> {
    Ok(password_of(user))
}

fn password_of(user: &str) -> Option<String> {
    match user {
        "root" => Some("secret".into()),
        "guest" => Some(String::new()),
        _ => None,
    }
}

fn response_payload(
    auth: &[u8],
    user: &str,
    db: Option<&str>,
    plugin: AuthPlugin<'static>,
    caps: Caps,
) -> Vec<u8> {
    let mut attrs = std::collections::HashMap::new();
    attrs.insert("_client_name".to_owned(), "test".to_owned());
    let response = HandshakeResponse::new(
        Some(auth),
        (8, 0, 36),
        Some(user.as_bytes()),
        db.map(str::as_bytes),
        Some(plugin),
        caps,
        Some(attrs),
        16 * 1024 * 1024,
    );
    let mut buf = Vec::new();
    response.serialize(&mut buf);
    buf
}

/// Reads the greeting as a client would and returns its 20-byte nonce.
async fn read_greeting(client: &mut PacketIo<DuplexStream>) -> Vec<u8> {
    let payload = client.read_packet().await.unwrap().unwrap();
    let hs: HandshakePacket<'_> = ParseBuf(&payload).parse(()).unwrap();
    assert_eq!(hs.protocol_version(), 10);
    assert_eq!(hs.server_version_str(), "8.0.36-Keyshard");
    assert_eq!(hs.server_version_parsed(), Some((8, 0, 36)));
    assert_eq!(hs.connection_id(), 42);
    assert_eq!(hs.auth_plugin(), Some(AuthPlugin::MysqlNativePassword));
    assert!(!hs.capabilities().contains(Caps::CLIENT_SSL));
    assert!(!hs.capabilities().contains(Caps::CLIENT_COMPRESS));
    assert!(hs.capabilities().contains(Caps::CLIENT_DEPRECATE_EOF));
    let nonce = hs.nonce();
    assert_eq!(nonce.len(), 20);
    nonce
}

/// Runs `accept` against `client_side`, which plays the client on the other end.
async fn run<F, Fut, T>(client_side: F) -> (Result<Client, ProtocolError>, T)
where
    F: FnOnce(PacketIo<DuplexStream>) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let (client, server) = duplex(4096);
    let mut server = PacketIo::new(server);
    let greeting = greeting();
    let server_side = accept(
        &mut server,
        &greeting,
        None,
        "10.0.0.7",
        passwords,
        |_, db| match db {
            Some("nowhere") => Err(DatabaseRefused::Unknown),
            _ => Ok(()),
        },
    );
    tokio::join!(server_side, client_side(PacketIo::new(client)))
}

fn expect_ok(payload: &[u8], caps: Caps) {
    let ok: OkPacket<'_> = ParseBuf(payload)
        .parse::<OkPacketDeserializer<'_, CommonOkPacket>>(caps)
        .unwrap()
        .into_inner();
    assert_eq!(ok.affected_rows(), 0);
}

fn expect_err(payload: &[u8]) -> (u16, String, String) {
    let err: ErrPacket<'_> = ParseBuf(payload).parse(Caps::CLIENT_PROTOCOL_41).unwrap();
    let e = err.server_error();
    let state = e
        .sql_state_ref()
        .map(|s| s.as_str().into_owned())
        .unwrap_or_default();
    (e.error_code(), state, e.message_str().into_owned())
}

#[tokio::test]
async fn native_password_is_accepted() {
    let (server, ()) = run(|mut c| async move {
        let nonce = read_greeting(&mut c).await;
        let auth = scramble_native(&nonce, b"secret").unwrap();
        let payload = response_payload(
            &auth,
            "root",
            Some("shop"),
            AuthPlugin::MysqlNativePassword,
            client_caps(),
        );
        c.write_packet(&payload);
        c.flush().await.unwrap();
        let reply = c.read_packet().await.unwrap().unwrap();
        expect_ok(&reply, client_caps());
        assert_eq!(c.sequence(), 3, "OK is the third packet");
    })
    .await;
    let client = server.unwrap();
    assert_eq!(client.user, "root");
    assert_eq!(client.database.as_deref(), Some("shop"));
    assert_eq!(client.collation, 45);
    // mysql_common's builder adds the flags for the database and attributes it was given.
    let sent = client_caps() | Caps::CLIENT_CONNECT_WITH_DB | Caps::CLIENT_CONNECT_ATTRS;
    let expected = server_capabilities() & sent;
    assert_eq!(client.capabilities, expected);
    assert!(client.capabilities.contains(Caps::CLIENT_DEPRECATE_EOF));
    assert!(client.capabilities.contains(Caps::CLIENT_MULTI_STATEMENTS));
    assert!(client.capabilities.contains(Caps::CLIENT_CONNECT_WITH_DB));
}

#[tokio::test]
async fn wrong_password_is_denied_with_1045() {
    let (server, ()) = run(|mut c| async move {
        let nonce = read_greeting(&mut c).await;
        let auth = scramble_native(&nonce, b"guess").unwrap();
        let payload = response_payload(
            &auth,
            "root",
            None,
            AuthPlugin::MysqlNativePassword,
            client_caps(),
        );
        c.write_packet(&payload);
        c.flush().await.unwrap();
        let reply = c.read_packet().await.unwrap().unwrap();
        let (code, state, message) = expect_err(&reply);
        assert_eq!((code, state.as_str()), (1045, "28000"));
        assert_eq!(
            message,
            "Access denied for user 'root'@'10.0.0.7' (using password: YES)"
        );
    })
    .await;
    assert!(matches!(server, Err(ProtocolError::AccessDenied { user }) if user == "root"));
}

#[tokio::test]
async fn unknown_user_without_password_is_denied() {
    let (server, ()) = run(|mut c| async move {
        read_greeting(&mut c).await;
        let payload = response_payload(
            b"",
            "nobody",
            None,
            AuthPlugin::MysqlNativePassword,
            client_caps(),
        );
        c.write_packet(&payload);
        c.flush().await.unwrap();
        let reply = c.read_packet().await.unwrap().unwrap();
        let (code, _, message) = expect_err(&reply);
        assert_eq!(code, 1045);
        assert!(message.ends_with("(using password: NO)"), "{message}");
    })
    .await;
    assert!(matches!(server, Err(ProtocolError::AccessDenied { .. })));
}

#[tokio::test]
async fn empty_password_accepts_an_empty_answer() {
    let (server, ()) = run(|mut c| async move {
        read_greeting(&mut c).await;
        let payload = response_payload(
            b"",
            "guest",
            None,
            AuthPlugin::MysqlNativePassword,
            client_caps(),
        );
        c.write_packet(&payload);
        c.flush().await.unwrap();
        let reply = c.read_packet().await.unwrap().unwrap();
        expect_ok(&reply, client_caps());
    })
    .await;
    assert_eq!(server.unwrap().database, None);
}

#[tokio::test]
async fn caching_sha2_client_is_switched_to_native_password() {
    let (server, ()) = run(|mut c| async move {
        let nonce = read_greeting(&mut c).await;
        // What a MySQL 8 client sends first: a caching_sha2_password answer (32 bytes).
        let payload = response_payload(
            &[7u8; 32],
            "root",
            None,
            AuthPlugin::CachingSha2Password,
            client_caps(),
        );
        c.write_packet(&payload);
        c.flush().await.unwrap();
        let switch = c.read_packet().await.unwrap().unwrap();
        let switch: AuthSwitchRequest<'_> = ParseBuf(&switch).parse(()).unwrap();
        assert_eq!(switch.auth_plugin(), AuthPlugin::MysqlNativePassword);
        assert_eq!(switch.plugin_data(), &nonce[..]);
        c.write_packet(&scramble_native(switch.plugin_data(), b"secret").unwrap());
        c.flush().await.unwrap();
        let reply = c.read_packet().await.unwrap().unwrap();
        expect_ok(&reply, client_caps());
        assert_eq!(c.sequence(), 5, "greeting, response, switch, answer, OK");
    })
    .await;
    assert_eq!(server.unwrap().user, "root");
}

#[tokio::test]
async fn wrong_password_after_switch_is_denied() {
    let (server, ()) = run(|mut c| async move {
        read_greeting(&mut c).await;
        let payload = response_payload(
            &[7u8; 32],
            "root",
            None,
            AuthPlugin::CachingSha2Password,
            client_caps(),
        );
        c.write_packet(&payload);
        c.flush().await.unwrap();
        let switch = c.read_packet().await.unwrap().unwrap();
        let switch: AuthSwitchRequest<'_> = ParseBuf(&switch).parse(()).unwrap();
        c.write_packet(&scramble_native(switch.plugin_data(), b"nope").unwrap());
        c.flush().await.unwrap();
        let (code, _, _) = expect_err(&c.read_packet().await.unwrap().unwrap());
        assert_eq!(code, 1045);
    })
    .await;
    assert!(matches!(server, Err(ProtocolError::AccessDenied { .. })));
}

#[tokio::test]
async fn ssl_request_is_refused() {
    let (server, ()) = run(|mut c| async move {
        read_greeting(&mut c).await;
        let mut ssl = Vec::new();
        mysql_common::packets::SslRequest::new(client_caps() | Caps::CLIENT_SSL, 1 << 24, 45)
            .serialize(&mut ssl);
        c.write_packet(&ssl);
        c.flush().await.unwrap();
        let (code, state, _) = expect_err(&c.read_packet().await.unwrap().unwrap());
        assert_eq!((code, state.as_str()), (1043, "08S01"));
    })
    .await;
    assert!(matches!(server, Err(ProtocolError::Unsupported(_))));
}

#[tokio::test]
async fn pre_41_client_is_refused() {
    let (server, ()) = run(|mut c| async move {
        read_greeting(&mut c).await;
        // HandshakeResponse320: 2-byte flags, 3-byte max packet size, user, auth.
        c.write_packet(b"\x05\x00\x00\x00\x01root\0abcdefgh");
        c.flush().await.unwrap();
        let reply = c.read_packet().await.unwrap().unwrap();
        assert_eq!(reply[0], 0xFF);
    })
    .await;
    assert!(matches!(server, Err(ProtocolError::Unsupported(_))));
}

#[tokio::test]
async fn garbage_response_is_a_bad_handshake() {
    let (server, ()) = run(|mut c| async move {
        read_greeting(&mut c).await;
        c.write_packet(&[0x00, 0x02, 0x00, 0x00, 1, 2, 3]);
        c.flush().await.unwrap();
        let (code, _, _) = expect_err(&c.read_packet().await.unwrap().unwrap());
        assert_eq!(code, 1043);
    })
    .await;
    assert!(matches!(server, Err(ProtocolError::Malformed(_))));
}

#[tokio::test]
async fn client_hanging_up_is_an_io_error() {
    let (server, ()) = run(|mut c| async move {
        read_greeting(&mut c).await;
        drop(c);
    })
    .await;
    assert!(matches!(server, Err(ProtocolError::Io(_))));
}

#[test]
fn response_round_trips_through_mysql_common_builder() {
    for plugin in [
        AuthPlugin::MysqlNativePassword,
        AuthPlugin::CachingSha2Password,
    ] {
        for caps in [
            client_caps(),
            client_caps() - Caps::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA,
        ] {
            let payload = response_payload(
                b"0123456789abcdefghij",
                "app",
                Some("db1"),
                plugin.clone(),
                caps,
            );
            let response = parse_response(&payload, false).unwrap_or_else(|r| panic!("{:?}", r.3));
            assert_eq!(response.user(), b"app");
            assert_eq!(response.db_name(), Some(&b"db1"[..]));
            assert_eq!(response.scramble_buf(), b"0123456789abcdefghij");
            assert_eq!(response.auth_plugin(), Some(&plugin));
            assert_eq!(response.collation(), 45);
            assert!(response.capabilities().contains(Caps::CLIENT_CONNECT_ATTRS));
        }
    }
}

#[tokio::test]
async fn an_unknown_database_is_refused_with_1049_before_ok() {
    let (server, ()) = run(|mut c| async move {
        let nonce = read_greeting(&mut c).await;
        let auth = scramble_native(&nonce, b"secret").unwrap();
        let payload = response_payload(
            &auth,
            "root",
            Some("nowhere"),
            AuthPlugin::MysqlNativePassword,
            client_caps(),
        );
        c.write_packet(&payload);
        c.flush().await.unwrap();
        let reply = c.read_packet().await.unwrap().unwrap();
        let (code, state, message) = expect_err(&reply);
        assert_eq!((code, state.as_str()), (1049, "42000"));
        assert_eq!(message, "Unknown database 'nowhere'");
    })
    .await;
    assert!(matches!(server, Err(ProtocolError::UnknownDatabase(db)) if db == "nowhere"));
}

/// As MariaDB greets: CLIENT_MYSQL (CLIENT_LONG_PASSWORD) unset and the extended capabilities,
/// extended type metadata among them, in the last 4 reserved bytes; a client that asks for it
/// there (with CLIENT_MYSQL unset) gets it, one that sets CLIENT_MYSQL does not.
#[test]
fn a_mariadb_greeting_offers_extended_type_metadata() {
    let greeting = Greeting {
        mariadb: true,
        server_version: "5.5.5-10.11.19-MariaDB-Keyshard".into(),
        ..self::greeting()
    };
    let payload = greeting_payload(&greeting, &[7; SCRAMBLE_LEN], false);
    let hs: HandshakePacket<'_> = ParseBuf(&payload).parse(()).unwrap();
    assert!(!hs.capabilities().contains(Caps::CLIENT_LONG_PASSWORD));
    assert!(hs.capabilities().contains(Caps::CLIENT_DEPRECATE_EOF));
    assert_eq!(hs.nonce(), [7; SCRAMBLE_LEN]);
    let reserved_end = 1 + greeting.server_version.len() + 1 + 21 + 10;
    assert_eq!(
        payload[reserved_end - 10..reserved_end],
        [0, 0, 0, 0, 0, 0, 8, 0, 0, 0]
    );
    let plain = greeting_payload(&self::greeting(), &[7; SCRAMBLE_LEN], false);
    let hs: HandshakePacket<'_> = ParseBuf(&plain).parse(()).unwrap();
    assert!(hs.capabilities().contains(Caps::CLIENT_LONG_PASSWORD));

    let mut response = response_payload(
        b"",
        "root",
        None,
        AuthPlugin::MysqlNativePassword,
        client_caps() - Caps::CLIENT_LONG_PASSWORD,
    );
    response[28..32].copy_from_slice(&8u32.to_le_bytes());
    assert_eq!(mariadb_extended(&response), 8);
    response[..4].copy_from_slice(&client_caps().bits().to_le_bytes());
    assert_eq!(mariadb_extended(&response), 0);
}
