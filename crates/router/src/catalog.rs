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

use std::ops::Range;

use sqlparser::ast::{Ident, Statement, Visit};

use crate::RouteError;
use crate::locate::{Locator, splice};
use crate::names::{identifier_quote, push_identifier};
use keyshard_types::Dialect;
use keyshard_types::Value;

mod found;
mod relations;
mod sessions;
mod view_select;

use found::{Alias, Found};
pub use relations::catalog_columns_sql;
pub use sessions::{SESSIONS, with_sessions};
use view_select::view_select;

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

/// The end of `()` right after a function's name at `at`, if that is what follows.
fn empty_arguments_end(sql: &str, at: usize) -> Option<usize> {
    let rest = sql.get(at..)?;
    let after_open = rest.trim_start().strip_prefix('(')?;
    let after_close = after_open.trim_start().strip_prefix(')')?;
    Some(sql.len() - after_close.len())
}

#[cfg(test)]
mod tests;
