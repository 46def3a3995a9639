//! Errors as the PostgreSQL protocol reports them: a SQLSTATE and a message.

use super::types;
use super::wire::WireError;
use crate::error::Error;

/// An error for the client: SQLSTATE and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub(super) struct PgError {
    pub(super) code: String,
    pub(super) message: String,
}

impl PgError {
    pub(super) fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            message: message.into(),
        }
    }

    pub(super) fn with_context(mut self, context: &str) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl From<Error> for PgError {
    fn from(error: Error) -> Self {
        let code = error.pg_sqlstate().to_owned();
        Self::new(&code, error.message)
    }
}

impl From<types::TypeError> for PgError {
    fn from(error: types::TypeError) -> Self {
        let code = match &error {
            types::TypeError::Invalid { .. } | types::TypeError::MalformedArray(_) => "22P02",
            types::TypeError::Protocol(_) => "08P01",
            types::TypeError::WrongElementType { .. } => "42804",
            types::TypeError::Unsupported(_) => "0A000",
            types::TypeError::Encoding(_) => "22021",
        };
        Self::new(code, error.to_string())
    }
}

/// A failed write: the connection is gone, which the next read will notice too.
pub(super) fn wire_failed(error: WireError) -> PgError {
    PgError::new("08006", error.to_string())
}

pub(super) fn unknown_statement(name: &str) -> PgError {
    if name.is_empty() {
        PgError::new("26000", "unnamed prepared statement does not exist")
    } else {
        PgError::new(
            "26000",
            format!("prepared statement \"{name}\" does not exist"),
        )
    }
}

pub(super) fn unknown_portal(name: &str) -> PgError {
    PgError::new("34000", format!("portal \"{name}\" does not exist"))
}
