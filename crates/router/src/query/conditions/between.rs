//! Ranges of a sharding column (`BETWEEN`, `<`, `<=`, `>`, `>=`): read from a WHERE clause,
//! joined where an AND gives both ends, and narrowed to the nodes the algorithms map them to.

use std::ops::Bound;
use std::sync::Arc;

use keyshard_config::TableRule;
use sqlparser::ast::{BinaryOperator, Expr};

use super::{Condition, Context, Operand, operand};
use crate::RouteError;
use crate::literal::literal_value;
use crate::locate::Locator;
use crate::route::{NodeSet, nodes_between};
use crate::tokens::Tokens;
use keyshard_types::Value;

/// A sharding column between two values: narrowed by the algorithms that order values
/// (ranges, intervals, MOD over a short span), everywhere by the others.
#[derive(Debug, Clone)]
pub(in crate::query) struct Between {
    table: Option<usize>,
    column: String,
    lower: Bound<Operand>,
    upper: Bound<Operand>,
}

impl Between {
    /// Whether this range, read from a shape's text, is `original` with its literals as
    /// parameters (`same` compares two ends so).
    pub(super) fn stands_for(
        &self,
        original: &Between,
        same: impl Fn(&Operand, &Operand) -> bool,
    ) -> bool {
        let bound = |mine: &Bound<Operand>, theirs: &Bound<Operand>| match (mine, theirs) {
            (Bound::Included(m), Bound::Included(t)) | (Bound::Excluded(m), Bound::Excluded(t)) => {
                same(m, t)
            }
            (Bound::Unbounded, Bound::Unbounded) => true,
            _ => false,
        };
        self.table == original.table
            && self.column == original.column
            && bound(&self.lower, &original.lower)
            && bound(&self.upper, &original.upper)
    }

    /// The nodes (of `count`) whose rows can lie in the range, its parameters bound.
    pub(super) fn nodes(
        &self,
        rules: &[Arc<TableRule>],
        params: &[Value],
        count: usize,
    ) -> Result<NodeSet, RouteError> {
        let lower = resolve_end(&self.lower, params)?;
        let upper = resolve_end(&self.upper, params)?;
        let mut nodes = NodeSet::all(count);
        for (t, rule) in rules.iter().enumerate() {
            if self.table.is_none_or(|only| only == t)
                && let Some(matching) = nodes_between(rule, &self.column, lower, upper)
            {
                nodes.and(&matching);
            }
        }
        Ok(nodes)
    }
}

impl Context<'_> {
    /// `col > 5`, `5 < col` and the like: a range of the sharding column. Kept out of
    /// [`Context::condition`], whose frame every level of a long AND/OR chain repeats.
    #[inline(never)]
    pub(super) fn compare(
        &self,
        left: &Expr,
        op: &BinaryOperator,
        right: &Expr,
        locator: &mut Locator<'_>,
    ) -> Result<Condition, RouteError> {
        // `5 < col` is `col > 5`.
        let (column, value, op) = match (self.column(left), self.column(right)) {
            (Some(column), None) => (column, right, op.clone()),
            (None, Some(column)) => (column, left, flipped(op)),
            _ => return Ok(Condition::Any),
        };
        let Some(value) = range_operand(value, self.tokens, locator)? else {
            return Ok(Condition::Any);
        };
        let (lower, upper) = match op {
            BinaryOperator::Gt => (Bound::Excluded(value), Bound::Unbounded),
            BinaryOperator::GtEq => (Bound::Included(value), Bound::Unbounded),
            BinaryOperator::Lt => (Bound::Unbounded, Bound::Excluded(value)),
            _ => (Bound::Unbounded, Bound::Included(value)),
        };
        Ok(Condition::Range(Box::new(Between {
            table: column.0,
            column: column.1.to_owned(),
            lower,
            upper,
        })))
    }

    /// `col BETWEEN a AND b`, kept out of [`Context::condition`] as [`Context::compare`] is.
    #[inline(never)]
    pub(super) fn between(
        &self,
        expr: &Expr,
        low: &Expr,
        high: &Expr,
        locator: &mut Locator<'_>,
    ) -> Result<Condition, RouteError> {
        let Some((table, column)) = self.column(expr) else {
            return Ok(Condition::Any);
        };
        Ok(
            match (
                range_operand(low, self.tokens, locator)?,
                range_operand(high, self.tokens, locator)?,
            ) {
                (Some(low), Some(high)) => Condition::Range(Box::new(Between {
                    table,
                    column: column.to_owned(),
                    lower: Bound::Included(low),
                    upper: Bound::Included(high),
                })),
                _ => Condition::Any,
            },
        )
    }
}

/// `left AND right`, flattened, with `col >= a AND col < b` made one range: algorithms that
/// need both ends of a range (MOD over a short span) narrow it then.
pub(super) fn conjunction(left: Condition, right: Condition) -> Condition {
    let mut parts = Vec::new();
    for part in [left, right] {
        let range = match part {
            Condition::And(inner) => {
                parts.extend(inner);
                continue;
            }
            Condition::Range(range) => range,
            other => {
                parts.push(other);
                continue;
            }
        };
        let open_end = parts.iter_mut().find_map(|p| match p {
            Condition::Range(other)
                if other.table == range.table
                    && other.column.eq_ignore_ascii_case(&range.column) =>
            {
                match (&other.lower, &other.upper) {
                    (Bound::Unbounded, _) if !matches!(range.lower, Bound::Unbounded) => {
                        Some(&mut other.lower)
                    }
                    (_, Bound::Unbounded) if !matches!(range.upper, Bound::Unbounded) => {
                        Some(&mut other.upper)
                    }
                    _ => None,
                }
            }
            _ => None,
        });
        match (open_end, range.lower, range.upper) {
            (Some(end), lower, Bound::Unbounded) => *end = lower,
            (Some(end), Bound::Unbounded, upper) => *end = upper,
            (_, lower, upper) => parts.push(Condition::Range(Box::new(Between {
                table: range.table,
                column: range.column,
                lower,
                upper,
            }))),
        }
    }
    Condition::And(parts)
}

/// A range's end: a literal or placeholder, or a literal of a named type (`TIMESTAMP
/// '2021-06-01'`, `'2021-06-01'::date`), read as its text.
fn range_operand(
    expr: &Expr,
    tokens: &Tokens,
    locator: &mut Locator<'_>,
) -> Result<Option<Operand>, RouteError> {
    Ok(match expr {
        Expr::TypedString(typed) => literal_value(&typed.value.value, false).map(Operand::Value),
        Expr::Cast { expr, .. } if matches!(&**expr, Expr::Value(_)) => {
            operand(expr, tokens, locator)?
        }
        Expr::Nested(inner) => range_operand(inner, tokens, locator)?,
        other => operand(other, tokens, locator)?,
    })
}

/// A range's end with its parameter bound.
fn resolve_end<'a>(
    bound: &'a Bound<Operand>,
    params: &'a [Value],
) -> Result<Bound<&'a Value>, RouteError> {
    Ok(match bound {
        Bound::Included(v) => Bound::Included(v.resolve(params)?),
        Bound::Excluded(v) => Bound::Excluded(v.resolve(params)?),
        Bound::Unbounded => Bound::Unbounded,
    })
}

/// The comparison with its sides swapped.
fn flipped(op: &BinaryOperator) -> BinaryOperator {
    match op {
        BinaryOperator::Gt => BinaryOperator::Lt,
        BinaryOperator::GtEq => BinaryOperator::LtEq,
        BinaryOperator::Lt => BinaryOperator::Gt,
        _ => BinaryOperator::GtEq,
    }
}
