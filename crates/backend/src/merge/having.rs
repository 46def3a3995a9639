//! HAVING tested on the merged groups: comparisons of numbers, as the databases make them
//! (exact values exactly, a double against anything as doubles), with SQL's three-valued
//! logic. A value that is not a number the merge knows (text, dates, a float it cannot tell
//! from a single-precision one) is refused, and the read is gathered instead.

use std::cmp::Ordering;

use keyshard_router::merge::{Filter, FilterOperand};
use keyshard_types::{Value, WireKind};

use super::MergeError;
use super::exact::Exact;
use super::plan::Resolved;
use keyshard_types::numeric::Decimal;

/// A number as the comparison sees it.
enum Number {
    Exact(Exact),
    Double(f64),
}

impl Number {
    fn cmp(&self, other: &Number) -> Ordering {
        match (self, other) {
            (Number::Exact(x), Number::Exact(y)) => x.cmp(y),
            _ => self
                .to_f64()
                .partial_cmp(&other.to_f64())
                .unwrap_or(Ordering::Equal),
        }
    }

    fn to_f64(&self) -> f64 {
        match self {
            Number::Exact(x) => x.to_f64(),
            Number::Double(v) => *v,
        }
    }
}

impl Resolved {
    /// Whether a merged group's row passes `filter`: only where it is true, not unknown.
    pub(super) fn passes(&self, filter: &Filter, row: &[Value]) -> Result<bool, MergeError> {
        Ok(self.test(filter, row)? == Some(true))
    }

    fn test(&self, filter: &Filter, row: &[Value]) -> Result<Option<bool>, MergeError> {
        Ok(match filter {
            Filter::And(parts) => self.either(parts, row, false)?,
            Filter::Or(parts) => self.either(parts, row, true)?,
            Filter::IsNull { operand, negated } => {
                Some(self.number(operand, row)?.is_none() != *negated)
            }
            Filter::Compare { left, op, right } => {
                match (self.number(left, row)?, self.number(right, row)?) {
                    (Some(l), Some(r)) => Some(op.holds(l.cmp(&r))),
                    _ => None,
                }
            }
        })
    }

    /// AND (`decisive` false) or OR (`decisive` true) of `parts`: `decisive` as soon as one
    /// part is, else unknown where one part is, else the other value.
    fn either(
        &self,
        parts: &[Filter],
        row: &[Value],
        decisive: bool,
    ) -> Result<Option<bool>, MergeError> {
        let mut result = Some(!decisive);
        for part in parts {
            match self.test(part, row)? {
                Some(value) if value == decisive => return Ok(Some(decisive)),
                None => result = None,
                Some(_) => {}
            }
        }
        Ok(result)
    }

    /// The operand's number; `None` for NULL.
    fn number(&self, operand: &FilterOperand, row: &[Value]) -> Result<Option<Number>, MergeError> {
        let index = match operand {
            FilterOperand::Number(text) => {
                return Decimal::parse(text)
                    .map(|d| Some(Number::Exact(Exact::Dec(d))))
                    .ok_or_else(|| MergeError::Uncompared {
                        value: text.to_string(),
                    });
            }
            FilterOperand::Column(index) => *index,
        };
        let value = row.get(index).ok_or(MergeError::ColumnOutOfRange {
            index,
            width: row.len(),
        })?;
        let numeric_text = self.numeric_text.get(index).copied().unwrap_or(false);
        let number = match value {
            Value::Null => return Ok(None),
            Value::Int(v) => Number::Exact(Exact::Int(i128::from(*v))),
            Value::UInt(v) => Number::Exact(Exact::Int(i128::from(*v))),
            Value::Double(v) if !v.is_nan() => Number::Double(*v),
            Value::Text(s) if numeric_text => match Decimal::parse(s) {
                Some(d) => Number::Exact(Exact::Dec(d)),
                None => return Err(uncompared(value)),
            },
            // A double precision value only: a single precision one compares otherwise.
            Value::Wire(w)
                if w.binary
                    && w.bytes.len() == 8
                    && matches!(w.kind, WireKind::PgFloat | WireKind::MySqlFloat) =>
            {
                match w.float() {
                    Some(v) if !v.is_nan() => Number::Double(v),
                    _ => return Err(uncompared(value)),
                }
            }
            _ => return Err(uncompared(value)),
        };
        Ok(Some(number))
    }
}

