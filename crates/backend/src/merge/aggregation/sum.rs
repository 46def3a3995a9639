//! SUM and AVG over partial values: a running sum, exact while only integers and decimals are
//! seen, and AVG from the summed SUMs and COUNTs.

use keyshard_types::numeric::Decimal;
use keyshard_types::{Value, Wire, WireKind};

use crate::merge::MergeError;
use crate::merge::exact::Exact;

/// A running SUM over partial values: exact while only integers and decimals are seen.
#[derive(Debug, Clone, Default)]
pub(super) struct Sum {
    exact: Option<Exact>,
    double: Option<f64>,
    /// The sum of PostgreSQL NUMERIC's NaN and ±Infinity seen, which decides the result
    /// whatever the finite values add up to (Infinity + -Infinity is NaN, as there).
    special: Option<f64>,
    /// PostgreSQL `money`, in the currency's smallest unit.
    money: Option<i128>,
}

impl Sum {
    pub(super) fn of<'v>(
        values: impl Iterator<Item = &'v Value>,
        column: usize,
    ) -> Result<Sum, MergeError> {
        let mut sum = Sum::default();
        for value in values {
            sum.add(value, column)?;
        }
        Ok(sum)
    }

    fn add(&mut self, value: &Value, column: usize) -> Result<(), MergeError> {
        if let Value::Wire(wire) = value {
            if let Some(v) = wire.float() {
                self.double = Some(self.double.unwrap_or(0.0) + v);
                return Ok(());
            }
            if wire.kind == WireKind::PgMoney {
                if !wire.binary {
                    return Err(MergeError::MoneyText { column });
                }
                let not_numeric = || MergeError::NotNumeric {
                    column,
                    value: format!("{value:?}"),
                };
                let amount = wire
                    .money()
                    .and_then(|v| i64::try_from(v).ok())
                    .ok_or_else(not_numeric)?;
                // Wide enough for any count of partial sums: only the total must fit, as
                // it must in PostgreSQL (a range that holds the total holds some order of
                // the additions; the database's may differ, which then fails there).
                self.money = Some(self.money.unwrap_or(0) + i128::from(amount));
                return Ok(());
            }
        }
        let exact = match value {
            Value::Null => return Ok(()),
            Value::Int(v) => Exact::Int(i128::from(*v)),
            Value::UInt(v) => Exact::Int(i128::from(*v)),
            Value::Bool(b) => Exact::Int(i128::from(*b)),
            Value::Double(v) => {
                self.double = Some(self.double.unwrap_or(0.0) + v);
                return Ok(());
            }
            Value::Text(s) if matches!(s.as_str(), "NaN" | "Infinity" | "-Infinity") => {
                let v: f64 = s.parse().unwrap_or(f64::NAN);
                self.special = Some(self.special.unwrap_or(0.0) + v);
                return Ok(());
            }
            Value::Text(s) => {
                Exact::Dec(Decimal::parse(s).ok_or_else(|| MergeError::NotNumeric {
                    column,
                    value: format!("{value:?}"),
                })?)
            }
            Value::Bytes(_) | Value::Array(_) | Value::Wire(_) => {
                return Err(MergeError::NotNumeric {
                    column,
                    value: format!("{value:?}"),
                });
            }
        };
        self.exact = Some(match self.exact.take() {
            Some(acc) => acc.add(exact),
            None => exact,
        });
        Ok(())
    }

    fn is_null(&self) -> bool {
        self.exact.is_none()
            && self.double.is_none()
            && self.special.is_none()
            && self.money.is_none()
    }

    /// NUMERIC's text of a sum or average that met NaN or an infinity.
    fn special_text(&self) -> Option<Value> {
        self.special.map(|v| {
            Value::Text(match v {
                v if v.is_nan() => "NaN".to_owned(),
                v if v > 0.0 => "Infinity".to_owned(),
                _ => "-Infinity".to_owned(),
            })
        })
    }

    fn to_f64(&self) -> f64 {
        self.double.unwrap_or(0.0) + self.exact.as_ref().map_or(0.0, Exact::to_f64)
    }

    pub(super) fn into_value(self, column: usize) -> Result<Value, MergeError> {
        if let Some(special) = self.special_text() {
            return Ok(special);
        }
        if let Some(money) = self.money {
            let Ok(money) = i64::try_from(money) else {
                return Err(MergeError::OutOfRange {
                    column,
                    type_name: "money",
                });
            };
            let wire = Wire::new(WireKind::PgMoney, true, &money.to_be_bytes()).with_oid(790);
            return Ok(Value::Wire(wire));
        }
        Ok(match (self.double, self.exact) {
            (None, None) => Value::Null,
            (None, Some(exact)) => exact.into_value(),
            (Some(d), exact) => Value::Double(d + exact.as_ref().map_or(0.0, Exact::to_f64)),
        })
    }

    /// The sum as a row count.
    fn into_count(self, column: usize) -> Result<u64, MergeError> {
        let bad = |value: String| MergeError::BadCount { column, value };
        if self.double.is_some() {
            let v = self.to_f64();
            return if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 1.8e19 {
                Ok(v as u64)
            } else {
                Err(bad(v.to_string()))
            };
        }
        match self.exact {
            None => Ok(0),
            Some(exact) => {
                let decimal = exact.into_decimal();
                decimal.to_u64().ok_or_else(|| bad(decimal.to_string()))
            }
        }
    }
}

