//! GROUP BY in memory: all rows sorted by the grouping keys, each run of equal keys one group
//! whose aggregates are combined.

use keyshard_router::merge::Aggregate;
use keyshard_types::Dialect;
use keyshard_types::Value;

use super::MergeError;
use super::plan::Resolved;
use keyshard_types::SqlType;

impl Resolved {
    /// Groups all rows and combines each group's aggregates. Returns the groups, ordered by the
    /// GROUP BY columns, and the type name each AVG column gets.
    #[allow(clippy::type_complexity)]
    pub(super) fn group(
        &self,
        shards: Vec<Vec<Vec<Value>>>,
    ) -> Result<(Vec<Vec<Value>>, Vec<(usize, SqlType)>), MergeError> {
        let mut rows: Vec<Vec<Value>> = shards.into_iter().flatten().collect();
        // Stable, so each group's rows stay in shard order and its "first row" is well defined.
        rows.sort_by(|a, b| self.compare_rows(&self.group_by, a, b));
        let mut groups = Vec::new();
        let mut avg_decimal: Vec<Option<bool>> = vec![None; self.aggregates.len()];
        let mut start = 0;
        while start < rows.len() {
            let end = (start + 1..rows.len())
                .find(|&i| {
                    self.compare_rows(&self.group_by, &rows[start], &rows[i])
                        .is_ne()
                })
                .unwrap_or(rows.len());
            let mut group = self.combine(&rows[start..end], &mut avg_decimal)?;
            self.compute(&mut group)?;
            groups.push(group);
            start = end;
        }
        let avg_types = self
            .aggregates
            .iter()
            .zip(avg_decimal)
            .filter(|((_, function), _)| matches!(function, Aggregate::Avg { .. }))
            .map(|(&(index, _), decimal)| {
                let decimal = decimal.unwrap_or(self.dialect == Dialect::MySql);
                let exact = SqlType::Decimal { unsigned: false };
                (index, if decimal { exact } else { SqlType::Double })
            })
            .collect();
        Ok((groups, avg_types))
    }
}

#[cfg(test)]
mod tests {
    use super::super::merge;
    use super::super::test_support::*;
    use super::*;
    use keyshard_router::merge::{ColumnRef, SortKey};

    use Value::{Int, Null, UInt};

    #[test]
    fn aggregates_with_group_by_combine_per_group_in_group_order() {
        let mut s = spec(Dialect::MySql);
        s.group_by = vec![ColumnRef::Name("status".into())];
        s.aggregates = vec![
            agg(1, Aggregate::Count),
            agg(2, Aggregate::Sum),
            agg(3, Aggregate::Max),
        ];
        let cols = &[
            ("status", "VARCHAR"),
            ("n", "BIGINT"),
            ("s", "BIGINT"),
            ("m", "BIGINT"),
            ("note", "TEXT"),
        ];
        let results = vec![
            shard(
                cols,
                vec![
                    vec![Null, Int(1), Int(1), Int(1), text("n0")],
                    vec![text("new"), Int(2), Int(20), Int(15), text("first")],
                    vec![text("paid"), Int(1), Int(5), Int(5), text("p0")],
                ],
            ),
            shard(
                cols,
                vec![
                    vec![text("NEW"), Int(3), Int(30), Int(12), text("second")],
                    vec![text("closed"), Int(1), UInt(u64::MAX), Int(3), text("c")],
                ],
            ),
            shard(
                cols,
                vec![vec![text("paid"), Int(4), Int(-5), Int(9), text("p1")]],
            ),
        ];
        let rows = merge(&s, results).expect("merges").rows;
        assert_eq!(
            rows,
            vec![
                vec![Null, Int(1), Int(1), Int(1), text("n0")],
                vec![text("closed"), Int(1), UInt(u64::MAX), Int(3), text("c")],
                // MySQL's collation: "new" and "NEW" are one group, which keeps its first row's.
                vec![text("new"), Int(5), Int(50), Int(15), text("first")],
                vec![text("paid"), Int(5), Int(0), Int(9), text("p0")],
            ]
        );

        // PostgreSQL: case matters and NULL's group comes last.
        s.dialect = Dialect::Postgres;
        let results = vec![
            shard(
                cols,
                vec![
                    vec![text("new"), Int(2), Int(20), Int(15), text("a")],
                    vec![Null, Int(1), Int(1), Int(1), text("n")],
                ],
            ),
            shard(
                cols,
                vec![vec![text("NEW"), Int(3), Int(30), Int(12), text("b")]],
            ),
        ];
        let rows = merge(&s, results).expect("merges").rows;
        let keys: Vec<_> = rows.iter().map(|r| r[0].clone()).collect();
        assert_eq!(keys, vec![text("NEW"), text("new"), Null]);
    }

