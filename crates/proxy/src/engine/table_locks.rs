//! Table locks with each database's rules. MySQL's `LOCK TABLES` belongs to the session: it
//! commits the open transaction, lets go of the locks taken before, is taken on every data
//! source or on none, and holds until `UNLOCK TABLES`, a BEGIN, or the session's end (the
//! session keeps its shard connections meanwhile, see `crate::pinning`). PostgreSQL's `LOCK`
//! belongs to the transaction, on each data source it names.
//!
//! A transaction begun on a shard connection lets go of its table locks (and XA START refuses
//! to begin), so while the session holds them nothing may begin one unasked: a write over
//! several shards, or a statement with autocommit off, is refused instead of silently
//! unlocking.

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

/// Refuses to run `plan` in a way that would begin a transaction on the connections holding
/// the session's table locks (see the module's note).
pub(super) fn check_table_locks(session: &Session, plan: &Plan) -> Result<(), Error> {
    if session.transaction.is_some() || !holds_table_locks(session) {
        return Ok(());
    }
    let what = if !session.autocommit {
        "a statement with autocommit off"
    } else if plan.units.len() > 1 && plan.merge.is_none() {
        "a write to several shards"
    } else {
        return Ok(());
    };
    Err(Error::new(
        ErrorKind::Unsupported,
        format!(
            "{what} while LOCK TABLES holds: the transaction it needs on the shards would \
             let go of the table locks (UNLOCK TABLES first, or write one shard's rows per \
             statement)"
        ),
    ))
}

fn holds_table_locks(session: &Session) -> bool {
    session.held.contains_key(&Held::TableLocks)
}
