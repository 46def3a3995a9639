//! A statement's units over several data sources, all or nothing: a transaction on each data
//! source, committed everywhere (in two phases under XA) only when every unit succeeded.

use futures_util::future::join_all;
use keyshard_router::ExecutionUnit;
use tokio::sync::oneshot;

use crate::branch::Branch;
use crate::characteristics::Characteristics;
use crate::outcome::UnitResult;
use crate::outcome::in_plan_order;
use crate::{Backend, BackendError, Pool};

/// The units of one statement that run on one data source.
pub(crate) struct Group<'a> {
    pub(crate) data_source: &'a str,
    pub(crate) pool: &'a Pool,
    pub(crate) units: Vec<&'a ExecutionUnit>,
    /// Each unit's position in the plan.
    pub(crate) positions: Vec<usize>,
}

impl Backend {
    /// `units` by data source, in the order each data source first appears.
    pub(crate) fn group<'a>(
        &'a self,
        units: &'a [ExecutionUnit],
    ) -> Result<Vec<Group<'a>>, BackendError> {
        let mut groups: Vec<Group<'a>> = Vec::new();
        for (position, unit) in units.iter().enumerate() {
            match groups
                .iter_mut()
                .find(|g| g.data_source == unit.data_source)
            {
                Some(group) => {
                    group.units.push(unit);
                    group.positions.push(position);
                }
                None => groups.push(Group {
                    data_source: &unit.data_source,
                    pool: self.pool(&unit.data_source)?,
                    units: vec![unit],
                    positions: vec![position],
                }),
            }
        }
        Ok(groups)
    }

    /// Runs each group's units in a transaction on its data source, all data sources at once,
    /// and commits them all (in two phases when `two_phase` and there are several) only if
    /// every unit succeeded; otherwise rolls every one back. Returns the results in the plan's
    /// unit order.
    pub(crate) async fn atomically(
        &self,
        groups: &[Group<'_>],
        unit_count: usize,
        two_phase: bool,
    ) -> Result<Vec<UnitResult>, BackendError> {
        let xa = match &self.xa {
            Some(coordinator) if two_phase && groups.len() > 1 => Some(coordinator.begin()?),
            _ => None,
        };
        // Connections are taken one data source after the other, in data node order — one
        // order for every statement — so two statements never hold one shard each while
        // waiting for the other's (with small pools that would stall both until the acquire
        // time-out).
        let (turns, waits): (Vec<_>, Vec<_>) =
            (0..groups.len()).map(|_| oneshot::channel::<()>()).unzip();
        let mut turns = turns.into_iter();
        if let Some(first) = turns.next() {
            let _ = first.send(());
        }
        let next_turns = turns.map(Some).chain(std::iter::once(None));
        let parts = groups
            .iter()
            .zip(waits)
            .zip(next_turns)
            .map(|((group, mine), next)| {
                let xid = match &xa {
                    Some(xa) => xa.branch(group.data_source).map(Some),
                    None => Ok(None),
                };
                run_group(group, xid, mine, next)
            });
        let outcomes = join_all(parts).await;
        let mut branches = Vec::with_capacity(groups.len());
        let mut results = Vec::with_capacity(groups.len());
        let mut first_error = None;
        for (outcome, group) in outcomes.into_iter().zip(groups) {
            match outcome {
                Ok((branch, done)) => {
                    branches.push(branch);
                    results.push((group.positions.clone(), done));
                }
                Err((branch, e)) => {
                    branches.extend(branch);
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(error) = first_error {
            // The statement's error is worth reporting, not a rollback's.
            let _ = self.roll_back(branches).await;
            return Err(error);
        }
        self.finish(branches, xa).await?;
        Ok(in_plan_order(unit_count, results))
    }
}

/// A statement's units on one data source: waits for its turn to take a connection, passes the
/// turn on, begins, runs. On failure, the branch when there is one to roll back.
async fn run_group(
    group: &Group<'_>,
    xid: Result<Option<String>, BackendError>,
    mine: oneshot::Receiver<()>,
    next: Option<oneshot::Sender<()>>,
) -> Result<(Branch, Vec<UnitResult>), (Option<Branch>, BackendError)> {
    let at = |e| BackendError::from_sqlx(group.data_source, e);
    // A closed channel means an earlier data source's part was dropped: go on regardless.
    let _ = mine.await;
    let acquired = match xid {
        Ok(xid) => Branch::acquire(group.data_source, group.pool, xid)
            .await
            .map_err(at),
        Err(e) => Err(e),
    };
    if let Some(next) = next {
        let _ = next.send(());
    }
    let mut branch = acquired.map_err(|e| (None, e))?;
    match branch
        .begin_and_run(Characteristics::default(), &group.units)
        .await
    {
        Ok(results) => Ok((branch, results)),
        Err((true, e)) => Err((Some(branch), at(e))),
        // A branch that failed to begin is dropped, which closes its connection.
        Err((false, e)) => Err((None, at(e))),
    }
}
