//! Framing of PostgreSQL protocol messages on one connection: the untyped startup packets,
//! then typed messages decoded by `pgwire`, and a write buffer flushed when the protocol says.
//!
//! Each message is cut out of the stream by its length before it is decoded, so a message that
//! lies about its contents cannot read into the next one, and a decoder panic on a malformed
//! body is caught and turned into an error that closes this connection only.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;

use bytes::{Buf, Bytes, BytesMut};
use pgwire::messages::extendedquery::{Describe, Execute, Parse, Sync};
use pgwire::messages::simplequery::Query;
use pgwire::messages::{DecodeContext, PgWireBackendMessage, PgWireFrontendMessage};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::tls::{Stream, Tls, Upgrade};

/// The largest message a client may send (PostgreSQL's own limit is 1 GB; a proxy need not
/// buffer that much for one statement).
const MAX_MESSAGE: usize = 64 << 20;
/// The largest message before login, PostgreSQL's own bound on an authentication token.
const MAX_AUTH_MESSAGE: usize = 65_535;
/// How much buffer one read may add: a message is buffered as its bytes arrive, not as its
/// header announces.
const READ_CHUNK: usize = 64 << 10;
/// A message longer than this is read into a buffer of its own (see `read_large`).
const LARGE_MESSAGE: usize = 1 << 20;
/// Startup packets are small; PostgreSQL refuses ones over 10 000 bytes.
const MAX_STARTUP: usize = 10_000;
/// Output is written out once this much has accumulated, even before the protocol's flush
/// point, so a large result set does not sit in memory whole.
const WRITE_HIGH_WATER: usize = 64 << 10;

const SSL_REQUEST: u32 = 80_877_103;
const GSSENC_REQUEST: u32 = 80_877_104;
const CANCEL_REQUEST: u32 = 80_877_102;
const PROTOCOL_3: u32 = 3 << 16;

/// Why a connection cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The socket failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// The client sent something that is not a protocol message.
    #[error("invalid message: {0}")]
    Malformed(String),
    /// A well-formed Query or Parse whose SQL is not UTF-8: an error for that message only
    /// (PostgreSQL's 22021), not for the connection.
    #[error("invalid byte sequence for encoding \"UTF8\": 0x{byte:02x}")]
    NotUtf8 {
        /// The first byte that is not UTF-8.
        byte: u8,
        /// Whether it came in the extended protocol (which then skips to the next Sync).
        extended: bool,
    },
}

/// What a client opens a connection with.
#[derive(Debug)]
pub enum Opening {
    /// A protocol 3 startup packet's parameters (`user`, `database`, …).
    Startup(BTreeMap<String, String>),
    /// A CancelRequest: the cancel key of the session whose statement is to be cancelled.
    Cancel {
        /// The session's id (BackendKeyData's process id).
        id: u32,
        /// The key's secret.
        secret: i32,
    },
    /// A protocol version other than 3.x.
    UnsupportedVersion(u32),
}

/// A connection's socket with its read and write buffers.
pub struct Wire {
    stream: Stream,
    read: BytesMut,
    write: BytesMut,
    context: DecodeContext,
    /// The largest message accepted: small until the client has logged in.
    max_message: usize,
    /// A large message being read into a buffer of its own (see `read_large`): what arrived,
    /// and its whole length, kept across a cancelled read.
    large: Option<(Vec<u8>, usize)>,
}

impl Wire {
    /// Wraps an accepted socket.
    pub fn new(stream: Stream) -> Self {
        let mut context = DecodeContext::default();
        context.awaiting_frontend_ssl = false;
        context.awaiting_frontend_startup = false;
        Self {
            stream,
            read: BytesMut::with_capacity(8 << 10),
            write: BytesMut::with_capacity(8 << 10),
            context,
            max_message: MAX_AUTH_MESSAGE,
            large: None,
        }
    }

    /// Whether the client is served over TLS.
    pub fn is_tls(&self) -> bool {
        self.stream.is_tls()
    }

