//! The server side of connection setup: greeting, HandshakeResponse41, authentication.

mod scramble;

use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthPlugin, AuthSwitchRequest, HandshakePacket, HandshakeResponse};
use mysql_common::proto::MySerialize;
use tokio::io::{AsyncRead, AsyncWrite};

use super::error::ProtocolError;
use super::packet::PacketIo;
use super::response;
use crate::tls::{Tls, Upgrade};

use scramble::SCRAMBLE_LEN;

/// What the server announces about itself in the greeting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Greeting {
    /// Shown by `SELECT CONNECTION_ID()` and used by `KILL`.
    pub connection_id: u32,
    /// Clients parse the leading `x.y.z` to pick features, so keep it MySQL-like,
    /// e.g. `8.0.36-Keyshard`.
    pub server_version: String,
    /// Greet as MariaDB does (the shards are MariaDB): without CLIENT_MYSQL, offering
    /// MariaDB's extended capabilities, of which Keyshard has extended type metadata.
    pub mariadb: bool,
}

/// An authenticated client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    /// The user name it authenticated as.
    pub user: String,
    /// The database named in the handshake (CLIENT_CONNECT_WITH_DB), if any.
    pub database: Option<String>,
    /// Capabilities in effect: the server's ∩ the client's. Pass to the response encoders.
    pub capabilities: CapabilityFlags,
    /// The client's connection collation id (e.g. 45 utf8mb4_general_ci, 255 utf8mb4_0900_ai_ci).
    pub collation: u8,
    /// MariaDB's extended type metadata (MARIADB_CLIENT_EXTENDED_METADATA) was negotiated:
    /// every column definition carries it.
    pub extended_metadata: bool,
}

/// The capabilities this server offers, but CLIENT_SSL, which it offers only with a
/// certificate. No compression.
pub fn server_capabilities() -> CapabilityFlags {
    CapabilityFlags::CLIENT_LONG_PASSWORD
        | CapabilityFlags::CLIENT_LONG_FLAG
        | CapabilityFlags::CLIENT_CONNECT_WITH_DB
        | CapabilityFlags::CLIENT_PROTOCOL_41
        | CapabilityFlags::CLIENT_TRANSACTIONS
        | CapabilityFlags::CLIENT_SECURE_CONNECTION
        | CapabilityFlags::CLIENT_MULTI_STATEMENTS
        | CapabilityFlags::CLIENT_LOCAL_FILES
        | CapabilityFlags::CLIENT_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PS_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH
        | CapabilityFlags::CLIENT_CONNECT_ATTRS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CapabilityFlags::CLIENT_DEPRECATE_EOF
        // Honoured by the session's sql_mode (see `engine::mysql_startup_settings`).
        | CapabilityFlags::CLIENT_IGNORE_SPACE
}

/// MariaDB's extended capability MARIADB_CLIENT_EXTENDED_METADATA (bit 35, the fourth of the
/// upper 32), sent in the last 4 bytes of the greeting's and the response's reserved bytes.
const MARIADB_EXTENDED_METADATA: u32 = 1 << 3;

/// utf8mb4_general_ci: a utf8mb4 collation that every client library knows, unlike 255.
const DEFAULT_COLLATION: u8 = 45;
const NATIVE_PASSWORD: &[u8] = b"mysql_native_password";
const CACHING_SHA2_PASSWORD: &[u8] = b"caching_sha2_password";
const ER_HANDSHAKE_ERROR: u16 = 1043;
const ER_ACCESS_DENIED_ERROR: u16 = 1045;
/// MySQL's answer once `max_connect_errors` is reached.
const ER_HOST_IS_BLOCKED: u16 = 1129;
const ER_BAD_DB_ERROR: u16 = 1049;
const ER_DBACCESS_DENIED_ERROR: u16 = 1044;

