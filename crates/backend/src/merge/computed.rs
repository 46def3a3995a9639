//! Select-list expressions over merged aggregates (`SUM(x) / COUNT(*)`), computed as the
//! database computes them: MySQL's integers in 64 bits and its division at the dividend's
//! scale plus the session's `div_precision_increment` (as a merged AVG),
//! PostgreSQL's integers as wide as the widest operand and its integer division truncating.
//! Whatever the database would refuse or compute otherwise (an overflow, PostgreSQL's
//! division by zero, an unsigned or a special value, SQLite's own arithmetic) stops the
//! merge, and the read is gathered, so the database answers it.

use std::cmp::Ordering;

use keyshard_router::merge::{Arithmetic, Computed};
use keyshard_types::{Dialect, Value};

use super::MergeError;
use super::plan::Resolved;
use keyshard_types::numeric::Decimal;

/// The largest scale a MySQL DECIMAL result takes.
const MYSQL_MAX_SCALE: usize = 30;
/// MySQL's DECIMAL holds 65 digits.
const MYSQL_MAX_PRECISION: usize = 65;

/// A number as the database types it.
#[derive(Debug, Clone)]
enum Number {
    Null,
    /// An integer of `bits` (PostgreSQL's int2, int4, int8; MySQL's are all 64).
    Int(i128, u32),
    Dec(Decimal),
    Double(f64),
}

impl Number {
    fn decimal(&self) -> Option<Decimal> {
        match self {
            Number::Int(v, _) => Some(Decimal::from_int(*v)),
            Number::Dec(d) => Some(d.clone()),
            _ => None,
        }
    }

    fn double(&self) -> f64 {
        match self {
            Number::Int(v, _) => *v as f64,
            Number::Dec(d) => d.to_f64(),
            Number::Double(v) => *v,
            Number::Null => f64::NAN,
        }
    }
}

type Outcome<T> = Result<T, String>;

impl Resolved {
    /// Fills each computed column of a merged row.
    pub(super) fn compute(&self, row: &mut [Value]) -> Result<(), MergeError> {
        for column in &self.computed {
            let value = self
                .value_of(&column.expr, row)
                .map_err(|why| MergeError::Uncomputed {
                    column: column.index,
                    why,
                })?;
            if let Some(slot) = row.get_mut(column.index) {
                *slot = value;
            }
        }
        Ok(())
    }

    fn value_of(&self, expr: &Computed, row: &[Value]) -> Outcome<Value> {
        if !self.computes_as_database {
            return Err("SQLite's arithmetic is its own".into());
        }
        if let Computed::Compare(left, op, right) = expr {
            let (left, right) = (self.evaluate(left, row)?, self.evaluate(right, row)?);
            let order = match (&left, &right) {
                (Number::Null, _) | (_, Number::Null) => return Ok(Value::Null),
                (Number::Double(_), _) | (_, Number::Double(_)) => left
                    .double()
                    .partial_cmp(&right.double())
                    .ok_or("a comparison with NaN")?,
                _ => match (left.decimal(), right.decimal()) {
                    (Some(l), Some(r)) => l.compare(&r),
                    _ => Ordering::Equal,
                },
            };
            let holds = op.holds(order);
            return Ok(match self.dialect {
                Dialect::MySql => Value::Int(i64::from(holds)),
                Dialect::Postgres => Value::Bool(holds),
            });
        }
        Ok(match self.evaluate(expr, row)? {
            Number::Null => Value::Null,
            Number::Int(v, _) => Value::Int(i64::try_from(v).map_err(|_| "out of range")?),
            Number::Dec(d) => Value::Text(d.to_string()),
            Number::Double(v) => Value::Double(v),
        })
    }

    fn evaluate(&self, expr: &Computed, row: &[Value]) -> Outcome<Number> {
        match expr {
            Computed::Column(index) => self.column(*index, row),
            Computed::Number(text) => self.literal(text),
            Computed::Negate(inner) => self.negate(self.evaluate(inner, row)?),
            Computed::Arithmetic(left, op, right) => {
                let (left, right) = (self.evaluate(left, row)?, self.evaluate(right, row)?);
                self.arithmetic(left, *op, right, row)
            }
            Computed::Compare(..) => Err("a comparison inside arithmetic".into()),
        }
    }

    fn column(&self, index: usize, row: &[Value]) -> Outcome<Number> {
        let bits = match self.dialect {
            Dialect::MySql => 64,
            Dialect::Postgres => self.int_bits.get(index).copied().flatten().unwrap_or(64),
        };
        Ok(match row.get(index).unwrap_or(&Value::Null) {
            Value::Null => Number::Null,
            Value::Int(v) => Number::Int(i128::from(*v), bits),
            Value::Double(v) => Number::Double(*v),
            Value::Text(t) if self.numeric_text.get(index).copied().unwrap_or(false) => {
                Number::Dec(Decimal::parse(t).ok_or_else(|| format!("the value {t}"))?)
            }
            Value::Wire(wire) if wire.float().is_some() => {
                Number::Double(wire.float().unwrap_or(f64::NAN))
            }
            other => return Err(format!("the value {other:?}")),
        })
    }

