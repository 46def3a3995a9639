//! INSERT … SELECT from a source that reads no sharded table: the SELECT runs first, then its
//! rows are inserted as a multi-row INSERT, keys generated and rows routed as for any other.

use keyshard_router::{InsertSelect, Value};

use super::Engine;
use crate::error::Error;
use crate::reply::Reply;
use crate::session::Session;

impl Engine {
    pub(super) async fn insert_select(
        &self,
        session: &mut Session,
        select: &InsertSelect,
        params: &[Value],
    ) -> Result<Reply, Error> {
        let rows = self.run(session, &select.source().bind(params)).await?.rows;
        let Some(sql) = select.with_rows(&rows) else {
            return Ok(Reply::Ok {
                affected_rows: 0,
                last_insert_id: 0,
            });
        };
        // The rows become SQL text the size of their values: it takes memory as a statement
        // the client sent would.
        let _held = self.memory.reserve(&sql, 0).await?;
        let statement = self.statement(&sql, session.dialect).await?;
        Box::pin(self.execute_statement(session, &statement, &[])).await
    }
}