/// Why a database named at connect time is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatabaseRefused {
    /// The proxy serves no database of that name.
    Unknown,
    /// The user may not use it (`DATABASE_PERMITTED`).
    Denied,
}
const ER_NOT_SUPPORTED_AUTH_MODE: u16 = 1251;
const ER_SECURE_TRANSPORT_REQUIRED: u16 = 3159;
/// caching_sha2_password's "perform full authentication": the client sends its password.
const FULL_AUTHENTICATION: [u8; 2] = [0x01, 0x04];

/// Runs the connection phase on a fresh connection.
///
/// Sends Handshake v10 offering `mysql_native_password` with a random 20-byte scramble, reads
/// the HandshakeResponse41 and checks the answer against `check(user)`, the user's configured
/// password (`None` for an unknown user). A client that answered for another plugin — MySQL 8
/// clients default to `caching_sha2_password` — is sent an AuthSwitchRequest back to
/// `mysql_native_password` with the same scramble, unless the connection is TLS: there it
/// is asked for caching_sha2_password's full authentication, its password in the clear, as
/// MySQL asks when its cache misses. On success the OK packet is sent.
///
/// With `tls`, the greeting offers CLIENT_SSL and a client's SSLRequest turns the connection
/// to TLS; when `tls` requires it, a client that does not ask gets ERR 3159.
///
/// Failures that the client can be told about (bad credentials, SSL, pre-4.1 protocol, an
/// unparsable response) are answered with an ERR packet before the error is returned; a bad
/// password gives ERR 1045 and [`ProtocolError::AccessDenied`], a database the client names
/// at connect time (or, `None`, none) that `database_check` (given the user and the database)
/// refuses gives ERR 1049 (unknown) or 1044 (not the user's) and
/// [`ProtocolError::UnknownDatabase`]. `check` gives a user's password, or refuses the login
/// with a message (throttling: ERR 1129 and [`ProtocolError::Throttled`]) before the password
/// is looked at. Close the connection on any error.
pub async fn accept<S>(
    io: &mut PacketIo<S>,
    greeting: &Greeting,
    tls: Option<&Tls>,
    peer_host: &str,
    check: impl Fn(&str) -> Result<Option<String>, String>,
    database_check: impl Fn(&str, Option<&str>) -> Result<(), DatabaseRefused>,
) -> Result<Client, ProtocolError>
where
    S: Upgrade,
{
    let scramble = scramble::new_scramble()?;
    io.reset_sequence();
    io.write_packet(&greeting_payload(greeting, &scramble, tls.is_some()));
    io.flush().await?;

    let mut payload = read_required(io).await?;
    let mut secure = false;
    if let Some(tls) = tls {
        if is_ssl_request(&payload) {
            io.start_tls(tls).await?;
            secure = true;
            payload = read_required(io).await?;
        } else if tls.required {
            let message = "Connections using insecure transport are prohibited while \
                           --require_secure_transport=ON.";
            io.write_packet(&response::err(
                ER_SECURE_TRANSPORT_REQUIRED,
                "HY000",
                message,
            ));
            io.flush().await?;
            return Err(ProtocolError::Unsupported("a plain connection".into()));
        }
    }
    let response = match parse_response(&payload, secure) {
        Ok(response) => response,
        Err((code, state, message, error)) => {
            io.write_packet(&response::err(code, state, &message));
            io.flush().await?;
            return Err(error);
        }
    };
    let capabilities = server_capabilities() & response.capabilities();
    let user = String::from_utf8_lossy(response.user()).into_owned();

    let mut auth_response = response.scramble_buf().to_vec();
    let plugin = response.auth_plugin();
    let full_authentication = secure && plugin == Some(&AuthPlugin::CachingSha2Password);
    let wants_other_plugin =
        plugin.is_some_and(|plugin| *plugin != AuthPlugin::MysqlNativePassword);
    if full_authentication {
        // A client that chose the plugin itself waits for the plugin's nonce before it answers.
        if auth_response.is_empty() {
            switch_plugin(io, CACHING_SHA2_PASSWORD, &scramble).await?;
        }
        io.write_packet(&FULL_AUTHENTICATION);
        io.flush().await?;
        auth_response = read_required(io).await?;
    } else if wants_other_plugin && capabilities.contains(CapabilityFlags::CLIENT_PLUGIN_AUTH) {
        auth_response = switch_plugin(io, NATIVE_PASSWORD, &scramble).await?;
    }

    let password = match check(&user) {
        Ok(password) => password,
        Err(message) => {
            io.write_packet(&response::err(ER_HOST_IS_BLOCKED, "HY000", &message));
            io.flush().await?;
            return Err(ProtocolError::Throttled { user });
        }
    };
    let authenticated = password.is_some_and(|password| {
        if full_authentication {
            scramble::verify_clear(&password, &auth_response)
        } else {
            scramble::verify_native(&scramble, &password, &auth_response)
        }
    });
    if !authenticated {
        let using = if auth_response.is_empty() {
            "NO"
        } else {
            "YES"
        };
        let message =
            format!("Access denied for user '{user}'@'{peer_host}' (using password: {using})");
        io.write_packet(&response::err(ER_ACCESS_DENIED_ERROR, "28000", &message));
        io.flush().await?;
        return Err(ProtocolError::AccessDenied { user });
    }

    let database = response
        .db_name()
        .map(|db| String::from_utf8_lossy(db).into_owned())
        .filter(|db| !db.is_empty());
    if let Err(refused) = database_check(&user, database.as_deref()) {
        let name = database.as_deref().unwrap_or_default();
        let (code, message) = match (refused, &database) {
            (DatabaseRefused::Unknown, _) => {
                (ER_BAD_DB_ERROR, format!("Unknown database '{name}'"))
            }
            (DatabaseRefused::Denied, Some(_)) => (
                ER_DBACCESS_DENIED_ERROR,
                format!("Access denied for user '{user}'@'%' to database '{name}'"),
            ),
            (DatabaseRefused::Denied, None) => (
                ER_DBACCESS_DENIED_ERROR,
                format!("Access denied for user '{user}'@'%' to every logical database"),
            ),
        };
        io.write_packet(&response::err(code, "42000", &message));
        io.flush().await?;
        return Err(ProtocolError::UnknownDatabase(name.to_owned()));
    }

    let status = StatusFlags::SERVER_STATUS_AUTOCOMMIT;
    io.write_packet_with(|buf| response::put_ok(buf, capabilities, 0, 0, status, 0, ""));
    io.flush().await?;
    Ok(Client {
        user,
        database,
        capabilities,
        collation: response.collation(),
        extended_metadata: greeting.mariadb
            && mariadb_extended(&payload) & MARIADB_EXTENDED_METADATA != 0,
    })
}