    /// A literal as the database types it: an integer that fits (PostgreSQL's in int4 first),
    /// else an exact decimal.
    fn literal(&self, text: &str) -> Outcome<Number> {
        let integer = text.parse::<i64>().ok().filter(|_| !text.contains('.'));
        Ok(match (integer, self.dialect) {
            (Some(v), Dialect::Postgres) if i32::try_from(v).is_ok() => {
                Number::Int(i128::from(v), 32)
            }
            (Some(v), _) => Number::Int(i128::from(v), 64),
            (None, _) => {
                Number::Dec(Decimal::parse(text).ok_or_else(|| format!("the literal {text}"))?)
            }
        })
    }

    fn negate(&self, value: Number) -> Outcome<Number> {
        Ok(match value {
            Number::Int(v, bits) => Number::Int(in_range(-v, bits)?, bits),
            Number::Dec(d) => Number::Dec(d.negated()),
            Number::Double(v) => Number::Double(-v),
            Number::Null => Number::Null,
        })
    }

    /// `left op right`; `row` says MySQL's division scale.
    fn arithmetic(
        &self,
        left: Number,
        op: Arithmetic,
        right: Number,
        row: &[Value],
    ) -> Outcome<Number> {
        let mysql = self.dialect == Dialect::MySql;
        match (&left, &right) {
            (Number::Null, _) | (_, Number::Null) => return Ok(Number::Null),
            (Number::Double(_), _) | (_, Number::Double(_)) => {
                let (l, r) = (left.double(), right.double());
                if op == Arithmetic::Divide && r == 0.0 {
                    return match mysql {
                        true => Ok(Number::Null),
                        false => Err("a division by zero".into()),
                    };
                }
                let v = match op {
                    Arithmetic::Add => l + r,
                    Arithmetic::Subtract => l - r,
                    Arithmetic::Multiply => l * r,
                    Arithmetic::Divide => l / r,
                };
                return match v.is_finite() {
                    true => Ok(Number::Double(v)),
                    false => Err("a double out of range".into()),
                };
            }
            (&Number::Int(l, lbits), &Number::Int(r, rbits))
                if !(mysql && op == Arithmetic::Divide) =>
            {
                let bits = lbits.max(rbits);
                let v = match op {
                    Arithmetic::Add => l + r,
                    Arithmetic::Subtract => l - r,
                    Arithmetic::Multiply => l.checked_mul(r).ok_or("out of range")?,
                    Arithmetic::Divide if r == 0 => return Err("a division by zero".into()),
                    Arithmetic::Divide => l / r,
                };
                return Ok(Number::Int(in_range(v, bits)?, bits));
            }
            _ => {}
        }
        let (Some(l), Some(r)) = (left.decimal(), right.decimal()) else {
            return Err("these operands".into());
        };
        let result = match op {
            Arithmetic::Add => l.add(&r),
            Arithmetic::Subtract => l.add(&r.negated()),
            Arithmetic::Multiply => l.mul(&r),
            Arithmetic::Divide => {
                if r.compare(&Decimal::from_int(0)).is_eq() {
                    return match mysql {
                        true => Ok(Number::Null),
                        false => Err("a division by zero".into()),
                    };
                }
                let scale = match mysql {
                    true => l.scale() + self.division_scale_of(row),
                    // PostgreSQL's scale is worked out here for whole divisors only.
                    false if r.scale() == 0 => {
                        let magnitude = match r.compare(&Decimal::from_int(0)) {
                            Ordering::Less => r.negated(),
                            _ => r.clone(),
                        };
                        l.pg_division_scale(magnitude.to_u64().ok_or("a huge divisor")?)
                    }
                    false => return Err("a division by a fraction".into()),
                };
                l.div_to_scale(&r, scale).ok_or("a huge divisor")?
            }
        };
        if mysql && (result.scale() > MYSQL_MAX_SCALE || result.precision() > MYSQL_MAX_PRECISION) {
            return Err("beyond MySQL's DECIMAL".into());
        }
        Ok(Number::Dec(result))
    }
}

