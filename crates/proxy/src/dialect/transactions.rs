//! How each dialect's transaction reacts to a failed statement and to BEGIN inside it. Apart
//! from the session statements: those answer on the session, and the session asks this.

use keyshard_types::Dialect;

/// Whether a failed statement aborts the transaction around it: in PostgreSQL the whole block
/// then accepts only ROLLBACK (or ROLLBACK TO a savepoint); in MySQL only the statement is
/// undone.
pub(crate) fn failure_aborts_transaction(dialect: Dialect) -> bool {
    dialect == Dialect::Postgres
}

/// Whether BEGIN inside a transaction commits it and starts another (MySQL), or only warns
/// (PostgreSQL).
pub(crate) fn begin_commits_open_transaction(dialect: Dialect) -> bool {
    dialect == Dialect::MySql
}
