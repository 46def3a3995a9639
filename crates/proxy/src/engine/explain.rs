//! `EXPLAIN` over the data nodes of sharded tables, as one result: each node's plan of the
//! actual statement it would run, labelled with its data source and that statement.

use keyshard_backend::Column;
use keyshard_router::Explain;
use keyshard_types::SqlType;
use keyshard_types::{Dialect, Value};

use super::Engine;
use crate::error::Error;
use crate::reply::Reply;
use crate::session::Session;

impl Engine {
    /// Runs each node's `EXPLAIN` (in the session's transaction when it has one). PostgreSQL's
    /// text plans keep their one `QUERY PLAN` column, each node's lines after a line naming it;
    /// its other formats are each node's document in turn. MySQL's tabular plans gain two
    /// leading columns, `data_source` and `actual_sql`.
    pub(super) async fn explain(
        &self,
        session: &mut Session,
        explain: &Explain,
    ) -> Result<Reply, Error> {
        let labelled = session.dialect == Dialect::MySql;
        let mut columns = Vec::new();
        let mut rows = Vec::new();
        for unit in &explain.plan.units {
            let outcome = self
                .backend
                .execute_on_in(session.transaction.as_mut(), &unit.data_source, &unit.sql)
                .await?;
            if columns.is_empty() {
                columns = outcome.columns;
            }
            let node = format!("{}: {}", unit.data_source, unit.sql);
            if labelled {
                rows.extend(outcome.rows.into_iter().map(|row| {
                    let label = [
                        Value::Text(unit.data_source.clone()),
                        Value::Text(unit.sql.clone()),
                    ];
                    label.into_iter().chain(row).collect()
                }));
            } else {
                if explain.text {
                    rows.push(vec![Value::Text(node)]);
                }
                rows.extend(outcome.rows);
            }
        }
        if labelled {
            let label = [
                Column::new("data_source", SqlType::VarChar),
                Column::new("actual_sql", SqlType::Text),
            ];
            columns = label.into_iter().chain(columns).collect();
        }
        Ok(Reply::Rows { columns, rows })
    }
}
