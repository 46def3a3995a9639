//! Why a statement failed, in terms neither protocol owns; each frontend encodes it as its
//! clients expect (MySQL error number and SQLSTATE, or PostgreSQL SQLSTATE).

use keyshard_backend::BackendError;
use keyshard_router::RouteError;

/// An error to send to a client; the connection stays usable after it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// What went wrong, for the error codes.
    pub kind: ErrorKind,
    /// What the client reads.
    pub message: String,
}

/// The kinds of error clients tell apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The statement does not parse.
    Syntax,
    /// Valid SQL the proxy cannot answer correctly (yet).
    Unsupported,
    /// Rows from several shards the merge cannot order or group as the database does (see
    /// `MergeError::Collation`): the engine gathers the read instead, and where it cannot, the
    /// client is told as of any unsupported statement.
    Unmerged,
    /// A logical database the user may not use.
    DatabaseDenied,
    /// A row's value count differs from its column count.
    ColumnCount,
    /// The table does not exist.
    UnknownTable,
    /// The table has no such column.
    UnknownColumn,
    /// Parameters missing or of the wrong kind.
    BadArguments,
    /// A value out of the range a statement accepts (`SHOW NEXT KEYS … COUNT 0`).
    InvalidValue,
    /// Text that is not UTF-8.
    InvalidEncoding,
    /// MySQL: LOAD DATA LOCAL from a client that does not send files.
    LocalFilesDisabled,
    /// The database named does not exist.
    UnknownDatabase,
    /// MySQL: a `KILL` of a session id that is not there.
    UnknownThread,
    /// `SHOW GRANTS FOR` a user `authority` does not have.
    NoSuchGrant,
    /// A prepared statement id or name that is not there.
    UnknownStatement,
    /// A statement that may not itself be prepared (PREPARE, EXECUTE, DEALLOCATE).
    NotPreparable,
    /// A command the protocol does not know or cannot decode.
    Malformed,
    /// A statement that cannot run in the session's transaction state.
    Transaction,
    /// PostgreSQL: the transaction block failed; only ROLLBACK is accepted.
    TransactionAborted,
    /// PostgreSQL: a savepoint command outside a transaction block.
    NoTransactionBlock,
    /// ROLLBACK TO or RELEASE of a savepoint that is not there.
    NoSuchSavepoint,
    /// More data than the configured bound (a long parameter, a packet).
    TooLarge,
    /// A statement that would take more of the proxy's memory than allowed.
    OutOfMemory,
    /// More prepared statements on one connection than allowed.
    TooManyStatements,
    /// The client was idle in a transaction for longer than allowed.
    IdleInTransaction,
    /// Pinning one more shard connection would leave its pool none to share.
    PoolExhausted,
    /// LOCAL: some data sources committed, then another failed to.
    PartialCommit,
    /// XA: whether the transaction committed is not known yet; recovery decides.
    OutcomeUnknown,
    /// XA: rolled back by recovery before it could commit.
    XaRolledBack,
    /// A data source's own error, with its codes.
    Shard {
        /// MySQL/MariaDB error number, when the shard is one.
        mysql_errno: Option<u16>,
        /// SQLSTATE (PostgreSQL, MySQL) or extended result code (SQLite).
        sqlstate: Option<String>,
    },
    /// Anything else: routing, key generation, connections.
    Internal,
}

impl Error {
    /// An error of `kind` saying `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// A statement the proxy does not support yet.
    pub fn unsupported(what: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorKind::Unsupported,
            format!("Keyshard doesn't yet support {what}"),
        )
    }

    /// A database that is not the logical one.
    pub fn unknown_database(name: &str) -> Self {
        Self::new(
            ErrorKind::UnknownDatabase,
            format!("Unknown database '{name}'"),
        )
    }

    /// MySQL's ER_DBACCESS_DENIED_ERROR, PostgreSQL's insufficient privilege: a logical
    /// database `DATABASE_PERMITTED` does not give `user`.
    pub fn database_denied(user: &str, name: &str) -> Self {
        Self::new(
            ErrorKind::DatabaseDenied,
            format!("Access denied for user '{user}'@'%' to database '{name}'"),
        )
    }
}

/// The errors applications act on, whichever database reported them.
pub(crate) enum Common {
    UniqueViolation,
    NotNullViolation,
    UndefinedTable,
}

/// Reads PostgreSQL's SQLSTATE or SQLite's extended result code.
pub(crate) fn common_error(code: Option<&str>) -> Option<Common> {
    Some(match code? {
        // unique_violation; SQLite UNIQUE and PRIMARY KEY constraints.
        "23505" | "2067" | "1555" => Common::UniqueViolation,
        // not_null_violation; SQLite NOT NULL constraint.
        "23502" | "1299" => Common::NotNullViolation,
        "42P01" => Common::UndefinedTable,
        _ => return None,
    })
}