/// The MariaDB extended capabilities of a handshake response: the last 4 of its 23 reserved
/// bytes, when the client left CLIENT_MYSQL (CLIENT_LONG_PASSWORD) unset.
fn mariadb_extended(payload: &[u8]) -> u32 {
    if flags(payload).contains(CapabilityFlags::CLIENT_LONG_PASSWORD) {
        return 0;
    }
    payload
        .get(28..32)
        .and_then(|bytes| bytes.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

fn greeting_payload(greeting: &Greeting, scramble: &[u8; SCRAMBLE_LEN], tls: bool) -> Vec<u8> {
    let (head, tail) = scramble.split_at(8);
    let mut scramble_1 = [0u8; 8];
    scramble_1.copy_from_slice(head);
    // The second part is sent NUL-terminated, as MySQL does (auth-plugin-data length 21).
    let mut scramble_2 = tail.to_vec();
    scramble_2.push(0);
    let mut capabilities = server_capabilities();
    if tls {
        capabilities |= CapabilityFlags::CLIENT_SSL;
    }
    // MariaDB's CLIENT_MYSQL bit, unset: a client then reads the extended capabilities.
    if greeting.mariadb {
        capabilities.remove(CapabilityFlags::CLIENT_LONG_PASSWORD);
    }
    let packet = HandshakePacket::new(
        10,
        greeting.server_version.as_bytes(),
        greeting.connection_id,
        scramble_1,
        Some(scramble_2),
        capabilities,
        DEFAULT_COLLATION,
        StatusFlags::SERVER_STATUS_AUTOCOMMIT,
        Some(NATIVE_PASSWORD),
    );
    let mut payload = Vec::new();
    packet.serialize(&mut payload);
    if greeting.mariadb {
        // After the version string and its NUL: connection id 4, scramble 8, filler 1,
        // capabilities 2, collation 1, status 2, capabilities 2, scramble length 1, then 10
        // reserved bytes whose last 4 MariaDB fills with its extended capabilities.
        let at = 1 + greeting.server_version.len() + 1 + 21 + 6;
        if let Some(reserved) = payload.get_mut(at..at + 4) {
            reserved.copy_from_slice(&MARIADB_EXTENDED_METADATA.to_le_bytes());
        }
    }
    payload
}

/// Sends an AuthSwitchRequest to `plugin` with `scramble` and reads the client's answer.
async fn switch_plugin<S>(
    io: &mut PacketIo<S>,
    plugin: &[u8],
    scramble: &[u8],
) -> Result<Vec<u8>, ProtocolError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    // MySQL sends the scramble NUL-terminated here too; clients strip the NUL.
    let mut data = scramble.to_vec();
    data.push(0);
    let mut switch = Vec::new();
    AuthSwitchRequest::new(plugin, data).serialize(&mut switch);
    io.write_packet(&switch);
    io.flush().await?;
    read_required(io).await
}

async fn read_required<S>(io: &mut PacketIo<S>) -> Result<Vec<u8>, ProtocolError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    io.read_packet()
        .await?
        .ok_or_else(|| ProtocolError::Io(std::io::ErrorKind::UnexpectedEof.into()))
}

