//! Framing of PostgreSQL protocol messages on one connection: the untyped startup packets,
//! then typed messages decoded by `pgwire`, and a write buffer flushed when the protocol says.
//!
//! Each message is cut out of the stream by its length before it is decoded, so a message that
//! lies about its contents cannot read into the next one, and a decoder panic on a malformed
//! body is caught and turned into an error that closes this connection only.

use std::collections::BTreeMap;

use bytes::{Buf, Bytes, BytesMut};
use pgwire::messages::{DecodeContext, PgWireBackendMessage, PgWireFrontendMessage};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::tls::{Stream, Tls, Upgrade};

mod decode;

pub use decode::check_sasl_initial;
use decode::{decode_message, large_query};

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

    /// Whether the next message is received whole: reading it waits for nothing.
    pub fn message_is_buffered(&self) -> bool {
        self.large.is_none()
            && self.read.len() >= 5
            && self.read.len() > be_u32(&self.read[1..5]) as usize
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
        self.queued().await
    }

    /// Queues CommandComplete with `tag`, written in place.
    pub async fn command_complete(&mut self, tag: &str) -> Result<(), WireError> {
        super::formats::push_command_complete(&mut self.write, tag)
            .map_err(|e| WireError::Io(std::io::Error::other(e.to_string())))?;
        self.queued().await
    }

    /// Queues a message without a body, written in place.
    pub async fn bare(&mut self, message: super::formats::Bare) -> Result<(), WireError> {
        super::formats::push_bare(&mut self.write, message);
        self.queued().await
    }

    /// Where a message may be written in place (a result's rows, see
    /// `formats::push_data_row`); [`Wire::queued`] after each.
    pub fn buffer(&mut self) -> &mut BytesMut {
        &mut self.write
    }

    /// Writes the buffer out when a message written in place made it large.
    pub async fn queued(&mut self) -> Result<(), WireError> {
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
    fn startup_parameters_are_pairs() {
        let body = b"user\0alice\0database\0sharding_db\0\0";
        let parameters = startup_parameters(body).unwrap();
        assert_eq!(parameters["user"], "alice");
        assert_eq!(parameters["database"], "sharding_db");
        assert!(startup_parameters(b"user").is_err());
        assert!(startup_parameters(b"").unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_message_is_buffered_only_once_received_whole() {
        use tokio::io::AsyncWriteExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let mut wire = Wire::new(Stream::Plain(server));
        assert!(!wire.message_is_buffered());
        // Two Syncs and the first three bytes of a third.
        client
            .write_all(b"S\0\0\0\x04S\0\0\0\x04S\0\0")
            .await
            .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(matches!(
            wire.read_message().await,
            Ok(Some(PgWireFrontendMessage::Sync(_)))
        ));
        assert!(wire.message_is_buffered());
        assert!(matches!(
            wire.read_message().await,
            Ok(Some(PgWireFrontendMessage::Sync(_)))
        ));
        assert!(!wire.message_is_buffered());
        client.write_all(b"\0\x04").await.unwrap();
        assert!(matches!(
            wire.read_message().await,
            Ok(Some(PgWireFrontendMessage::Sync(_)))
        ));
        assert!(!wire.message_is_buffered());
    }
}
