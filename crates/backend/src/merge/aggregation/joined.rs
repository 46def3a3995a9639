//! The aggregates whose partial values are joined rather than added: `string_agg` and
//! `GROUP_CONCAT` pieces in the call's order, `array_agg` arrays along their first dimension.

use keyshard_types::{Array, Value};

use crate::merge::MergeError;
use crate::merge::plan::{Join, Resolved};

impl Resolved {
    /// A group's `string_agg`/`GROUP_CONCAT` pieces joined in the call's order.
    pub(super) fn join(
        &self,
        rows: &[Vec<Value>],
        index: usize,
        join: &Join,
    ) -> Result<Value, MergeError> {
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
}

/// The shards' arrays one after another along their first dimension; NULL when every one is
/// NULL. Arrays whose inner dimensions differ do not join, as PostgreSQL's `array_cat` says.
pub(super) fn concat<'v>(
    values: impl Iterator<Item = &'v Value>,
    column: usize,
) -> Result<Value, MergeError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::merge;
    use crate::merge::test_support::*;
    use Value::{Int, Null};
    use keyshard_router::merge::{Aggregate, AggregateColumn, ColumnRef};
    use keyshard_types::Dialect;

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
}
