//! INSERT … SELECT from a source that reads no sharded table: the SELECT runs first, then its
//! rows are inserted as a multi-row INSERT, keys generated and rows routed as for any other.

use keyshard_router::InsertSelect;
use keyshard_types::Value;

use super::Engine;
use crate::error::{Error, ErrorKind};
use crate::reply::Reply;
use crate::session::{Planned, Session};

impl Engine {
    pub(super) async fn insert_select(
        &self,
        session: &mut Session,
        select: &InsertSelect,
        params: &[Value],
    ) -> Result<Reply, Error> {
        let mut rows = self.run(session, &select.source().bind(params)).await?.rows;
        for value in rows.iter_mut().flatten() {
            as_literal_text(value)?;
        }
        match select.with_rows(&rows) {
            Some(sql) => self.insert_rows(session, &sql).await,
            None => Ok(Reply::done()),
        }
    }

    /// Runs an INSERT of rows the proxy computed (a SELECT's result, a bulk load) as one
    /// statement: keys generated and rows routed as for any other, all or none.
    pub(super) async fn insert_rows(
        &self,
        session: &mut Session,
        sql: &str,
    ) -> Result<Reply, Error> {
        // The rows became SQL text the size of their values: it takes memory as a statement
        // the client sent would.
        let _held = self.instance.memory.reserve(sql, 0).await?;
        match self.plan(sql, session.dialect).await? {
            Planned::Insert(insert) => {
                let plan = self.bind_insert(&insert, || insert.bind(&[])).await?;
                self.reply(session, plan, false).await
            }
            // Into a table without a sharding rule (a restored dump's other tables).
            Planned::Direct(direct) => self.reply(session, direct.bind(&[]), false).await,
            _ => Err(Error::new(
                ErrorKind::Internal,
                "rows computed for an INSERT did not plan as one",
            )),
        }
    }
}

/// A PostgreSQL value the SELECT returned in the binary format (a timestamp, a UUID …) as its
/// text form, which the INSERT's literal reads back as the column's type.
fn as_literal_text(value: &mut Value) -> Result<(), Error> {
    if let Value::Wire(wire) = value
        && wire.binary
        && wire.oid != 0
    {
        let text = crate::postgres::wire_text::text_of_binary(wire, wire.oid).ok_or_else(|| {
            Error::unsupported(format!(
                "INSERT … SELECT of a value of type oid {} read in the binary format",
                wire.oid
            ))
        })?;
        *value = Value::Text(text);
    }
    Ok(())
}