    /// Lifts the message limit to what statements may need, once the client is logged in.
    pub fn logged_in(&mut self) {
        self.max_message = MAX_MESSAGE;
    }

    /// Reads the opening packet, turning the connection to TLS at an SSLRequest when `tls` is
    /// set and refusing SSL and GSS encryption requests otherwise (the client then goes on in
    /// plain text or gives up, as it is configured to). `None` when the client closed the
    /// connection.
    pub async fn read_opening(&mut self, tls: Option<&Tls>) -> Result<Option<Opening>, WireError> {
        loop {
            if !self.fill(4).await? {
                return Ok(None);
            }
            let len = be_u32(&self.read[..4]) as usize;
            if !(8..=MAX_STARTUP).contains(&len) {
                return Err(WireError::Malformed(format!(
                    "startup packet of {len} bytes"
                )));
            }
            if !self.fill(len).await? {
                return Ok(None);
            }
            let mut packet = self.read.split_to(len);
            packet.advance(4);
            let code = packet.get_u32();
            match code {
                SSL_REQUEST | GSSENC_REQUEST => {
                    match tls.filter(|_| code == SSL_REQUEST && !self.stream.is_tls()) {
                        Some(tls) => {
                            self.stream.write_all(b"S").await?;
                            let early = self.read.split().to_vec();
                            self.stream.start_tls(tls, early).await?;
                        }
                        None => self.stream.write_all(b"N").await?,
                    }
                }
                CANCEL_REQUEST if packet.remaining() >= 8 => {
                    let id = packet.get_u32();
                    let secret = packet.get_i32();
                    return Ok(Some(Opening::Cancel { id, secret }));
                }
                CANCEL_REQUEST => {
                    return Err(WireError::Malformed("short cancel request".to_owned()));
                }
                code if code >> 16 == 3 || code == PROTOCOL_3 => {
                    return Ok(Some(Opening::Startup(startup_parameters(&packet)?)));
                }
                other => return Ok(Some(Opening::UnsupportedVersion(other))),
            }
        }
    }

    /// Reads the next typed message; `None` when the client closed the connection. Cancel safe:
    /// a partly read message stays in the buffer (a large one in its own).
    pub async fn read_message(&mut self) -> Result<Option<PgWireFrontendMessage>, WireError> {
        if self.large.is_none() {
            if !self.fill(5).await? {
                return Ok(None);
            }
            let len = be_u32(&self.read[1..5]) as usize;
            if !(4..=self.max_message).contains(&len) {
                return Err(WireError::Malformed(format!(
                    "message '{}' of {len} bytes",
                    char::from(self.read[0]).escape_default()
                )));
            }
            if len <= LARGE_MESSAGE {
                if !self.fill(1 + len).await? {
                    return Ok(None);
                }
                let message = self.read.split_to(1 + len);
                return decode_message(message, &self.context).map(Some);
            }
            let buffered = self.read.len().min(1 + len);
            let mut message = Vec::with_capacity(1 + len);
            message.extend_from_slice(&self.read[..buffered]);
            self.read.advance(buffered);
            self.large = Some((message, 1 + len));
        }
        let message = self.read_large().await?;
        match message.first() {
            Some(b'Q') => large_query(message).map(Some),
            // Unshared, so taken over without a copy.
            _ => decode_message(Bytes::from(message).into(), &self.context).map(Some),
        }
    }

    /// Whether the next message, already received, is a Sync: without waiting for more.
    pub fn sync_is_next(&self) -> bool {
        self.read.len() >= 5 && self.read[0] == b'S' && be_u32(&self.read[1..5]) == 4
    }

    /// The rest of a large message (a multi-row INSERT of megabytes, a long parameter), read
    /// straight into a buffer of exactly its size: the shared buffer would grow by doubling
    /// past it, and keep that size for as long as the connection lives. Cancel safe: what
    /// arrived stays in `large` for the next call.
    async fn read_large(&mut self) -> Result<Vec<u8>, WireError> {
        let Some((message, len)) = &mut self.large else {
            return Err(WireError::Malformed("no message being read".into()));
        };
        while message.len() < *len {
            let missing = (*len - message.len()) as u64;
            if (&mut self.stream).take(missing).read_buf(message).await? == 0 {
                return Err(WireError::Malformed("connection closed mid-message".into()));
            }
        }
        self.large
            .take()
            .map(|(message, _)| message)
            .ok_or_else(|| WireError::Malformed("no message being read".into()))
    }

