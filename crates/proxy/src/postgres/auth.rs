//! Startup: who the client is, whether it knows the password (SCRAM-SHA-256, or MD5 for a user
//! whose password is configured as PostgreSQL's `md5…` hash, as PostgreSQL itself chooses by
//! how a password is stored), which database it wants, and what the server tells it before the
//! first query.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use pgwire::api::auth::Password;
use pgwire::api::auth::sasl::scram::{ScramServerAuth, gen_salted_password};
use pgwire::error::PgWireError;
use pgwire::messages::PgWireBackendMessage;
use pgwire::messages::PgWireFrontendMessage;
use pgwire::messages::response::{ErrorResponse, ReadyForQuery, TransactionStatus};
use pgwire::messages::startup::{
    Authentication, BackendKeyData, NegotiateProtocolVersion, ParameterStatus,
    PasswordMessageFamily, SecretKey,
};

use super::wire::{Opening, Wire, WireError, check_sasl_initial};
use crate::engine::Databases;
use crate::engine::Engine;
use crate::throttle;
use crate::tls::Tls;

/// The iteration count of SCRAM's key derivation, PostgreSQL's default.
const SCRAM_ITERATIONS: usize = 4096;
const SCRAM: &str = "SCRAM-SHA-256";

/// Why a connection did not get past startup.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// The connection broke or sent garbage.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The client was refused with a FATAL error (already sent).
    #[error("refused: {0}")]
    Refused(String),
    /// The client left, or only wanted to cancel a query.
    #[error("client left during startup")]
    Gone,
}

/// An authenticated client.
#[derive(Debug)]
pub struct Client {
    /// The engine of the logical database it connected to.
    pub(crate) engine: Arc<Engine>,
    /// The user name.
    pub user: String,
    /// The database it connected to.
    pub database: String,
    /// Every startup parameter (application_name, client_encoding, options, …).
    pub parameters: BTreeMap<String, String>,
    /// The secret of the cancel key it was given (BackendKeyData).
    pub secret: i32,
}

/// The salted passwords of configured users, derived once per process: deriving one costs
/// 4096 HMAC rounds, which would otherwise be paid by every connection.
#[derive(Debug, Default)]
pub struct Credentials {
    salted: Mutex<HashMap<String, Salted>>,
}

/// A user's SCRAM salt and salted password, and the password they were derived from (the
/// configuration may change it).
#[derive(Debug)]
struct Salted {
    salt: Vec<u8>,
    salted: Vec<u8>,
    password: String,
}

impl Credentials {
    fn salted(&self, user: &str, password: &str) -> Result<(Vec<u8>, Vec<u8>), StartupError> {
        let mut cache = self.salted.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = cache.get(user)
            && known.password == password
        {
            return Ok((known.salt.clone(), known.salted.clone()));
        }
        let salt = random_bytes::<16>()?.to_vec();
        let salted = gen_salted_password(password, &salt, SCRAM_ITERATIONS);
        cache.insert(
            user.to_owned(),
            Salted {
                salt: salt.clone(),
                salted: salted.clone(),
                password: password.to_owned(),
            },
        );
        Ok((salt, salted))
    }
}

