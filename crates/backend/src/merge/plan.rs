//! The spec resolved against the result's columns: every column reference a position, every
//! NULL placement settled, and which text columns hold numbers.

use keyshard_router::merge::{Aggregate, ColumnRef, ComputedColumn, MergeSpec, SortKey};
use keyshard_types::Dialect;

use super::MergeError;
use super::text_order::TextOrder;
use crate::outcome::Column;
use keyshard_types::SqlType;

/// One ORDER BY key, with its column position and NULL placement settled.
#[derive(Debug, Clone, Copy)]
pub(super) struct Key {
    pub(super) index: usize,
    pub(super) descending: bool,
    pub(super) nulls_first: bool,
}

/// How a `string_agg`/`GROUP_CONCAT` joins a group's pieces (see [`Joined`]).
#[derive(Debug, Clone)]
pub(super) struct Join {
    pub(super) separator: Box<str>,
    pub(super) order: Vec<Key>,
    pub(super) distinct: bool,
    pub(super) max_length: Option<usize>,
}

/// The spec with every column reference resolved against the result's columns.
pub(super) struct Resolved {
    pub(super) dialect: Dialect,
    pub(super) group_by: Vec<Key>,
    pub(super) order_by: Vec<Key>,
    pub(super) aggregates: Vec<(usize, Aggregate)>,
    /// Per aggregate: the key column of a DISTINCT aggregate, whose equal values it combines
    /// once.
    pub(super) distinct: Vec<Option<Key>>,
    /// Per aggregate: how a `string_agg`/`GROUP_CONCAT` joins its pieces.
    pub(super) joined: Vec<Option<Join>>,
    /// Select-list expressions computed from the merged aggregates.
    pub(super) computed: Vec<ComputedColumn>,
    /// Whether the shards compute as the dialect's database (MySQL's or PostgreSQL's
    /// describe their columns; SQLite's arithmetic differs, and is left to it).
    pub(super) computes_as_database: bool,
    /// The column holding MySQL nodes' `div_precision_increment` + 1 (see `MergeSpec`).
    pub(super) division_scale: Option<usize>,
    /// Per column: the bits of its integer type (PostgreSQL's int2, int4, int8).
    pub(super) int_bits: Vec<Option<u32>>,
    /// Per column: whether its text values are decimal numbers (MariaDB's DECIMAL arrives as
    /// text) and must compare numerically rather than as strings.
    pub(super) numeric_text: Vec<bool>,
    /// Per column: how its text orders (its collation's order, as far as Keyshard has it).
    pub(super) text_order: Vec<TextOrder>,
}

impl Resolved {
    pub(super) fn new(
        spec: &MergeSpec,
        columns: &[Column],
        width: usize,
    ) -> Result<Self, MergeError> {
        let in_range = |index: usize| {
            if index < width {
                Ok(index)
            } else {
                Err(MergeError::ColumnOutOfRange { index, width })
            }
        };
        let resolve = |column: &ColumnRef| match column {
            ColumnRef::Index(index) => in_range(*index),
            ColumnRef::Name(name) => {
                find_column(columns, name).ok_or_else(|| MergeError::UnknownColumn(name.clone()))
            }
        };
        let group_by = spec
            .group_by
            .iter()
            .map(|column| {
                let index = resolve(column)?;
                Ok(Key {
                    index,
                    descending: false,
                    nulls_first: default_nulls_first(spec.dialect, false),
                })
            })
            .collect::<Result<_, MergeError>>()?;
        let sort_key = |key: &SortKey| {
            Ok(Key {
                index: resolve(&key.column)?,
                descending: key.descending,
                nulls_first: key
                    .nulls_first
                    .unwrap_or_else(|| default_nulls_first(spec.dialect, key.descending)),
            })
        };
        let order_by = spec
            .order_by
            .iter()
            .map(sort_key)
            .collect::<Result<_, MergeError>>()?;
        let aggregates = spec
            .aggregates
            .iter()
            .map(|a| {
                if let Aggregate::Avg { count_index } = a.function {
                    in_range(count_index)?;
                }
                Ok((in_range(a.index)?, a.function))
            })
            .collect::<Result<Vec<_>, MergeError>>()?;
        let distinct = spec
            .aggregates
            .iter()
            .map(|a| {
                a.distinct
                    .map(|index| {
                        Ok(Key {
                            index: in_range(index)?,
                            descending: false,
                            nulls_first: true,
                        })
                    })
                    .transpose()
            })
            .collect::<Result<_, MergeError>>()?;
        let joined = spec
            .aggregates
            .iter()
            .map(|a| {
                a.joined
                    .as_ref()
                    .map(|joined| {
                        Ok(Join {
                            separator: joined.separator.clone(),
                            order: joined
                                .order
                                .iter()
                                .map(sort_key)
                                .collect::<Result<_, MergeError>>()?,
                            distinct: joined.distinct,
                            max_length: joined.max_length.map(in_range).transpose()?,
                        })
                    })
                    .transpose()
            })
            .collect::<Result<_, MergeError>>()?;
        let mut numeric_text: Vec<bool> = (0..width)
            .map(|i| columns.get(i).is_some_and(is_decimal_column))
            .collect();
        for &(index, function) in &aggregates {
            if matches!(function, Aggregate::Sum | Aggregate::Avg { .. })
                && let Some(flag) = numeric_text.get_mut(index)
            {
                *flag = true;
            }
        }
        for column in &spec.computed {
            in_range(column.index)?;
        }
        let computes_as_database = columns.first().is_some_and(|c| match spec.dialect {
            Dialect::MySql => c.mysql.is_some(),
            Dialect::Postgres => c.oid.is_some(),
        });
        // Only computed expressions read them: no allocation for every other merge.
        let int_bits = match spec.computed.is_empty() {
            true => Vec::new(),
            false => columns
                .iter()
                .map(|c| match c.ty {
                    SqlType::Int { bytes, .. } => Some(u32::from(bytes) * 8),
                    _ => None,
                })
                .collect(),
        };
        let text_order = (0..width)
            .map(|i| TextOrder::of(columns.get(i), spec.dialect))
            .collect();
        Ok(Self {
            dialect: spec.dialect,
            group_by,
            order_by,
            aggregates,
            distinct,
            joined,
            computed: spec.computed.clone(),
            computes_as_database,
            division_scale: spec.division_scale.map(in_range).transpose()?,
            int_bits,
            numeric_text,
            text_order,
        })
    }
}

