//! Aggregate functions combined over the shards' partial values: COUNT and SUM are summed
//! exactly, MIN and MAX (and so `bool_and`, `bool_or`) compared as the database compares, AVG
//! recomputed from the summed SUM and COUNT the router asked the shards for, `array_agg`'s
//! arrays joined.

mod joined;
mod sum;

use std::cmp::Ordering;

use keyshard_router::merge::Aggregate;
use keyshard_types::{Dialect, Value};

use super::MergeError;
use super::compare::compare;
use super::plan::{Key, Resolved};
use joined::concat;
use sum::{Sum, average};

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

#[cfg(test)]
mod tests {
    use super::super::merge;
    use super::super::test_support::*;
    use super::*;
    use crate::outcome::UnitResult;
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

    use Value::{Int, Null};

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
}
