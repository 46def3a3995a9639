//! Keyshard's router: a statement and its parameters → a [`Plan`]: per data node, the rewritten
//! statement and its parameters; for INSERTs the generated keys, for reads over several nodes
//! how their rows merge.
//!
//! The pipeline follows ShardingSphere's kernel: parse (once per prepared statement), bind,
//! generate keys, route, rewrite. Rewriting splices the original text — it never prints the
//! AST, which would normalise the statement and, for MySQL backslash escapes, change data.
//! Pure library code: no I/O, no async.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod budget;
mod catalog;
mod copy_out;
mod ddl;
mod direct;
mod error;
mod explain;
mod found_rows;
mod hint;
mod insert;
pub mod leading;
mod literal;
mod locate;
pub mod merge;
mod metadata;
pub mod names;
mod placeholders;
mod plan;
mod query;
pub use query::gather;
mod replica_reads;
mod route;
mod select_into;
mod sequences;
mod session_values;
mod shape;
mod single;
mod table_locks;
mod template;
mod tokens;
mod unparsed;

use std::collections::HashMap;
use std::sync::Arc;

use keyshard_config::{ShardingRule, TableRule};
use keyshard_types::{Dialect, Value};
use sqlparser::ast::Delete;
use sqlparser::ast::{ObjectNamePart, Statement, TableObject};
use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect};
use sqlparser::parser::Parser;

pub use budget::{MAX_OPERATOR_CHAIN, tokenize};
pub use catalog::{
    CatalogColumn, CatalogViews, LogicalNames, SESSIONS, catalog_columns_sql, with_sessions,
};
pub use ddl::DdlPlan;
pub use direct::Direct;
pub use error::RouteError;
pub use explain::Explain;
pub use found_rows::{CalcFoundRows, calc_found_rows};
pub use insert::PreparedInsert;
pub use insert::select::InsertSelect;
pub use leading::Leading;
pub use metadata::{Metadata, NoMetadata};
pub use placeholders::{bind_placeholders, replace_placeholders};
pub use plan::{BatchRow, ExecutionUnit, MoveGuard, Plan};
pub use query::PreparedQuery;
pub use select_into::{SelectInto, select_into_variables};
pub use sequences::{SequenceUse, mariadb_sequences};
pub use session_values::{SessionValues, substitute_session_values};
pub use shape::Shape;
pub use single::SingleTables;
pub use table_locks::{LockKind, TableLocks};
pub use template::push_rows;

/// A statement, parsed and prepared: binding it plans one execution.
#[derive(Debug, Clone)]
pub enum Prepared {
    /// An INSERT into a sharded table.
    Insert(PreparedInsert),
    /// An INSERT into a sharded table whose rows a SELECT reading no sharded table computes.
    InsertSelect(InsertSelect),
    /// DDL on a sharded table, one statement per actual table.
    Ddl(DdlPlan),
    /// SELECT, UPDATE or DELETE on sharded tables.
    Query(PreparedQuery),
    /// A statement on unsharded or broadcast tables (or none), sent as it is.
    Direct(Direct),
    /// Table locks taken or let go, one statement per data source.
    Locks(TableLocks),
    /// `COPY … TO STDOUT`: each unit's copy data, one after the other.
    CopyOut(Plan),
    /// `EXPLAIN` of a statement on sharded tables: each node's plan.
    Explain(Explain),
    /// Anything this router does not plan; the caller decides what to answer.
    Other(Other),
}

/// Why a statement is not planned here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Other {
    /// A kind of statement the router does not route (SHOW, SET, GRANT, …).
    NotRouted,
    /// A statement on a table that no sharding rule covers, while the router knows no data
    /// source to send it to.
    UnshardedTable(String),
}

/// One statement parsed: its syntax tree, and the tokens the planner reads beside it (where
/// each placeholder and qualifier stands in the text).
pub struct Parsed<'a> {
    sql: &'a str,
    parser: Parser<'static>,
    statement: Statement,
}

impl Parsed<'_> {
    /// The syntax tree, for a caller that inspects the statement further without parsing it
    /// again.
    pub fn into_statement(self) -> Statement {
        self.statement
    }
}

/// Plans statements for one sharding rule and one client dialect.
#[derive(Debug, Clone)]
pub struct Router {
    tables: HashMap<String, Arc<TableRule>>,
    binding_groups: Vec<Vec<String>>,
    broadcast_tables: Vec<String>,
    data_sources: Vec<String>,
    default_data_source: Option<String>,
    dialect: Dialect,
    /// The default data source's catalog as the logical database, when it has been read.
    catalog: Option<CatalogViews>,
    /// Where `!SINGLE`'s tables live.
    single: Arc<single::SingleTables>,
    /// Each actual table's logic table, for naming result columns' origins as the client
    /// knows them.
    actual_tables: HashMap<String, String>,
}