/// The columns `spec` compares (ORDER BY, GROUP BY, MIN, MAX, DISTINCT aggregates' keys and
/// ordered joins' keys), by position in `columns`.
pub(crate) fn compared_columns(spec: &MergeSpec, columns: &[Column]) -> Vec<usize> {
    let position = |column: &ColumnRef| column_position(columns, column);
    let extremes = spec
        .aggregates
        .iter()
        .filter(|a| matches!(a.function, Aggregate::Min | Aggregate::Max))
        .map(|a| a.index);
    let distinct_keys = spec.aggregates.iter().filter_map(|a| a.distinct);
    let join_keys = spec
        .aggregates
        .iter()
        .filter_map(|a| a.joined.as_ref())
        .flat_map(|joined| &joined.order);
    spec.order_by
        .iter()
        .chain(join_keys)
        .map(|key| &key.column)
        .chain(&spec.group_by)
        .filter_map(position)
        .chain(extremes)
        .chain(distinct_keys)
        .collect()
}

/// Where `column` is among `columns` (a position is taken as it is).
pub(crate) fn column_position(columns: &[Column], column: &ColumnRef) -> Option<usize> {
    match column {
        ColumnRef::Index(index) => Some(*index),
        ColumnRef::Name(name) => find_column(columns, name),
    }
}

/// Finds a column by name, case-insensitively; `o.status` also finds `status`.
fn find_column(columns: &[Column], name: &str) -> Option<usize> {
    let unquote = |s: &str| s.trim_matches(|c| c == '`' || c == '"').to_owned();
    let full = unquote(name);
    let last = name.rsplit('.').next().map(unquote).unwrap_or_default();
    [full, last].iter().find_map(|wanted| {
        columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(wanted))
    })
}

fn is_decimal_column(column: &Column) -> bool {
    column.ty.is_decimal()
}

fn default_nulls_first(dialect: Dialect, descending: bool) -> bool {
    match dialect {
        Dialect::MySql => !descending,
        Dialect::Postgres => descending,
    }
}

#[cfg(test)]
mod tests {
    use super::super::merge;
    use super::super::test_support::*;
    use super::*;
    use keyshard_router::merge::SortKey;

    use keyshard_types::Value::Int;

    #[test]
    fn order_by_name_is_case_insensitive_and_ignores_the_qualifier() {
        let cols = &[("id", "BIGINT"), ("status", "VARCHAR")];
        let results = || {
            vec![
                shard(cols, vec![vec![Int(1), text("b")], vec![Int(2), text("d")]]),
                shard(cols, vec![vec![Int(3), text("a")], vec![Int(4), text("C")]]),
            ]
        };
        for name in ["status", "STATUS", "o.status", "`o`.`Status`"] {
            let mut s = spec(Dialect::MySql);
            s.order_by = vec![SortKey {
                column: ColumnRef::Name(name.into()),
                descending: false,
                nulls_first: None,
            }];
            let ids: Vec<_> = merge(&s, results())
                .expect("merges")
                .rows
                .into_iter()
                .map(|r| r[0].clone())
                .collect();
            assert_eq!(ids, vec![Int(3), Int(1), Int(4), Int(2)], "{name}");
        }
        let mut s = spec(Dialect::MySql);
        s.order_by = vec![SortKey {
            column: ColumnRef::Name("o.missing".into()),
            descending: false,
            nulls_first: None,
        }];
        assert_eq!(
            merge(&s, results()).map(|_| ()),
            Err(MergeError::UnknownColumn("o.missing".into()))
        );
    }
}
