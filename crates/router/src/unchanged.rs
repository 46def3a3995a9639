//! ShardingSphere's rule that an UPDATE cannot move a row to another shard, with the case ORMs
//! that write every column need: a sharding column set to the very value the WHERE clause
//! pins it to leaves the row where it is.

use std::sync::Arc;

use keyshard_config::TableRule;
use sqlparser::ast::{AssignmentTarget, Update};

use crate::RouteError;
use crate::locate::Locator;
use crate::query::{Operand, last_ident, operand};
use crate::route::is_sharding_column;
use crate::tokens::Tokens;
use crate::value::Value;

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

pub(crate) fn moves(column: &str) -> RouteError {
    RouteError::Unsupported(format!(
        "UPDATE of the sharding column '{column}': it would move the row to another shard"
    ))
}
