//! Reads run on a replica, in autocommit or for a transaction (see [`super`]), and what a
//! replica that fails under them leaves to the primary.

use keyshard_router::{ExecutionUnit, Plan};

use super::Replica;
use crate::outcome::UnitResult;
use crate::{Backend, BackendError, Outcome, execute, stream};

impl Backend {
    /// Runs `units`, all of `plan` on `data_source`, on a replica if one may answer the read:
    /// `Ok(None)` leaves them to the primary.
    pub(crate) async fn read_on_replica(
        &self,
        plan: &Plan,
        data_source: &str,
        units: &[&ExecutionUnit],
    ) -> Result<Option<Vec<UnitResult>>, BackendError> {
        let primary = self.pool(data_source)?;
        let replica = self.replicas.for_read(plan, data_source, primary).await;
        self.on_replica(replica, units).await
    }

    /// A read of a transaction that its group's `transactionalReadQueryStrategy` (FIXED,
    /// DYNAMIC) sends to a replica, run there on its own; `fixed` holds the transaction's
    /// FIXED choices. The caller checked that the transaction has not touched that primary,
    /// nor made settings or savepoints a replica would not have. `None`: it runs in the
    /// transaction.
    pub(crate) async fn read_on_replica_in(
        &self,
        fixed: &mut Vec<(String, String)>,
        plan: &Plan,
    ) -> Option<Result<Outcome, BackendError>> {
        let data_source = &plan.units.first()?.data_source;
        let primary = self.pool(data_source).ok()?;
        let replica = (self.replicas)
            .for_transactional_read(plan, data_source, primary, fixed)
            .await;
        let units: Vec<&ExecutionUnit> = plan.units.iter().collect();
        match self.on_replica(replica, &units).await {
            Ok(Some(results)) => Some(self.outcome(plan, results).await),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// Runs `units` on `replica`, if there is one: `Ok(None)` when they are to run on the
    /// primary instead, because there is none or it failed before any of their rows went out
    /// (it then leaves the rotation).
    async fn on_replica(
        &self,
        replica: Option<&Replica>,
        units: &[&ExecutionUnit],
    ) -> Result<Option<Vec<UnitResult>>, BackendError> {
        let Some(replica) = replica else {
            return Ok(None);
        };
        match execute::autocommit(replica.pool(), units).await {
            Ok(results) => {
                replica.served();
                Ok(Some(results))
            }
            Err(e) if e.as_database_error().is_some() || stream::passed_on() => {
                Err(BackendError::from_sqlx(replica.name(), e))
            }
            Err(e) => {
                replica.failed(&e);
                Ok(None)
            }
        }
    }
}
