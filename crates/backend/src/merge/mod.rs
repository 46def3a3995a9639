//! Merging the shards' results of a read into the one result a single database holding all
//! the rows would have returned, as the router's [`MergeSpec`] describes it.
//!
//! One merger per file, after ShardingSphere's: the entry point here picks the stream (plain
//! concatenation, an ordered k-way merge, or grouping with aggregation) and applies the window.

use keyshard_router::merge::MergeSpec;
use keyshard_types::Value;

use crate::outcome::{Column, UnitResult};
use keyshard_types::SqlType;

mod aggregation;
mod compare;
mod computed;
mod exact;
mod group_by;
mod having;
mod order_by;
mod pagination;
mod plan;
#[cfg(test)]
pub(crate) mod test_support;
mod text_order;

pub(crate) use aggregation::DEFAULT_DIVISION_SCALE;
use order_by::KWayMerge;
use pagination::window;
use plan::Resolved;
pub(crate) use plan::{column_position, compared_columns};

/// Why the shards' results could not be merged. Every variant is a plan that does not fit the
/// results (a router bug) or a value the merge cannot combine, never a shard's fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// An ORDER BY / GROUP BY column name that no result column has.
    #[error("merge: no result column named '{0}'")]
    UnknownColumn(String),
    /// A column position beyond the result's columns.
    #[error("merge: column {index} does not exist; the result has {width} columns")]
    ColumnOutOfRange {
        /// The position asked for.
        index: usize,
        /// How many columns the rows have.
        width: usize,
    },
    /// Shards (or rows) disagree on how many columns a row has.
    #[error("merge: a row has {found} columns, expected {expected}")]
    RowWidth {
        /// The result's column count.
        expected: usize,
        /// The offending row's.
        found: usize,
    },
    /// More hidden columns than the result has.
    #[error("merge: {hidden} hidden columns, but the result has only {width}")]
    HiddenColumns {
        /// `MergeSpec::hidden_columns`.
        hidden: usize,
        /// How many columns the rows have.
        width: usize,
    },
    /// A SUM/COUNT/AVG partial value that is not a number.
    #[error("merge: column {column} holds {value}, which cannot be added")]
    NotNumeric {
        /// Its position.
        column: usize,
        /// The value, as debug text.
        value: String,
    },
    /// An `array_agg` partial value that is not an array, or arrays that do not join.
    #[error("merge: column {column} holds {value}, which does not join the group's array")]
    NotAnArray {
        /// Its position.
        column: usize,
        /// The value, as debug text.
        value: String,
    },
    /// ORDER BY, MIN or MAX over a column of a type whose order Keyshard does not know. This
    /// and the next two are met while merging; the proxy then gathers the read instead.
    #[error(
        "ordering rows from several shards by column '{column}' is not supported: Keyshard does not know its type's order"
    )]
    Unordered {
        /// The column's name.
        column: String,
    },
    /// ORDER BY, GROUP BY, MIN or MAX over text that Keyshard does not compare as the
    /// column's collation does (see `compare::TextOrder`).
    #[error(
        "ordering or grouping rows from several shards by column '{column}' is not supported \
         for its values: Keyshard does not compare them as the column's collation does"
    )]
    Collation {
        /// The column's name.
        column: String,
    },
    /// A SUM of PostgreSQL `money` read in the text format, which the shard's `lc_monetary`
    /// writes.
    #[error(
        "adding up money from several shards needs its binary format (its text is written by the shard's lc_monetary): read column {column} in binary, or SUM(… ::numeric)"
    )]
    MoneyText {
        /// Its position.
        column: usize,
    },
    /// A merged SUM beyond its type's range, as the database itself refuses one.
    #[error("{type_name} out of range (the SUM of column {column} over the shards)")]
    OutOfRange {
        /// Its position.
        column: usize,
        /// PostgreSQL's name of the type.
        type_name: &'static str,
    },
    /// A HAVING comparison meeting a value it does not compare as the database does (text, a
    /// date, a single precision float); the proxy then gathers the read instead.
    #[error("HAVING over several shards compares numbers only, not {value}")]
    Uncompared {
        /// The value, as debug text.
        value: String,
    },
    /// A `string_agg`/`GROUP_CONCAT` piece that is not text or bytes, or a joined value
    /// longer than MySQL's `group_concat_max_len`, which the database would cut with a
    /// warning: the proxy then gathers the read instead.
    #[error("joining the string aggregate in column {column} over several shards: {why}")]
    Unjoined {
        /// Its position.
        column: usize,
        /// What stopped it.
        why: String,
    },
    /// A select-list expression over aggregates the merge does not compute as the database
    /// would (an overflow, a division PostgreSQL refuses, SQLite's arithmetic): the proxy
    /// then gathers the read instead.
    #[error("computing column {column} from the merged aggregates: {why}")]
    Uncomputed {
        /// Its position.
        column: usize,
        /// What stopped it.
        why: String,
    },
    /// An AVG's count that is not a non-negative integer fitting in 64 bits.
    #[error("merge: column {column} holds {value}, which is not a row count")]
    BadCount {
        /// Its position.
        column: usize,
        /// The count, as text.
        value: String,
    },
}

