//! The database's own catalog seen as the logical database. A client reading
//! `information_schema.tables` or `pg_catalog.pg_class` through the proxy (psql's `\d`, ORM
//! reflection, GUI clients) must find each logic table once, under its logic name, and neither
//! its other actual tables nor Keyshard's own. Each such relation the statement names is
//! replaced by a derived table over the real one that renames and filters its rows, so the
//! default data source runs every join, filter and ordering of the statement as written.
//!
//! A logic table stands for its first actual table on the default data source (what `SHOW
//! COLUMNS` reads too); a logic table with no node there is not listed. The relations' columns
//! differ between database versions, so the proxy reads them from the shard once, at start.
//!
//! The relations that list sessions (`pg_stat_activity`, `information_schema.PROCESSLIST`)
//! would list a shard's pooled connections: they stand for the proxy's sessions instead, rows
//! of a JSON document ([`SESSIONS`]) the proxy writes into the statement at each execution.

use std::ops::{ControlFlow, Range};

use sqlparser::ast::{
    DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, ObjectName,
    ObjectNamePart, Statement, TableFactor, Value as SqlValue, ValueWithSpan, Visit, Visitor,
};
use sqlparser::tokenizer::Span;

use crate::RouteError;
use crate::locate::{Locator, splice};
use crate::names::{identifier_quote, push_identifier};
use keyshard_types::Dialect;
use keyshard_types::Value;

/// The catalog relations this module presents, by the database's dialect: the name columns of
/// each that hold table names.
const MYSQL_RELATIONS: &[&str] = &[
    "TABLES",
    "COLUMNS",
    "STATISTICS",
    "KEY_COLUMN_USAGE",
    "TABLE_CONSTRAINTS",
    "REFERENTIAL_CONSTRAINTS",
    "CHECK_CONSTRAINTS",
    "PARTITIONS",
    "VIEWS",
    "SCHEMATA",
    "PROCESSLIST",
];
const POSTGRES_CATALOG: &[&str] = &[
    "pg_class",
    "pg_tables",
    "pg_indexes",
    "pg_database",
    "pg_stat_activity",
];

/// Where a statement reading the sessions' relation takes its rows: the proxy puts a JSON
/// array of its sessions in place of this text at each execution (see
/// [`with_sessions`]): an object per session, keyed by the relation's column names.
pub const SESSIONS: &str = "/*keyshard:sessions*/'[]'";

/// The columns of MySQL's PROCESSLIST the proxy knows of its sessions, with their types; the
/// relation's others are NULL.
const PROCESSLIST_COLUMNS: &[(&str, &str)] = &[
    ("ID", "BIGINT UNSIGNED"),
    ("USER", "VARCHAR(128)"),
    ("HOST", "VARCHAR(64)"),
    ("DB", "VARCHAR(64)"),
    ("COMMAND", "VARCHAR(16)"),
    ("TIME", "INT"),
    ("STATE", "VARCHAR(64)"),
    ("INFO", "LONGTEXT"),
];

/// `sql` (a statement the router planned) with the proxy's sessions, `json`, as the rows of
/// the sessions' relation; as it is when it reads no such relation.
pub fn with_sessions(sql: &str, json: &str, dialect: Dialect) -> String {
    sql.replace(SESSIONS, &Value::Text(json.to_owned()).to_literal(dialect))
}
const POSTGRES_INFORMATION_SCHEMA: &[&str] = &[
    "tables",
    "columns",
    "key_column_usage",
    "table_constraints",
    "constraint_column_usage",
    "views",
];

/// The statement that reads the relations' columns on a data source of `dialect`: rows of
/// schema, relation, column and (PostgreSQL) the column's type, in column order; with
/// PostgreSQL's `tableoid` system column, which pg_dump reads of pg_class.
pub fn catalog_columns_sql(dialect: Dialect) -> String {
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|n| Value::Text((*n).to_owned()).to_literal(dialect))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match dialect {
        Dialect::MySql => format!(
            "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE \
             FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME IN ({}) \
             ORDER BY TABLE_NAME, ORDINAL_POSITION",
            list(MYSQL_RELATIONS)
        ),
        Dialect::Postgres => format!(
            "SELECT n.nspname::text, c.relname::text, a.attname::text, \
             format_type(a.atttypid, a.atttypmod) \
             FROM pg_catalog.pg_attribute a \
             JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             WHERE (a.attnum > 0 OR a.attname = 'tableoid') AND NOT a.attisdropped \
             AND (n.nspname = 'pg_catalog' AND c.relname IN ({}) \
             OR n.nspname = 'information_schema' AND c.relname IN ({})) \
             ORDER BY 1, 2, a.attnum",
            list(POSTGRES_CATALOG),
            list(POSTGRES_INFORMATION_SCHEMA)
        ),
    }
}

