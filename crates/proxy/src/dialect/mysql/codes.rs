//! MySQL's error numbers and SQLSTATEs for Keyshard's errors.

use crate::error::{Common, Error, ErrorKind, common_error};

impl Error {
    /// MySQL's error number and SQLSTATE for this error.
    pub fn mysql_code(&self) -> (u16, &str) {
        match &self.kind {
            ErrorKind::Syntax => (1064, "42000"),
            ErrorKind::Unsupported | ErrorKind::Unmerged => (1235, "42000"),
            ErrorKind::ColumnCount => (1136, "21S01"),
            ErrorKind::UnknownTable => (1146, "42S02"),
            ErrorKind::UnknownColumn => (1054, "42S22"),
            ErrorKind::BadArguments | ErrorKind::InvalidValue => (1210, "HY000"),
            ErrorKind::InvalidEncoding => (1300, "HY000"),
            ErrorKind::LocalFilesDisabled => (3948, "42000"),
            ErrorKind::UnknownDatabase => (1049, "42000"),
            ErrorKind::DatabaseDenied => (1044, "42000"),
            ErrorKind::UnknownThread => (1094, "HY000"),
            ErrorKind::NoSuchGrant => (1141, "42000"),
            ErrorKind::UnknownStatement => (1243, "HY000"),
            ErrorKind::NotPreparable => (1295, "HY000"),
            ErrorKind::Malformed => (1047, "08S01"),
            ErrorKind::Transaction
            | ErrorKind::TransactionAborted
            | ErrorKind::NoTransactionBlock => (1568, "25001"),
            ErrorKind::NoSuchSavepoint => (1305, "42000"),
            ErrorKind::TooLarge => (1153, "08S01"),
            ErrorKind::OutOfMemory => (1037, "HY001"),
            ErrorKind::TooManyStatements => (1461, "42000"),
            ErrorKind::IdleInTransaction => (4031, "HY000"),
            ErrorKind::PoolExhausted => (1040, "08004"),
            // Keyshard's own codes, in ShardingSphere's vendor range: no MySQL error means
            // "some shards committed".
            ErrorKind::PartialCommit => (20_101, "XAKS1"),
            ErrorKind::OutcomeUnknown => (20_102, "XAKS2"),
            ErrorKind::XaRolledBack => (1402, "XA100"),
            // A MySQL/MariaDB shard's own error goes through as it is.
            ErrorKind::Shard {
                mysql_errno: Some(code),
                sqlstate,
            } => (
                *code,
                sqlstate
                    .as_deref()
                    .filter(|s| s.len() == 5 && s.is_ascii())
                    .unwrap_or("HY000"),
            ),
            ErrorKind::Shard { sqlstate, .. } => match common_error(sqlstate.as_deref()) {
                Some(Common::UniqueViolation) => (1062, "23000"),
                Some(Common::NotNullViolation) => (1048, "23000"),
                Some(Common::UndefinedTable) => (1146, "42S02"),
                None => (1105, "HY000"),
            },
            ErrorKind::Internal => (1105, "HY000"),
        }
    }
}