    /// Queues a message; writes the buffer out when it has grown large.
    pub async fn send(&mut self, message: PgWireBackendMessage) -> Result<(), WireError> {
        message
            .encode(&mut self.write)
            .map_err(|e| WireError::Io(std::io::Error::other(e.to_string())))?;
        if self.write.len() >= WRITE_HIGH_WATER {
            self.flush().await?;
        }
        // Each 64 KiB write counts once against the runtime's budget, hundreds of rows: a long
        // result must let other sessions run between messages, not between megabytes.
        tokio::task::consume_budget().await;
        Ok(())
    }

    /// Writes out everything queued.
    pub async fn flush(&mut self) -> Result<(), WireError> {
        if !self.write.is_empty() {
            self.stream.write_all(&self.write).await?;
            self.write.clear();
        }
        Ok(())
    }

    /// Reads until `n` bytes are buffered; `false` at a clean end of stream.
    async fn fill(&mut self, n: usize) -> Result<bool, WireError> {
        while self.read.len() < n {
            self.read.reserve((n - self.read.len()).min(READ_CHUNK));
            if self.stream.read_buf(&mut self.read).await? == 0 {
                if self.read.is_empty() {
                    return Ok(false);
                }
                return Err(WireError::Malformed("connection closed mid-message".into()));
            }
        }
        Ok(true)
    }
}

/// A cursor over a message body that fails instead of reading past the end.
struct Body<'a>(&'a [u8]);

impl<'a> Body<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if self.0.len() < n {
            return Err("body ends early");
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u16(&mut self) -> Result<usize, &'static str> {
        let b = self.take(2)?;
        Ok(usize::from(u16::from_be_bytes([b[0], b[1]])))
    }

    fn i32(&mut self) -> Result<i32, &'static str> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A NUL-terminated string's bytes, without the NUL.
    fn cstring(&mut self) -> Result<&'a [u8], &'static str> {
        let end = self
            .0
            .iter()
            .position(|b| *b == 0)
            .ok_or("string without its terminator")?;
        self.take(end + 1).map(|s| &s[..end])
    }
}

/// Parse, Describe, Execute and Sync, which come with every statement of the extended
/// protocol, decoded here with every count and length checked as [`check_body`] does: pgwire
/// would scan each string twice more (a NUL search, then a lossy UTF-8 conversion). `None`:
/// the message is checked, then decoded by pgwire.
fn decode_extended(kind: u8, body: &[u8]) -> Option<PgWireFrontendMessage> {
    // pgwire's reading: an empty name is the unnamed statement or portal.
    fn name(bytes: &[u8]) -> Option<Option<String>> {
        if bytes.is_empty() {
            return Some(None);
        }
        std::str::from_utf8(bytes).ok().map(|s| Some(s.to_owned()))
    }
    let mut body = Body(body);
    Some(match kind {
        b'P' => {
            let statement = name(body.cstring().ok()?)?;
            let query = std::str::from_utf8(body.cstring().ok()?).ok()?.to_owned();
            let count = body.u16().ok()?;
            let types = body.take(count * 4).ok()?;
            let types = types.chunks_exact(4).map(be_u32).collect();
            PgWireFrontendMessage::Parse(Parse::new(statement, query, types))
        }
        b'D' => {
            let target = *body.take(1).ok()?.first()?;
            let portal = name(body.cstring().ok()?)?;
            PgWireFrontendMessage::Describe(Describe::new(target, portal))
        }
        b'E' => {
            let portal = name(body.cstring().ok()?)?;
            let max_rows = body.i32().ok()?;
            PgWireFrontendMessage::Execute(Execute::new(portal, max_rows))
        }
        b'S' => PgWireFrontendMessage::Sync(Sync::new()),
        _ => return None,
    })
}

