//! What the mergers' tests share: specs, shards and a small deterministic generator.

use keyshard_router::merge::{Aggregate, AggregateColumn, ColumnRef, MergeSpec, SortKey};
use keyshard_types::{Dialect, Value};

use super::merge;
use crate::outcome::{Column, UnitResult};
use keyshard_config::DatabaseKind;
use keyshard_types::SqlType;

use Value::{Double, Int, Null, Text, UInt};

pub(crate) fn spec(dialect: Dialect) -> MergeSpec {
    MergeSpec {
        group_by: Vec::new(),
        aggregates: Vec::new(),
        computed: Vec::new(),
        division_scale: None,
        having: None,
        when_empty: None,
        order_by: Vec::new(),
        offset: 0,
        limit: None,
        hidden_columns: 0,
        dialect,
    }
}

/// Columns as a MariaDB shard describes them: text in its default collation,
/// utf8mb4_general_ci.
pub(super) fn columns(names: &[(&str, &str)]) -> Vec<Column> {
    names
        .iter()
        .map(|(name, type_name)| {
            let ty = SqlType::of(type_name, DatabaseKind::MySql);
            match ty {
                SqlType::VarChar | SqlType::Text | SqlType::Char => {
                    collated(name, ty, "utf8mb4_general_ci")
                }
                _ => Column::new(*name, ty),
            }
        })
        .collect()
}

/// A MySQL text column of type `ty` whose own collation is `collation` (described, as MySQL
/// describes text, in the connection's, utf8mb4_unicode_ci).
pub(super) fn collated(name: &str, ty: SqlType, collation: &str) -> Column {
    let mut column = Column::new(name, ty);
    column.collation = Some(collation.into());
    column.mysql = Some(Box::new(keyshard_types::MySqlColumnType {
        code: 253,
        flags: 0,
        length: 400,
        collation: 224,
        decimals: 0,
        origin: keyshard_types::MySqlOrigin::default(),
        extended_type_info: bytes::Bytes::new(),
    }));
    column
}

pub(super) fn shard(cols: &[(&str, &str)], rows: Vec<Vec<Value>>) -> UnitResult {
    UnitResult {
        affected_rows: rows.len() as u64,
        columns: columns(cols),
        rows,
        streamed: None,
    }
}

pub(super) fn text(s: &str) -> Value {
    Text(s.to_owned())
}

pub(super) fn asc(index: usize) -> SortKey {
    SortKey {
        column: ColumnRef::Index(index),
        descending: false,
        nulls_first: None,
    }
}

pub(super) fn desc(index: usize) -> SortKey {
    SortKey {
        descending: true,
        ..asc(index)
    }
}

pub(super) fn agg(index: usize, function: Aggregate) -> AggregateColumn {
    AggregateColumn {
        index,
        function,
        distinct: None,
        joined: None,
    }
}

/// One column per value: shards of single-column rows.
pub(super) fn single_column(
    dialect: Dialect,
    spec: &MergeSpec,
    shards: Vec<Vec<Value>>,
) -> Vec<Value> {
    let type_name = match dialect {
        Dialect::MySql => "VARCHAR",
        Dialect::Postgres => "TEXT",
    };
    let results = shards
        .into_iter()
        .map(|values| {
            shard(
                &[("v", type_name)],
                values.into_iter().map(|v| vec![v]).collect(),
            )
        })
        .collect();
    merge(spec, results)
        .expect("merges")
        .rows
        .into_iter()
        .flatten()
        .collect()
}

pub(super) const ID: &[(&str, &str)] = &[("id", "BIGINT")];

/// A small deterministic generator, so randomized tests need no extra dependency.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub(super) fn value(&mut self) -> Value {
        match self.below(8) {
            0 => Null,
            1 => Int(self.below(7) as i64 - 3),
            2 => UInt(self.below(5)),
            3 => Double((self.below(13) as f64 - 6.0) / 2.0),
            4 => text(["-1.5", "2", "2.0", "0.25", "10"][self.below(5) as usize]),
            5 => text(["a", "B", "b", "10", "9", ""][self.below(6) as usize]),
            6 => Value::Bytes(vec![self.below(3) as u8]),
            _ => Double([f64::NAN, -0.0, f64::INFINITY][self.below(3) as usize]),
        }
    }
}
