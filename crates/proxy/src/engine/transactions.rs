//! Transaction control as each dialect has it: BEGIN (with isolation and access mode),
//! COMMIT, ROLLBACK, AND CHAIN, `SET autocommit`, `SET TRANSACTION`, and savepoints.

use keyshard_backend::{Characteristics, SavepointCommand, Transaction};
use keyshard_types::Dialect;

use super::Engine;
use crate::control::{Control, SavepointName, Scope};
use crate::dialect::transactions::begin_commits_open_transaction;
use crate::error::{Error, ErrorKind};
use crate::reply::Reply;
use crate::session::Session;

/// The most savepoints one transaction holds.
const MAX_SAVEPOINTS: usize = 1024;

impl Engine {
    /// A transaction beginning with `asked`, else what `SET TRANSACTION` asked for the next
    /// one, else the session's characteristics.
    pub(super) fn new_transaction(
        &self,
        session: &mut Session,
        asked: Characteristics,
    ) -> Transaction {
        let next = std::mem::take(&mut session.next_characteristics);
        let characteristics = asked.or(next).or(session.characteristics);
        let transaction = if self.local(session) {
            Transaction::local()
        } else {
            Transaction::new()
        };
        transaction.with(characteristics)
    }

    /// BEGIN, COMMIT, ROLLBACK and `SET autocommit`, with MySQL's rules: BEGIN inside a
    /// transaction commits it first, and turning autocommit back on commits. PostgreSQL's
    /// rules on its frontend: BEGIN inside a transaction changes nothing, and COMMIT of a
    /// failed transaction rolls it back.
    pub(crate) async fn control(
        &self,
        session: &mut Session,
        control: Control,
    ) -> Result<Reply, Error> {
        let chain = match &control {
            Control::Savepoint(name) => return self.savepoint(session, name).await,
            Control::RollbackTo(name) => {
                return self
                    .end_savepoint(session, name, SavepointCommand::RollbackTo)
                    .await;
            }
            Control::Release(name) => {
                return self
                    .end_savepoint(session, name, SavepointCommand::Release)
                    .await;
            }
            Control::SetTransaction(scope, asked) => {
                return set_transaction(session, *scope, *asked).map(|()| Reply::done());
            }
            // PostgreSQL only warns that a transaction is already in progress.
            Control::Begin(_)
                if session.in_transaction() && !begin_commits_open_transaction(session.dialect) =>
            {
                return Ok(Reply::done());
            }
            Control::Commit { chain } | Control::Rollback { chain } => *chain,
            Control::Begin(_) => {
                self.begin_lets_go_of_table_locks(session).await?;
                false
            }
            Control::Autocommit(_) => false,
        };
        let open = session.transaction.take();
        // A chained transaction keeps the characteristics of the one it follows.
        let ending = open
            .as_ref()
            .map(Transaction::characteristics)
            .unwrap_or_default();
        let failed = std::mem::take(&mut session.failed);
        let ended = match (&control, open) {
            (Control::Autocommit(false), open) => {
                session.transaction = open;
                Ok(())
            }
            (Control::Rollback { .. }, Some(transaction)) => {
                self.backend.rollback(transaction).await
            }
            (_, Some(transaction)) if failed => self.backend.rollback(transaction).await,
            (_, Some(transaction)) => self.backend.commit(transaction).await,
            (_, None) => Ok(()),
        };
        if !matches!(control, Control::Autocommit(false)) {
            let rolled_back = failed || matches!(control, Control::Rollback { .. });
            self.transaction_ended(session, ended.is_ok() && !rolled_back);
            self.listening_ended(session, ended.is_ok() && !rolled_back)
                .await;
        }
        match control {
            Control::Begin(asked) => {
                session.transaction = Some(self.new_transaction(session, asked));
            }
            Control::Autocommit(on) => session.autocommit = on,
            _ if chain => session.transaction = Some(self.new_transaction(session, ending)),
            _ => {}
        }
        ended?;
        Ok(Reply::done())
    }