/// Merges the shards' results (in shard order) as `spec` says.
pub(crate) fn merge(
    spec: &MergeSpec,
    mut results: Vec<UnitResult>,
) -> Result<UnitResult, MergeError> {
    let affected_rows = results
        .iter()
        .fold(0u64, |sum, r| sum.saturating_add(r.affected_rows));
    // Taken, not cloned: the shards' results keep only their rows from here.
    let mut columns = results
        .iter_mut()
        .find(|r| !r.columns.is_empty())
        .map(|r| std::mem::take(&mut r.columns))
        .unwrap_or_default();
    let shards: Vec<Vec<Vec<Value>>> = results.into_iter().map(|r| r.rows).collect();
    let width = match (columns.len(), &spec.when_empty) {
        (0, Some(row)) if shards.iter().all(Vec::is_empty) => row.len(),
        (0, _) => shards.iter().flatten().next().map_or(0, Vec::len),
        (n, _) => n,
    };
    if width == 0 {
        // No columns and no rows: nothing to merge, nothing to resolve names against.
        return Ok(UnitResult {
            affected_rows,
            columns,
            ..UnitResult::default()
        });
    }
    check_widths(&shards, width)?;
    let grouping = !spec.aggregates.is_empty() || !spec.group_by.is_empty();
    // One node's rows (a combined read's, or where the other nodes found none) come in the
    // order the node was asked for: nothing is compared, only the window applies.
    let mut rows = if !grouping && shards.iter().filter(|rows| !rows.is_empty()).count() <= 1 {
        window(spec, shards.into_iter().flatten())
    } else {
        merge_rows(spec, &mut columns, shards, width)?
    };

    let visible = width
        .checked_sub(spec.hidden_columns)
        .ok_or(MergeError::HiddenColumns {
            hidden: spec.hidden_columns,
            width,
        })?;
    columns.truncate(visible);
    for row in &mut rows {
        row.truncate(visible);
    }
    Ok(UnitResult {
        affected_rows,
        columns,
        rows,
        streamed: None,
    })
}

/// The rows of several nodes merged, grouped, filtered and windowed as `spec` says (the
/// merged AVG columns' types set in `columns`).
fn merge_rows(
    spec: &MergeSpec,
    columns: &mut [Column],
    shards: Vec<Vec<Vec<Value>>>,
    width: usize,
) -> Result<Vec<Vec<Value>>, MergeError> {
    let plan = Resolved::new(spec, columns, width)?;
    plan.check_orderable(&shards, columns)?;
    let grouping = !spec.aggregates.is_empty() || !spec.group_by.is_empty();
    let rows = if grouping {
        let (mut groups, avg_types) = plan.group(shards)?;
        if let (true, Some(row)) = (groups.is_empty(), &spec.when_empty) {
            let mut row = row.clone();
            plan.compute(&mut row)?;
            groups.push(row);
        }
        if let Some(having) = &spec.having {
            let mut kept = Vec::with_capacity(groups.len());
            for group in groups {
                if plan.passes(having, &group)? {
                    kept.push(group);
                }
            }
            groups = kept;
        }
        if !plan.order_by.is_empty() {
            groups.sort_by(|a, b| plan.compare_rows(&plan.order_by, a, b));
        }
        let increment = groups.first().map(|group| plan.division_scale_of(group));
        set_avg_types(
            columns,
            &avg_types,
            increment.unwrap_or(DEFAULT_DIVISION_SCALE),
        );
        window(spec, groups.into_iter())
    } else if plan.order_by.is_empty() {
        window(spec, shards.into_iter().flatten())
    } else {
        window(spec, KWayMerge::new(&plan, shards))
    };
    Ok(rows)
}

fn check_widths(shards: &[Vec<Vec<Value>>], width: usize) -> Result<(), MergeError> {
    match shards.iter().flatten().find(|row| row.len() != width) {
        Some(row) => Err(MergeError::RowWidth {
            expected: width,
            found: row.len(),
        }),
        None => Ok(()),
    }
}

fn set_avg_types(columns: &mut [Column], avg_types: &[(usize, SqlType)], increment: usize) {
    for &(index, ty) in avg_types {
        if let Some(column) = columns.get_mut(index) {
            describe_average(column, ty, increment);
        }
    }
}