/// `v` if it fits a signed integer of `bits`.
fn in_range(v: i128, bits: u32) -> Outcome<i128> {
    let max = (1i128 << (bits - 1)) - 1;
    match -max - 1 <= v && v <= max {
        true => Ok(v),
        false => Err(format!("out of the range of a {bits}-bit integer")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::merge;
    use super::super::test_support::*;
    use super::*;
    use crate::outcome::UnitResult;
    use keyshard_router::merge::{Aggregate, Comparison, ComputedColumn};

    use Value::{Int, Null};

    /// Rows (expression, SUM, COUNT, MAX) of nodes without GROUP BY, described as `dialect`'s
    /// database describes them (MAX of an int4 on PostgreSQL).
    fn merged(
        dialect: Dialect,
        expr: Computed,
        shards: &[[Value; 3]],
    ) -> Result<Value, MergeError> {
        let mut s = spec(dialect);
        s.aggregates = vec![
            agg(1, Aggregate::Sum),
            agg(2, Aggregate::Count),
            agg(3, Aggregate::Max),
        ];
        s.computed = vec![ComputedColumn { index: 0, expr }];
        s.hidden_columns = 3;
        let results = shards
            .iter()
            .map(|[sum, count, max]| {
                let mut result = shard(
                    &[
                        ("x", "DECIMAL"),
                        ("s", "DECIMAL"),
                        ("n", "BIGINT"),
                        ("m", "INT"),
                    ],
                    vec![vec![Null, sum.clone(), count.clone(), max.clone()]],
                );
                for column in &mut result.columns {
                    match dialect {
                        Dialect::MySql => {
                            column.mysql = collated("x", column.ty, "binary").mysql;
                        }
                        Dialect::Postgres => column.oid = Some(1700),
                    }
                }
                result
            })
            .collect::<Vec<UnitResult>>();
        Ok(merge(&s, results)?.rows.remove(0).remove(0))
    }

    fn column(i: usize) -> Box<Computed> {
        Box::new(Computed::Column(i))
    }

    fn number(n: &str) -> Box<Computed> {
        Box::new(Computed::Number(n.into()))
    }

    fn op(l: Box<Computed>, op: Arithmetic, r: Box<Computed>) -> Computed {
        Computed::Arithmetic(l, op, r)
    }

    #[test]
    fn expressions_are_computed_from_merged_aggregates_as_each_database_does() {
        use Arithmetic::{Add, Divide, Multiply, Subtract};
        let shards = [
            [text("10.50"), Int(2), Int(7)],
            [text("2.00"), Int(1), Int(2_000_000_000)],
        ];
        let mysql = |expr| merged(Dialect::MySql, expr, &shards);
        let pg = |expr| merged(Dialect::Postgres, expr, &shards);
        // SUM / COUNT: MySQL at the dividend's scale plus 4, PostgreSQL as AVG's scale.
        assert_eq!(
            mysql(op(column(1), Divide, column(2))),
            Ok(text("4.166667"))
        );
        assert_eq!(
            pg(op(column(1), Divide, column(2))),
            Ok(text("4.1666666666666667"))
        );
        // Integers: MySQL's division is exact, PostgreSQL's truncates.
        assert_eq!(
            mysql(op(column(2), Divide, number("2"))),
            Ok(text("1.5000"))
        );
        assert_eq!(pg(op(column(2), Divide, number("2"))), Ok(Int(1)));
        // Decimal scales add up under *, and a negative literal's sign is kept.
        let scaled = op(
            column(1),
            Multiply,
            Box::new(Computed::Negate(number("0.25"))),
        );
        assert_eq!(mysql(scaled.clone()), Ok(text("-3.1250")));
        assert_eq!(pg(scaled), Ok(text("-3.1250")));
        // MAX of an int4 times 2: 64 bits in MySQL, int4's range in PostgreSQL, which the
        // database refuses: gathered, so it does.
        let doubled = op(column(3), Multiply, number("2"));
        assert_eq!(mysql(doubled.clone()), Ok(Int(4_000_000_000)));
        assert!(matches!(
            pg(doubled),
            Err(MergeError::Uncomputed { column: 0, .. })
        ));
        // Comparisons: 1/0 in MySQL, booleans in PostgreSQL; NULL stays NULL.
        let many = Computed::Compare(column(2), Comparison::GtEq, number("3"));
        assert_eq!(mysql(many.clone()), Ok(Int(1)));
        assert_eq!(pg(many), Ok(Value::Bool(true)));
        let none = [[Null, Int(0), Null]];
        let mean = op(column(1), Divide, column(2));
        assert_eq!(merged(Dialect::MySql, mean.clone(), &none), Ok(Null));
        // Dividing by zero: NULL in MySQL, an error PostgreSQL raises itself.
        let zero = op(
            column(2),
            Divide,
            Box::new(op(column(2), Subtract, column(2))),
        );
        assert_eq!(mysql(zero.clone()), Ok(Null));
        assert!(pg(zero).is_err());
        assert_eq!(mysql(op(column(2), Add, number("1"))), Ok(Int(4)));
    }
}
