//! Statements of an explicit transaction run one data source after the other on the held
//! connections. A statement that runs as several units (several data sources, or several
//! tables of one) is wrapped in a savepoint on each data source it touches, so that when one
//! part fails the others are undone and the transaction goes on as it was before the
//! statement, as a single database would leave it.

use keyshard_router::Plan;

use super::Transaction;
use super::savepoints_and_settings::Replayed;
use crate::branch::Branch;
use crate::{Backend, BackendError, Outcome};

/// The savepoint a multi-shard statement runs under.
const SAVEPOINT: &str = "keyshard_statement";

impl Backend {
    /// Runs `plan` inside `transaction`, beginning a branch on each data source it touches for
    /// the first time.
    pub async fn execute_in(
        &self,
        transaction: &mut Transaction,
        plan: &Plan,
    ) -> Result<Outcome, BackendError> {
        // Boxed: a transaction on data sources without replicas carries no replica read.
        if plan.replica_safe
            && transaction.replayed.is_empty()
            && let [first, rest @ ..] = plan.units.as_slice()
            && self.replicas.has(&first.data_source)
            && transaction.branch(&first.data_source).is_none()
            && rest.iter().all(|u| u.data_source == first.data_source)
            && let Some(outcome) =
                Box::pin(self.read_on_replica_in(&mut transaction.fixed_replicas, plan)).await
        {
            return outcome;
        }
        let mut touched: Vec<&str> = Vec::new();
        for unit in &plan.units {
            if !touched.contains(&unit.data_source.as_str()) {
                touched.push(&unit.data_source);
            }
        }
        // A single unit without parameters on a data source the transaction has not touched
        // yet goes with the statements that open the branch, as one text: one round trip
        // where each would take its own.
        if let [unit] = plan.units.as_slice()
            && unit.params.is_empty()
            && transaction.replayed.is_empty()
            && transaction.branch(&unit.data_source).is_none()
        {
            let data_source = unit.data_source.as_str();
            let mut branch = self.acquire_branch(transaction, data_source).await?;
            transaction.changes_columns |= self.starting(unit);
            return match branch
                .begin_and_run(transaction.characteristics, &[unit])
                .await
            {
                Ok(results) => {
                    transaction.branches.push(branch);
                    self.outcome(plan, results).await
                }
                // The branch may be open: it ends with the transaction.
                Err((true, e)) => {
                    transaction.branches.push(branch);
                    Err(BackendError::from_sqlx(data_source, e))
                }
                // A branch that failed to begin is dropped, which closes its connection.
                Err((false, e)) => Err(BackendError::from_sqlx(data_source, e)),
            };
        }
        for data_source in &touched {
            self.open_branch(transaction, data_source).await?;
        }
        // One unit is one statement on one database, atomic by itself; several units (shards
        // on several data sources, or several tables of one) are made atomic by a savepoint.
        let guarded = plan.units.len() > 1;
        if guarded {
            on_each(transaction, &touched, &format!("SAVEPOINT {SAVEPOINT}")).await?;
        }
        let mut results = Vec::with_capacity(plan.units.len());
        let mut failure = None;
        for unit in &plan.units {
            transaction.changes_columns |= self.starting(unit);
            let branch = transaction
                .branch(&unit.data_source)
                .ok_or_else(|| BackendError::UnknownDataSource(unit.data_source.clone()))?;
            match branch.run(unit).await {
                Ok(result) => results.push(result),
                Err(e) => {
                    failure = Some(BackendError::from_sqlx(&unit.data_source, e));
                    break;
                }
            }
        }
        if guarded {
            let end = match failure {
                Some(_) => format!("ROLLBACK TO SAVEPOINT {SAVEPOINT}"),
                None => format!("RELEASE SAVEPOINT {SAVEPOINT}"),
            };
            on_each(transaction, &touched, &end).await?;
        }
        match failure {
            Some(error) => Err(error),
            None => self.outcome(plan, results).await,
        }
    }

    /// Begins `transaction`'s branch on `data_source` unless it has one, with the
    /// transaction's own settings and savepoints so far.
    pub(crate) async fn open_branch(
        &self,
        transaction: &mut Transaction,
        data_source: &str,
    ) -> Result<(), BackendError> {
        if transaction.branch(data_source).is_some() {
            return Ok(());
        }
        let mut branch = self.acquire_branch(transaction, data_source).await?;
        branch
            .begin(transaction.characteristics)
            .await
            .map_err(|e| BackendError::from_sqlx(data_source, e))?;
        if !transaction.replayed.is_empty() {
            let set: Vec<String> = transaction
                .replayed
                .iter()
                .map(Replayed::statement)
                .collect();
            branch
                .command(&set.join("; "))
                .await
                .map_err(|e| BackendError::from_sqlx(data_source, e))?;
        }
        transaction.branches.push(branch);
        Ok(())
    }

    /// A connection of `data_source` for a new branch of `transaction`, named for two phases
    /// when the transaction may commit in two (its XA id taken with its first branch).
    async fn acquire_branch(
        &self,
        transaction: &mut Transaction,
        data_source: &str,
    ) -> Result<Branch, BackendError> {
        if transaction.xa.is_none()
            && !transaction.local
            && let Some(coordinator) = &self.xa
        {
            transaction.xa = Some(coordinator.begin()?);
        }
        let xid = match &transaction.xa {
            Some(xa) => Some(xa.branch(data_source)?),
            None => None,
        };
        let mut branch = Branch::acquire(data_source, self.pool(data_source)?, xid)
            .await
            .map_err(|e| BackendError::from_sqlx(data_source, e))?;
        if transaction.keeps_table_locks {
            branch.keep_table_locks();
        }
        Ok(branch)
    }
}

async fn on_each(
    transaction: &mut Transaction,
    data_sources: &[&str],
    sql: &str,
) -> Result<(), BackendError> {
    for data_source in data_sources {
        if let Some(branch) = transaction.branch(data_source) {
            branch
                .command(sql)
                .await
                .map_err(|e| BackendError::from_sqlx(data_source, e))?;
        }
    }
    Ok(())
}
