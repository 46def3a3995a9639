//! PostgreSQL's `COPY … TO STDOUT`: a table's rows as the database writes them, from every
//! data node that holds some. The frontend passes the data on (see the proxy's `copy::out`).

use sqlparser::ast::{CopySource, CopyTarget, Statement};
use sqlparser::parser::Parser;

use crate::ddl::{Names, per_node};
use crate::names::last_ident;
use crate::{Prepared, RouteError, Router, query};

impl Router {
    /// `COPY table [(columns)] TO STDOUT`: one statement per data node of a sharded table, its
    /// actual name spliced in; on other tables, and for `COPY (query)` reading no sharded table,
    /// the statement as written where such statements go.
    pub(crate) fn copy_out(
        &self,
        sql: &str,
        parser: &Parser<'_>,
        source: &CopySource,
        target: &CopyTarget,
    ) -> Result<Prepared, RouteError> {
        if !matches!(target, CopyTarget::Stdout) {
            return Err(RouteError::Unsupported(
                "COPY … TO a file or a program (files are the shards' business; COPY … TO STDOUT \
                 is passed on)"
                    .into(),
            ));
        }
        let unsharded = match source {
            CopySource::Table { table_name, .. } => {
                if let Some(rule) = self.table(last_ident(table_name)) {
                    let names = Names::of_table_in_query(table_name);
                    return Ok(Prepared::CopyOut(per_node(sql, &names, rule)?));
                }
                vec![last_ident(table_name).to_owned()]
            }
            CopySource::Query(query) => {
                let select = Statement::Query(query.clone());
                let (tables, others) = query::tables(sql, &select, |t| self.table(t).cloned())?;
                if !tables.rules.is_empty() {
                    return Err(RouteError::Unsupported(
                        "COPY (a query on sharded tables) TO STDOUT (COPY the table itself, or \
                         SELECT)"
                            .into(),
                    ));
                }
                others
            }
        };
        match self.direct(sql, parser, &unsharded, true)? {
            Prepared::Direct(direct) => Ok(Prepared::CopyOut(direct.bind(&[]))),
            other => Ok(other),
        }
    }
}
