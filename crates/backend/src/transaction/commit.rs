//! Commit, with several data sources touched: under LOCAL every data source commits on its own;
//! should one fail after another committed, the client is told which committed
//! ([`BackendError::PartialCommit`]). Under XA, every branch is prepared, the decision is
//! recorded in the coordination repository, then every branch commits; a branch that cannot be
//! committed now is left prepared for recovery, which commits it by the recorded decision.

use futures_util::future::join_all;

use super::Transaction;
use crate::branch::Branch;
use crate::xa::XaTransaction;
use crate::{Backend, BackendError, failpoint};

impl Backend {
    /// Commits every data source's branch: in one phase when there is one, else as the
    /// configured transaction type says.
    pub async fn commit(&self, transaction: Transaction) -> Result<(), BackendError> {
        let changes_columns = transaction.changes_columns;
        let finished = self.finish(transaction.branches, transaction.xa).await;
        if changes_columns {
            self.result_columns.forget();
        }
        finished
    }

    /// Rolls every data source's branch back.
    pub async fn rollback(&self, transaction: Transaction) -> Result<(), BackendError> {
        let changes_columns = transaction.changes_columns;
        let rolled_back = self.roll_back(transaction.branches).await;
        if changes_columns {
            self.result_columns.forget();
        }
        rolled_back
    }

    /// The commit protocol, for explicit transactions and multi-data-source statements alike.
    pub(crate) async fn finish(
        &self,
        branches: Vec<Branch>,
        xa: Option<XaTransaction>,
    ) -> Result<(), BackendError> {
        match (branches.len(), xa) {
            (0, _) => Ok(()),
            (1, _) | (_, None) => self.commit_each(branches).await,
            (_, Some(xa)) => self.commit_two_phase(branches, xa).await,
        }
    }

    /// Rolls `branches` back at once; the first failure is reported.
    pub(crate) async fn roll_back(&self, branches: Vec<Branch>) -> Result<(), BackendError> {
        let ends = branches.into_iter().map(|branch| async move {
            let data_source = branch.data_source().to_owned();
            let pool = self.pool(&data_source)?;
            branch
                .rollback(pool)
                .await
                .map_err(|e| BackendError::from_sqlx(&data_source, e))
        });
        join_all(ends).await.into_iter().collect()
    }

    /// LOCAL: each branch commits on its own, all at once.
    async fn commit_each(&self, branches: Vec<Branch>) -> Result<(), BackendError> {
        let commits = branches
            .into_iter()
            .enumerate()
            .map(|(i, branch)| async move {
                let data_source = branch.data_source().to_owned();
                let pool = match self.pool(&data_source) {
                    Ok(pool) => pool,
                    Err(e) => return (data_source, Err(e)),
                };
                let result = if i > 0 && failpoint::armed("local-commit-fails-after-first") {
                    let _ = branch.rollback(pool).await;
                    Err(sqlx::Error::Protocol(
                        "commit failed (failpoint local-commit-fails-after-first)".to_owned(),
                    ))
                } else {
                    branch.commit(pool).await
                };
                (
                    data_source.clone(),
                    result.map_err(|e| BackendError::from_sqlx(&data_source, e)),
                )
            });
        let mut committed = Vec::new();
        let mut failed = Vec::new();
        for (data_source, result) in join_all(commits).await {
            match result {
                Ok(()) => committed.push(data_source),
                Err(e) => failed.push(e),
            }
        }
        let mut failed = failed.into_iter();
        let Some(first) = failed.next() else {
            return Ok(());
        };
        if committed.is_empty() {
            return Err(first);
        }
        tracing::error!(
            "partial commit: committed on {}, failed: {first}",
            committed.join(", ")
        );
        Err(BackendError::PartialCommit {
            committed,
            failure: Box::new(first),
        })
    }

