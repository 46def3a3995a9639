//! Why a value cannot be read or written as the type asked for, and the errors the codecs
//! build most often.

use keyshard_types::Value;

use super::catalog::name_of;

/// Why a value cannot be read or written as the type asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    /// The bytes are not a value of the type.
    #[error("invalid input for type {type_name}: {detail}")]
    Invalid {
        /// The type, as PostgreSQL names it.
        type_name: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// A text array literal is malformed (PostgreSQL's words, SQLSTATE 22P02).
    #[error("{0}")]
    MalformedArray(String),
    /// A binary value ends early or has a bad header (SQLSTATE 08P01, as PostgreSQL reports
    /// "insufficient data left in message").
    #[error("{0}")]
    Protocol(String),
    /// A binary array of another element type than the parameter's (SQLSTATE 42804).
    #[error("binary data has array element type {sent} instead of expected {expected}")]
    WrongElementType {
        /// The element type in the data.
        sent: u32,
        /// The parameter's element type.
        expected: u32,
    },
    /// An array whose elements Keyshard does not convert in this format (SQLSTATE 0A000).
    #[error("{0}")]
    Unsupported(String),
    /// Text that is not UTF-8 (SQLSTATE 22021, PostgreSQL's words).
    #[error("invalid byte sequence for encoding \"UTF8\": {0}")]
    Encoding(String),
}

impl TypeError {
    /// Why `bytes` are not UTF-8: the bytes of the first character that is not, as many as
    /// its first byte announces, as PostgreSQL shows them.
    pub(super) fn encoding(bytes: &[u8], error: std::str::Utf8Error) -> Self {
        let rest = &bytes[error.valid_up_to()..];
        let announced = match rest.first() {
            Some(0xc0..=0xdf) => 2,
            Some(0xe0..=0xef) => 3,
            Some(0xf0..=0xf7) => 4,
            _ => 1,
        };
        let shown: Vec<String> = rest
            .iter()
            .take(announced)
            .map(|b| format!("0x{b:02x}"))
            .collect();
        Self::Encoding(shown.join(" "))
    }
}

/// `detail`, quoted, is not a value of type `oid`.
pub(super) fn invalid(oid: u32, detail: &str) -> TypeError {
    TypeError::Invalid {
        type_name: name_of(oid),
        detail: format!("\"{detail}\""),
    }
}

/// `value` does not fit type `oid`.
pub(super) fn out_of_range(value: &Value, oid: u32) -> TypeError {
    TypeError::Invalid {
        type_name: name_of(oid),
        detail: format!("{value:?} is out of range"),
    }
}
