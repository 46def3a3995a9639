//! LIMIT and OFFSET over the merged stream.

use keyshard_router::merge::MergeSpec;
use keyshard_types::Value;

/// OFFSET and LIMIT, pulling only the rows needed so a k-way merge stops early.
pub(super) fn window(spec: &MergeSpec, rows: impl Iterator<Item = Vec<Value>>) -> Vec<Vec<Value>> {
    let offset = usize::try_from(spec.offset).unwrap_or(usize::MAX);
    let limit = spec
        .limit
        .map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
    rows.skip(offset).take(limit).collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use keyshard_types::Dialect;

    use keyshard_types::Value::Int;

    /// A combined read's rows, or those of the only node that found any, come in the order
    /// the database gave them: nothing is compared (text Keyshard could not order included),
    /// the window applies.
    #[test]
    fn one_nodes_rows_keep_its_order_and_are_windowed() {
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![asc(0)];
        s.offset = 1;
        s.limit = Some(2);
        let rows = vec![text("É"), text("e"), text("f"), text("g")];
        let merged = single_column(Dialect::MySql, &s, vec![Vec::new(), rows]);
        assert_eq!(merged, vec![text("e"), text("f")]);
    }

    #[test]
    fn offset_and_limit_apply_after_merging() {
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![asc(0)];
        s.offset = 1;
        s.limit = Some(3);
        let merged = single_column(
            Dialect::MySql,
            &s,
            vec![vec![Int(1), Int(3), Int(5)], vec![Int(2), Int(4), Int(6)]],
        );
        assert_eq!(merged, vec![Int(2), Int(3), Int(4)]);

        // Without ORDER BY too, and an offset past the end is no error.
        let mut s = spec(Dialect::MySql);
        s.offset = 2;
        s.limit = Some(1);
        let merged = single_column(Dialect::MySql, &s, vec![vec![Int(1)], vec![Int(2), Int(3)]]);
        assert_eq!(merged, vec![Int(3)]);
        s.offset = 10;
        assert!(single_column(Dialect::MySql, &s, vec![vec![Int(1)]]).is_empty());
        s.offset = u64::MAX;
        s.limit = Some(u64::MAX);
        assert!(single_column(Dialect::MySql, &s, vec![vec![Int(1)]]).is_empty());
    }
}