/// One column of a catalog relation, as the shard describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogColumn {
    /// `information_schema` or `pg_catalog`.
    pub schema: String,
    /// The relation, `TABLES` or `pg_class` say.
    pub relation: String,
    /// The column.
    pub name: String,
    /// Its SQL type (`name`, `information_schema.sql_identifier`): a renamed value is cast back
    /// to it, so that clients see the type they expect.
    pub sql_type: String,
}

/// What the logical view shows in place of the shard's tables.
#[derive(Debug, Clone, Default)]
pub struct LogicalNames {
    /// The database the default data source's tables are in (MySQL); shown as `logic_database`.
    pub shard_database: String,
    /// The database clients use (`databaseName`).
    pub logic_database: String,
    /// Actual table → logic table.
    pub renames: Vec<(String, String)>,
    /// Tables not shown: other actual tables, Keyshard's own.
    pub hidden: Vec<String>,
}

/// The derived tables standing for the catalog relations.
#[derive(Debug, Clone)]
pub struct CatalogViews {
    dialect: Dialect,
    views: Vec<View>,
    /// `DATABASE()` and `SCHEMA()` (PostgreSQL's `current_database()`) in a catalog statement
    /// name the logical database, as the renamed schema and database columns do.
    database: Option<String>,
    /// Logic table → the actual table that stands for it: `'t_order'::regclass` (ActiveRecord
    /// reads `pg_attribute` by it) is the relation the views show as `t_order`.
    actual_of: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
struct View {
    schema: String,
    relation: String,
    /// Named without its schema, it is still this relation (PostgreSQL's pg_catalog comes
    /// first in every search path).
    bare: bool,
    select: String,
}

impl CatalogViews {
    /// Views over the relations `columns` describes (in order, as [`catalog_columns_sql`]
    /// reads them), showing `names`.
    pub fn new(dialect: Dialect, columns: &[CatalogColumn], names: &LogicalNames) -> Self {
        let mut views = Vec::new();
        for relation in columns.chunk_by(|a, b| a.schema == b.schema && a.relation == b.relation) {
            let Some(first) = relation.first() else {
                continue;
            };
            views.push(View {
                schema: first.schema.to_ascii_lowercase(),
                relation: first.relation.to_ascii_lowercase(),
                bare: dialect == Dialect::Postgres && first.schema == "pg_catalog",
                select: view_select(dialect, relation, names),
            });
        }
        Self {
            dialect,
            views,
            database: Some(names.logic_database.clone()),
            actual_of: names
                .renames
                .iter()
                .map(|(actual, logic)| (logic.clone(), actual.clone()))
                .collect(),
        }
    }