/// AVG from the summed SUMs and COUNTs; also whether it came out as a decimal (`None`: NULL,
/// undecided). `extra`: the digits MySQL adds to the sum's scale; PostgreSQL's own where None.
pub(super) fn average(
    sum: Sum,
    count: Sum,
    count_index: usize,
    extra: Option<usize>,
) -> Result<(Value, Option<bool>), MergeError> {
    let count = count.into_count(count_index)?;
    if count == 0 || sum.is_null() {
        return Ok((Value::Null, None));
    }
    if let Some(special) = sum.special_text() {
        return Ok((special, Some(true)));
    }
    match (sum.double, sum.exact.clone()) {
        (None, Some(exact)) => {
            let sum = exact.into_decimal();
            let extra =
                extra.unwrap_or_else(|| sum.pg_division_scale(count).saturating_sub(sum.scale()));
            let avg = sum
                .div_round(count, extra)
                .map_or(Value::Null, |d| Value::Text(d.to_string()));
            Ok((avg, Some(true)))
        }
        _ => Ok((Value::Double(sum.to_f64() / count as f64), Some(false))),
    }
}

#[cfg(test)]
mod tests {
    use crate::merge::MergeError;
    use crate::merge::merge;
    use crate::merge::test_support::*;
    use keyshard_router::merge::{Aggregate, ColumnRef};
    use keyshard_types::{Dialect, SqlType, Value, Wire, WireKind};

    const DECIMAL: SqlType = SqlType::Decimal { unsigned: false };
    use Value::{Double, Int, Null, UInt};

    /// The merged SUM of one column whose shards answered `values`, a row each.
    fn sum_in(dialect: Dialect, values: Vec<Value>) -> Vec<Value> {
        let mut s = spec(dialect);
        s.aggregates = vec![agg(0, Aggregate::Sum)];
        single_column(dialect, &s, values.into_iter().map(|v| vec![v]).collect())
    }