/// `column`, which the shards answered with the SUM Keyshard asked for, as the average of type
/// `ty` it merges into: the shard described the column it summed, and the average's
/// description follows from it as the database derives both from the argument's and the
/// session's `div_precision_increment` (`increment`).
pub(crate) fn describe_average(column: &mut Column, ty: SqlType, increment: usize) {
    column.ty = ty;
    let increment = u8::try_from(increment).unwrap_or(u8::MAX);
    column.mysql = column
        .mysql
        .take()
        .and_then(|sum| keyshard_types::average_of_sum(&sum, increment).map(Box::new));
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use keyshard_router::merge::Aggregate;
    use keyshard_types::Dialect;

    use Value::Int;

    #[test]
    fn without_order_rows_are_concatenated_in_shard_order() {
        let results = vec![
            shard(ID, vec![vec![Int(3)], vec![Int(1)]]),
            UnitResult::default(),
            shard(ID, vec![vec![Int(2)]]),
        ];
        let merged = merge(&spec(Dialect::MySql), results).expect("merges");
        assert_eq!(merged.rows, vec![vec![Int(3)], vec![Int(1)], vec![Int(2)]]);
        assert_eq!(merged.affected_rows, 3);
        assert_eq!(merged.columns, columns(ID));
    }

    #[test]
    fn columns_come_from_the_first_shard_that_has_them() {
        let results = vec![UnitResult::default(), shard(ID, vec![vec![Int(1)]])];
        let merged = merge(&spec(Dialect::Postgres), results).expect("merges");
        assert_eq!(merged.columns, columns(ID));
        assert_eq!(merged.rows, vec![vec![Int(1)]]);
    }

    #[test]
    fn nothing_at_all_merges_to_nothing() {
        let merged = merge(&spec(Dialect::MySql), Vec::new()).expect("merges");
        assert!(merged.rows.is_empty() && merged.columns.is_empty());
        let mut s = spec(Dialect::MySql);
        s.aggregates = vec![agg(0, Aggregate::Count)];
        s.hidden_columns = 3;
        let results = vec![UnitResult::default(), UnitResult::default()];
        let merged = merge(&s, results).expect("merges");
        assert!(merged.rows.is_empty() && merged.columns.is_empty());
    }

    #[test]
    fn hidden_columns_are_dropped_after_sorting_by_them() {
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![asc(1)];
        s.hidden_columns = 1;
        let cols = &[("name", "VARCHAR"), ("created", "BIGINT")];
        let results = vec![
            shard(cols, vec![vec![text("a"), Int(1)], vec![text("c"), Int(3)]]),
            shard(cols, vec![vec![text("b"), Int(2)]]),
        ];
        let merged = merge(&s, results).expect("merges");
        assert_eq!(merged.columns, columns(&[("name", "VARCHAR")]));
        assert_eq!(
            merged.rows,
            vec![vec![text("a")], vec![text("b")], vec![text("c")]]
        );
    }

    #[test]
    fn bad_specs_and_rows_are_errors_not_panics() {
        let results = || vec![shard(ID, vec![vec![Int(1)]]), shard(ID, vec![vec![Int(2)]])];
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![asc(1)];
        assert_eq!(
            merge(&s, results()).map(|_| ()),
            Err(MergeError::ColumnOutOfRange { index: 1, width: 1 })
        );
        let mut s = spec(Dialect::MySql);
        s.aggregates = vec![agg(0, Aggregate::Avg { count_index: 5 })];
        assert!(matches!(
            merge(&s, results()),
            Err(MergeError::ColumnOutOfRange { index: 5, .. })
        ));
        let mut s = spec(Dialect::MySql);
        s.hidden_columns = 2;
        assert_eq!(
            merge(&s, results()).map(|_| ()),
            Err(MergeError::HiddenColumns {
                hidden: 2,
                width: 1
            })
        );
        let ragged = vec![
            shard(ID, vec![vec![Int(1)]]),
            shard(ID, vec![vec![Int(2), Int(3)]]),
        ];
        assert_eq!(
            merge(&spec(Dialect::MySql), ragged).map(|_| ()),
            Err(MergeError::RowWidth {
                expected: 1,
                found: 2
            })
        );
        let mut s = spec(Dialect::MySql);
        s.aggregates = vec![agg(0, Aggregate::Sum)];
        let words = vec![
            shard(ID, vec![vec![text("12abc")]]),
            shard(ID, vec![vec![Int(1)]]),
        ];
        assert!(matches!(
            merge(&s, words),
            Err(MergeError::NotNumeric { column: 0, .. })
        ));
        s.aggregates = vec![agg(0, Aggregate::Avg { count_index: 1 })];
        let cols = &[("a", "DECIMAL"), ("c", "BIGINT")];
        let negative = vec![shard(cols, vec![vec![Int(1), Int(-1)]])];
        assert!(matches!(
            merge(&s, negative),
            Err(MergeError::BadCount { column: 1, .. })
        ));
    }
}