/// The ERR packet to send (code, SQLSTATE, message) and the error to return.
type Rejection = (u16, &'static str, String, ProtocolError);

/// The capability flags a handshake response starts with.
fn flags(payload: &[u8]) -> CapabilityFlags {
    payload
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .map(|b: [u8; 4]| CapabilityFlags::from_bits_truncate(u32::from_le_bytes(b)))
        .unwrap_or_default()
}

/// An SSLRequest: the first 32 bytes of a handshake response, with CLIENT_SSL.
fn is_ssl_request(payload: &[u8]) -> bool {
    payload.len() == 32 && flags(payload).contains(CapabilityFlags::CLIENT_SSL)
}

/// Decodes a HandshakeResponse41, refusing what this server cannot serve; `secure`: it came
/// over TLS.
pub(crate) fn parse_response(
    payload: &[u8],
    secure: bool,
) -> Result<HandshakeResponse<'_>, Rejection> {
    let flags = flags(payload);
    if !flags.contains(CapabilityFlags::CLIENT_PROTOCOL_41) {
        let message = "Client does not support authentication protocol requested by server; \
                       consider upgrading MySQL client";
        return Err((
            ER_NOT_SUPPORTED_AUTH_MODE,
            "08004",
            message.to_owned(),
            ProtocolError::Unsupported("client without CLIENT_PROTOCOL_41".into()),
        ));
    }
    if flags.contains(CapabilityFlags::CLIENT_SSL) && !secure {
        return Err((
            ER_HANDSHAKE_ERROR,
            "08S01",
            "Bad handshake: this server does not support SSL".to_owned(),
            ProtocolError::Unsupported("SSL requested".into()),
        ));
    }
    ParseBuf(payload).parse(()).map_err(|e| {
        (
            ER_HANDSHAKE_ERROR,
            "08S01",
            "Bad handshake".to_owned(),
            ProtocolError::malformed(format!("handshake response: {e}")),
        )
    })
}

#[cfg(test)]
mod tests;