    #[test]
    fn sums_of_floats_and_of_numeric_nan_and_infinities() {
        let sum = |values| sum_in(Dialect::Postgres, values);
        let float8 =
            |bytes: &[u8], binary| Value::Wire(Wire::new(WireKind::PgFloat, binary, bytes));
        assert_eq!(
            sum(vec![
                float8(b"1.5", false),
                float8(&2.25f64.to_be_bytes(), true),
                Null
            ]),
            vec![Value::Double(3.75)]
        );
        assert_eq!(sum(vec![text("NaN"), text("1.5")]), vec![text("NaN")]);
        assert_eq!(
            sum(vec![text("Infinity"), text("1.5")]),
            vec![text("Infinity")]
        );
        assert_eq!(
            sum(vec![text("Infinity"), text("-Infinity")]),
            vec![text("NaN")]
        );

        let money = |binary: bool, bytes: &[u8]| {
            Value::Wire(Wire::new(WireKind::PgMoney, binary, bytes).with_oid(790))
        };
        assert_eq!(
            sum(vec![
                money(true, &1234i64.to_be_bytes()),
                money(true, &(-34i64).to_be_bytes())
            ]),
            vec![money(true, &1200i64.to_be_bytes())]
        );
        // Only the total must fit, as in the database.
        assert_eq!(
            sum(vec![
                money(true, &i64::MAX.to_be_bytes()),
                money(true, &1i64.to_be_bytes()),
                money(true, &(-2i64).to_be_bytes())
            ]),
            vec![money(true, &(i64::MAX - 1).to_be_bytes())]
        );
        let mut s = spec(Dialect::Postgres);
        s.aggregates = vec![agg(0, Aggregate::Sum)];
        let over = vec![
            shard(
                &[("sum", "MONEY")],
                vec![vec![money(true, &i64::MAX.to_be_bytes())]],
            ),
            shard(
                &[("sum", "MONEY")],
                vec![vec![money(true, &1i64.to_be_bytes())]],
            ),
        ];
        assert!(matches!(
            merge(&s, over),
            Err(MergeError::OutOfRange { column: 0, .. })
        ));
        let texts = vec![
            shard(&[("sum", "MONEY")], vec![vec![money(false, b"$12.34")]]),
            shard(&[("sum", "MONEY")], vec![vec![money(false, b"-$0.34")]]),
        ];
        assert!(matches!(
            merge(&s, texts),
            Err(MergeError::MoneyText { column: 0 })
        ));
    }

    #[test]
    fn sums_stay_exact() {
        let sum = |values| sum_in(Dialect::MySql, values);
        assert_eq!(
            sum(vec![text("10.50"), Int(3), text("0.125")]),
            vec![text("13.625")]
        );
        assert_eq!(sum(vec![text("1.5"), text("-2.25")]), vec![text("-0.75")]);
        assert_eq!(sum(vec![text("1.50"), text("-1.5")]), vec![text("0.00")]);
        assert_eq!(sum(vec![text("31"), Null]), vec![text("31")]);
        assert_eq!(
            sum(vec![
                text("99999999999999999999999999999999999999999.9"),
                text("0.1")
            ]),
            vec![text("100000000000000000000000000000000000000000.0")]
        );
        assert_eq!(sum(vec![Int(i64::MAX), Int(1)]), vec![UInt(1 << 63)]);
        assert_eq!(
            sum(vec![UInt(u64::MAX), UInt(1)]),
            vec![text("18446744073709551616")]
        );
        assert_eq!(
            sum(vec![Int(i64::MIN), Int(-1)]),
            vec![text("-9223372036854775809")]
        );
        assert_eq!(sum(vec![Int(1), Double(0.5), text("2")]), vec![Double(3.5)]);
        assert_eq!(sum(vec![Null, Null]), vec![Null]);
    }

    fn avg(dialect: Dialect, shards: Vec<(Value, Value)>) -> (Value, SqlType) {
        let mut s = spec(dialect);
        s.aggregates = vec![agg(0, Aggregate::Avg { count_index: 1 })];
        s.hidden_columns = 1;
        let cols = &[("avg(x)", "DECIMAL"), ("count(x)", "BIGINT")];
        let results = shards
            .into_iter()
            .map(|(sum, count)| shard(cols, vec![vec![sum, count]]))
            .collect();
        let merged = merge(&s, results).expect("merges");
        assert_eq!(merged.columns.len(), 1);
        let value = merged.rows.concat().into_iter().next().expect("one value");
        (value, merged.columns[0].ty)
    }