pub(crate) fn is_sqlstate(s: &str) -> bool {
    s.len() == 5
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

impl From<RouteError> for Error {
    fn from(error: RouteError) -> Self {
        let message = error.to_string();
        let kind = match &error {
            RouteError::Syntax(m) => {
                return Self::new(
                    ErrorKind::Syntax,
                    format!("You have an error in your SQL syntax: {m}"),
                );
            }
            RouteError::StatementCount(_) | RouteError::TooComplex { .. } => ErrorKind::Syntax,
            RouteError::Unsupported(what) => return Self::unsupported(what),
            RouteError::InsertSelectWithoutKey => ErrorKind::Unsupported,
            RouteError::ColumnCount { .. } => ErrorKind::ColumnCount,
            RouteError::UnknownColumns { .. } => ErrorKind::UnknownTable,
            RouteError::MissingParameter { .. } => ErrorKind::BadArguments,
            RouteError::NoRoute { .. }
            | RouteError::AmbiguousRoute { .. }
            | RouteError::KeyGeneration(_)
            | RouteError::Internal(_) => ErrorKind::Internal,
        };
        Self::new(kind, message)
    }
}

impl From<BackendError> for Error {
    fn from(error: BackendError) -> Self {
        let message = error.to_string();
        let kind = match error {
            BackendError::Database {
                mysql_errno,
                sqlstate,
                ..
            } => ErrorKind::Shard {
                mysql_errno,
                sqlstate,
            },
            BackendError::Merge(
                keyshard_backend::MergeError::Unordered { .. }
                | keyshard_backend::MergeError::Collation { .. }
                | keyshard_backend::MergeError::MoneyText { .. }
                | keyshard_backend::MergeError::Uncompared { .. }
                | keyshard_backend::MergeError::Unjoined { .. }
                | keyshard_backend::MergeError::Uncomputed { .. },
            ) => ErrorKind::Unmerged,
            // What the database says of a value beyond its type.
            BackendError::Merge(keyshard_backend::MergeError::OutOfRange { .. }) => {
                ErrorKind::Shard {
                    mysql_errno: None,
                    sqlstate: Some("22003".to_owned()),
                }
            }
            BackendError::PartialCommit { .. } => ErrorKind::PartialCommit,
            BackendError::XaOutcomeUnknown { .. } | BackendError::OutcomeUnknown { .. } => {
                ErrorKind::OutcomeUnknown
            }
            BackendError::XaAborted { .. } => ErrorKind::XaRolledBack,
            BackendError::PinRefused {
                source: keyshard_backend::PinRefused::Exhausted { .. },
                ..
            } => ErrorKind::PoolExhausted,
            BackendError::PinRefused { .. }
            | BackendError::NotPostgres { .. }
            | BackendError::GatherKinds { .. } => ErrorKind::Unsupported,
            BackendError::GatherLimit { .. }
            | BackendError::ResultLimit(_)
            | BackendError::RowTooLarge { .. } => ErrorKind::OutOfMemory,
            BackendError::Connect { .. }
            | BackendError::NoLease
            | BackendError::Coordination(_)
            | BackendError::XaUnsupported { .. }
            | BackendError::UnknownDataSource(_)
            | BackendError::UnsupportedType { .. }
            | BackendError::NoRuntime
            | BackendError::ClientGone
            | BackendError::MergeInterrupted
            | BackendError::Merge(_) => ErrorKind::Internal,
        };
        Self::new(kind, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(mysql_errno: Option<u16>, sqlstate: &str) -> Error {
        Error::new(
            ErrorKind::Shard {
                mysql_errno,
                sqlstate: Some(sqlstate.to_owned()),
            },
            "x",
        )
    }

    #[test]
    fn duplicate_keys_read_the_same_in_both_protocols() {
        for e in [
            shard(Some(1062), "23000"),
            shard(None, "23505"),
            shard(None, "2067"),
        ] {
            assert_eq!(e.mysql_code(), (1062, "23000"));
            assert_eq!(e.pg_sqlstate(), "23505");
        }
    }

    #[test]
    fn a_shard_keeps_its_own_code() {
        assert_eq!(shard(Some(1213), "40001").mysql_code(), (1213, "40001"));
        assert_eq!(shard(None, "40P01").pg_sqlstate(), "40P01");
        assert_eq!(shard(None, "40P01").mysql_code(), (1105, "HY000"));
        assert_eq!(shard(Some(1213), "40001").pg_sqlstate(), "XX000");
    }
}