    /// `sql` with every catalog relation it names replaced by its view; `None` when it names
    /// none.
    pub(crate) fn rewrite(
        &self,
        sql: &str,
        statement: &Statement,
    ) -> Result<Option<String>, RouteError> {
        // Every unsharded read comes here: a byte search spares almost all of them the walk
        // (every view is named by its schema, or, bare, by a `pg_` name; a relation's name
        // as a `regclass`).
        let mentions = |needle: &[u8]| {
            sql.as_bytes()
                .windows(needle.len())
                .any(|w| w.eq_ignore_ascii_case(needle))
        };
        let named = mentions(b"information_schema")
            || self.dialect == Dialect::Postgres && (mentions(b"pg_") || mentions(b"regclass"));
        if !named {
            return Ok(None);
        }
        let mut found = Found {
            views: self,
            relations: Vec::new(),
            qualified: Vec::new(),
            calls: Vec::new(),
            regclasses: Vec::new(),
        };
        let _ = statement.visit(&mut found);
        if found.relations.is_empty() && found.regclasses.is_empty() {
            return Ok(None);
        }
        let mut locator = Locator::new(sql);
        let mut edits: Vec<(Range<usize>, String)> = Vec::new();
        for (first, last, view, alias) in found.relations {
            let Some(view) = self.views.get(view) else {
                continue;
            };
            let range = locator.offset(first.start)?..locator.offset(last.end)?;
            let mut text = format!("({})", view.select);
            if let Alias::Unaliased(written) = alias {
                // The relation is still referred to by its own name, as written (MySQL's
                // aliases are case-sensitive).
                text.push_str(" AS ");
                push_identifier(&mut text, &written, Some(identifier_quote(self.dialect)));
            }
            edits.push((range, text));
        }
        // `pg_catalog.pg_class.relname` names the derived table as `pg_class.relname`.
        for (schema, relation) in found.qualified {
            edits.push((
                locator.offset(schema.start)?..locator.offset(relation.start)?,
                String::new(),
            ));
        }
        if let Some(database) = &self.database {
            for (first, last) in found.calls {
                let start = locator.offset(first.start)?;
                if let Some(end) = empty_arguments_end(sql, locator.offset(last.end)?) {
                    edits.push((
                        start..end,
                        Value::Text(database.clone()).to_literal(self.dialect),
                    ));
                }
            }
        }
        for (literal, text) in found.regclasses {
            edits.push((
                locator.offset(literal.start)?..locator.offset(literal.end)?,
                text,
            ));
        }
        splice(sql, edits).map(Some)
    }

    /// A relation's name written in a `regclass` literal (`t_order`, `"t_order"`,
    /// `public.t_order`) with a logic table in the actual table's place, as a literal; `None`
    /// when it names no logic table.
    fn regclass_literal(&self, written: &str) -> Option<String> {
        let (schema, relation) = match written.rsplit_once('.') {
            Some((schema, relation)) => (Some(schema), relation),
            None => (None, written),
        };
        // Unquoted, PostgreSQL folds the name to lower case; quoted, it is as written.
        let (name, quoted) = match relation.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            Some(inner) => (inner.replace("\"\"", "\""), true),
            None => (relation.to_lowercase(), false),
        };
        let (_, actual) = self.actual_of.iter().find(|(logic, _)| *logic == name)?;
        let mut text = schema.map(|s| format!("{s}.")).unwrap_or_default();
        if quoted {
            push_identifier(&mut text, actual, Some('"'));
        } else {
            text.push_str(actual);
        }
        Some(Value::Text(text).to_literal(self.dialect))
    }

    /// The number of the view `name` stands for, if any.
    fn view_of(&self, name: &[&Ident]) -> Option<usize> {
        let (schema, relation) = match name {
            [relation] => (None, relation),
            [.., schema, relation] => (Some(schema), relation),
            [] => return None,
        };
        self.views.iter().position(|v| {
            relation.value.eq_ignore_ascii_case(&v.relation)
                && match schema {
                    Some(schema) => schema.value.eq_ignore_ascii_case(&v.schema),
                    None => v.bare,
                }
        })
    }
}

