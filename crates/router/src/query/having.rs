//! HAVING over several nodes. A node's part of a group says nothing of the whole group, so
//! the clause is cut from what the nodes run and tested on the merged groups instead: where it
//! compares aggregates and GROUP BY columns with numbers, joined by AND and OR, which the merge
//! evaluates exactly as the databases do. Any other HAVING is gathered.

use sqlparser::ast::{BinaryOperator, Expr, UnaryOperator, Value as SqlValue};

use crate::merge::{Comparison, Filter, FilterOperand};

/// `expr` as a filter; `column` gives the position of a column operand (an aggregate or a
/// GROUP BY column) among the nodes' columns, adding it as a hidden column where needed.
pub(super) fn filter_of(
    expr: &Expr,
    column: &mut dyn FnMut(&Expr) -> Result<usize, String>,
) -> Result<Filter, String> {
    let unsupported = || Err(format!("HAVING {expr}"));
    Ok(match expr {
        Expr::Nested(inner) => filter_of(inner, column)?,
        Expr::BinaryOp { left, op, right } => match op {
            BinaryOperator::And => {
                Filter::And(vec![filter_of(left, column)?, filter_of(right, column)?])
            }
            BinaryOperator::Or => {
                Filter::Or(vec![filter_of(left, column)?, filter_of(right, column)?])
            }
            op => {
                let Some(op) = comparison(op) else {
                    return unsupported();
                };
                compare(left, op, right, column)?
            }
        },
        Expr::IsNull(inner) | Expr::IsNotNull(inner) => Filter::IsNull {
            operand: match operand(inner, column)? {
                operand @ FilterOperand::Column(_) => operand,
                FilterOperand::Number(_) => return unsupported(),
            },
            negated: matches!(expr, Expr::IsNotNull(_)),
        },
        // `x BETWEEN a AND b` is `x >= a AND x <= b`, NULLs included.
        Expr::Between {
            expr: tested,
            negated: false,
            low,
            high,
        } => Filter::And(vec![
            compare(tested, Comparison::GtEq, low, column)?,
            compare(tested, Comparison::LtEq, high, column)?,
        ]),
        _ => return unsupported(),
    })
}

fn compare(
    left: &Expr,
    op: Comparison,
    right: &Expr,
    column: &mut dyn FnMut(&Expr) -> Result<usize, String>,
) -> Result<Filter, String> {
    let left = operand(left, column)?;
    let right = operand(right, column)?;
    if matches!(
        (&left, &right),
        (FilterOperand::Number(_), FilterOperand::Number(_))
    ) {
        return Err("HAVING comparing two numbers".into());
    }
    Ok(Filter::Compare { left, op, right })
}

pub(super) fn comparison(op: &BinaryOperator) -> Option<Comparison> {
    Some(match op {
        BinaryOperator::Eq => Comparison::Eq,
        BinaryOperator::NotEq => Comparison::NotEq,
        BinaryOperator::Lt => Comparison::Lt,
        BinaryOperator::LtEq => Comparison::LtEq,
        BinaryOperator::Gt => Comparison::Gt,
        BinaryOperator::GtEq => Comparison::GtEq,
        _ => return None,
    })
}

fn operand(
    expr: &Expr,
    column: &mut dyn FnMut(&Expr) -> Result<usize, String>,
) -> Result<FilterOperand, String> {
    match expr {
        Expr::Nested(inner) => operand(inner, column),
        Expr::Value(_) => number(expr, false),
        Expr::UnaryOp {
            op: op @ (UnaryOperator::Minus | UnaryOperator::Plus),
            expr: inner,
        } if matches!(**inner, Expr::Value(_)) => number(inner, *op == UnaryOperator::Minus),
        Expr::Function(_) | Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
            column(expr).map(FilterOperand::Column)
        }
        other => Err(format!("HAVING on {other}")),
    }
}

/// A number literal of digits and at most one decimal point: MySQL and PostgreSQL read it as
/// an exact number (an exponent makes MySQL's a double). SQLite reads a fraction as a double;
/// within 15 digits no integer lies between the two readings, so they compare alike.
fn number(expr: &Expr, negative: bool) -> Result<FilterOperand, String> {
    match expr {
        Expr::Value(v)
            if matches!(&v.value, SqlValue::Number(text, _)
                if (1..=16).contains(&text.len())
                    && text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                    && text.bytes().filter(|&b| b == b'.').count() <= 1) =>
        {
            let SqlValue::Number(text, _) = &v.value else {
                return Err("HAVING on a literal".into());
            };
            let sign = if negative { "-" } else { "" };
            Ok(FilterOperand::Number(format!("{sign}{text}").into()))
        }
        other => Err(format!("HAVING on {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;

    fn filter(having: &str) -> Result<Filter, String> {
        let expr = Parser::new(&MySqlDialect {})
            .try_with_sql(having)
            .and_then(|mut p| p.parse_expr())
            .map_err(|e| e.to_string())?;
        let mut seen = Vec::new();
        filter_of(&expr, &mut |e| {
            let text = e.to_string();
            let at = seen.iter().position(|s| *s == text).unwrap_or(seen.len());
            if at == seen.len() {
                seen.push(text);
            }
            Ok(at)
        })
    }

    #[test]
    fn comparisons_with_numbers_joined_by_and_or_are_merged() {
        use FilterOperand::{Column, Number};
        let f = filter("COUNT(*) > 7 AND (SUM(x) <= -2.50 OR 3 = MAX(y))").expect("a filter");
        assert_eq!(
            f,
            Filter::And(vec![
                Filter::Compare {
                    left: Column(0),
                    op: Comparison::Gt,
                    right: Number("7".into())
                },
                Filter::Or(vec![
                    Filter::Compare {
                        left: Column(1),
                        op: Comparison::LtEq,
                        right: Number("-2.50".into())
                    },
                    Filter::Compare {
                        left: Number("3".into()),
                        op: Comparison::Eq,
                        right: Column(2)
                    },
                ]),
            ])
        );
        assert!(filter("MIN(x) BETWEEN 1 AND 2").is_ok());
        assert!(filter("MAX(x) IS NOT NULL").is_ok());
    }

    #[test]
    fn anything_else_is_left_to_a_database() {
        for having in [
            "COUNT(*) > ?",
            "MAX(s) = 'x'",
            "SUM(x) > 1e3",
            "COUNT(*) >= 2.00000000000000001",
            "NOT COUNT(*) > 1",
            "SUM(x) / COUNT(*) > 2",
            "1 < 2",
            "COUNT(*) > 1 XOR COUNT(*) < 5",
            "MIN(x) NOT BETWEEN 1 AND 2",
            "COUNT(*) IN (1, 2)",
        ] {
            assert!(filter(having).is_err(), "{having}");
        }
    }
}
