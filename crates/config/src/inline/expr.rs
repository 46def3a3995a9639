//! The arithmetic inside a `${…}` group: its tree, and the evaluation both the parser (for
//! constant range bounds and list items) and sharding expressions (per row) rely on.

use std::borrow::Cow;
use std::fmt::Write as _;

use super::error::InlineError;

/// A sharding value bound to an expression variable: what a row holds in its sharding column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// An integer column value.
    Int(i64),
    /// A string column value.
    Str(&'a str),
}

/// A constant a list may hold.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Literal {
    Int(i64),
    Str(String),
}

/// An arithmetic expression over integers, strings and variables.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Int(i64),
    Str(Box<str>),
    Var(Box<str>),
    Neg(Box<Expr>),
    Binary(char, Box<Expr>, Box<Expr>),
}

/// An intermediate result: strings become owned only when `+` concatenates them.
#[derive(Debug)]
pub(crate) enum Val<'a> {
    Int(i64),
    Str(Cow<'a, str>),
}

impl Val<'_> {
    fn type_name(&self) -> &'static str {
        match self {
            Val::Int(_) => "integer",
            Val::Str(_) => "string",
        }
    }
}

impl Expr {
    /// The value of an expression without variables, or `None` if it has any.
    pub(crate) fn constant(&self) -> Option<Result<Literal, InlineError>> {
        if self.has_variables() {
            return None;
        }
        let value = eval(self, &|_| None).map(|v| match v {
            Val::Int(i) => Literal::Int(i),
            Val::Str(s) => Literal::Str(s.into_owned()),
        });
        Some(value)
    }

    fn has_variables(&self) -> bool {
        match self {
            Expr::Int(_) | Expr::Str(_) => false,
            Expr::Var(_) => true,
            Expr::Neg(inner) => inner.has_variables(),
            Expr::Binary(_, l, r) => l.has_variables() || r.has_variables(),
        }
    }

    /// Appends every variable name, in order of appearance, to `out`.
    pub(crate) fn collect_variables<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Int(_) | Expr::Str(_) => {}
            Expr::Var(name) => out.push(name),
            Expr::Neg(inner) => inner.collect_variables(out),
            Expr::Binary(_, l, r) => {
                l.collect_variables(out);
                r.collect_variables(out);
            }
        }
    }
}

/// Evaluates one expression tree.
pub(crate) fn eval<'e, 'v: 'e>(
    expr: &'e Expr,
    lookup: &dyn Fn(&str) -> Option<Value<'v>>,
) -> Result<Val<'e>, InlineError> {
    Ok(match expr {
        Expr::Int(v) => Val::Int(*v),
        Expr::Str(s) => Val::Str(Cow::Borrowed(s)),
        Expr::Var(name) => match lookup(name) {
            Some(Value::Int(v)) => Val::Int(v),
            Some(Value::Str(s)) => Val::Str(Cow::Borrowed(s)),
            None => {
                return Err(InlineError::UnboundVariable {
                    name: name.to_string(),
                });
            }
        },
        Expr::Neg(inner) => match as_integer(&eval(inner, lookup)?) {
            Some(v) => Val::Int(v.checked_neg().ok_or(InlineError::Overflow { op: '-' })?),
            None => {
                return Err(InlineError::TypeMismatch {
                    op: '-',
                    left: "none",
                    right: "string",
                });
            }
        },
        Expr::Binary(op, l, r) => binary(*op, eval(l, lookup)?, eval(r, lookup)?)?,
    })
}

/// The integer a string holds, as MySQL reads `'402'` for an integer column: an optional sign
/// and digits, nothing else (MySQL truncates `'402abc'` with a warning, or refuses it in strict
/// mode; so is it refused here).
fn as_integer(value: &Val<'_>) -> Option<i64> {
    match value {
        Val::Int(v) => Some(*v),
        Val::Str(s) => {
            let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            s.strip_prefix('+').unwrap_or(s).parse().ok()
        }
    }
}

fn binary<'a>(op: char, left: Val<'a>, right: Val<'a>) -> Result<Val<'a>, InlineError> {
    let (a, b) = match (&left, &right) {
        (Val::Int(a), Val::Int(b)) => (*a, *b),
        // Arithmetic on a string holding an integer: a client that binds the sharding value as
        // text (node mysql2, JDBC setString) means the integer.
        _ if op != '+'
            && let (Some(a), Some(b)) = (as_integer(&left), as_integer(&right)) =>
        {
            (a, b)
        }
        _ if op == '+' => {
            let mut joined = String::new();
            for v in [left, right] {
                match v {
                    Val::Int(i) => {
                        let _ = write!(joined, "{i}");
                    }
                    Val::Str(s) => joined.push_str(&s),
                }
            }
            return Ok(Val::Str(Cow::Owned(joined)));
        }
        _ => {
            return Err(InlineError::TypeMismatch {
                op,
                left: left.type_name(),
                right: right.type_name(),
            });
        }
    };
    let result = match op {
        '+' => a.checked_add(b),
        '-' => a.checked_sub(b),
        '*' => a.checked_mul(b),
        '/' | '%' if b == 0 => return Err(InlineError::DivisionByZero { op }),
        '/' => a.checked_div(b),
        _ => a.checked_rem(b),
    };
    result.map(Val::Int).ok_or(InlineError::Overflow { op })
}