/// The derived table's SELECT over `columns` (one relation's).
fn view_select(dialect: Dialect, columns: &[CatalogColumn], names: &LogicalNames) -> String {
    let quote = identifier_quote(dialect);
    let literal = |s: &str| Value::Text(s.to_owned()).to_literal(dialect);
    let ident = |s: &str| {
        let mut out = String::new();
        push_identifier(&mut out, s, Some(quote));
        out
    };
    let is_name = |c: &CatalogColumn| {
        let name = c.name.to_ascii_lowercase();
        matches!(
            name.as_str(),
            "table_name" | "referenced_table_name" | "tablename"
        ) || name == "relname" && c.relation == "pg_class"
    };
    let is_schema = |c: &CatalogColumn| {
        let name = c.name.to_ascii_lowercase();
        dialect == Dialect::MySql && (name.ends_with("_schema") || name == "schema_name")
    };
    // PostgreSQL's list of databases (psql's `\l`) shows the logical database alone, as the
    // shard's current one.
    let is_database = |c: &CatalogColumn| c.relation == "pg_database" && c.name == "datname";
    let lists_sessions = |c: &CatalogColumn| {
        c.relation.eq_ignore_ascii_case("processlist") || c.relation == "pg_stat_activity"
    };
    if columns.first().is_some_and(lists_sessions) {
        return sessions_select(dialect, columns);
    }
    let mut select = String::from("SELECT ");
    for (i, column) in columns.iter().enumerate() {
        if i > 0 {
            select.push_str(", ");
        }
        let name = ident(&column.name);
        let renamed = if is_name(column) && !names.renames.is_empty() {
            let mut case = format!("CASE {name}");
            for (actual, logic) in &names.renames {
                case.push_str(&format!(
                    " WHEN {} THEN {}",
                    literal(actual),
                    literal(logic)
                ));
            }
            case.push_str(&format!(" ELSE {name} END"));
            Some(case)
        } else if is_database(column) {
            Some(literal(&names.logic_database))
        } else if is_schema(column) {
            Some(format!(
                "CASE WHEN {name} = {} THEN {} ELSE {name} END",
                literal(&names.shard_database),
                literal(&names.logic_database)
            ))
        } else {
            None
        };
        match renamed {
            Some(expression) if dialect == Dialect::Postgres => {
                select.push_str(&format!(
                    "CAST({expression} AS {}) AS {name}",
                    column.sql_type
                ));
            }
            Some(expression) => select.push_str(&format!("{expression} AS {name}")),
            None => select.push_str(&name),
        }
    }
    let (Some(first), true) = (columns.first(), !columns.is_empty()) else {
        return select;
    };
    select.push_str(&format!(
        " FROM {}.{}",
        ident(&first.schema),
        ident(&first.relation)
    ));
    let mut conditions = Vec::new();
    if dialect == Dialect::MySql
        && let Some(schema) = [
            "TABLE_SCHEMA",
            "CONSTRAINT_SCHEMA",
            "INDEX_SCHEMA",
            "SCHEMA_NAME",
        ]
        .iter()
        .find(|s| columns.iter().any(|c| c.name.eq_ignore_ascii_case(s)))
    {
        conditions.push(format!(
            "{} = {}",
            ident(schema),
            literal(&names.shard_database)
        ));
    }
    if columns.iter().any(is_database) {
        conditions.push("datname = current_database()".to_owned());
    }
    if !names.hidden.is_empty() {
        let hidden: Vec<String> = names.hidden.iter().map(|h| literal(h)).collect();
        for column in columns.iter().filter(|c| is_name(c)) {
            conditions.push(format!(
                "({0} IS NULL OR {0} NOT IN ({1}))",
                ident(&column.name),
                hidden.join(", ")
            ));
        }
        // Nor the indexes of those tables (psql's `\di`), which pg_class lists by their own
        // names.
        if first.relation == "pg_class" && columns.iter().any(|c| c.name == "oid") {
            conditions.push(format!(
                "NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class t \
                 ON t.oid = i.indrelid WHERE i.indexrelid = \"pg_class\".\"oid\" \
                 AND t.relname IN ({}))",
                hidden.join(", ")
            ));
        }
    }
    if !conditions.is_empty() {
        select.push_str(" WHERE ");
        select.push_str(&conditions.join(" AND "));
    }
    select
}

/// The derived table's SELECT of the sessions' relation over `columns`: rows of the JSON
/// document the proxy writes in place of [`SESSIONS`].
fn sessions_select(dialect: Dialect, columns: &[CatalogColumn]) -> String {
    let ident = |s: &str| {
        let mut out = String::new();
        push_identifier(&mut out, s, Some(identifier_quote(dialect)));
        out
    };
    match dialect {
        // The view's own row type takes every key of an object as its column, whatever the
        // server's version has.
        Dialect::Postgres => format!(
            "SELECT r.* FROM jsonb_array_elements(CAST({SESSIONS} AS jsonb)) AS e(value) \
             CROSS JOIN LATERAL jsonb_populate_record(NULL::pg_catalog.pg_stat_activity, \
             e.value) AS r"
        ),
        Dialect::MySql => {
            let known = |name: &str| {
                PROCESSLIST_COLUMNS
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case(name))
            };
            let list: Vec<String> = columns
                .iter()
                .map(|c| match known(&c.name) {
                    true => format!("p.{}", ident(&c.name)),
                    false => format!("NULL AS {}", ident(&c.name)),
                })
                .collect();
            let shape: Vec<String> = PROCESSLIST_COLUMNS
                .iter()
                .map(|(name, ty)| format!("{name} {ty} PATH '$.{name}'"))
                .collect();
            format!(
                "SELECT {} FROM JSON_TABLE({SESSIONS}, '$[*]' COLUMNS ({})) AS p",
                list.join(", "),
                shape.join(", ")
            )
        }
    }
}