fn uncompared(value: &Value) -> MergeError {
    MergeError::Uncompared {
        value: format!("{value:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::merge;
    use super::super::test_support::*;
    use keyshard_router::merge::{Aggregate, ColumnRef, Comparison, Filter, FilterOperand};
    use keyshard_types::Dialect;

    use keyshard_types::Value::{self, Double, Int, Null};

    fn compare(column: usize, op: Comparison, number: &str) -> Filter {
        Filter::Compare {
            left: FilterOperand::Column(column),
            op,
            right: FilterOperand::Number(number.into()),
        }
    }

    fn grouped(
        filter: Filter,
        shards: Vec<Vec<Vec<Value>>>,
    ) -> Result<Vec<Value>, super::MergeError> {
        let mut s = spec(Dialect::MySql);
        s.group_by = vec![ColumnRef::Index(0)];
        s.aggregates = vec![agg(1, Aggregate::Count), agg(2, Aggregate::Sum)];
        s.having = Some(filter);
        s.hidden_columns = 1;
        let cols = &[("g", "BIGINT"), ("n", "BIGINT"), ("s", "DECIMAL")];
        let results = shards.into_iter().map(|rows| shard(cols, rows)).collect();
        Ok(merge(&s, results)?
            .rows
            .into_iter()
            .map(|r| r[0].clone())
            .collect())
    }

    #[test]
    fn having_tests_the_merged_groups_not_the_nodes_parts() {
        let shards = || {
            vec![
                vec![
                    vec![Int(1), Int(2), text("1.50")],
                    vec![Int(2), Int(3), text("10")],
                ],
                vec![
                    vec![Int(1), Int(2), text("1.00")],
                    vec![Int(3), Int(1), Null],
                ],
            ]
        };
        // Group 1 has 4 rows in all, though no node has more than 2.
        let kept = grouped(compare(1, Comparison::Gt, "3"), shards()).expect("merges");
        assert_eq!(kept, vec![Int(1)]);
        // Exact: 1.50 + 1.00 = 2.5 exactly; NULL compares unknown, so group 3 is dropped
        // both ways.
        let kept = grouped(compare(2, Comparison::Eq, "2.5"), shards()).expect("merges");
        assert_eq!(kept, vec![Int(1)]);
        let kept = grouped(compare(2, Comparison::NotEq, "2.5"), shards()).expect("merges");
        assert_eq!(kept, vec![Int(2)]);
        let either = Filter::Or(vec![
            compare(2, Comparison::Gt, "5"),
            Filter::IsNull {
                operand: FilterOperand::Column(2),
                negated: false,
            },
        ]);
        assert_eq!(
            grouped(either, shards()).expect("merges"),
            vec![Int(2), Int(3)]
        );
    }

    #[test]
    fn values_it_cannot_compare_are_refused_so_the_read_is_gathered() {
        let shards = vec![vec![vec![text("abc"), Int(2), text("1")]]];
        let refused = grouped(compare(0, Comparison::Gt, "1"), shards);
        assert!(matches!(refused, Err(super::MergeError::Uncompared { .. })));
        // A double compares as a double: 0.1 + 0.2 is not 0.3 there.
        let mut s = spec(Dialect::Postgres);
        s.aggregates = vec![agg(0, Aggregate::Sum)];
        s.having = Some(compare(0, Comparison::Eq, "0.3"));
        let cols = &[("s", "DOUBLE")];
        let results = vec![
            shard(cols, vec![vec![Double(0.1)]]),
            shard(cols, vec![vec![Double(0.2)]]),
        ];
        assert!(merge(&s, results).expect("merges").rows.is_empty());
    }
}
