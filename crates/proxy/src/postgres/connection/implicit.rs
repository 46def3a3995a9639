//! PostgreSQL runs the statements of one Query message, and those an extended-protocol batch
//! executes before its Sync, as one transaction, its implicit transaction block, unless they
//! control their own: an error rolls back every statement of the message or batch before it,
//! and the block commits when the message is done or at the Sync. BEGIN turns the block into
//! the client's own transaction block (statements before it included); COMMIT or ROLLBACK
//! ends it with a warning, and the statements after them start another; savepoints and `AND
//! CHAIN` are refused in it. A lone statement needs no block (each statement the proxy routes
//! is atomic by itself): a Query of one statement, or an Execute whose Sync has already
//! arrived behind it with nothing executed before it, the usual Parse/Bind/Execute/Sync.
//!
//! One difference: a schema change (CREATE, ALTER, DROP) commits the block before
//! it and runs on its own, and the statements after it begin another. Keyshard reads a
//! table's columns on connections of its own, which would not see a change its block has not
//! committed (`CREATE TABLE t …; INSERT INTO t VALUES …` would fail).

use keyshard_backend::Characteristics;
use keyshard_router::Leading;
use pgwire::messages::PgWireBackendMessage as Out;
use pgwire::messages::response::NoticeResponse;

use super::super::pg_error::PgError;
use super::super::wire::{Wire, WireError};
use super::Connection;
use crate::control::{Control, Scope};
use crate::error::{Error, ErrorKind};
use crate::sql::Sql;

/// The implicit transaction block of one Query message.
#[derive(Debug, Default)]
pub(super) struct Implicit {
    /// The message holds several statements: its statements share a block.
    several: bool,
    /// The proxy opened a transaction for the block and has not ended it.
    open: bool,
}

impl Implicit {
    pub(super) fn new(statements: usize) -> Self {
        Self {
            several: statements > 1,
            open: false,
        }
    }

    /// Before an Execute: the batch runs in a block unless this statement is known to be its
    /// only one (`sync_is_next`, and no block opened by an earlier one).
    pub(super) fn before_execute(&mut self, sync_is_next: bool) {
        self.several = self.open || !sync_is_next;
    }
}

/// What running a statement inside the block takes.
pub(super) enum Step {
    /// Run it as sent.
    Run,
    /// Do not run it: answer with this tag (BEGIN taking the block over).
    Answered(&'static str),
}

impl Connection {
    /// Before `statement`: opens the block when no transaction is open, and applies the
    /// block's rules to transaction control.
    pub(super) async fn enter(
        &mut self,
        implicit: &mut Implicit,
        statement: Sql<'_>,
    ) -> Result<Step, PgError> {
        if !implicit.several {
            return Ok(Step::Run);
        }
        let control = statement.control();
        // A block must not hold a schema change uncommitted.
        if matches!(
            statement.leading,
            Leading::Create | Leading::Alter | Leading::Drop
        ) {
            self.leave(implicit, false).await?;
            return Ok(Step::Run);
        }
        if !implicit.open && !self.session.in_transaction() {
            if matches!(control, Some(Control::Begin(_))) {
                return Ok(Step::Run);
            }
            self.control(Control::Begin(Characteristics::default()))
                .await?;
            implicit.open = true;
        }
        if !implicit.open {
            return Ok(Step::Run);
        }
        let refused = |what: &str| {
            Err(PgError::from(Error::new(
                ErrorKind::NoTransactionBlock,
                format!("{what} can only be used in transaction blocks"),
            )))
        };
        match control {
            // The block becomes the client's, with what BEGIN asks of it.
            Some(Control::Begin(asked)) => {
                implicit.open = false;
                if asked != Characteristics::default() {
                    self.control(Control::SetTransaction(Scope::Transaction, asked))
                        .await?;
                }
                Ok(Step::Answered("BEGIN"))
            }
            Some(Control::Commit { chain: true }) => refused("COMMIT AND CHAIN"),
            Some(Control::Rollback { chain: true }) => refused("ROLLBACK AND CHAIN"),
            Some(Control::Savepoint(_)) => refused("SAVEPOINT"),
            Some(Control::RollbackTo(_)) => refused("ROLLBACK TO SAVEPOINT"),
            Some(Control::Release(_)) => refused("RELEASE SAVEPOINT"),
            _ => Ok(Step::Run),
        }
    }

    /// After `statement` ran: COMMIT or ROLLBACK ended the block, as PostgreSQL warns.
    pub(super) async fn ran(
        &mut self,
        wire: &mut Wire,
        implicit: &mut Implicit,
        statement: Sql<'_>,
    ) -> Result<(), WireError> {
        if implicit.open && !self.session.in_transaction() {
            implicit.open = false;
            if matches!(
                statement.control(),
                Some(Control::Commit { .. } | Control::Rollback { .. })
            ) {
                let warning = vec![
                    (b'S', "WARNING".to_owned()),
                    (b'V', "WARNING".to_owned()),
                    (b'C', "25P01".to_owned()),
                    (b'M', "there is no transaction in progress".to_owned()),
                ];
                wire.send(Out::NoticeResponse(NoticeResponse::new(warning)))
                    .await?;
            }
        }
        Ok(())
    }

    /// At the end of the message, or at its first error (`failed`): commits or rolls back
    /// the block if it is open. A failed commit is the message's error.
    pub(super) async fn leave(
        &mut self,
        implicit: &mut Implicit,
        failed: bool,
    ) -> Result<(), PgError> {
        if !std::mem::take(&mut implicit.open) {
            return Ok(());
        }
        let end = match failed {
            true => Control::Rollback { chain: false },
            false => Control::Commit { chain: false },
        };
        self.control(end).await
    }

    async fn control(&mut self, control: Control) -> Result<(), PgError> {
        self.engine.control(&mut self.session, control).await?;
        Ok(())
    }
}