    #[test]
    fn avg_is_a_decimal_in_mysql_as_mariadb_computes_it() {
        let (value, type_name) = avg(
            Dialect::MySql,
            vec![(text("20"), Int(1)), (text("11"), Int(1))],
        );
        assert_eq!((value, type_name), (text("15.5000"), DECIMAL));
        let (value, _) = avg(Dialect::MySql, vec![(Int(20), Int(1)), (Int(11), Int(1))]);
        assert_eq!(value, text("15.5000"));
        let (value, _) = avg(
            Dialect::MySql,
            vec![(text("10.50"), Int(3)), (Null, Int(0)), (text("0"), Int(1))],
        );
        assert_eq!(value, text("2.625000"));
        // Rounded half away from zero: 2/3 and -2/3.
        assert_eq!(
            avg(Dialect::MySql, vec![(Int(2), Int(3))]).0,
            text("0.6667")
        );
        assert_eq!(
            avg(Dialect::MySql, vec![(Int(-2), Int(3))]).0,
            text("-0.6667")
        );
        assert_eq!(
            avg(Dialect::MySql, vec![(text("0.00005"), Int(2))]).0,
            text("0.000025000")
        );
        // No rows anywhere: NULL.
        assert_eq!(
            avg(Dialect::MySql, vec![(Null, Int(0)), (Null, Int(0))]).0,
            Null
        );
    }

    #[test]
    fn avg_is_a_double_over_doubles() {
        let (value, type_name) = avg(
            Dialect::MySql,
            vec![(Double(3.0), Int(2)), (Int(1), Int(2))],
        );
        assert_eq!((value, type_name), (Double(1.0), SqlType::Double));
        let (value, _) = avg(Dialect::Postgres, vec![(Double(3.0), Int(2))]);
        assert_eq!(value, Double(1.5));
    }

    #[test]
    fn avg_in_postgres_is_a_numeric_of_postgres_scale() {
        // What `SELECT AVG(x)` prints on PostgreSQL 15 for the same sums and counts.
        for (sum, count, expected) in [
            (Int(31), 2, "15.5000000000000000"),
            (Int(285), 8, "35.6250000000000000"),
            (Int(2), 8, "0.25000000000000000000"),
            (Int(59), 1, "59.0000000000000000"),
            (Int(123_456), 7, "17636.571428571429"),
            (text("10.50"), 4, "2.6250000000000000"),
            (Int(-2), 3, "-0.66666666666666666667"),
        ] {
            let (value, type_name) = avg(Dialect::Postgres, vec![(sum, Int(count))]);
            assert_eq!((value, type_name), (text(expected), DECIMAL));
        }
    }

    #[test]
    fn avg_with_group_by_updates_the_count_column_too() {
        let mut s = spec(Dialect::MySql);
        s.group_by = vec![ColumnRef::Index(0)];
        s.aggregates = vec![agg(1, Aggregate::Avg { count_index: 2 })];
        let cols = &[
            ("g", "BIGINT"),
            ("avg(x)", "DECIMAL"),
            ("count(x)", "BIGINT"),
        ];
        let results = vec![
            shard(
                cols,
                vec![
                    vec![Int(1), text("3"), Int(2)],
                    vec![Int(2), text("1"), Int(1)],
                ],
            ),
            shard(cols, vec![vec![Int(1), text("4"), Int(1)]]),
        ];
        let rows = merge(&s, results).expect("merges").rows;
        assert_eq!(
            rows,
            vec![
                vec![Int(1), text("2.3333"), Int(3)],
                vec![Int(2), text("1.0000"), Int(1)]
            ]
        );
    }
}
