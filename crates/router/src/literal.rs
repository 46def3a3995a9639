//! SQL literals as the router reads them: the values that route rows and that a shape's
//! literals bind as. One reading for INSERT, WHERE and shapes, so a literal routes alike in all.

use sqlparser::ast::{Expr, Value as SqlValue};

use keyshard_types::Value;

/// The literal value of a plain literal expression.
pub(crate) fn literal_of(expr: &Expr) -> Option<Value> {
    match expr {
        Expr::Value(v) if v.value == SqlValue::Null => Some(Value::Null),
        Expr::Value(v) => literal_value(&v.value, false),
        Expr::Nested(inner) | Expr::Cast { expr: inner, .. } => literal_of(inner),
        _ => None,
    }
}

/// The value of a number literal's digits, negated for `-`.
pub(crate) fn number_value(text: &str, negative: bool) -> Option<Value> {
    // The parse without overflow checks per digit first (it reads no `+`, which Rust's does).
    let int = keyshard_types::ascii_i64(text.as_bytes()).or_else(|| text.parse::<i64>().ok());
    if let Some(v) = int {
        return Some(Value::Int(if negative { v.checked_neg()? } else { v }));
    }
    if !negative && let Ok(v) = text.parse::<u64>() {
        return Some(Value::UInt(v));
    }
    let v = text.parse::<f64>().ok()?;
    Some(Value::Double(if negative { -v } else { v }))
}

pub(crate) fn literal_value(value: &SqlValue, negative: bool) -> Option<Value> {
    match value {
        SqlValue::Number(text, _) => number_value(text, negative),
        SqlValue::SingleQuotedString(s)
        | SqlValue::DoubleQuotedString(s)
        | SqlValue::EscapedStringLiteral(s)
        | SqlValue::NationalStringLiteral(s)
            if !negative =>
        {
            Some(Value::Text(s.clone()))
        }
        SqlValue::Boolean(b) if !negative => Some(Value::Int(i64::from(*b))),
        _ => None,
    }
}