    #[test]
    fn groups_are_sorted_by_order_by_after_combining() {
        let mut s = spec(Dialect::MySql);
        s.group_by = vec![ColumnRef::Index(0)];
        s.aggregates = vec![agg(1, Aggregate::Sum)];
        s.order_by = vec![SortKey {
            column: ColumnRef::Name("SUM(amount)".into()),
            descending: true,
            nulls_first: None,
        }];
        s.limit = Some(2);
        // MariaDB's SUM is DECIMAL, as text: "9.50" + "1.00" must beat "10.00" numerically.
        let cols = &[("user_id", "BIGINT"), ("sum(amount)", "DECIMAL")];
        let results = vec![
            shard(
                cols,
                vec![
                    vec![Int(1), text("9.50")],
                    vec![Int(2), text("10.00")],
                    vec![Int(3), text("1")],
                ],
            ),
            shard(
                cols,
                vec![vec![Int(1), text("1.00")], vec![Int(3), text("0.5")]],
            ),
        ];
        let rows = merge(&s, results).expect("merges").rows;
        assert_eq!(
            rows,
            vec![vec![Int(1), text("10.50")], vec![Int(2), text("10.00")]]
        );
    }

    #[test]
    fn merging_partial_aggregates_equals_aggregating_all_rows() {
        let mut rng = Rng(0xdead_beef_cafe_f00d);
        for round in 0..100 {
            // Rows (group, x) spread over shards; each shard reports (group, COUNT, SUM, MIN, MAX).
            let rows: Vec<(i64, i64)> = (0..rng.below(30))
                .map(|_| (rng.below(4) as i64, rng.below(100) as i64 - 50))
                .collect();
            let shard_count = 1 + rng.below(4);
            let mut per_shard = vec![Vec::new(); shard_count as usize];
            for row in &rows {
                per_shard[rng.below(shard_count) as usize].push(*row);
            }
            let partial = |rows: &[(i64, i64)]| -> Vec<Vec<Value>> {
                let mut groups: Vec<i64> = rows.iter().map(|r| r.0).collect();
                groups.sort();
                groups.dedup();
                groups
                    .into_iter()
                    .map(|g| {
                        let xs: Vec<i64> = rows.iter().filter(|r| r.0 == g).map(|r| r.1).collect();
                        vec![
                            Int(g),
                            Int(xs.len() as i64),
                            text(&xs.iter().sum::<i64>().to_string()),
                            Int(*xs.iter().min().unwrap_or(&0)),
                            Int(*xs.iter().max().unwrap_or(&0)),
                        ]
                    })
                    .collect()
            };
            let mut s = spec(Dialect::MySql);
            s.group_by = vec![ColumnRef::Index(0)];
            s.aggregates = vec![
                agg(1, Aggregate::Count),
                agg(2, Aggregate::Sum),
                agg(3, Aggregate::Min),
                agg(4, Aggregate::Max),
            ];
            let cols = &[
                ("g", "BIGINT"),
                ("c", "BIGINT"),
                ("s", "DECIMAL"),
                ("lo", "BIGINT"),
                ("hi", "BIGINT"),
            ];
            let results = per_shard
                .iter()
                .map(|rows| shard(cols, partial(rows)))
                .collect();
            let merged = merge(&s, results).expect("merges").rows;
            assert_eq!(merged, partial(&rows), "round {round}");
        }
    }
}
