//! Aggregate functions combined over the shards' partial values: COUNT and SUM are summed
//! exactly, MIN and MAX (and so `bool_and`, `bool_or`) compared as the database compares, AVG
//! recomputed from the summed SUM and COUNT the router asked the shards for, `array_agg`'s
//! arrays joined.

use std::cmp::Ordering;

use keyshard_router::merge::Aggregate;
use keyshard_types::Dialect;
use keyshard_types::{Array, Value, Wire, WireKind};

use super::MergeError;
use super::compare::compare;
use super::exact::Exact;
use super::plan::{Join, Key, Resolved};
use keyshard_types::numeric::Decimal;

/// MySQL's `div_precision_increment` default: the digits a division (and AVG) adds to its
/// dividend's scale where the nodes do not say the session's.
pub(crate) const DEFAULT_DIVISION_SCALE: usize = 4;

impl Resolved {
    /// One group's row: its first row, with every aggregate combined over all its rows.
    pub(super) fn combine(
        &self,
        rows: &[Vec<Value>],
        avg_decimal: &mut [Option<bool>],
    ) -> Result<Vec<Value>, MergeError> {
        let Some(first) = rows.first() else {
            return Ok(Vec::new());
        };
        let mut out = first.clone();
        let aggregates = self.aggregates.iter().zip(&self.distinct).zip(&self.joined);
        for (((&(index, function), distinct), joined), decimal) in aggregates.zip(avg_decimal) {
            // A DISTINCT aggregate combines one row per value; any other all rows, without
            // collecting them first.
            let chosen = distinct.as_ref().map(|key| self.one_per_value(rows, key));
            let all: &[Vec<Value>] = if chosen.is_some() { &[] } else { rows };
            let each = || chosen.iter().flatten().copied().chain(all);
            let column = || each().map(move |row| row.get(index).unwrap_or(&Value::Null));
            let value = match function {
                Aggregate::Count => match Sum::of(column(), index)?.into_value(index)? {
                    Value::Null => Value::Int(0),
                    count => count,
                },
                Aggregate::Sum => Sum::of(column(), index)?.into_value(index)?,
                Aggregate::Min => self.extreme(column(), index, Ordering::Less),
                Aggregate::Max => self.extreme(column(), index, Ordering::Greater),
                Aggregate::Concat => concat(column(), index)?,
                Aggregate::Join => match joined {
                    Some(join) => self.join(rows, index, join)?,
                    None => first.get(index).cloned().unwrap_or(Value::Null),
                },
                Aggregate::Avg { count_index } => {
                    let counts = each().map(|row| row.get(count_index).unwrap_or(&Value::Null));
                    let count = Sum::of(counts, count_index)?;
                    let sum = Sum::of(column(), index)?;
                    if let Some(slot) = out.get_mut(count_index) {
                        // The count column may be a visible COUNT(x) the router reused.
                        *slot = count.clone().into_value(count_index)?;
                    }
                    let extra = match self.dialect {
                        Dialect::MySql => Some(self.division_scale_of(first)),
                        Dialect::Postgres => None,
                    };
                    let (avg, is_decimal) = average(sum, count, count_index, extra)?;
                    if decimal.is_none() {
                        *decimal = is_decimal;
                    }
                    avg
                }
            };
            if let Some(slot) = out.get_mut(index) {
                *slot = value;
            }
        }
        Ok(out)
    }

    /// The digits MySQL's division adds to its dividend's scale, as the node that sent `row`
    /// says (`div_precision_increment`); its default where none does.
    pub(super) fn division_scale_of(&self, row: &[Value]) -> usize {
        // A system variable is unsigned, and so is its sum with 1.
        let said = match self.division_scale.and_then(|index| row.get(index)) {
            Some(Value::Int(v)) => u64::try_from(*v).ok(),
            Some(Value::UInt(v)) => Some(*v),
            _ => None,
        };
        said.and_then(|v| usize::try_from(v.checked_sub(1)?).ok())
            .unwrap_or(DEFAULT_DIVISION_SCALE)
    }

