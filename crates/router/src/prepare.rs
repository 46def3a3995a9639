//! Planning's entry points: a statement, by its kind, to the planner of that kind, and
//! binding in the same step.

use keyshard_types::Value;
use sqlparser::ast::{Delete, ObjectNamePart, Statement, TableObject};
use sqlparser::parser::Parser;

use crate::query::gather;
use crate::{
    Metadata, Other, Parsed, Plan, Prepared, RouteError, Router, TableLocks, ddl, hint, insert,
    names, query, table_locks,
};

impl Router {
    /// Parses and plans `sql` (one statement).
    pub fn prepare(&self, sql: &str, metadata: &dyn Metadata) -> Result<Prepared, RouteError> {
        self.prepare_parsed(&self.parse(sql)?, metadata)
    }

    /// Plans a parsed statement; an INSERT into a sharded table is prepared for binding.
    pub fn prepare_parsed(
        &self,
        parsed: &Parsed<'_>,
        metadata: &dyn Metadata,
    ) -> Result<Prepared, RouteError> {
        let Parsed {
            sql,
            parser,
            statement,
        } = parsed;
        let sql = *sql;
        if let Some(data_source) = hint::read(sql)?.and_then(|h| h.data_source) {
            return self.forced(sql, parser, statement, data_source);
        }
        match statement {
            Statement::Insert(insert) => {
                let TableObject::TableName(name) = &insert.table else {
                    return Err(RouteError::Unsupported("INSERT INTO TABLE FUNCTION".into()));
                };
                let table = match name.0.last() {
                    Some(ObjectNamePart::Identifier(ident)) => ident.value.as_str(),
                    _ => return Err(RouteError::Unsupported(format!("table name {name}"))),
                };
                match self.table(table) {
                    Some(rule) if insert::select::is_insert_select(insert) => {
                        self.insert_select(sql, parser, insert, rule)
                    }
                    Some(rule) => {
                        insert::prepare(sql, self.dialect, parser, insert, name, rule, metadata)
                            .map(Prepared::Insert)
                    }
                    None => self.direct(sql, parser, &[table.to_owned()], false),
                }
            }
            Statement::Query(_) | Statement::Update(_) | Statement::Delete(_) => {
                self.prepare_query(sql, parser, statement, metadata, None)
            }
            Statement::Explain { .. } => match self.explain(sql, parser, statement, metadata)? {
                Some(explain) => Ok(explain),
                None => self.unclassified(sql, parser, statement),
            },
            Statement::LockTables { tables } => {
                self.locks(|places| table_locks::lock_tables(tables, places))
            }
            Statement::Lock(lock) => self.locks(|places| table_locks::lock(lock, places)),
            Statement::UnlockTables => Ok(Prepared::Locks(table_locks::unlock_tables())),
            Statement::Copy {
                source,
                to: true,
                target,
                ..
            } => self.copy_out(sql, parser, source, target),
            _ => match ddl::plan(sql, statement, self.dialect, |t| self.table(t).cloned())? {
                Some(ddl) => Ok(Prepared::Ddl(ddl)),
                None => match ddl::names(statement) {
                    Some(names) => {
                        let names: Vec<String> = names
                            .tables
                            .iter()
                            .map(|n| names::last_ident(n).to_owned())
                            .collect();
                        self.direct(sql, parser, &names, false)
                    }
                    None => self.unclassified(sql, parser, statement),
                },
            },
        }
    }

    /// Plans `sql`, a read whose rows from several nodes could not be merged (`why`: the merge
    /// met values it does not compare as the database does), to gather them instead.
    pub fn prepare_gathered(
        &self,
        sql: &str,
        metadata: &dyn Metadata,
        why: &str,
    ) -> Result<Prepared, RouteError> {
        let Parsed {
            sql,
            parser,
            statement,
        } = &self.parse(sql)?;
        match statement {
            Statement::Query(_) => self.prepare_query(sql, parser, statement, metadata, Some(why)),
            _ => Err(RouteError::Unsupported(why.to_owned())),
        }
    }