/// A Query read by [`Wire::read_large`] (type byte, length, text, NUL), its text taken
/// without a copy.
fn large_query(mut message: Vec<u8>) -> Result<PgWireFrontendMessage, WireError> {
    // Past the type byte and length, whose bytes may be zero.
    if message[5..].iter().position(|&b| b == 0) != Some(message.len() - 6) {
        return Err(WireError::Malformed(
            "message 'Q': the query is not one NUL-terminated string".into(),
        ));
    }
    message.pop();
    message.drain(..5);
    match String::from_utf8(message) {
        Ok(query) => Ok(PgWireFrontendMessage::Query(Query::new(query))),
        Err(e) => {
            let byte = e.as_bytes().get(e.utf8_error().valid_up_to());
            Err(WireError::NotUtf8 {
                byte: byte.copied().unwrap_or_default(),
                extended: false,
            })
        }
    }
}

/// Checks and decodes one whole message: type byte, length, body.
fn decode_message(
    mut message: BytesMut,
    context: &DecodeContext,
) -> Result<PgWireFrontendMessage, WireError> {
    let kind = message[0];
    // Checked while decoded; one that does not decode is checked below, for its error.
    if let Some(decoded) = decode_extended(kind, &message[5..]) {
        return Ok(decoded);
    }
    // pgwire's decoders trust the counts inside a body; check them first, so that a lying
    // message is refused rather than read past its end.
    check_body(kind, &message[5..]).map_err(|e| {
        WireError::Malformed(format!(
            "message '{}': {e}",
            char::from(kind).escape_default()
        ))
    })?;
    // A Query, the most frequent message, is decoded here: pgwire would scan its text twice
    // more (a NUL search, then a lossy UTF-8 conversion) after the check below.
    if kind == b'Q' {
        let text = message[5..].split(|b| *b == 0).next().unwrap_or_default();
        return match std::str::from_utf8(text) {
            Ok(query) => Ok(PgWireFrontendMessage::Query(Query::new(query.to_owned()))),
            Err(e) => Err(WireError::NotUtf8 {
                byte: text.get(e.valid_up_to()).copied().unwrap_or_default(),
                extended: false,
            }),
        };
    }
    // pgwire would replace invalid UTF-8 with U+FFFD, and the shards would store that.
    if let Some(byte) = invalid_text(kind, &message[5..]) {
        return Err(WireError::NotUtf8 {
            byte,
            extended: kind != b'Q',
        });
    }
    let decoded = std::panic::catch_unwind(AssertUnwindSafe(|| {
        PgWireFrontendMessage::decode(&mut message, context)
    }));
    match decoded {
        Ok(Ok(Some(message))) => Ok(message),
        Ok(Ok(None)) => Err(WireError::Malformed(format!(
            "message '{}' is incomplete",
            char::from(kind).escape_default()
        ))),
        Ok(Err(e)) => Err(WireError::Malformed(e.to_string())),
        Err(_) => Err(WireError::Malformed(format!(
            "message '{}' has an invalid body",
            char::from(kind).escape_default()
        ))),
    }
}

/// The first byte that is not UTF-8 in the statement names and SQL of a Query or Parse body
/// (already checked by [`check_body`]).
fn invalid_text(kind: u8, body: &[u8]) -> Option<u8> {
    let strings = match kind {
        b'Q' => 1,
        b'P' => 2,
        _ => return None,
    };
    body.split(|b| *b == 0).take(strings).find_map(|text| {
        std::str::from_utf8(text)
            .err()
            .map(|e| text[e.valid_up_to()])
    })
}

