//! DistSQL statements answered by the engine, which holds what they need: the configuration,
//! the data sources' metadata and the coordination repository.

use super::Engine;
use crate::distsql::{self, DistSql};
use crate::error::Error;
use crate::reply::Reply;
use crate::session::Session;

impl Engine {
    /// The DistSQL statements the proxy answers. The repository gets as long as any of its
    /// calls may take (`operationTimeoutMilliseconds`).
    pub(super) async fn distsql(
        &self,
        session: &mut Session,
        statement: DistSql,
    ) -> Result<Reply, Error> {
        if let DistSql::Rules(_, Some(database)) = &statement
            && let Some(other) = self.other_database(database)
        {
            return Box::pin(other.distsql(session, statement)).await;
        }
        if let DistSql::RefreshMetadata = statement {
            if let Err(e) = self.backend.load_metadata(&self.config.sharding).await {
                tracing::warn!("table metadata not refreshed: {e}");
            }
            self.refresh_single_tables().await;
            return Ok(Reply::done());
        }
        distsql::answer(
            statement,
            session,
            &self.config,
            &self.single_tables.listed(),
            &self.backend.replica_status(),
            self.coordination.as_ref(),
            self.config.mode.timing.operation_timeout,
        )
        .await
    }
}