impl Router {
    /// A router for `rule`'s sharded tables, parsing `dialect`. It plans statements on other
    /// tables only once it knows the data sources ([`Router::with_data_sources`]).
    pub fn new(rule: &ShardingRule, dialect: Dialect) -> Self {
        let tables = rule
            .tables
            .values()
            .map(|t| (t.logic_table.to_ascii_lowercase(), Arc::new(t.clone())))
            .collect();
        let actual_tables = rule
            .tables
            .values()
            .flat_map(|t| {
                t.data_nodes
                    .iter()
                    .map(|node| (node.table.clone(), t.logic_table.clone()))
            })
            .collect();
        Self {
            actual_tables,
            tables,
            binding_groups: rule.binding_groups.clone(),
            broadcast_tables: Vec::new(),
            data_sources: Vec::new(),
            default_data_source: rule.default_data_source.clone(),
            dialect,
            catalog: None,
            single: Arc::default(),
        }
    }

    /// Where statements on tables without a sharding rule go: unsharded tables live on the
    /// default data source (the rule's, else the first of `data_sources`); broadcast tables are
    /// read from it and written to every data source.
    pub fn with_data_sources(
        mut self,
        data_sources: Vec<String>,
        broadcast_tables: Vec<String>,
    ) -> Self {
        if self.default_data_source.is_none() {
            self.default_data_source = data_sources.first().cloned();
        }
        self.data_sources = data_sources;
        self.broadcast_tables = broadcast_tables;
        self
    }

    /// Reads of the catalog relations `views` presents go through them.
    pub fn with_catalog(mut self, views: CatalogViews) -> Self {
        self.catalog = Some(views);
        self
    }

    /// What the catalog shows of the default data source's tables: each logic table as its
    /// first actual table there, no other actual table, none of `own_tables`.
    pub fn logical_names(
        &self,
        shard_database: &str,
        logic_database: &str,
        own_tables: &[&str],
    ) -> LogicalNames {
        let mut names = LogicalNames {
            shard_database: shard_database.to_owned(),
            logic_database: logic_database.to_owned(),
            renames: Vec::new(),
            hidden: own_tables.iter().map(|t| (*t).to_owned()).collect(),
        };
        let default = self.default_data_source.as_deref();
        let mut rules: Vec<&Arc<TableRule>> = self.tables.values().collect();
        rules.sort_by(|a, b| a.logic_table.cmp(&b.logic_table));
        for rule in rules {
            let shown = rule
                .data_nodes
                .iter()
                .find(|n| Some(n.data_source.as_str()) == default);
            if let Some(node) = shown
                && node.table != rule.logic_table
            {
                names
                    .renames
                    .push((node.table.clone(), rule.logic_table.clone()));
                // A table under the logic name itself would be listed twice.
                names.hidden.push(rule.logic_table.clone());
            }
            names.hidden.extend(
                rule.data_nodes
                    .iter()
                    .filter(|n| shown.is_none_or(|s| !s.table.eq_ignore_ascii_case(&n.table)))
                    .map(|n| n.table.clone()),
            );
        }
        let shown: Vec<&String> = names.renames.iter().map(|(actual, _)| actual).collect();
        names
            .hidden
            .retain(|h| !shown.iter().any(|s| s.eq_ignore_ascii_case(h)));
        names.hidden.sort();
        names.hidden.dedup();
        names
    }

    /// The logic table whose actual table is named `actual`; `None` for a table no rule
    /// splits (it has its own name).
    pub fn logic_table_of(&self, actual: &str) -> Option<&str> {
        self.actual_tables.get(actual).map(String::as_str)
    }

    /// The data source unsharded tables live on.
    pub fn default_data_source(&self) -> Option<&str> {
        self.default_data_source.as_deref()
    }

    /// The dialect this router parses.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Parses and plans `sql` (one statement).
    pub fn prepare(&self, sql: &str, metadata: &dyn Metadata) -> Result<Prepared, RouteError> {
        self.prepare_parsed(&self.parse(sql)?, metadata)
    }

