//! Transactions across data sources: a client's explicit transaction, and the implicit one of a
//! statement that runs on several data sources. Both end through one commit protocol.
//!
//! Statements of an explicit transaction run one data source after the other on the held
//! connections. A statement that runs as several units (several data sources, or several
//! tables of one) is wrapped in a savepoint on each data source it touches, so that when one
//! part fails the others are undone and the transaction goes on as it was before the
//! statement, as a single database would leave it.
//!
//! Commit, with several data sources touched: under LOCAL every data source commits on its own;
//! should one fail after another committed, the client is told which committed
//! ([`BackendError::PartialCommit`]). Under XA, every branch is prepared, the decision is
//! recorded in the coordination repository, then every branch commits; a branch that cannot be
//! committed now is left prepared for recovery, which commits it by the recorded decision.

use std::sync::Arc;

use futures_util::future::join_all;
use keyshard_router::Plan;

use crate::branch::Branch;
use crate::characteristics::Characteristics;
use crate::outcome::UnitResult;
use crate::session_state::Settings;
use crate::xa::XaTransaction;
use crate::{Backend, BackendError, Outcome, failpoint};

/// The savepoint a multi-shard statement runs under.
const SAVEPOINT: &str = "keyshard_statement";

/// An open transaction across data sources; empty until its first statement.
#[derive(Debug)]
pub struct Transaction {
    branches: Vec<Branch>,
    /// The transaction's id when it may commit in two phases (XA), taken with its first
    /// branch.
    xa: Option<XaTransaction>,
    /// Never two-phase, whatever the backend's transaction type.
    local: bool,
    /// The isolation level and access mode each branch begins with.
    characteristics: Characteristics,
    /// The client's savepoints and PostgreSQL's `SET LOCAL …` statements, in the order they
    /// were made. A branch that begins later makes them all at once, in that order, so that
    /// rolling back to a savepoint undoes that branch's work and later settings too.
    replayed: Vec<Replayed>,
    /// A statement ran that may change a table's columns: kept result columns are forgotten
    /// again when the transaction ends, as its changes show to other connections then.
    changes_columns: bool,
    /// MySQL: its connections hold the session's table locks (see
    /// [`Transaction::keeping_table_locks`]).
    keeps_table_locks: bool,
    /// The replica each read/write group's reads go to under `transactionalReadQueryStrategy:
    /// FIXED`, by group (see `replicas`).
    fixed_replicas: Vec<(String, String)>,
}

/// What a branch that begins later must make first.
#[derive(Debug, Clone)]
enum Replayed {
    /// A client's savepoint: `sql` as the client wrote it (quoted or not), to send on; `key`
    /// as names compare.
    Savepoint { sql: String, key: String },
    /// A setting that lasts the transaction (PostgreSQL's `SET LOCAL`), as written.
    LocalSetting(String),
}

impl Replayed {
    /// The statement that makes it.
    fn statement(&self) -> String {
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

impl Default for Transaction {
    fn default() -> Self {
        Self::new()
    }
}

impl Transaction {
    /// A transaction that has touched no data source yet, committing as the backend is
    /// configured to.
    pub fn new() -> Self {
        Self {
            branches: Vec::new(),
            xa: None,
            local: false,
            characteristics: Characteristics::default(),
            replayed: Vec::new(),
            changes_columns: false,
            keeps_table_locks: false,
            fixed_replicas: Vec::new(),
        }
    }

    /// A LOCAL transaction on connections that hold MySQL table locks: each branch runs with
    /// autocommit off (`SET autocommit = 0` … `COMMIT; SET autocommit = 1`), which keeps the
    /// locks where `START TRANSACTION` and `XA START` would let go of them.
    pub fn keeping_table_locks() -> Self {
        Self {
            local: true,
            keeps_table_locks: true,
            ..Self::new()
        }
    }

    /// A transaction that commits each data source on its own (LOCAL) even where the backend
    /// commits in two phases.
    pub fn local() -> Self {
        Self {
            local: true,
            ..Self::new()
        }
    }

    /// Begins every branch with `characteristics`.
    pub fn with(mut self, characteristics: Characteristics) -> Self {
        self.characteristics = characteristics;
        self
    }

    /// Changes the characteristics its branches begin with; `false`, changing nothing, once a
    /// branch has begun.
    pub fn set_characteristics(&mut self, characteristics: Characteristics) -> bool {
        if !self.branches.is_empty() {
            return false;
        }
        self.characteristics = characteristics.or(self.characteristics);
        true
    }

    /// Its isolation level and access mode, as asked for.
    pub fn characteristics(&self) -> Characteristics {
        self.characteristics
    }

    /// The data sources it holds a connection on.
    pub fn data_sources(&self) -> impl Iterator<Item = &str> {
        self.branches.iter().map(Branch::data_source)
    }

    /// How many savepoints the client holds.
    pub fn savepoint_count(&self) -> usize {
        self.replayed
            .iter()
            .filter(|r| matches!(r, Replayed::Savepoint { .. }))
            .count()
    }

    pub(crate) fn branch(&mut self, data_source: &str) -> Option<&mut Branch> {
        self.branches
            .iter_mut()
            .find(|b| b.data_source() == data_source)
    }
}

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

/// Sends `sql` on every branch of `transaction`.
async fn on_every_branch(transaction: &mut Transaction, sql: &str) -> Result<(), BackendError> {
    for branch in &mut transaction.branches {
        let done = branch.command(sql).await;
        done.map_err(|e| BackendError::from_sqlx(branch.data_source(), e))?;
    }
    Ok(())
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

/// Results of a statement's units, put back in plan order.
pub(crate) fn in_plan_order(
    unit_count: usize,
    parts: impl IntoIterator<Item = (Vec<usize>, Vec<UnitResult>)>,
) -> Vec<UnitResult> {
    let mut ordered: Vec<UnitResult> = (0..unit_count).map(|_| UnitResult::default()).collect();
    for (positions, results) in parts {
        for (position, result) in positions.into_iter().zip(results) {
            ordered[position] = result;
        }
    }
    ordered
}