/// Checks that the counts and lengths in the body of a message of type `kind` stay within it.
fn check_body(kind: u8, body: &[u8]) -> Result<(), &'static str> {
    let mut body = Body(body);
    match kind {
        b'Q' => body.cstring().map(|_| ()),
        b'P' => {
            body.cstring()?;
            body.cstring()?;
            let types = body.u16()?;
            body.take(types * 4).map(|_| ())
        }
        b'B' => {
            body.cstring()?;
            body.cstring()?;
            let formats = body.u16()?;
            body.take(formats * 2)?;
            for _ in 0..body.u16()? {
                let len = body.i32()?;
                if len >= 0 {
                    body.take(len as usize)?;
                } else if len != -1 {
                    return Err("negative parameter length");
                }
            }
            let formats = body.u16()?;
            body.take(formats * 2).map(|_| ())
        }
        b'D' | b'C' => {
            body.take(1)?;
            body.cstring().map(|_| ())
        }
        b'E' => {
            body.cstring()?;
            body.i32().map(|_| ())
        }
        _ => Ok(()),
    }
}

/// Checks a SASLInitialResponse body (mechanism, then a length-prefixed response) before
/// pgwire reads it.
pub fn check_sasl_initial(body: &[u8]) -> Result<(), &'static str> {
    let mut body = Body(body);
    body.cstring()?;
    let len = body.i32()?;
    if len >= 0 {
        body.take(len as usize)?;
    }
    Ok(())
}

fn be_u32(bytes: &[u8]) -> u32 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[..4]);
    u32::from_be_bytes(word)
}

