//! The one error type of the wire-protocol layer.

/// Anything that can go wrong while speaking the MySQL protocol with a client.
///
/// `Io`, `TooLarge` and a `Malformed` packet from the packet layer leave the stream in an
/// unknown state: the caller closes the connection. A `Malformed` command payload or an
/// `Unsupported` feature only concerns that command: answer with an ERR packet and go on.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// The socket failed or the OS RNG was unavailable.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A logical packet longer than the configured limit.
    #[error("packet of {size} bytes exceeds the maximum payload size")]
    TooLarge {
        /// Bytes announced so far, counting the packet that crossed the limit.
        size: usize,
    },
    /// Bytes that do not follow the protocol (truncated fields, bad UTF-8, wrong sequence id …).
    #[error("malformed packet: {0}")]
    Malformed(String),
    /// Authentication failed; the ERR packet has already been sent to the client.
    #[error("access denied for user '{user}'")]
    AccessDenied {
        /// The user name the client sent.
        user: String,
    },
    /// Too many failed logins of this user from this address; the ERR packet has been sent.
    #[error("login of '{user}' throttled")]
    Throttled {
        /// The user name the client sent.
        user: String,
    },
    /// The client asked for a database the proxy does not serve; the ERR packet has been sent.
    #[error("unknown database '{0}'")]
    UnknownDatabase(String),
    /// Valid protocol that this proxy does not implement (SSL, pre-4.1 clients, cursors …).
    #[error("unsupported: {0}")]
    Unsupported(String),
}

impl ProtocolError {
    /// A [`ProtocolError::Malformed`] naming what was being decoded.
    pub(crate) fn malformed(what: impl Into<String>) -> Self {
        Self::Malformed(what.into())
    }
}