    /// Plans a SELECT, UPDATE or DELETE; a read over several nodes is gathered, not merged,
    /// when `unmergeable` says why it cannot be merged.
    pub(crate) fn prepare_query(
        &self,
        sql: &str,
        parser: &Parser<'_>,
        statement: &Statement,
        metadata: &dyn Metadata,
        unmergeable: Option<&str>,
    ) -> Result<Prepared, RouteError> {
        if let Statement::Delete(Delete { tables, .. }) = statement
            && !tables.is_empty()
        {
            return Err(RouteError::Unsupported("multi-table DELETE".into()));
        }
        let is_read = matches!(statement, Statement::Query(_));
        let (mut tables, others) = query::tables(sql, statement, |t| self.table(t).cloned())?;
        if tables.rules.is_empty() {
            if is_read
                && let Some(catalog) = &self.catalog
                && let Some(logical) = catalog.rewrite(sql, statement)?
            {
                return self.direct_as(sql, &logical, parser, &others, is_read);
            }
            return self.direct(sql, parser, &others, is_read);
        }
        let unsharded = others.iter().find(|t| !self.is_broadcast(t)).cloned();
        let unbound = self.check_bound(&tables.rules).err();
        // A read the shards cannot answer node by node is gathered; a write is refused.
        if !is_read {
            if let Some(other) = &unsharded {
                return Err(RouteError::Unsupported(gather::with_unsharded(other)));
            }
            if let Some(refused) = unbound {
                return Err(refused);
            }
        }
        let written = std::mem::take(&mut tables.written);
        let mut query = query::prepare(sql, self.dialect, parser, statement, tables)?;
        if let Some(why) = unmergeable {
            query.refuse_merge(why);
        }
        if is_read {
            let read = gather::Read {
                sql,
                parser,
                statement,
                written: &written,
                unsharded,
                unbound,
            };
            self.prepare_gather(&mut query, read, metadata)?;
        }
        if let Some(guard_sql) = query.guard_sql() {
            match self.prepare(guard_sql, metadata) {
                Ok(Prepared::Query(guard)) => query.set_guard(guard),
                _ => return Err(query.moves()),
            }
        }
        Ok(Prepared::Query(query))
    }

    /// Table locks planned by `plan` with where this router's tables live.
    fn locks(
        &self,
        plan: impl Fn(&table_locks::Places<'_>) -> Result<TableLocks, RouteError>,
    ) -> Result<Prepared, RouteError> {
        let rule = |table: &str| self.table(table).cloned();
        let unsharded = |table: &str| match &self.default_data_source {
            _ if self.is_broadcast(table) => Some(self.data_sources.clone()),
            Some(default) => Some(vec![
                self.home(&[table.to_owned()], default)
                    .unwrap_or_else(|_| default.clone()),
            ]),
            None => None,
        };
        let places = table_locks::Places {
            rule: &rule,
            unsharded: &unsharded,
        };
        plan(&places).map(Prepared::Locks)
    }

    /// Prepares and binds in one step: the plan for one unprepared statement, or why there is
    /// none.
    pub fn plan(
        &self,
        sql: &str,
        params: &[Value],
        metadata: &dyn Metadata,
    ) -> Result<Result<Plan, Other>, RouteError> {
        match self.prepare(sql, metadata)? {
            Prepared::Insert(insert) => insert.bind(params).map(Ok),
            Prepared::Ddl(ddl) => Ok(Ok(ddl.plan)),
            Prepared::Query(query) => query.bind(params).map(Ok),
            Prepared::Direct(direct) => Ok(Ok(direct.bind(params))),
            Prepared::Locks(locks) => Ok(Ok(locks.plan)),
            Prepared::CopyOut(plan) => Ok(Ok(plan)),
            Prepared::Explain(explain) => Ok(Ok(explain.plan)),
            Prepared::Other(other) => Ok(Err(other)),
            // Its rows are the result of its SELECT, which someone must run first.
            Prepared::InsertSelect(_) => Err(RouteError::Unsupported(
                "INSERT … SELECT in one step (prepare it, run its SELECT, insert the rows)".into(),
            )),
        }
    }
}
