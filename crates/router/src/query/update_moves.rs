//! ShardingSphere's rule that an UPDATE cannot move a row to another shard, with the cases ORMs
//! that write every column need: a sharding column set to the very value the WHERE clause
//! pins it to leaves the row where it is; set where the WHERE clause does not pin it (Django's
//! `save()`: `SET user_id = 1, … WHERE order_id = 7`), the UPDATE runs on the nodes the new
//! value routes to, after a read of the other nodes finds no row it would have to move.

use std::sync::Arc;

use keyshard_config::TableRule;
use std::ops::Range;

use sqlparser::ast::{AssignmentTarget, Spanned, Update};
use sqlparser::tokenizer::Span;

use crate::RouteError;
use crate::locate::Locator;
use crate::names::last_ident;
use crate::plan::moves;
use crate::query::{Operand, PreparedQuery, operand};
use crate::route::is_sharding_column;
use crate::tokens::Tokens;
use keyshard_types::Dialect;
use keyshard_types::Value;

/// `SET column = value … WHERE … column = pinned …`: allowed when the two are equal.
#[derive(Debug, Clone)]
pub(crate) struct Unchanged {
    column: String,
    value: Operand,
    pinned: Operand,
}

impl Unchanged {
    pub(crate) fn new(column: String, value: Operand, pinned: Operand) -> Self {
        Self {
            column,
            value,
            pinned,
        }
    }

    /// Refuses an execution whose bound values would move the row.
    pub(crate) fn check(&self, params: &[Value]) -> Result<(), RouteError> {
        if self.value.resolve(params)? == self.pinned.resolve(params)? {
            Ok(())
        } else {
            Err(moves(&self.column))
        }
    }
}

/// The assignments to sharding columns, each with its value (a literal or a parameter) for the
/// check against the WHERE clause; an assignment of anything else is refused here.
pub(crate) fn sharding_assignments(
    update: &Update,
    rules: &[Arc<TableRule>],
    tokens: &Tokens,
    locator: &mut Locator<'_>,
) -> Result<Vec<(String, Operand)>, RouteError> {
    let shards_by = |column: &str| rules.iter().any(|r| is_sharding_column(r, column));
    let mut kept = Vec::new();
    for assignment in &update.assignments {
        match &assignment.target {
            AssignmentTarget::ColumnName(name) => {
                let column = last_ident(name);
                if shards_by(column) {
                    match operand(&assignment.value, tokens, locator)? {
                        Some(value) => kept.push((column.to_owned(), value)),
                        None => return Err(moves(column)),
                    }
                }
            }
            AssignmentTarget::Tuple(names) => {
                if let Some(name) = names.iter().find(|n| shards_by(last_ident(n))) {
                    return Err(moves(last_ident(name)));
                }
            }
        }
    }
    Ok(kept)
}

/// A sharding column set where the WHERE clause does not pin it, and the read that looks for
/// rows the UPDATE would move.
#[derive(Debug, Clone)]
pub(crate) struct Moving {
    pub(crate) column: String,
    pub(crate) value: Operand,
    /// `SELECT 1 FROM <table> WHERE <the UPDATE's WHERE> LIMIT 1`.
    pub(crate) guard_sql: String,
    /// The parameters before the WHERE clause, which the guard does not take (MySQL's `?`).
    pub(crate) skip: usize,
    /// The guard, prepared by the router from `guard_sql`.
    pub(crate) guard: Option<Box<PreparedQuery>>,
}

impl Moving {
    /// The guard of `update`, which sets `column` to `value`; `None` for UPDATEs over joins,
    /// which are refused as before.
    pub(crate) fn new(
        sql: &str,
        update: &Update,
        (column, value): (String, Operand),
        tokens: &Tokens,
        locator: &mut Locator<'_>,
        dialect: Dialect,
    ) -> Result<Option<Self>, RouteError> {
        let limited = update.limit.is_some() || !update.order_by.is_empty();
        if update.from.is_some()
            || !update.table.joins.is_empty()
            || update.returning.is_some()
            || limited
        {
            return Ok(None);
        }
        let mut text = |span: Span| -> Result<Option<Range<usize>>, RouteError> {
            if span == Span::empty() {
                return Ok(None);
            }
            Ok(Some(locator.offset(span.start)?..locator.offset(span.end)?))
        };
        let Some(table) = text(update.table.relation.span())? else {
            return Ok(None);
        };
        let (condition, skip) = match &update.selection {
            Some(selection) => {
                let Some(range) = text(selection.span())? else {
                    return Ok(None);
                };
                // From the condition's start to the statement's end: an expression's span may
                // stop short of its closing parenthesis.
                let end = sql.trim_end().trim_end_matches(';').trim_end().len();
                let range = range.start..end.max(range.end);
                let skip = match dialect {
                    Dialect::MySql => tokens
                        .placeholders
                        .iter()
                        .filter(|p| p.range.start < range.start)
                        .count(),
                    Dialect::Postgres => 0,
                };
                (&sql[range], skip)
            }
            None => ("1 = 1", 0),
        };
        Ok(Some(Self {
            column,
            value,
            guard_sql: format!("SELECT 1 FROM {} WHERE {condition} LIMIT 1", &sql[table]),
            skip,
            guard: None,
        }))
    }
}