    /// XA: prepare everywhere, record the decision, commit everywhere. The branch on the data
    /// source holding the decisions is not prepared: the decision is written in it, and its
    /// one-phase commit is the commit point.
    async fn commit_two_phase(
        &self,
        mut branches: Vec<Branch>,
        xa: XaTransaction,
    ) -> Result<(), BackendError> {
        let gtrid = xa.gtrid().to_owned();
        let holder = xa
            .coordinator()
            .decision_in_branch(&gtrid)
            .and_then(|(name, statement)| {
                let at = branches.iter().position(|b| b.data_source() == name)?;
                Some((branches.remove(at), statement))
            });
        let prepares = branches.iter_mut().map(|branch| async move {
            branch
                .prepare()
                .await
                .map_err(|e| BackendError::from_sqlx(branch.data_source(), e))
        });
        let prepared: Result<(), BackendError> = join_all(prepares).await.into_iter().collect();
        if let Err(e) = prepared {
            // No decision was recorded, so none can say commit: rolling back is safe, and a
            // branch whose rollback fails is rolled back by recovery.
            branches.extend(holder.map(|(branch, _)| branch));
            let _ = self.roll_back(branches).await;
            return Err(e);
        }
        failpoint::crash_at("xa-after-prepare");
        let decision = match holder {
            Some((branch, statement)) => {
                self.commit_with_decision(branch, &statement, &gtrid).await
            }
            None => match xa.coordinator().decide(&gtrid, true).await {
                Ok(true) => Decision::Commit,
                Ok(false) => Decision::Abort(BackendError::XaAborted {
                    gtrid: gtrid.clone(),
                }),
                Err(e) => Decision::Unknown(e.to_string()),
            },
        };
        match decision {
            Decision::Commit => {}
            Decision::Abort(e) => {
                let _ = self.roll_back(branches).await;
                return Err(e);
            }
            Decision::Unknown(message) => {
                // The decision may or may not be recorded: only recovery can tell, later.
                tracing::error!("XA {gtrid}: decision not confirmed ({message}); left to recovery");
                branches.into_iter().for_each(Branch::abandon);
                return Err(BackendError::XaOutcomeUnknown { gtrid, message });
            }
        }
        failpoint::crash_at("xa-after-decision");
        let mut branches = branches.into_iter();
        if failpoint::armed("xa-after-first-commit")
            && let Some(first) = branches.next()
        {
            let pool = self.pool(first.data_source())?;
            let _ = first.commit(pool).await;
            failpoint::crash_at("xa-after-first-commit");
        }
        let commits = branches.map(|branch| async move {
            let data_source = branch.data_source().to_owned();
            let committed = match self.pool(&data_source) {
                Ok(pool) => branch.commit(pool).await.map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            committed.err().map(|e| format!("{data_source} ({e})"))
        });
        let left: Vec<String> = join_all(commits).await.into_iter().flatten().collect();
        if left.is_empty() {
            xa.coordinator().forget(gtrid);
        } else {
            // Committed by decision: the prepared branches are committed by recovery.
            tracing::warn!(
                "XA {gtrid}: committed; branches left to recovery: {}",
                left.join(", ")
            );
        }
        Ok(())
    }
}

/// What a two-phase transaction's decision step ended with.
enum Decision {
    /// Recorded: the transaction commits.
    Commit,
    /// Not recorded, and never will be: the transaction rolls back, for this reason.
    Abort(BackendError),
    /// Maybe recorded: recovery finishes the transaction.
    Unknown(String),
}

impl Backend {
    /// Writes the commit decision in `branch` (on the data source holding the decisions) with
    /// the repository's `statement`, and commits it in one phase.
    async fn commit_with_decision(
        &self,
        mut branch: Branch,
        statement: &str,
        gtrid: &str,
    ) -> Decision {
        let data_source = branch.data_source().to_owned();
        let pool = match self.pool(&data_source) {
            Ok(pool) => pool,
            Err(e) => return Decision::Abort(e),
        };
        match branch.command(statement).await {
            Ok(()) => {}
            // Recovery recorded an abort first.
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                let _ = branch.rollback(pool).await;
                return Decision::Abort(BackendError::XaAborted {
                    gtrid: gtrid.to_owned(),
                });
            }
            // Dropped, the branch is rolled back with its connection.
            Err(e) => return Decision::Abort(BackendError::from_sqlx(&data_source, e)),
        }
        match branch.commit(pool).await {
            Ok(()) => Decision::Commit,
            Err(e) => Decision::Unknown(format!("data source '{data_source}': {e}")),
        }
    }
}
