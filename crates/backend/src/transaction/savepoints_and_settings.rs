//! What a transaction makes on every branch, those that begin later included: the client's
//! savepoints and the settings made inside it.

use std::sync::Arc;

use super::Transaction;
use crate::session_state::Settings;
use crate::{Backend, BackendError};

/// What a branch that begins later must make first.
#[derive(Debug, Clone)]
pub(super) enum Replayed {
    /// A client's savepoint: `sql` as the client wrote it (quoted or not), to send on; `key`
    /// as names compare.
    Savepoint { sql: String, key: String },
    /// A setting that lasts the transaction (PostgreSQL's `SET LOCAL`), as written.
    LocalSetting(String),
}

impl Replayed {
    /// The statement that makes it.
    pub(super) fn statement(&self) -> String {
        match self {
            Replayed::Savepoint { sql, .. } => format!("SAVEPOINT {sql}"),
            Replayed::LocalSetting(sql) => sql.clone(),
        }
    }

    fn is_savepoint(&self, name: &str) -> bool {
        matches!(self, Replayed::Savepoint { key, .. } if key == name)
    }
}

/// How long a `SET` made inside a transaction lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingScope {
    /// The session's: `undone` when the transaction rolls back (PostgreSQL) or not (MySQL).
    Session {
        /// Whether a rollback undoes it.
        undone: bool,
    },
    /// The transaction's own (PostgreSQL's `SET LOCAL`).
    Transaction,
}

/// What a savepoint command does to the savepoints after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SavepointCommand {
    /// `ROLLBACK TO SAVEPOINT`: undo what followed it, keep it.
    RollbackTo,
    /// `RELEASE SAVEPOINT`: forget it and those after it, keep the work.
    Release,
}

impl Backend {
    /// Runs a session's `SET …` (`sql`) on every branch of `transaction`. A session setting
    /// leaves each connection with `settings` (at once, or once the transaction commits when
    /// a rollback `undoes` it); a transaction's own (`local`, PostgreSQL's `SET LOCAL`) is made
    /// on the branches that begin later too.
    pub async fn set_in(
        &self,
        transaction: &mut Transaction,
        sql: &str,
        settings: Option<Arc<Settings>>,
        scope: SettingScope,
    ) -> Result<(), BackendError> {
        for branch in &mut transaction.branches {
            let done = match scope {
                SettingScope::Transaction => branch.command(sql).await,
                SettingScope::Session { undone } => branch.set(sql, settings.clone(), undone).await,
            };
            done.map_err(|e| BackendError::from_sqlx(branch.data_source(), e))?;
        }
        if scope == SettingScope::Transaction {
            transaction
                .replayed
                .push(Replayed::LocalSetting(sql.to_owned()));
        }
        Ok(())
    }

    /// Sets savepoint `sql` (compared as `key`) on every branch, and on those that begin
    /// later. An older savepoint of the same name is forgotten when `replaces` (MySQL) and
    /// shadowed otherwise (PostgreSQL).
    pub async fn savepoint(
        &self,
        transaction: &mut Transaction,
        sql: &str,
        key: &str,
        replaces: bool,
    ) -> Result<(), BackendError> {
        on_every_branch(transaction, &format!("SAVEPOINT {sql}")).await?;
        if replaces {
            transaction.replayed.retain(|r| !r.is_savepoint(key));
        }
        transaction.replayed.push(Replayed::Savepoint {
            sql: sql.to_owned(),
            key: key.to_owned(),
        });
        Ok(())
    }

    /// Rolls back to or releases the latest savepoint named `key` on every branch; `false`
    /// when there is none.
    pub async fn end_savepoint(
        &self,
        transaction: &mut Transaction,
        key: &str,
        command: SavepointCommand,
    ) -> Result<bool, BackendError> {
        let Some(at) = transaction
            .replayed
            .iter()
            .rposition(|r| r.is_savepoint(key))
        else {
            return Ok(false);
        };
        let Replayed::Savepoint { sql, .. } = &transaction.replayed[at] else {
            return Ok(false);
        };
        let statement = match command {
            SavepointCommand::RollbackTo => format!("ROLLBACK TO SAVEPOINT {sql}"),
            SavepointCommand::Release => format!("RELEASE SAVEPOINT {sql}"),
        };
        on_every_branch(transaction, &statement).await?;
        match command {
            // What followed the savepoint is undone, `SET LOCAL` included.
            SavepointCommand::RollbackTo => {
                for branch in &mut transaction.branches {
                    branch.rolled_back_to_savepoint();
                }
                transaction.replayed.truncate(at + 1);
            }
            // The savepoint and those after it are gone; the settings made meanwhile hold.
            SavepointCommand::Release => {
                let mut index = 0;
                transaction.replayed.retain(|r| {
                    index += 1;
                    index <= at || matches!(r, Replayed::LocalSetting(_))
                });
            }
        }
        Ok(true)
    }
}

/// Sends `sql` on every branch of `transaction`.
async fn on_every_branch(transaction: &mut Transaction, sql: &str) -> Result<(), BackendError> {
    for branch in &mut transaction.branches {
        let done = branch.command(sql).await;
        done.map_err(|e| BackendError::from_sqlx(branch.data_source(), e))?;
    }
    Ok(())
}