/// Runs the startup exchange up to and including the first ReadyForQuery.
pub async fn accept(
    wire: &mut Wire,
    databases: &Databases,
    credentials: &Credentials,
    tls: Option<&Tls>,
    connection_id: u32,
    peer: &str,
) -> Result<Client, StartupError> {
    // What the instance shares (logins, cancel keys) any engine answers.
    let engine = databases.first();
    let parameters = match wire.read_opening(tls).await? {
        Some(Opening::Startup(parameters)) => parameters,
        Some(Opening::UnsupportedVersion(version)) => {
            return Err(refuse(
                wire,
                "0A000",
                &format!(
                    "unsupported frontend protocol {}.{}: server supports 3.0",
                    version >> 16,
                    version & 0xffff
                ),
            )
            .await);
        }
        Some(Opening::Cancel { id, secret }) => {
            engine.cancel_request(id, secret).await;
            return Err(StartupError::Gone);
        }
        None => return Err(StartupError::Gone),
    };
    let Some(user) = parameters.get("user").cloned() else {
        return Err(refuse(
            wire,
            "28000",
            "no PostgreSQL user name specified in startup packet",
        )
        .await);
    };
    let database = parameters
        .get("database")
        .filter(|d| !d.is_empty())
        .cloned()
        .unwrap_or_else(|| user.clone());
    if tls.is_some_and(|tls| tls.required) && !wire.is_tls() {
        let message = format!(
            "no pg_hba.conf entry for host \"{peer}\", user \"{user}\", database \"{database}\", \
             no encryption"
        );
        return Err(refuse(wire, "28000", &message).await);
    }
    // Options the client asked for that protocol 3.0 does not have are declined by name.
    let unsupported: Vec<String> = parameters
        .keys()
        .filter(|k| k.starts_with("_pq_."))
        .cloned()
        .collect();
    if !unsupported.is_empty() {
        wire.send(PgWireBackendMessage::NegotiateProtocolVersion(
            NegotiateProtocolVersion::new(0, unsupported),
        ))
        .await?;
    }

    if let Some(wait) = engine.logins().wait(&user, peer) {
        return Err(refuse(wire, "28000", &throttle::refusal(&user, peer, wait)).await);
    }
    // An unknown user goes through the same exchange with a password nobody knows, so that
    // the answer does not tell which user names exist.
    let password = match engine.password(&user) {
        Some(password) => password,
        None => hex(&random_bytes::<24>()?),
    };
    let authenticated = match md5_hash(&password) {
        Some(hash) => md5(wire, hash).await?,
        None => scram(wire, credentials, &user, &password).await?,
    };
    let authenticated = authenticated && engine.password(&user).is_some();
    engine.logins().record(&user, peer, authenticated);
    if !authenticated {
        return Err(refuse(
            wire,
            "28P01",
            &format!("password authentication failed for user \"{user}\""),
        )
        .await);
    }
    let Some(engine) = databases.named(&database) else {
        return Err(refuse(
            wire,
            "3D000",
            &format!("database \"{database}\" does not exist"),
        )
        .await);
    };
    if !engine.may_use(&user, &database) {
        let message = format!("permission denied for database \"{database}\"");
        return Err(refuse(wire, "42501", &message).await);
    }

    wire.send(PgWireBackendMessage::Authentication(Authentication::Ok))
        .await?;
    let application_name = parameters
        .get("application_name")
        .cloned()
        .unwrap_or_default();
    for (name, value) in [
        // A PostgreSQL version number first: drivers parse it to decide which features they
        // may use.
        ("server_version", engine.identity().postgres.as_str()),
        ("server_encoding", "UTF8"),
        ("client_encoding", "UTF8"),
        ("DateStyle", "ISO, MDY"),
        ("IntervalStyle", "postgres"),
        ("integer_datetimes", "on"),
        ("standard_conforming_strings", "on"),
        ("TimeZone", "UTC"),
        ("is_superuser", "off"),
        ("session_authorization", user.as_str()),
        ("application_name", application_name.as_str()),
        ("default_transaction_read_only", "off"),
        ("in_hot_standby", "off"),
    ] {
        wire.send(PgWireBackendMessage::ParameterStatus(ParameterStatus::new(
            name.to_owned(),
            value.to_owned(),
        )))
        .await?;
    }
    // The key of a cancel request for this session (see `Engine::cancel_request`).
    let secret = i32::from_be_bytes(random_bytes::<4>()?);
    wire.send(PgWireBackendMessage::BackendKeyData(BackendKeyData::new(
        i32::try_from(connection_id).unwrap_or(i32::MAX),
        SecretKey::I32(secret),
    )))
    .await?;
    wire.send(PgWireBackendMessage::ReadyForQuery(ReadyForQuery::new(
        TransactionStatus::Idle,
    )))
    .await?;
    wire.flush().await?;
    Ok(Client {
        engine: Arc::clone(engine),
        user,
        database,
        parameters,
        secret,
    })
}

