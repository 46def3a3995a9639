//! Running a plan on the shards, in the session's transaction (opening one when autocommit is
//! off), and the reply from its outcome: rows, or the rows changed and the first generated key.

use keyshard_backend::{Characteristics, Outcome};
use keyshard_config::TransactionType;
use keyshard_keygen::Key;
use keyshard_router::Plan;

use super::{Engine, table_locks};
use crate::error::Error;
use crate::reply::Reply;
use crate::session::Session;

impl Engine {
    /// Runs `plan` and answers with its rows, or with the rows it changed and its first key.
    pub(super) async fn reply(
        &self,
        session: &mut Session,
        mut plan: Plan,
        reads: bool,
    ) -> Result<Reply, Error> {
        if session.binary_results {
            for unit in &mut plan.units {
                unit.binary_results = true;
            }
        }
        table_locks::refuse_unlocked(session, &plan)?;
        if let Some(guard) = &plan.guard
            && !self.run(session, &guard.reads).await?.rows.is_empty()
        {
            return Err(guard.refusal().into());
        }
        let mut outcome = match reads {
            true => {
                // `reading` uses it only when the plan streams.
                let tap = session.stream.take();
                // Pinned in place: moved into the read's scope, it would be copied.
                let run = std::pin::pin!(self.run(session, &plan));
                self.backend.reading(&plan, tap, run).await?
            }
            false => self.run(session, &plan).await?,
        };
        if let Some(rows) = outcome.streamed {
            return Ok(Reply::Streamed { rows });
        }
        if reads && outcome.columns.is_empty() {
            // No rows, so no columns came with them; the client still needs the result's shape.
            outcome.columns = self.backend.result_columns(&plan).await?.0;
        }
        let first_key = first_key(&plan);
        if let Some(key) = first_key {
            session.last_insert_id = key;
        }
        if let Some(Key::Int(last)) = plan.generated_keys.last() {
            session.last_generated = Some(*last);
        }
        Ok(if reads || !outcome.columns.is_empty() {
            Reply::Rows {
                columns: outcome.columns,
                rows: outcome.rows,
            }
        } else {
            Reply::Ok {
                affected_rows: outcome.affected_rows,
                last_insert_id: first_key.unwrap_or(0),
            }
        })
    }

    /// Whether `session` chose LOCAL where the configuration commits in two phases.
    pub(super) fn local(&self, session: &Session) -> bool {
        session.transaction_type == Some(TransactionType::Local)
            && self.config.transaction_type == TransactionType::Xa
    }

    /// Runs `plan` in the session's transaction, opening one when autocommit is off.
    pub(super) async fn run(&self, session: &mut Session, plan: &Plan) -> Result<Outcome, Error> {
        if let Some(outcome) = self.run_keeping_table_locks(session, plan).await {
            return outcome;
        }
        if session.transaction.is_none() && !session.autocommit {
            session.transaction = Some(
                table_locks::implicit_transaction(session)
                    .unwrap_or_else(|| self.new_transaction(session, Characteristics::default())),
            );
        }
        if let Some(gather) = &plan.gather {
            let binary = session.binary_results;
            let gathered = self
                .backend
                .gather(session.transaction.as_mut(), gather, binary, false);
            return Ok(gathered.await?.0);
        }
        let local = self.local(session);
        Ok(match &mut session.transaction {
            Some(transaction) => self.backend.execute_in(transaction, plan).await?,
            None if local => self.backend.execute_local(plan).await?,
            None => self.backend.execute(plan).await?,
        })
    }
}

fn first_key(plan: &Plan) -> Option<u64> {
    match plan.generated_keys.first()? {
        Key::Int(v) => u64::try_from(*v).ok(),
        Key::Text(_) => None,
    }
}
