//! LIMIT and OFFSET of a read over several nodes: where their values are written, so that each
//! node can be sent its own, and the values bound.

use std::ops::Range;

use sqlparser::ast::{
    BinaryOperator, DataType, Expr, LimitClause, Query, Spanned, UnaryOperator, Value as SqlValue,
};

use super::{Operand, operand, placeholder_edits};
use crate::RouteError;
use crate::locate::Locator;
use crate::route::describe;
use crate::template::{Edit, Piece};
use crate::tokens::Tokens;
use keyshard_types::Dialect;
use keyshard_types::Value;

/// A per-node LIMIT that limits nothing, in range for MySQL, PostgreSQL and SQLite alike.
pub(super) const NO_LIMIT: u64 = i64::MAX as u64;

type LimitParts = (Option<Operand>, Option<Operand>, Vec<(Range<usize>, bool)>);

/// The statement's OFFSET and LIMIT, written per node (`Piece::Limit`), and the edits of
/// the placeholders outside them and `skip` (ranges already rewritten), added to `edits`.
pub(super) fn limit_edits(
    query: &Query,
    dialect: Dialect,
    tokens: &Tokens,
    locator: &mut Locator<'_>,
    edits: &mut Vec<Edit>,
    mut skip: Vec<Range<usize>>,
) -> Result<(Option<Operand>, Option<Operand>), String> {
    let (offset, limit, ranges) = limit_clause(query, dialect, tokens, locator)?;
    for (range, is_offset) in ranges {
        skip.push(range.clone());
        edits.push(Edit {
            range,
            piece: Piece::Limit { offset: is_offset },
        });
    }
    edits.extend(placeholder_edits(tokens, &skip));
    Ok((offset, limit))
}

/// The statement's OFFSET and LIMIT, and where their values are written.
fn limit_clause(
    query: &Query,
    dialect: Dialect,
    tokens: &Tokens,
    locator: &mut Locator<'_>,
) -> Result<LimitParts, String> {
    let (offset, limit) = match &query.limit_clause {
        None => return Ok((None, None, Vec::new())),
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if !limit_by.is_empty() {
                return Err("LIMIT BY".into());
            }
            (offset.as_ref().map(|o| &o.value), limit.as_ref())
        }
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => (Some(offset), Some(limit)),
    };
    let mut ranges = Vec::new();
    let mut read = |expr: Option<&Expr>, is_offset: bool| -> Result<Option<Operand>, String> {
        let Some(expr) = expr.map(without_integer_cast) else {
            return Ok(None);
        };
        // `LIMIT ALL` (PostgreSQL) or `LIMIT NULL`: no limit.
        if let Expr::Value(v) = expr
            && v.value == SqlValue::Null
        {
            return Ok(None);
        }
        let value = match operand(expr, tokens, locator).map_err(|e| e.to_string())? {
            Some(value) => value,
            // PostgreSQL takes an expression there (MySQL a number or a parameter only).
            None if dialect == Dialect::Postgres => constant(expr)
                .map(|n| Operand::Value(Value::Int(n)))
                .ok_or_else(|| "a LIMIT or OFFSET that is not a constant".to_owned())?,
            None => return Err("a LIMIT or OFFSET that is not a number or a parameter".into()),
        };
        let span = expr.span();
        let range = locator
            .offset(span.start)
            .and_then(|s| Ok(s..locator.offset(span.end)?))
            .map_err(|e| e.to_string())?;
        ranges.push((range, is_offset));
        Ok(Some(value))
    };
    let offset = read(offset, true)?;
    let limit = read(limit, false)?;
    Ok((offset, limit, ranges))
}

/// The value of an integer expression of literals (`10 * 2 + 1`): `+`, `-` and `*` of
/// integers, as PostgreSQL computes them (`None` beyond `i64`, where it fails too). Division
/// and anything else are left to a database.
fn constant(expr: &Expr) -> Option<i64> {
    match expr {
        Expr::Nested(inner) => constant(inner),
        Expr::Value(v) => match &v.value {
            SqlValue::Number(text, _) => text.parse().ok(),
            _ => None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => constant(expr)?.checked_neg(),
        Expr::BinaryOp { left, op, right } => {
            let (left, right) = (constant(left)?, constant(right)?);
            match op {
                BinaryOperator::Plus => left.checked_add(right),
                BinaryOperator::Minus => left.checked_sub(right),
                BinaryOperator::Multiply => left.checked_mul(right),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The number or parameter inside `$2::INTEGER` or `CAST(10 AS BIGINT)`: SQLAlchemy's asyncpg
/// and psycopg dialects cast every LIMIT parameter. The cast stays in the text around the
/// value each node is sent.
fn without_integer_cast(expr: &Expr) -> &Expr {
    match expr {
        Expr::Cast {
            expr: inner,
            data_type:
                DataType::TinyInt(_)
                | DataType::Int2(_)
                | DataType::SmallInt(_)
                | DataType::MediumInt(_)
                | DataType::Int(_)
                | DataType::Int4(_)
                | DataType::Int8(_)
                | DataType::Integer(_)
                | DataType::BigInt(_)
                | DataType::Signed
                | DataType::SignedInteger
                | DataType::Unsigned
                | DataType::UnsignedInteger,
            ..
        } => without_integer_cast(inner),
        _ => expr,
    }
}

pub(super) fn limit_number(value: &Value) -> Result<u64, RouteError> {
    match value {
        Value::Int(v) => u64::try_from(*v).ok(),
        Value::UInt(v) => Some(*v),
        Value::Text(s) => s.trim().parse().ok(),
        _ => None,
    }
    .ok_or_else(|| {
        RouteError::Unsupported(format!(
            "LIMIT or OFFSET value {}: it must be a non-negative integer",
            describe(value)
        ))
    })
}
