//! What a value in an INSERT's row means to the router: a parameter, a literal, a request for
//! a generated key, or an expression it does not evaluate.

use std::ops::Range;

use sqlparser::ast::{Expr, UnaryOperator, Value as SqlValue};

use crate::RouteError;
use crate::literal::literal_value;
use crate::locate::Locator;
use crate::tokens::Tokens;
use keyshard_types::Dialect;
use keyshard_types::Value;

/// What a value expression means to the router.
pub(super) enum Classified {
    /// A placeholder for parameter `index`, starting at byte `at`.
    Param { index: usize, at: usize },
    /// A literal that, in the key column, asks for a generated key: `NULL`, or `0` in MySQL.
    /// The range is what the key replaces.
    Generate(Range<usize>),
    /// `DEFAULT`: in the key column it asks for a key too; elsewhere it is not a value the
    /// router knows.
    Default(Range<usize>),
    /// Any other literal.
    Value(Value),
    /// Anything else: a function call, arithmetic, a subquery.
    Expr,
}

pub(super) fn classify(
    expr: &Expr,
    tokens: &Tokens,
    locator: &mut Locator<'_>,
    dialect: Dialect,
) -> Result<Classified, RouteError> {
    let range = |locator: &mut Locator<'_>,
                 span: sqlparser::tokenizer::Span|
     -> Result<Range<usize>, RouteError> {
        Ok(locator.offset(span.start)?..locator.offset(span.end)?)
    };
    Ok(match expr {
        Expr::Value(v) => match &v.value {
            SqlValue::Placeholder(_) => {
                let at = locator.offset(v.span.start)?;
                Classified::Param {
                    index: tokens.placeholder_at(at)?,
                    at,
                }
            }
            SqlValue::Null => Classified::Generate(range(locator, v.span)?),
            other => match literal_value(other, false) {
                // MySQL's AUTO_INCREMENT rule, which ORMs with primitive ids rely on.
                Some(Value::Int(0)) if dialect == Dialect::MySql => {
                    Classified::Generate(range(locator, v.span)?)
                }
                Some(value) => Classified::Value(value),
                None => Classified::Expr,
            },
        },
        Expr::Identifier(ident)
            if ident.quote_style.is_none() && ident.value.eq_ignore_ascii_case("DEFAULT") =>
        {
            Classified::Default(range(locator, ident.span)?)
        }
        // `-0` stays an expression: its span leaves out the sign, so it cannot be replaced.
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match &**expr {
            Expr::Value(v) => match literal_value(&v.value, true) {
                Some(Value::Int(0)) | None => Classified::Expr,
                Some(value) => Classified::Value(value),
            },
            _ => Classified::Expr,
        },
        Expr::Nested(inner) => classify(inner, tokens, locator, dialect)?,
        // `$1::bigint`: the parameter is still the value (a cast literal is left alone, since
        // routing by the uncast text could pick another shard than the cast value).
        Expr::Cast { expr, .. } => match classify(expr, tokens, locator, dialect)? {
            param @ Classified::Param { .. } => param,
            Classified::Generate(range) => Classified::Generate(range),
            Classified::Default(_) | Classified::Value(_) | Classified::Expr => Classified::Expr,
        },
        _ => Classified::Expr,
    })
}