/// How the statement refers to a catalog relation it names.
enum Alias {
    /// By the alias it gives.
    Given,
    /// By its name, as written.
    Unaliased(String),
}

/// Where the statement names a catalog relation, by position in its text.
struct Found<'v> {
    views: &'v CatalogViews,
    /// Each relation's name (first and last part), its view, and its alias.
    relations: Vec<(Span, Span, usize, Alias)>,
    /// Column references qualified with a view's schema: the schema part and the relation part.
    qualified: Vec<(Span, Span)>,
    /// The names of `DATABASE()` / `SCHEMA()` calls (PostgreSQL's `current_database()`), from
    /// their first part to their last.
    calls: Vec<(Span, Span)>,
    /// String literals naming a logic table as a `regclass` (`'t_order'::regclass`,
    /// `to_regclass('t_order')`), with the literal to write in their place.
    regclasses: Vec<(Span, String)>,
}

impl Visitor for Found<'_> {
    type Break = ();

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = factor
            && let Some(idents) = plain_idents(name)
            && let Some(view) = self.views.view_of(&idents)
            && let (Some(first), Some(last)) = (idents.first(), idents.last())
        {
            let alias = match alias {
                Some(_) => Alias::Given,
                None => Alias::Unaliased(last.value.clone()),
            };
            self.relations.push((first.span, last.span, view, alias));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        let literal = |e: &Expr| match e {
            Expr::Value(ValueWithSpan {
                value: SqlValue::SingleQuotedString(s),
                span,
            }) => Some((s.clone(), *span)),
            _ => None,
        };
        let mut regclass = |e: &Expr| {
            if self.views.dialect == Dialect::Postgres
                && let Some((written, span)) = literal(e)
                && let Some(text) = self.views.regclass_literal(&written)
            {
                self.regclasses.push((span, text));
            }
        };
        match expr {
            Expr::Cast {
                expr: inner,
                data_type: DataType::Regclass,
                ..
            } => regclass(inner),
            Expr::Function(function)
                if matches!(function.name.0.last(), Some(ObjectNamePart::Identifier(name))
                    if name.value.eq_ignore_ascii_case("to_regclass")) =>
            {
                if let FunctionArguments::List(list) = &function.args
                    && let [FunctionArg::Unnamed(FunctionArgExpr::Expr(arg))] = list.args.as_slice()
                {
                    regclass(arg);
                }
            }
            _ => {}
        }
        match expr {
            Expr::CompoundIdentifier(parts) if parts.len() >= 3 => {
                let (schema, relation) = (&parts[parts.len() - 3], &parts[parts.len() - 2]);
                if self.views.view_of(&[schema, relation]).is_some() {
                    self.qualified.push((schema.span, relation.span));
                }
            }
            Expr::Function(function) => {
                let names: &[&str] = match self.views.dialect {
                    Dialect::MySql => &["database", "schema"],
                    Dialect::Postgres => &["current_database"],
                };
                let called = |name: &Ident| {
                    name.quote_style.is_none()
                        && names.iter().any(|n| name.value.eq_ignore_ascii_case(n))
                };
                match function.name.0.as_slice() {
                    [ObjectNamePart::Identifier(name)] if called(name) => {
                        self.calls.push((name.span, name.span));
                    }
                    [
                        ObjectNamePart::Identifier(schema),
                        ObjectNamePart::Identifier(name),
                    ] if schema.value.eq_ignore_ascii_case("pg_catalog") && called(name) => {
                        self.calls.push((schema.span, name.span));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// The parts of a name that are all identifiers.
fn plain_idents(name: &ObjectName) -> Option<Vec<&Ident>> {
    name.0
        .iter()
        .map(|part| match part {
            ObjectNamePart::Identifier(ident) => Some(ident),
            _ => None,
        })
        .collect()
}

/// The end of `()` right after a function's name at `at`, if that is what follows.
fn empty_arguments_end(sql: &str, at: usize) -> Option<usize> {
    let rest = sql.get(at..)?;
    let after_open = rest.trim_start().strip_prefix('(')?;
    let after_close = after_open.trim_start().strip_prefix(')')?;
    Some(sql.len() - after_close.len())
}

#[cfg(test)]
mod tests;
