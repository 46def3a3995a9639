//! A select-list expression over aggregates (`SUM(x) / COUNT(*)`, `COUNT(*) >= 1`) over several
//! nodes: each aggregate in it is merged (sent as a hidden column), and the merge computes the
//! expression from the merged values (see [`crate::merge::Computed`]). The nodes still name
//! the expression's column, for its description: MySQL's nodes compute it over their part,
//! PostgreSQL's never do (a part could divide by zero where the whole does not).

use std::ops::Range;

use sqlparser::ast::{BinaryOperator, Expr, Function, UnaryOperator, Value as SqlValue};

use super::aggregates::aggregate_of;
use super::calls::{is_distinct, plain_call};
use super::having::comparison;
use crate::merge::{Aggregate, Arithmetic, Computed};
use crate::template::{Edit, Piece};

/// The expression as the merge computes it; `leaf` makes an aggregate in it a merged hidden
/// column and returns that column. `Err` says what it cannot compute.
pub(super) fn computed_of(
    expr: &Expr,
    leaf: &mut dyn FnMut(&Function, Aggregate) -> Result<usize, String>,
) -> Result<Computed, String> {
    if let Expr::BinaryOp { left, op, right } = strip_nesting(expr)
        && let Some(op) = comparison(op)
    {
        let (left, right) = (arithmetic(left, leaf)?, arithmetic(right, leaf)?);
        return Ok(Computed::Compare(Box::new(left), op, Box::new(right)));
    }
    arithmetic(expr, leaf)
}

fn arithmetic(
    expr: &Expr,
    leaf: &mut dyn FnMut(&Function, Aggregate) -> Result<usize, String>,
) -> Result<Computed, String> {
    let unsupported = || Err(format!("{expr} inside an expression over aggregates"));
    Ok(match strip_nesting(expr) {
        Expr::BinaryOp { left, op, right } => {
            let op = match op {
                BinaryOperator::Plus => Arithmetic::Add,
                BinaryOperator::Minus => Arithmetic::Subtract,
                BinaryOperator::Multiply => Arithmetic::Multiply,
                BinaryOperator::Divide => Arithmetic::Divide,
                _ => return unsupported(),
            };
            let (left, right) = (arithmetic(left, leaf)?, arithmetic(right, leaf)?);
            Computed::Arithmetic(Box::new(left), op, Box::new(right))
        }
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => Computed::Negate(Box::new(arithmetic(expr, leaf)?)),
        Expr::UnaryOp {
            op: UnaryOperator::Plus,
            expr,
        } => arithmetic(expr, leaf)?,
        // An exponent makes a double in MySQL and a numeric in PostgreSQL: left to them.
        Expr::Value(v) => match &v.value {
            SqlValue::Number(n, _) if n.bytes().all(|c| c.is_ascii_digit() || c == b'.') => {
                Computed::Number(n.as_str().into())
            }
            _ => return unsupported(),
        },
        Expr::Function(function) => {
            let aggregate = aggregate_of(function)
                .filter(|a| {
                    matches!(
                        a,
                        Aggregate::Count | Aggregate::Sum | Aggregate::Min | Aggregate::Max
                    )
                })
                .filter(|_| plain_call(function) && !is_distinct(function));
            match aggregate {
                Some(aggregate) => Computed::Column(leaf(function, aggregate)?),
                None => return unsupported(),
            }
        }
        _ => return unsupported(),
    })
}

fn strip_nesting(mut expr: &Expr) -> &Expr {
    while let Expr::Nested(inner) = expr {
        expr = inner;
    }
    expr
}

/// The edits that make PostgreSQL's nodes describe the expression written at `item` (its alias
/// at `alias_start`, if any) without computing it: `CASE WHEN false THEN (…) END` has its type,
/// and its name is the expression's (`?column?`) unless aliased.
pub(super) fn described_only(
    sql: &str,
    item: &Range<usize>,
    alias_start: Option<usize>,
) -> [Edit; 3] {
    let end = expression_end(sql, item, alias_start);
    let name = if alias_start.is_none() {
        " AS \"?column?\""
    } else {
        ""
    };
    [
        (item.start, "CASE WHEN false THEN ("),
        (end, ") END"),
        (end, name),
    ]
    .map(|(at, text)| Edit {
        range: at..at,
        piece: Piece::Text(text.into()),
    })
}

/// Where the expression of a select-list item written at `item` ends: before its alias (and
/// the AS before that), if it has one.
fn expression_end(sql: &str, item: &Range<usize>, alias_start: Option<usize>) -> usize {
    let Some(alias_start) = alias_start else {
        return item.end;
    };
    let before = sql
        .get(item.start..alias_start)
        .unwrap_or_default()
        .trim_end();
    let without_as = before
        .len()
        .checked_sub(2)
        .filter(|&at| {
            before
                .get(at..)
                .is_some_and(|w| w.eq_ignore_ascii_case("AS"))
                && before[..at].ends_with(|c: char| c.is_whitespace() || c == ')')
        })
        .map_or(before, |at| before[..at].trim_end());
    item.start + without_as.len()
}
