//! ORDER BY across shards: each shard's rows arrive sorted, so a k-way merge yields them in
//! order and stops as soon as the window has its rows.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use keyshard_types::Value;

use super::plan::Resolved;

/// The shards' sorted rows merged into one sorted stream; ties go to the lower shard, so the
/// result equals a stable sort of the shards' concatenation.
pub(super) struct KWayMerge<'p> {
    plan: &'p Resolved,
    cursors: Vec<std::vec::IntoIter<Vec<Value>>>,
    heap: BinaryHeap<Head<'p>>,
    /// Rows not yet yielded: the window collects its rows into one allocation of the right
    /// size instead of growing it.
    left: usize,
}

impl<'p> KWayMerge<'p> {
    pub(super) fn new(plan: &'p Resolved, shards: Vec<Vec<Vec<Value>>>) -> Self {
        let left = shards.iter().map(Vec::len).sum();
        let mut cursors: Vec<_> = shards.into_iter().map(Vec::into_iter).collect();
        let heap = cursors
            .iter_mut()
            .enumerate()
            .filter_map(|(shard, cursor)| Some(Head::new(plan, shard, cursor.next()?)))
            .collect();
        Self {
            plan,
            cursors,
            heap,
            left,
        }
    }
}

impl Iterator for KWayMerge<'_> {
    type Item = Vec<Value>;

    fn next(&mut self) -> Option<Vec<Value>> {
        let head = self.heap.pop()?;
        if let Some(row) = self.cursors.get_mut(head.shard).and_then(Iterator::next) {
            self.heap.push(Head::new(self.plan, head.shard, row));
        }
        self.left -= 1;
        Some(head.row)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// A shard's next row, ordered so that `BinaryHeap` (a max-heap) pops the smallest first.
struct Head<'p> {
    plan: &'p Resolved,
    shard: usize,
    row: Vec<Value>,
}

impl<'p> Head<'p> {
    fn new(plan: &'p Resolved, shard: usize, row: Vec<Value>) -> Self {
        Self { plan, shard, row }
    }
}

impl Ord for Head<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.plan
            .compare_rows(&self.plan.order_by, &other.row, &self.row)
            .then_with(|| other.shard.cmp(&self.shard))
    }
}

impl PartialOrd for Head<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head<'_> {}

#[cfg(test)]
mod tests {
    use super::super::merge;
    use super::super::pagination::window;
    use super::super::test_support::*;
    use super::*;
    use keyshard_router::merge::SortKey;
    use keyshard_types::Dialect;

    use Value::{Double, Int, Null, UInt};

    #[test]
    fn order_by_merges_sorted_shards_ascending_and_descending() {
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![asc(0)];
        let merged = single_column(
            Dialect::MySql,
            &s,
            vec![
                vec![Int(1), Int(4), Int(9)],
                vec![],
                vec![Int(2), UInt(5), Double(8.5)],
            ],
        );
        assert_eq!(
            merged,
            vec![Int(1), Int(2), Int(4), UInt(5), Double(8.5), Int(9)]
        );

        s.order_by = vec![desc(0)];
        let merged = single_column(
            Dialect::MySql,
            &s,
            vec![
                vec![Int(9), Int(4), Int(1)],
                vec![Double(8.5), UInt(5), Int(2)],
            ],
        );
        assert_eq!(
            merged,
            vec![Int(9), Double(8.5), UInt(5), Int(4), Int(2), Int(1)]
        );
    }

    #[test]
    fn order_by_several_keys_and_ties_keep_shard_order() {
        let mut s = spec(Dialect::Postgres);
        s.order_by = vec![asc(0), desc(1)];
        let cols = &[("a", "INT8"), ("b", "INT8"), ("shard", "TEXT")];
        let results = vec![
            shard(
                cols,
                vec![
                    vec![Int(1), Int(5), text("x")],
                    vec![Int(2), Int(1), text("x")],
                ],
            ),
            shard(
                cols,
                vec![
                    vec![Int(1), Int(7), text("y")],
                    vec![Int(2), Int(1), text("y")],
                ],
            ),
        ];
        let rows = merge(&s, results).expect("merges").rows;
        let order: Vec<_> = rows.iter().map(|r| (r[0].clone(), r[2].clone())).collect();
        assert_eq!(
            order,
            vec![
                (Int(1), text("y")),
                (Int(1), text("x")),
                (Int(2), text("x")),
                (Int(2), text("y"))
            ]
        );
    }

