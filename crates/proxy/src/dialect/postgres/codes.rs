//! PostgreSQL's SQLSTATEs for Keyshard's errors.

use crate::error::{Common, Error, ErrorKind, common_error, is_sqlstate};

impl Error {
    /// PostgreSQL's SQLSTATE for this error.
    pub fn pg_sqlstate(&self) -> &str {
        match &self.kind {
            ErrorKind::Syntax => "42601",
            ErrorKind::Unsupported | ErrorKind::Unmerged => "0A000",
            ErrorKind::ColumnCount => "42601",
            ErrorKind::UnknownTable => "42P01",
            ErrorKind::UnknownColumn => "42703",
            ErrorKind::BadArguments => "08P01",
            ErrorKind::InvalidValue => "22023",
            ErrorKind::InvalidEncoding => "22021",
            ErrorKind::LocalFilesDisabled => "0A000",
            ErrorKind::UnknownDatabase => "3D000",
            ErrorKind::DatabaseDenied => "42501",
            // Not met: PostgreSQL's functions answer false.
            ErrorKind::UnknownThread => "42704",
            ErrorKind::NoSuchGrant => "42704",
            ErrorKind::UnknownStatement => "26000",
            // PostgreSQL's grammar has no PREPARE of these.
            ErrorKind::NotPreparable => "42601",
            ErrorKind::Malformed => "08P01",
            ErrorKind::Transaction => "25001",
            ErrorKind::TransactionAborted => "25P02",
            ErrorKind::NoTransactionBlock => "25P01",
            ErrorKind::NoSuchSavepoint => "3B001",
            ErrorKind::TooLarge => "54000",
            ErrorKind::OutOfMemory => "53200",
            ErrorKind::TooManyStatements => "53000",
            ErrorKind::IdleInTransaction => "25P03",
            ErrorKind::PoolExhausted => "53300",
            ErrorKind::PartialCommit => "XAKS1",
            ErrorKind::OutcomeUnknown => "XAKS2",
            ErrorKind::XaRolledBack => "40000",
            ErrorKind::Shard {
                mysql_errno,
                sqlstate,
            } => {
                let common = match mysql_errno {
                    Some(1062) => Some(Common::UniqueViolation),
                    Some(1048) => Some(Common::NotNullViolation),
                    Some(1146) => Some(Common::UndefinedTable),
                    Some(_) => None,
                    None => common_error(sqlstate.as_deref()),
                };
                match (common, sqlstate.as_deref()) {
                    (Some(Common::UniqueViolation), _) => "23505",
                    (Some(Common::NotNullViolation), _) => "23502",
                    (Some(Common::UndefinedTable), _) => "42P01",
                    // A PostgreSQL shard's own code.
                    (None, Some(s)) if mysql_errno.is_none() && is_sqlstate(s) => s,
                    (None, _) => "XX000",
                }
            }
            ErrorKind::Internal => "XX000",
        }
    }
}