    /// Parses `sql`, which must be one statement.
    pub fn parse<'a>(&self, sql: &'a str) -> Result<Parsed<'a>, RouteError> {
        static MYSQL: MySqlDialect = MySqlDialect {};
        static POSTGRES: PostgreSqlDialect = PostgreSqlDialect {};
        let dialect: &'static dyn sqlparser::dialect::Dialect = match self.dialect {
            Dialect::MySql => &MYSQL,
            Dialect::Postgres => &POSTGRES,
        };
        // MariaDB's `ANALYZE [FORMAT=JSON] statement`, its EXPLAIN ANALYZE, which sqlparser does
        // not read: read as the EXPLAIN of the same length, marked as analysing. Units copy
        // the statement's own text, so each node is still sent ANALYZE.
        let analyze = match self.dialect {
            Dialect::MySql => explain::mariadb_analyze(sql),
            Dialect::Postgres => None,
        };
        let read = match analyze {
            Some(at) => std::borrow::Cow::Owned(format!("{}EXPLAIN{}", &sql[..at], &sql[at + 7..])),
            None => std::borrow::Cow::Borrowed(sql),
        };
        let mut parser = Parser::new(dialect).with_tokens_with_locations(tokenize(&read, dialect)?);
        let mut statements = parser
            .parse_statements()
            .map_err(|e| RouteError::Syntax(locate::syntax_error(sql, &e.to_string())))?;
        if statements.len() != 1 {
            return Err(RouteError::StatementCount(statements.len()));
        }
        let mut statement = statements.pop().ok_or(RouteError::StatementCount(0))?;
        if let (Some(_), Statement::Explain { analyze, .. }) = (analyze, &mut statement) {
            *analyze = true;
        }
        Ok(Parsed {
            sql,
            parser,
            statement,
        })
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
    fn prepare_query(
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

    /// A statement on `tables`, none of them sharded: to the default data source, or, for a
    /// write to broadcast tables only, to every data source.
    fn direct(
        &self,
        sql: &str,
        parser: &Parser<'_>,
        tables: &[String],
        is_read: bool,
    ) -> Result<Prepared, RouteError> {
        self.direct_as(sql, sql, parser, tables, is_read)
    }

    /// A statement of a kind the router does not plan (a sequence, a view, a grant, a cursor,
    /// a comment…): sent as written where unsharded statements go, as the database would take
    /// it, unless a word of it names a sharded or broadcast table, which that data source
    /// alone cannot answer for. The proxy answers `LISTEN channel` itself: another form of it
    /// is refused.
    fn unclassified(
        &self,
        sql: &str,
        parser: &Parser<'_>,
        statement: &Statement,
    ) -> Result<Prepared, RouteError> {
        let refused = match statement {
            Statement::LISTEN { .. } => "this form of LISTEN (LISTEN takes one channel name)",
            // COPY … FROM STDIN is the proxy's own (see the frontends), COPY … TO planned above.
            Statement::Copy { .. } => "this form of COPY",
            // The proxy answers `KILL [CONNECTION | QUERY] id` of its own sessions; on a shard
            // an id would name a pooled connection other clients share.
            Statement::Kill { .. } => {
                "this form of KILL (KILL [CONNECTION | QUERY] id, of a session SHOW PROCESSLIST \
                 lists)"
            }
            _ => "",
        };
        if !refused.is_empty() {
            return Err(RouteError::Unsupported(refused.into()));
        }
        if self.default_data_source.is_none() {
            return Ok(Prepared::Other(Other::NotRouted));
        }
        let named = (0..)
            .map(|index| parser.token_at(index))
            .take_while(|token| token.token != sqlparser::tokenizer::Token::EOF)
            .find_map(|token| match &token.token {
                sqlparser::tokenizer::Token::Word(word)
                    if self.table(&word.value).is_some() || self.is_broadcast(&word.value) =>
                {
                    Some(word.value.clone())
                }
                _ => None,
            });
        if let Some(table) = named {
            return Err(RouteError::Unsupported(format!(
                "this kind of statement on the sharded or broadcast table '{table}'"
            )));
        }
        if defines_column_types(statement) {
            return self.everywhere(sql, parser);
        }
        self.direct(sql, parser, &[], false)
    }

    /// A statement every data source runs, as a write to a broadcast table is.
    fn everywhere(&self, sql: &str, parser: &Parser<'_>) -> Result<Prepared, RouteError> {
        let mut locator = locate::Locator::new(sql);
        let tokens = tokens::Tokens::scan(parser, &mut locator, self.dialect, &[])?;
        Ok(Prepared::Direct(Direct {
            sql: sql.into(),
            data_sources: self.data_sources.clone(),
            param_count: tokens.param_count,
            is_read: false,
            replicated: true,
            replica_safe: false,
            table: String::new(),
        }))
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

    /// [`Router::direct`] of `sql`, which runs as `text` (the same placeholders).
    fn direct_as(
        &self,
        sql: &str,
        text: &str,
        parser: &Parser<'_>,
        tables: &[String],
        is_read: bool,
    ) -> Result<Prepared, RouteError> {
        let Some(default) = &self.default_data_source else {
            let table = tables.first().cloned().unwrap_or_default();
            return Ok(Prepared::Other(Other::UnshardedTable(table)));
        };
        let replicated =
            !is_read && !tables.is_empty() && tables.iter().all(|t| self.is_broadcast(t));
        let data_sources = if replicated {
            self.data_sources.clone()
        } else {
            vec![self.home(tables, default)?]
        };
        let mut locator = locate::Locator::new(sql);
        let tokens = tokens::Tokens::scan(parser, &mut locator, self.dialect, &[])?;
        Ok(Prepared::Direct(Direct {
            sql: text.into(),
            data_sources,
            param_count: tokens.param_count,
            is_read,
            replicated,
            replica_safe: is_read && !tokens.needs_primary,
            table: tables.first().cloned().unwrap_or_default(),
        }))
    }

    /// An INSERT … SELECT into `rule`'s table. A SELECT that reads no sharded table runs on one
    /// data source: where the unsharded tables it reads live, else the table's first. Rows
    /// copied from sharded tables are refused, as ShardingSphere refuses them.
    fn insert_select(
        &self,
        sql: &str,
        parser: &Parser<'_>,
        insert: &sqlparser::ast::Insert,
        rule: &TableRule,
    ) -> Result<Prepared, RouteError> {
        let query = insert::select::as_query(insert)
            .ok_or_else(RouteError::internal("INSERT … SELECT without its SELECT"))?;
        let (tables, others) = query::tables(sql, &query, |t| self.table(t).cloned())?;
        if !tables.rules.is_empty() {
            let names_key = rule.key_generate.as_ref().is_none_or(|k| {
                insert
                    .columns
                    .iter()
                    .any(|c| names::last_ident(c).eq_ignore_ascii_case(&k.column))
            });
            return Err(if names_key {
                RouteError::Unsupported("INSERT … SELECT from a sharded table".into())
            } else {
                RouteError::InsertSelectWithoutKey
            });
        }
        let data_source = match (others.is_empty(), &self.default_data_source) {
            (false, Some(default)) => self.home(&others, default)?,
            (false, None) => {
                return Ok(Prepared::Other(Other::UnshardedTable(
                    others.first().cloned().unwrap_or_default(),
                )));
            }
            (true, _) => match rule.data_nodes.first() {
                Some(node) => node.data_source.clone(),
                None => return Err(RouteError::Internal("a table rule without data nodes")),
            },
        };
        insert::select::prepare(sql, self.dialect, parser, insert, data_source)
            .map(Prepared::InsertSelect)
    }

    fn is_broadcast(&self, table: &str) -> bool {
        self.broadcast_tables
            .iter()
            .any(|t| t.eq_ignore_ascii_case(table))
    }

    /// Several sharded tables in one statement must be bound (sharded alike), so that data
    /// node `i` of one joins data node `i` of the others.
    fn check_bound(&self, rules: &[Arc<TableRule>]) -> Result<(), RouteError> {
        let [first, rest @ ..] = rules else {
            return Ok(());
        };
        if rest.is_empty() {
            return Ok(());
        }
        let lower = |r: &Arc<TableRule>| r.logic_table.to_ascii_lowercase();
        let bound = self
            .binding_groups
            .iter()
            .any(|group| rules.iter().all(|r| group.contains(&lower(r))))
            && rest.iter().all(|r| {
                // Node `i` of each must be on the same data source with the same table suffix
                // (`t_order_3` with `t_order_item_3`), as ShardingSphere pairs them.
                r.data_nodes.len() == first.data_nodes.len()
                    && r.data_nodes.iter().zip(&first.data_nodes).all(|(a, b)| {
                        a.data_source == b.data_source
                            && suffix(&a.table, &r.logic_table)
                                == suffix(&b.table, &first.logic_table)
                    })
            });
        if bound {
            Ok(())
        } else {
            let names: Vec<&str> = rules.iter().map(|r| r.logic_table.as_str()).collect();
            Err(RouteError::Unsupported(format!(
                "a join of sharded tables that are not bound ({}); list them in bindingTables",
                names.join(", ")
            )))
        }
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

    fn table(&self, name: &str) -> Option<&Arc<TableRule>> {
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            self.tables.get(&name.to_ascii_lowercase())
        } else {
            self.tables.get(name)
        }
    }
}

/// What an actual table's name adds to its logic table's (`_3` of `t_order_3`), compared
/// case-insensitively; the whole name when it does not start with the logic name.
fn suffix(actual: &str, logic: &str) -> String {
    let lower = actual.to_ascii_lowercase();
    match lower.strip_prefix(&logic.to_ascii_lowercase()) {
        Some(rest) => rest.to_owned(),
        None => lower,
    }
}

/// Whether `statement` creates, changes or drops a type, a domain or an extension: what a
/// sharded table's columns may be declared with, so that every data source needs it where
/// the table's actual tables are created.
fn defines_column_types(statement: &Statement) -> bool {
    matches!(
        statement,
        Statement::CreateType { .. }
            | Statement::AlterType(_)
            | Statement::CreateDomain(_)
            | Statement::DropDomain(_)
            | Statement::CreateExtension(_)
            | Statement::DropExtension(_)
            | Statement::Drop {
                object_type: sqlparser::ast::ObjectType::Type,
                ..
            }
    )
}