    #[test]
    fn nulls_sort_where_each_dialect_puts_them() {
        // MySQL: NULL first ascending, last descending.
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![asc(0)];
        let merged = single_column(Dialect::MySql, &s, vec![vec![Null, Int(2)], vec![Int(1)]]);
        assert_eq!(merged, vec![Null, Int(1), Int(2)]);
        s.order_by = vec![desc(0)];
        let merged = single_column(Dialect::MySql, &s, vec![vec![Int(2), Null], vec![Int(1)]]);
        assert_eq!(merged, vec![Int(2), Int(1), Null]);

        // PostgreSQL: NULL last ascending, first descending.
        let mut s = spec(Dialect::Postgres);
        s.order_by = vec![asc(0)];
        let merged = single_column(
            Dialect::Postgres,
            &s,
            vec![vec![Int(2), Null], vec![Int(1)]],
        );
        assert_eq!(merged, vec![Int(1), Int(2), Null]);
        s.order_by = vec![desc(0)];
        let merged = single_column(
            Dialect::Postgres,
            &s,
            vec![vec![Null, Int(2)], vec![Int(1)]],
        );
        assert_eq!(merged, vec![Null, Int(2), Int(1)]);

        // NULLS FIRST as written wins, also descending.
        s.order_by = vec![SortKey {
            nulls_first: Some(false),
            ..desc(0)
        }];
        let merged = single_column(
            Dialect::Postgres,
            &s,
            vec![vec![Int(2), Null], vec![Int(1)]],
        );
        assert_eq!(merged, vec![Int(2), Int(1), Null]);
    }

    #[test]
    fn merging_sorted_shards_equals_sorting_their_concatenation() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let cols = &[("a", "DECIMAL"), ("b", "VARCHAR"), ("origin", "BIGINT")];
        for round in 0..200 {
            let dialect = if round % 2 == 0 {
                Dialect::MySql
            } else {
                Dialect::Postgres
            };
            let mut s = spec(dialect);
            s.order_by = vec![
                SortKey {
                    nulls_first: [None, Some(true), Some(false)][rng.below(3) as usize],
                    descending: rng.below(2) == 1,
                    ..asc(0)
                },
                SortKey {
                    nulls_first: None,
                    descending: rng.below(2) == 1,
                    ..asc(1)
                },
            ];
            s.offset = rng.below(4);
            s.limit = [None, Some(rng.below(10))][rng.below(2) as usize];
            let plan = Resolved::new(&s, &columns(cols), 3).expect("resolves");
            let mut shards: Vec<Vec<Vec<Value>>> = Vec::new();
            let mut origin = 0;
            for _ in 0..rng.below(5) {
                let mut rows: Vec<Vec<Value>> = (0..rng.below(8))
                    .map(|_| {
                        origin += 1;
                        vec![rng.value(), rng.value(), Int(origin)]
                    })
                    .collect();
                rows.sort_by(|x, y| plan.compare_rows(&plan.order_by, x, y));
                shards.push(rows);
            }
            let mut expected: Vec<Vec<Value>> = shards.concat();
            expected.sort_by(|x, y| plan.compare_rows(&plan.order_by, x, y));
            let expected = window(&s, expected.into_iter());
            let results = shards.into_iter().map(|rows| shard(cols, rows)).collect();
            let merged = merge(&s, results).expect("merges").rows;
            // Origins identify rows (NaN makes rows unequal to themselves).
            let origins =
                |rows: &[Vec<Value>]| rows.iter().map(|r| r[2].clone()).collect::<Vec<_>>();
            assert_eq!(origins(&merged), origins(&expected), "round {round}");
        }
    }
}