/// The name/value pairs of a startup packet, each a NUL-terminated string, ending with a NUL.
fn startup_parameters(body: &[u8]) -> Result<BTreeMap<String, String>, WireError> {
    let mut strings = body.split(|b| *b == 0);
    let mut parameters = BTreeMap::new();
    loop {
        let name = strings.next().unwrap_or_default();
        if name.is_empty() {
            return Ok(parameters);
        }
        let value = strings
            .next()
            .ok_or_else(|| WireError::Malformed("startup parameter without a value".into()))?;
        let text = |b: &[u8]| {
            String::from_utf8(b.to_vec())
                .map_err(|_| WireError::Malformed("startup parameter is not UTF-8".into()))
        };
        parameters.insert(text(name)?, text(value)?);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lying_bodies_are_refused() {
        assert!(check_body(b'B', &[0, 0, 0xff, 0xff, 0, 1]).is_err());
        assert!(check_body(b'B', &[0, 0, 0, 0, 0, 1, 0, 0, 0, 9, 1]).is_err());
        assert!(check_body(b'B', &[0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0, 0]).is_ok());
        assert!(check_body(b'P', &[0, b'x', 0, 0xff, 0xff]).is_err());
        assert!(check_body(b'P', &[0, b'x', 0, 0, 1, 0, 0, 0, 23]).is_ok());
        assert!(check_body(b'D', &[]).is_err());
        assert!(check_body(b'E', &[0, 0, 0]).is_err());
        assert!(check_body(b'Q', b"SELECT 1").is_err());
        assert!(check_sasl_initial(b"SCRAM-SHA-256\0\0\0\0\x05abc").is_err());
    }

    /// Random, truncated and lying bodies of every frontend message type: each is refused or
    /// decoded, and none gets as far as making pgwire's decoder panic (which `check_body` is
    /// there to prevent; the panic would be caught, but it means a check is missing).
    #[test]
    fn random_messages_never_reach_a_decoder_panic() {
        for seed in crate::fuzzing::seeds(0x9E37_79B9_7F4A_7C15) {
            let mut rng = crate::fuzzing::Rng::new(seed);
            let mut next = move || rng.next();
            let kinds = b"QPBEDCSHXpdcf!";
            let mut context = DecodeContext::default();
            context.awaiting_frontend_ssl = false;
            context.awaiting_frontend_startup = false;
            for _ in 0..20_000 {
                let kind = kinds[(next() % kinds.len() as u64) as usize];
                let len = (next() % 48) as usize;
                let body: Vec<u8> = (0..len)
                    .map(|_| match next() % 6 {
                        0 => 0,
                        1 => 0xff,
                        2 => (next() % 4) as u8,
                        3 => b'a',
                        _ => next() as u8,
                    })
                    .collect();
                let mut message = BytesMut::with_capacity(5 + len);
                message.extend_from_slice(&[kind]);
                message.extend_from_slice(&((len + 4) as u32).to_be_bytes());
                message.extend_from_slice(&body);
                let decoded = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    decode_message(message, &context)
                }));
                match decoded {
                    Ok(Err(WireError::Malformed(m))) if m.contains("invalid body") => {
                        panic!("pgwire panicked on '{}' {body:?}", char::from(kind))
                    }
                    Ok(_) => {}
                    Err(_) => panic!("a check panicked on '{}' {body:?}", char::from(kind)),
                }
            }
        }
    }

    /// What is decoded here is what pgwire decodes from the same bytes.
    #[test]
    fn extended_messages_decode_as_pgwire_decodes_them() {
        let mut context = DecodeContext::default();
        context.awaiting_frontend_ssl = false;
        context.awaiting_frontend_startup = false;
        let bodies: [(u8, &[u8]); 8] = [
            (b'P', b"\0INSERT INTO t VALUES ($1)\0\0\0"),
            (b'P', b"s1\0SELECT $1, $2\0\0\x02\0\0\0\x17\0\0\0\x19"),
            (b'P', b"\0\0\0\0"),
            (b'D', b"P\0"),
            (b'D', b"Sstatement\0"),
            (b'E', b"\0\0\0\0\0"),
            (b'E', b"portal\0\0\0\0\x05"),
            (b'S', b""),
        ];
        for (kind, body) in bodies {
            let mut message = BytesMut::new();
            message.extend_from_slice(&[kind]);
            message.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
            message.extend_from_slice(body);
            let ours = decode_extended(kind, body).unwrap();
            let theirs = PgWireFrontendMessage::decode(&mut message, &context)
                .unwrap()
                .unwrap();
            assert_eq!(format!("{ours:?}"), format!("{theirs:?}"));
        }
        // Not UTF-8: left to pgwire's path, which refuses it.
        assert!(decode_extended(b'P', b"\0SELECT '\xff'\0\0\0").is_none());
    }

    #[test]
    fn sql_that_is_not_utf8_is_found() {
        assert_eq!(invalid_text(b'Q', b"SELECT 'caf\xc3\xa9'\0"), None);
        assert_eq!(invalid_text(b'Q', b"SELECT '\xff'\0"), Some(0xff));
        assert_eq!(invalid_text(b'P', b"s\0SELECT '\xc3('\0\0\0"), Some(0xc3));
        assert_eq!(invalid_text(b'P', b"\xfe\0SELECT 1\0\0\0"), Some(0xfe));
        assert_eq!(invalid_text(b'B', b"\xff\0\0"), None);
    }

    /// A large Query is one NUL-terminated string after its type byte and length, whose bytes
    /// may be zero themselves.
    #[test]
    fn large_queries_are_checked_after_their_length() {
        let query = |text: &[u8]| {
            let mut message = vec![b'Q'];
            message.extend_from_slice(&((text.len() + 4) as u32).to_be_bytes());
            message.extend_from_slice(text);
            large_query(message)
        };
        let long = format!("SELECT '{}'\0", "x".repeat(LARGE_MESSAGE));
        match query(long.as_bytes()) {
            Ok(PgWireFrontendMessage::Query(q)) => assert_eq!(q.query.len(), long.len() - 1),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            query(b"SELECT 1\0; SELECT 2\0"),
            Err(WireError::Malformed(_))
        ));
        assert!(matches!(query(b"SELECT 1"), Err(WireError::Malformed(_))));
        assert!(matches!(
            query(b"SELECT '\xff'\0"),
            Err(WireError::NotUtf8 { byte: 0xff, .. })
        ));
    }

    #[test]
    fn startup_parameters_are_pairs() {
        let body = b"user\0alice\0database\0sharding_db\0\0";
        let parameters = startup_parameters(body).unwrap();
        assert_eq!(parameters["user"], "alice");
        assert_eq!(parameters["database"], "sharding_db");
        assert!(startup_parameters(b"user").is_err());
        assert!(startup_parameters(b"").unwrap().is_empty());
    }
}