    /// The rows whose `key` is not NULL, one per distinct value of it, as the database
    /// tells values apart (the column's collation, numbers by value).
    fn one_per_value<'r>(&self, rows: &'r [Vec<Value>], key: &Key) -> Vec<&'r Vec<Value>> {
        let keys = std::slice::from_ref(key);
        let mut chosen: Vec<&Vec<Value>> = rows
            .iter()
            .filter(|row| !matches!(row.get(key.index), None | Some(Value::Null)))
            .collect();
        chosen.sort_by(|a, b| self.compare_rows(keys, a, b));
        chosen.dedup_by(|a, b| self.compare_rows(keys, a, b).is_eq());
        chosen
    }

    /// A group's `string_agg`/`GROUP_CONCAT` pieces joined in the call's order.
    fn join(&self, rows: &[Vec<Value>], index: usize, join: &Join) -> Result<Value, MergeError> {
        let unjoined = |why: String| MergeError::Unjoined { column: index, why };
        let mut pieces: Vec<&Vec<Value>> = rows.iter().collect();
        if !join.order.is_empty() {
            // Stable: pieces of equal keys keep the shards' order, as ties may come in any.
            pieces.sort_by(|a, b| self.compare_rows(&join.order, a, b));
        }
        let mut joined: Option<Vec<u8>> = None;
        let mut bytes = false;
        let mut last: Option<&Vec<Value>> = None;
        for row in pieces {
            let piece = match row.get(index) {
                None | Some(Value::Null) => continue,
                // DISTINCT: a value another node sent too is joined once.
                _ if join.distinct
                    && last.is_some_and(|l| self.compare_rows(&join.order, l, row).is_eq()) =>
                {
                    continue;
                }
                Some(Value::Text(text)) => text.as_bytes(),
                Some(Value::Bytes(piece)) => {
                    bytes = true;
                    piece.as_slice()
                }
                Some(other) => return Err(unjoined(format!("{other:?} is not text"))),
            };
            last = Some(row);
            match &mut joined {
                Some(whole) => {
                    whole.extend_from_slice(join.separator.as_bytes());
                    whole.extend_from_slice(piece);
                }
                None => joined = Some(piece.to_vec()),
            }
        }
        let Some(joined) = joined else {
            return Ok(Value::Null);
        };
        // Each node cut its own pieces at the same limit; 0 (SQLite) has none.
        let limit = join.max_length.map_or(0, |column| {
            rows.iter()
                .filter_map(|row| match row.get(column) {
                    Some(Value::Int(v)) => u64::try_from(*v).ok(),
                    Some(Value::UInt(v)) => Some(*v),
                    _ => None,
                })
                .max()
                .unwrap_or(0)
        });
        if limit > 0 && joined.len() as u64 > limit {
            return Err(unjoined(format!(
                "{} bytes, beyond group_concat_max_len ({limit})",
                joined.len()
            )));
        }
        Ok(match String::from_utf8(joined) {
            Ok(text) if !bytes => Value::Text(text),
            Ok(text) => Value::Bytes(text.into_bytes()),
            Err(e) => Value::Bytes(e.into_bytes()),
        })
    }

    /// MIN (`wanted` = Less) or MAX (Greater) over the non-NULL values; ties keep the first.
    fn extreme<'v>(
        &self,
        values: impl Iterator<Item = &'v Value>,
        index: usize,
        wanted: Ordering,
    ) -> Value {
        let numeric_text = self.numeric_text.get(index).copied().unwrap_or(false);
        values
            .filter(|v| !matches!(v, Value::Null))
            .fold(None::<&Value>, |best, v| match best {
                Some(b) if compare(v, b, self.text_order_of(index), numeric_text) != wanted => {
                    Some(b)
                }
                _ => Some(v),
            })
            .cloned()
            .unwrap_or(Value::Null)
    }
}

/// The shards' arrays one after another along their first dimension; NULL when every one is
/// NULL. Arrays whose inner dimensions differ do not join, as PostgreSQL's `array_cat` says.
fn concat<'v>(values: impl Iterator<Item = &'v Value>, column: usize) -> Result<Value, MergeError> {
    let mut joined: Option<Array> = None;
    for value in values {
        let part = match value {
            Value::Null => continue,
            Value::Array(part) => part,
            other => {
                return Err(MergeError::NotAnArray {
                    column,
                    value: format!("{other:?}"),
                });
            }
        };
        let Some(whole) = &mut joined else {
            joined = Some(part.clone());
            continue;
        };
        if part.dims.is_empty() {
            continue;
        }
        if whole.dims.is_empty() {
            *whole = part.clone();
            continue;
        }
        if whole.dims.len() != part.dims.len()
            || whole.dims[1..]
                .iter()
                .map(|d| d.len)
                .ne(part.dims[1..].iter().map(|d| d.len))
        {
            return Err(MergeError::NotAnArray {
                column,
                value: "arrays of different dimensions".to_owned(),
            });
        }
        whole.dims[0].len += part.dims[0].len;
        whole.elements.extend(part.elements.iter().cloned());
    }
    Ok(joined.map_or(Value::Null, Value::Array))
}

/// A running SUM over partial values: exact while only integers and decimals are seen.
#[derive(Debug, Clone, Default)]
struct Sum {
    exact: Option<Exact>,
    double: Option<f64>,
    /// The sum of PostgreSQL NUMERIC's NaN and ±Infinity seen, which decides the result
    /// whatever the finite values add up to (Infinity + -Infinity is NaN, as there).
    special: Option<f64>,
    /// PostgreSQL `money`, in the currency's smallest unit.
    money: Option<i128>,
}

