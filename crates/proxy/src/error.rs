//! Errors as a MySQL client sees them: error code, SQLSTATE and message.

use std::borrow::Cow;

use keyshard_backend::BackendError;
use keyshard_router::RouteError;

/// An error to send to a MySQL client; the connection stays usable after it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code} ({sqlstate}): {message}")]
pub struct MySqlError {
    /// MySQL error number.
    pub code: u16,
    /// Five-character SQLSTATE.
    pub sqlstate: Cow<'static, str>,
    /// The message.
    pub message: String,
}

impl MySqlError {
    /// An error with this code, SQLSTATE and message.
    pub fn new(
        code: u16,
        sqlstate: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            code,
            sqlstate: sqlstate.into(),
            message: message.into(),
        }
    }

    /// ER_NOT_SUPPORTED_YET (1235).
    pub fn unsupported(what: impl std::fmt::Display) -> Self {
        Self::new(
            1235,
            "42000",
            format!("Keyshard doesn't yet support {what}"),
        )
    }

    /// ER_BAD_DB_ERROR (1049).
    pub fn unknown_database(name: &str) -> Self {
        Self::new(1049, "42000", format!("Unknown database '{name}'"))
    }
}

impl From<RouteError> for MySqlError {
    fn from(error: RouteError) -> Self {
        let message = error.to_string();
        match error {
            RouteError::Syntax(m) => Self::new(
                1064,
                "42000",
                format!("You have an error in your SQL syntax: {m}"),
            ),
            RouteError::StatementCount(_) => Self::new(1064, "42000", message),
            RouteError::Unsupported(what) => Self::unsupported(what),
            RouteError::InsertSelectWithoutKey => Self::new(1235, "42000", message),
            RouteError::ColumnCount { .. } => Self::new(1136, "21S01", message),
            RouteError::UnknownColumns { .. } => Self::new(1146, "42S02", message),
            RouteError::MissingParameter { .. } => Self::new(1210, "HY000", message),
            RouteError::NoRoute { .. }
            | RouteError::AmbiguousRoute { .. }
            | RouteError::KeyGeneration(_)
            | RouteError::Internal(_) => Self::new(1105, "HY000", message),
        }
    }
}

impl From<BackendError> for MySqlError {
    fn from(error: BackendError) -> Self {
        let message = error.to_string();
        match &error {
            // A MySQL/MariaDB shard's own error goes through as it is, naming the shard.
            BackendError::Database {
                mysql_errno: Some(code),
                sqlstate,
                ..
            } => {
                let state = sqlstate
                    .clone()
                    .filter(|s| s.len() == 5 && s.is_ascii())
                    .unwrap_or_else(|| "HY000".into());
                Self::new(*code, state, message)
            }
            BackendError::Database { sqlstate, .. } => match translate(sqlstate.as_deref()) {
                Some((code, state)) => Self::new(code, state, message),
                None => Self::new(1105, "HY000", message),
            },
            BackendError::Connect { .. }
            | BackendError::UnknownDataSource(_)
            | BackendError::UnsupportedType { .. }
            | BackendError::NoRuntime => Self::new(1105, "HY000", message),
        }
    }
}

/// MySQL's code for what PostgreSQL (SQLSTATE) or SQLite (extended result code) reported, for
/// the errors applications act on.
fn translate(code: Option<&str>) -> Option<(u16, &'static str)> {
    Some(match code? {
        // unique_violation; SQLite UNIQUE and PRIMARY KEY constraints.
        "23505" | "2067" | "1555" => (1062, "23000"),
        // not_null_violation; SQLite NOT NULL constraint.
        "23502" | "1299" => (1048, "23000"),
        // undefined_table; SQLite reports it as a plain error (code 1) with "no such table".
        "42P01" => (1146, "42S02"),
        _ => return None,
    })
}