    /// `SAVEPOINT name`: on every data source the transaction holds, and on those it reaches
    /// later. MySQL takes it outside a transaction too (it lasts until the statement ends).
    async fn savepoint(&self, session: &mut Session, name: &SavepointName) -> Result<Reply, Error> {
        let mysql = session.dialect == Dialect::MySql;
        if session.transaction.is_none() {
            if !mysql {
                return Err(Error::new(
                    ErrorKind::NoTransactionBlock,
                    "SAVEPOINT can only be used in transaction blocks",
                ));
            }
            if session.autocommit {
                return Ok(Reply::done());
            }
            session.transaction = Some(self.new_transaction(session, Characteristics::default()));
        }
        if let Some(transaction) = &mut session.transaction {
            // Each is kept (and set again on data sources reached later): bounded.
            if transaction.savepoint_count() >= MAX_SAVEPOINTS {
                return Err(Error::new(
                    ErrorKind::TooLarge,
                    format!("a transaction holds at most {MAX_SAVEPOINTS} savepoints"),
                ));
            }
            self.backend
                .savepoint(transaction, &name.sql, &name.key, mysql)
                .await?;
            if !mysql {
                self.state_at_savepoint(session, &name.key);
            }
        }
        Ok(Reply::done())
    }

    /// `ROLLBACK TO SAVEPOINT name` or `RELEASE SAVEPOINT name` on every data source the
    /// transaction holds. Rolling back to a savepoint ends PostgreSQL's failed state.
    async fn end_savepoint(
        &self,
        session: &mut Session,
        name: &SavepointName,
        command: SavepointCommand,
    ) -> Result<Reply, Error> {
        let missing = |dialect| {
            let message = match dialect {
                Dialect::MySql => format!("SAVEPOINT {} does not exist", name.sql),
                Dialect::Postgres => format!("savepoint \"{}\" does not exist", name.key),
            };
            Error::new(ErrorKind::NoSuchSavepoint, message)
        };
        let dialect = session.dialect;
        let Some(transaction) = &mut session.transaction else {
            if dialect == Dialect::MySql {
                return Err(missing(dialect));
            }
            let what = match command {
                SavepointCommand::RollbackTo => "ROLLBACK TO SAVEPOINT",
                SavepointCommand::Release => "RELEASE SAVEPOINT",
            };
            return Err(Error::new(
                ErrorKind::NoTransactionBlock,
                format!("{what} can only be used in transaction blocks"),
            ));
        };
        if !self
            .backend
            .end_savepoint(transaction, &name.key, command)
            .await?
        {
            return Err(missing(dialect));
        }
        if command == SavepointCommand::RollbackTo {
            session.failed = false;
        }
        // MySQL's settings are no transaction's.
        if dialect == Dialect::Postgres {
            self.savepoint_ended(session, &name.key, command).await?;
        }
        Ok(Reply::done())
    }
}

/// `SET [SESSION] TRANSACTION …` and its variables, as each database takes them.
fn set_transaction(
    session: &mut Session,
    scope: Scope,
    asked: Characteristics,
) -> Result<(), Error> {
    let mysql = session.dialect == Dialect::MySql;
    match (scope, &mut session.transaction) {
        (Scope::Session, _) => session.characteristics = asked.or(session.characteristics),
        (Scope::Variable, _) if mysql => {
            session.characteristics = asked.or(session.characteristics);
        }
        (_, Some(_)) if mysql => {
            return Err(Error::new(
                ErrorKind::Transaction,
                "Transaction characteristics can't be changed while a transaction is in progress",
            ));
        }
        (_, None) if mysql => {
            session.next_characteristics = asked.or(session.next_characteristics);
        }
        // PostgreSQL: the current transaction's, before its first query; outside a
        // transaction it only warns.
        (_, Some(transaction)) => {
            if !transaction.set_characteristics(asked) {
                return Err(Error::new(
                    ErrorKind::Transaction,
                    "SET TRANSACTION ISOLATION LEVEL must be called before any query",
                ));
            }
        }
        (_, None) => {}
    }
    Ok(())
}
