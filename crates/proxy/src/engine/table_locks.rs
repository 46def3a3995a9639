//! Table locks with each database's rules. MySQL's `LOCK TABLES` belongs to the session: it
//! commits the open transaction, lets go of the locks taken before, is taken on every data
//! source or on none, and holds until `UNLOCK TABLES`, a BEGIN, or the session's end (the
//! session keeps its shard connections meanwhile, see `crate::pinning`). PostgreSQL's `LOCK`
//! belongs to the transaction, on each data source it names.
//!
//! A transaction begun on a shard connection lets go of its table locks (and XA START refuses
//! to begin), so while the session holds them a write over several shards, and a session's
//! statements with autocommit off, run with autocommit off on the shards instead, as MySQL's
//! manual says to combine the two: one COMMIT per data source (LOCAL), locks kept.

use keyshard_backend::{Outcome, Transaction};
use keyshard_router::{LockKind, Plan, TableLocks};

use super::Engine;
use crate::error::{Error, ErrorKind};
use crate::pinning::Held;
use crate::reply::Reply;
use crate::session::Session;

impl Engine {
    /// Takes or lets go of `locks`.
    pub(super) async fn table_locks(
        &self,
        session: &mut Session,
        locks: &TableLocks,
    ) -> Result<Reply, Error> {
        match locks.kind {
            LockKind::Transaction => {
                if session.transaction.is_none() {
                    return Err(Error::new(
                        ErrorKind::NoTransactionBlock,
                        "LOCK TABLE can only be used in transaction blocks",
                    ));
                }
                self.run(session, &locks.plan).await?;
            }
            LockKind::Session => {
                self.commit_implicitly(session).await?;
                self.unlock_tables(session).await?;
                let mut locked = Vec::new();
                for unit in &locks.plan.units {
                    let taken = self.backend.execute_on(&unit.data_source, &unit.sql).await;
                    if let Err(e) = taken {
                        // All or none, as the database takes them.
                        for data_source in locked {
                            let _ = self.backend.execute_on(data_source, "UNLOCK TABLES").await;
                        }
                        return Err(e.into());
                    }
                    locked.push(&unit.data_source);
                }
                session.mysql.table_locks_on = locked.into_iter().map(str::to_owned).collect();
            }
            LockKind::Unlock => {
                // Only a session that holds table locks has a transaction committed by it.
                if holds_table_locks(session) {
                    self.commit_implicitly(session).await?;
                }
                self.unlock_tables(session).await?;
            }
        }
        Ok(Reply::done())
    }

    /// MySQL's BEGIN lets go of the session's table locks: on every connection it holds them.
    pub(super) async fn begin_lets_go_of_table_locks(
        &self,
        session: &mut Session,
    ) -> Result<(), Error> {
        if holds_table_locks(session) {
            self.unlock_tables(session).await?;
            session.held.remove(&Held::TableLocks);
            if session.held.is_empty() {
                session.shard.unpin();
            }
        }
        Ok(())
    }

    /// `UNLOCK TABLES` on the connections the session keeps, when it holds table locks
    /// (which it took on them).
    async fn unlock_tables(&self, session: &Session) -> Result<(), Error> {
        if holds_table_locks(session) {
            self.on_kept_connections(session, "UNLOCK TABLES").await?;
        }
        Ok(())
    }

    /// Commits the session's open transaction, as MySQL does before LOCK TABLES.
    async fn commit_implicitly(&self, session: &mut Session) -> Result<(), Error> {
        if session.transaction.is_some() {
            self.control(session, crate::control::Control::Commit { chain: false })
                .await?;
        }
        Ok(())
    }
}

impl Engine {
    /// Runs `plan`, a write over several shards outside a transaction, when the session holds
    /// table locks: all or none on each data source, the locks kept (see the module's note).
    /// `None` when the session holds none, for the caller to run it as ever.
    pub(super) async fn run_keeping_table_locks(
        &self,
        session: &Session,
        plan: &Plan,
    ) -> Option<Result<Outcome, Error>> {
        if session.transaction.is_some()
            || !session.autocommit
            || !holds_table_locks(session)
            || plan.units.len() < 2
            || plan.merge.is_some()
        {
            return None;
        }
        Some(self.run_with_autocommit_off(plan).await)
    }

    /// DDL over several shards while the session holds table locks: each statement on its
    /// own (MySQL commits each DDL statement at once, keeping the locks); `None` when the
    /// session holds none.
    pub(super) async fn ddl_keeping_table_locks(
        &self,
        session: &Session,
        plan: &Plan,
    ) -> Option<Result<Outcome, Error>> {
        if !holds_table_locks(session) {
            return None;
        }
        let mut outcome = Outcome::default();
        for unit in &plan.units {
            match self.backend.execute_on(&unit.data_source, &unit.sql).await {
                Ok(done) => outcome.affected_rows += done.affected_rows,
                Err(e) => return Some(Err(e.into())),
            }
        }
        Some(Ok(outcome))
    }

    async fn run_with_autocommit_off(&self, plan: &Plan) -> Result<Outcome, Error> {
        let mut transaction = Transaction::keeping_table_locks();
        match self.backend.execute_in(&mut transaction, plan).await {
            Ok(outcome) => match self.backend.commit(transaction).await {
                Ok(()) => Ok(outcome),
                Err(e) => Err(e.into()),
            },
            Err(e) => {
                let _ = self.backend.rollback(transaction).await;
                Err(e.into())
            }
        }
    }
}

/// MySQL refuses, while the session holds table locks, a statement on a table it did not lock
/// (1100). A data source where the session locked a table refuses such a statement itself; one
/// where it locked none would answer it, so the proxy refuses `plan` there. A temporary table
/// needs no lock, as on MySQL.
pub(super) fn refuse_unlocked(session: &Session, plan: &Plan) -> Result<(), Error> {
    if !holds_table_locks(session) {
        return Ok(());
    }
    let gathered = plan
        .gather
        .iter()
        .flat_map(|g| &g.tables)
        .flat_map(|t| &t.reads);
    let unlocked = plan.units.iter().chain(gathered).find(|unit| {
        !unit.table.is_empty()
            && !session.mysql.table_locks_on.contains(&unit.data_source)
            && !session
                .held
                .contains_key(&Held::TemporaryTable(unit.table.to_ascii_lowercase()))
    });
    match unlocked {
        Some(unit) => Err(Error::new(
            ErrorKind::Shard {
                mysql_errno: Some(1100),
                sqlstate: Some("HY000".to_owned()),
            },
            format!("Table '{}' was not locked with LOCK TABLES", unit.table),
        )),
        None => Ok(()),
    }
}

/// The transaction a session with autocommit off opens: one that keeps its table locks when
/// it holds some.
pub(super) fn implicit_transaction(session: &Session) -> Option<Transaction> {
    holds_table_locks(session).then(Transaction::keeping_table_locks)
}

fn holds_table_locks(session: &Session) -> bool {
    session.held.contains_key(&Held::TableLocks)
}