impl Sum {
    fn of<'v>(values: impl Iterator<Item = &'v Value>, column: usize) -> Result<Sum, MergeError> {
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

    fn into_value(self, column: usize) -> Result<Value, MergeError> {
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
fn average(
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
    use super::super::merge;
    use super::super::test_support::*;
    use super::*;
    use crate::outcome::UnitResult;
    use keyshard_types::SqlType;

    const DECIMAL: SqlType = SqlType::Decimal { unsigned: false };
    use keyshard_router::merge::{AggregateColumn, ColumnRef};

    #[test]
    fn distinct_aggregates_combine_each_value_once_across_shards() {
        // Rows (g, COUNT(DISTINCT k), SUM(DISTINCT k), COUNT(*), k) of nodes grouped by g, k.
        let mut s = spec(Dialect::MySql);
        s.group_by = vec![ColumnRef::Index(0)];
        s.aggregates = vec![
            AggregateColumn {
                distinct: Some(4),
                ..agg(1, Aggregate::Count)
            },
            AggregateColumn {
                distinct: Some(4),
                ..agg(2, Aggregate::Sum)
            },
            agg(3, Aggregate::Count),
        ];
        s.hidden_columns = 1;
        let cols = &[
            ("g", "BIGINT"),
            ("n", "BIGINT"),
            ("s", "DECIMAL"),
            ("all", "BIGINT"),
            ("k", "BIGINT"),
        ];
        let results = vec![
            shard(
                cols,
                vec![
                    vec![Int(1), Int(1), text("5"), Int(2), Int(5)],
                    vec![Int(1), Int(1), text("7"), Int(1), Int(7)],
                    vec![Int(1), Int(0), Null, Int(4), Null],
                ],
            ),
            shard(
                cols,
                vec![
                    vec![Int(1), Int(1), text("5"), Int(3), Int(5)],
                    vec![Int(2), Int(1), text("5"), Int(1), Int(5)],
                ],
            ),
        ];
        let rows = merge(&s, results).expect("merges").rows;
        assert_eq!(
            rows,
            vec![
                vec![Int(1), Int(2), text("12"), Int(10)],
                vec![Int(2), Int(1), text("5"), Int(1)],
            ]
        );

        // Text keys are told apart as the collation does: 'a' and 'A' are one value.
        let mut s = spec(Dialect::MySql);
        s.aggregates = vec![AggregateColumn {
            distinct: Some(1),
            ..agg(0, Aggregate::Count)
        }];
        s.hidden_columns = 1;
        let cols = &[("n", "BIGINT"), ("k", "VARCHAR")];
        let results = vec![
            shard(cols, vec![vec![Int(1), text("a")], vec![Int(1), text("b")]]),
            shard(cols, vec![vec![Int(1), text("A")]]),
        ];
        assert_eq!(merge(&s, results).expect("merges").rows, vec![vec![Int(2)]]);

        // No node has a row: the aggregate still answers its one row.
        s.when_empty = Some(vec![Int(0), Null]);
        let results = vec![shard(cols, Vec::new()), UnitResult::default()];
        assert_eq!(merge(&s, results).expect("merges").rows, vec![vec![Int(0)]]);
        let results = vec![UnitResult::default(), UnitResult::default()];
        assert_eq!(merge(&s, results).expect("merges").rows, vec![vec![Int(0)]]);
    }

    #[test]
    fn string_aggregates_join_each_groups_pieces_in_their_keys_order() {
        // Rows (g, GROUP_CONCAT(x ORDER BY k DESC), k, group_concat_max_len) of nodes grouped
        // by g, k: a group's pieces interleave across the nodes.
        let mut s = spec(Dialect::MySql);
        s.group_by = vec![ColumnRef::Index(0)];
        s.aggregates = vec![AggregateColumn {
            joined: Some(keyshard_router::merge::Joined {
                separator: "; ".into(),
                order: vec![desc(2)],
                distinct: false,
                max_length: Some(3),
            }),
            ..agg(1, Aggregate::Join)
        }];
        s.hidden_columns = 2;
        let cols = &[
            ("g", "BIGINT"),
            ("s", "TEXT"),
            ("k", "BIGINT"),
            ("l", "BIGINT"),
        ];
        let results = |limit: i64| {
            vec![
                shard(
                    cols,
                    vec![
                        vec![Int(1), text("c"), Int(3), Int(limit)],
                        vec![Int(1), text("a,a"), Int(1), Int(limit)],
                        vec![Int(2), Null, Int(1), Int(limit)],
                    ],
                ),
                shard(
                    cols,
                    vec![
                        vec![Int(1), text("b"), Int(2), Int(limit)],
                        vec![Int(1), Null, Null, Int(limit)],
                    ],
                ),
            ]
        };
        let rows = merge(&s, results(1024)).expect("merges").rows;
        assert_eq!(
            rows,
            vec![vec![Int(1), text("c; b; a,a")], vec![Int(2), Null]]
        );
        // SQLite has no limit (0).
        assert!(merge(&s, results(0)).is_ok());
        // Longer than MySQL's group_concat_max_len: the database would cut it, so it is
        // gathered instead.
        assert!(matches!(
            merge(&s, results(8)),
            Err(MergeError::Unjoined { column: 1, .. })
        ));
        // DISTINCT: a value on several nodes is joined once.
        if let Some(joined) = &mut s.aggregates[0].joined {
            joined.distinct = true;
        }
        let results = vec![
            shard(cols, vec![vec![Int(1), text("b"), Int(2), Int(0)]]),
            shard(
                cols,
                vec![
                    vec![Int(1), text("b"), Int(2), Int(0)],
                    vec![Int(1), text("a"), Int(1), Int(0)],
                ],
            ),
        ];
        assert_eq!(
            merge(&s, results).expect("merges").rows,
            vec![vec![Int(1), text("b; a")]]
        );
        // Bytes join as bytes.
        let bytes = |b: &[u8]| Value::Bytes(b.to_vec());
        let results = vec![
            shard(cols, vec![vec![Int(1), bytes(b"\xff"), Int(1), Int(0)]]),
            shard(cols, vec![vec![Int(1), bytes(b"\x00"), Int(2), Int(0)]]),
        ];
        assert_eq!(
            merge(&s, results).expect("merges").rows,
            vec![vec![Int(1), bytes(b"\x00; \xff")]]
        );
    }

    #[test]
    fn array_aggs_join_along_their_first_dimension() {
        let ints =
            |v: &[i64]| Value::Array(Array::new(20, v.iter().map(|&i| Value::Int(i)).collect()));
        let joined = concat(
            [ints(&[1, 2]), Value::Null, ints(&[]), ints(&[3])].iter(),
            0,
        );
        assert_eq!(joined.unwrap(), ints(&[1, 2, 3]));
        assert_eq!(concat([Value::Null].iter(), 0).unwrap(), Value::Null);
        let square = |v: i64| {
            Value::Array(Array {
                element: 20,
                dims: vec![
                    keyshard_types::Dim { len: 1, lower: 1 },
                    keyshard_types::Dim { len: 2, lower: 1 },
                ],
                elements: vec![Value::Int(v), Value::Int(v)],
            })
        };
        match concat([square(1), square(2)].iter(), 0).unwrap() {
            Value::Array(a) => assert_eq!((a.dims[0].len, a.elements.len()), (2, 4)),
            other => panic!("{other:?}"),
        }
        assert!(concat([square(1), ints(&[1, 2])].iter(), 0).is_err());
        assert!(concat([Value::Int(1)].iter(), 0).is_err());
    }

    use Value::{Double, Int, Null, UInt};

    const AGG: &[(&str, &str)] = &[
        ("cnt", "BIGINT"),
        ("total", "BIGINT"),
        ("lo", "VARCHAR"),
        ("hi", "BIGINT"),
    ];

    fn aggregates() -> Vec<AggregateColumn> {
        vec![
            agg(0, Aggregate::Count),
            agg(1, Aggregate::Sum),
            agg(2, Aggregate::Min),
            agg(3, Aggregate::Max),
        ]
    }

    #[test]
    fn aggregates_without_group_by_make_one_row() {
        let mut s = spec(Dialect::MySql);
        s.aggregates = aggregates();
        let results = vec![
            shard(AGG, vec![vec![Int(2), Int(10), text("b"), Int(7)]]),
            shard(AGG, vec![vec![Int(0), Null, Null, Null]]),
            shard(AGG, vec![vec![Int(3), Int(-4), text("A"), Int(9)]]),
        ];
        let merged = merge(&s, results).expect("merges");
        assert_eq!(merged.rows, vec![vec![Int(5), Int(6), text("A"), Int(9)]]);

        // Every shard empty-handed: still one row, of zeros and NULLs.
        let results = vec![
            shard(AGG, vec![vec![Int(0), Null, Null, Null]]),
            shard(AGG, vec![vec![Int(0), Null, Null, Null]]),
        ];
        let merged = merge(&s, results).expect("merges");
        assert_eq!(merged.rows, vec![vec![Int(0), Null, Null, Null]]);

        // No rows at all: no rows.
        let results = vec![shard(AGG, vec![]), UnitResult::default()];
        assert!(merge(&s, results).expect("merges").rows.is_empty());
    }

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