/// SCRAM-SHA-256 (RFC 5802/7677) without channel binding; `false` on a wrong password.
async fn scram(
    wire: &mut Wire,
    credentials: &Credentials,
    user: &str,
    password: &str,
) -> Result<bool, StartupError> {
    let initial = match challenge(wire, Authentication::SASL(vec![SCRAM.to_owned()])).await? {
        PasswordMessageFamily::Raw(body) => {
            check_sasl_initial(&body).map_err(|e| protocol(e.to_owned()))?;
            PasswordMessageFamily::Raw(body).into_sasl_initial_response()
        }
        other => other.into_sasl_initial_response(),
    };
    let initial = initial.map_err(|e| protocol(e.to_string()))?;
    if initial.auth_method != SCRAM {
        return Err(protocol(format!(
            "SASL mechanism {} is not supported",
            initial.auth_method
        )));
    }
    let first = initial.data.unwrap_or_default();
    let (salt, salted) = credentials.salted(user, password)?;
    let server = ScramServerAuth::new();
    let (server_first, waiting) = server
        .on_client_first_message(&first, Password::new(Some(salt), salted))
        .map_err(|e| protocol(e.to_string()))?;
    let response = challenge(
        wire,
        Authentication::SASLContinue(Bytes::from(server_first)),
    )
    .await?
    .into_sasl_response()
    .map_err(|e| protocol(e.to_string()))?;
    match waiting.on_client_final_message(&response.data) {
        Ok(server_final) => {
            wire.send(PgWireBackendMessage::Authentication(
                Authentication::SASLFinal(Bytes::from(server_final)),
            ))
            .await?;
            Ok(true)
        }
        Err(PgWireError::InvalidPassword(_)) => Ok(false),
        Err(e) => Err(protocol(e.to_string())),
    }
}

/// PostgreSQL's MD5 challenge: the client answers `md5` + md5(md5(password + user) + salt),
/// checked against the configured hash md5(password + user).
async fn md5(wire: &mut Wire, stored: &str) -> Result<bool, StartupError> {
    let salt = random_bytes::<4>()?;
    let answer = challenge(wire, Authentication::MD5Password(salt.to_vec()))
        .await?
        .into_password()
        .map_err(|e| protocol(e.to_string()))?;
    let mut input = stored.as_bytes().to_vec();
    input.extend_from_slice(&salt);
    let expected = format!("md5{:x}", md5::compute(input));
    Ok(answer.password == expected)
}

/// The hash of a password configured as `md5` followed by 32 hex digits.
fn md5_hash(password: &str) -> Option<&str> {
    let hash = password.strip_prefix("md5")?;
    (hash.len() == 32 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(hash)
}

/// Sends an authentication request and reads the client's answer to it.
async fn challenge(
    wire: &mut Wire,
    request: Authentication,
) -> Result<PasswordMessageFamily, StartupError> {
    wire.send(PgWireBackendMessage::Authentication(request))
        .await?;
    wire.flush().await?;
    match wire.read_message().await? {
        Some(PgWireFrontendMessage::PasswordMessageFamily(message)) => Ok(message),
        Some(PgWireFrontendMessage::Terminate(_)) | None => Err(StartupError::Gone),
        Some(other) => Err(protocol(format!(
            "expected a password message, got {other:?}"
        ))),
    }
}

fn protocol(message: String) -> StartupError {
    StartupError::Wire(WireError::Malformed(message))
}

/// Sends a FATAL error; the caller closes the connection.
async fn refuse(wire: &mut Wire, code: &str, message: &str) -> StartupError {
    let _ = wire.send(fatal(code, message)).await;
    let _ = wire.flush().await;
    StartupError::Refused(format!("{code}: {message}"))
}

/// A FATAL ErrorResponse.
pub fn fatal(code: &str, message: &str) -> PgWireBackendMessage {
    PgWireBackendMessage::ErrorResponse(ErrorResponse::new(vec![
        (b'S', "FATAL".to_owned()),
        (b'V', "FATAL".to_owned()),
        (b'C', code.to_owned()),
        (b'M', message.to_owned()),
    ]))
}

/// Bytes from the OS's random source. Salts must be unpredictable: without the source the
/// client is refused (as on the MySQL port) rather than given a salt read off the clock.
fn random_bytes<const N: usize>() -> Result<[u8; N], StartupError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| {
        tracing::error!("the OS random source failed ({e}): refusing a PostgreSQL client");
        StartupError::Refused(format!("no OS randomness: {e}"))
    })?;
    Ok(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_hashes_are_recognised() {
        assert_eq!(
            md5_hash("md5a3556571e93b0d20722ba62be61e8c2d"),
            Some("a3556571e93b0d20722ba62be61e8c2d")
        );
        assert_eq!(md5_hash("md5short"), None);
        assert_eq!(md5_hash("root"), None);
    }
}
