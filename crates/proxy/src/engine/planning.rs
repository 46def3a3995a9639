//! Text → plan: parsed once, planned by the dialect's router, and PREVIEW's answer from it; a read
//! whose merge fails is planned again as a gather.

use keyshard_router::{Other, Plan, Prepared, PreparedQuery, RouteError, Router};
use keyshard_types::{Dialect, Value};
use sqlparser::ast;

use super::Engine;
use crate::copy::out::CopyOut;
use crate::error::{Error, ErrorKind};
use crate::reply::Reply;
use crate::session::{Planned, Session};

impl Engine {
    pub(super) async fn plan(&self, sql: &str, dialect: Dialect) -> Result<Planned, Error> {
        match self.plan_with_tree(sql, dialect).await {
            Ok((planned, _)) => Ok(planned),
            Err(e) if e.kind == ErrorKind::Syntax => {
                match self.router(dialect).prepare_unparsed(sql) {
                    Some(prepared) => planned(prepared?, sql, dialect),
                    None => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Parses and plans `sql`, loading a table's columns first when a column-less INSERT needs
    /// them; its syntax tree comes back beside the plan.
    pub(super) async fn plan_with_tree(
        &self,
        sql: &str,
        dialect: Dialect,
    ) -> Result<(Planned, ast::Statement), Error> {
        let router = self.router(dialect);
        // Parsed only once, unless the columns must be read first (a table's first statement).
        let plan_once = || {
            let parsed = router.parse(sql)?;
            let prepared = router.prepare_parsed(&parsed, self.backend.metadata())?;
            Ok::<_, RouteError>((prepared, parsed.into_statement()))
        };
        let (prepared, tree) = match plan_once() {
            Err(RouteError::UnknownColumns { table }) => {
                if let Some(rule) = self.config.sharding.table(&table) {
                    self.backend.refresh_metadata(rule).await?;
                }
                plan_once()?
            }
            other => other?,
        };
        Ok((planned(prepared, sql, dialect)?, tree))
    }

    /// The logic table a MySQL shard's actual table `actual` belongs to.
    pub(crate) fn mysql_logic_table(&self, actual: &str) -> Option<&str> {
        self.mysql.logic_table_of(actual)
    }

    pub(super) fn router(&self, dialect: Dialect) -> &Router {
        match dialect {
            Dialect::MySql => &self.mysql,
            Dialect::Postgres => &self.postgres,
        }
    }

    /// ShardingSphere's `PREVIEW`: where a statement would go and as what, without running it.
    pub(super) async fn preview(&self, sql: &str, dialect: Dialect) -> Result<Reply, Error> {
        let plan = match self.plan(sql, dialect).await? {
            Planned::Insert(insert) => insert.bind(&[])?,
            Planned::Query(query) => query.bind(&[])?,
            Planned::Direct(direct) => direct.bind(&[]),
            Planned::Ddl(ddl) => ddl.plan,
            Planned::Locks(locks) => locks.plan,
            Planned::CopyOut(copy) => copy.plan,
            Planned::Explain(explain) => explain.plan,
            Planned::InsertSelect(_) => {
                return Err(Error::unsupported("PREVIEW of this statement"));
            }
        };
        let mut rows: Vec<Vec<Value>> = plan
            .units
            .into_iter()
            .map(|u| vec![Value::Text(u.data_source), Value::Text(u.sql)])
            .collect();
        // A gathered read: each node's read, then the statement where the rows were gathered.
        if let Some(gather) = plan.gather {
            for table in gather.tables {
                rows.extend(table.reads.into_iter().map(|u| {
                    let sql = format!("{} -- gathered into {}", u.sql, table.name);
                    vec![Value::Text(u.data_source), Value::Text(sql)]
                }));
            }
            let sql = format!("{} -- gathered: {}", gather.statement.sql, gather.reason);
            rows.push(vec![Value::Text(gather.data_source), Value::Text(sql)]);
        }
        Ok(Reply::preview(rows))
    }
}

/// The router's plan as the engine keeps it.
fn planned(prepared: Prepared, sql: &str, dialect: Dialect) -> Result<Planned, Error> {
    Ok(match prepared {
        Prepared::Insert(insert) => Planned::Insert(Box::new(insert)),
        Prepared::Query(query) => Planned::Query(Box::new(query)),
        Prepared::Direct(direct) => Planned::Direct(Box::new(direct)),
        Prepared::InsertSelect(select) => Planned::InsertSelect(Box::new(select)),
        Prepared::Ddl(ddl) => Planned::Ddl(Box::new(ddl)),
        Prepared::Locks(locks) => Planned::Locks(Box::new(locks)),
        Prepared::CopyOut(plan) if dialect == Dialect::Postgres => {
            let (format, columns) = crate::copy::out_format(sql)?;
            Planned::CopyOut(Box::new(CopyOut {
                plan,
                format,
                columns,
            }))
        }
        Prepared::CopyOut(_) => return Err(Error::unsupported("COPY on MySQL")),
        Prepared::Explain(explain) => Planned::Explain(Box::new(explain)),
        Prepared::Other(other) => return Err(not_supported(other)),
    })
}

fn not_supported(other: Other) -> Error {
    match other {
        Other::NotRouted => Error::unsupported("this kind of statement"),
        Other::UnshardedTable(table) => Error::unsupported(format!(
            "the table '{table}' without a sharding rule: no data source is configured for it"
        )),
    }
}

impl Engine {
    /// Runs `plan`, bound from `query`, as [`Self::reply`] does. Rows of a read from several
    /// shards that its merge cannot order or group as the database would (text in a collation
    /// Keyshard has no weights for, enums) are gathered instead, and `sql` with `params` runs
    /// on them in the database itself; where it cannot be gathered, the merge's refusal stands.
    pub(super) async fn reply_or_gather(
        &self,
        session: &mut Session,
        plan: Plan,
        query: &PreparedQuery,
        sql: &str,
        params: &[Value],
    ) -> Result<Reply, Error> {
        let refused = match self.reply(session, plan, query.is_read()).await {
            Err(e) if e.kind == ErrorKind::Unmerged => e,
            other => return other,
        };
        let router = self.router(session.dialect);
        let gathered = match router.prepare_gathered(sql, self.backend.metadata(), &refused.message)
        {
            Ok(Prepared::Query(gathered)) => gathered.bind(params),
            _ => return Err(refused),
        };
        match gathered {
            Ok(plan) if plan.gather.is_some() => {
                tracing::debug!("gathered after the merge refused it: {}", refused.message);
                self.reply(session, plan, true).await
            }
            _ => Err(refused),
        }
    }
}
