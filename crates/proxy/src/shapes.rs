//! INSERTs sent as text, planned through their shapes (see [`keyshard_router::Shape`]): the
//! first statement of a shape is parsed as usual and decides whether the shape, prepared
//! with its literals as parameters, plans every statement of it alike; the statements after
//! it only bind. This takes the parser off the path of an application's repeated INSERTs;
//! on PostgreSQL and MariaDB shards their literals go as parameters too (see [`typed`]), which
//! takes it off the database's path as well.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use keyshard_router::{Dialect, Metadata, Prepared, PreparedInsert, Router, Shape};

use typed::Slot;

pub(crate) mod typed;

/// Shapes kept per dialect, and the bytes of their texts; beyond either the map starts over,
/// so that statements that never repeat (a literal in a table name, say) or huge multi-row
/// INSERTs cannot grow it without bound. A plan takes a few times its text's size.
const CAPACITY: usize = 1024;
const CAPACITY_BYTES: usize = 4 << 20;
/// A statement longer than this is parsed every time: its shape would crowd out the others.
const LONGEST: usize = CAPACITY_BYTES / 16;

/// What is known of a shape.
#[derive(Debug, Clone)]
pub(crate) enum Known {
    /// Statements of this shape bind this.
    Insert(Arc<ShapedInsert>),
    /// Statements of this shape are parsed one by one.
    Parse,
}

/// The INSERT that statements of a shape bind.
#[derive(Debug)]
pub(crate) struct ShapedInsert {
    /// Prepared from the shape's text.
    pub(crate) insert: PreparedInsert,
    /// How its literals go to the shards as parameters; `None`: written back as text.
    pub(crate) slots: Option<Box<[Slot]>>,
}

#[derive(Debug)]
struct Entry {
    known: Known,
    /// The metadata it was prepared with (a column-less INSERT depends on it).
    metadata_version: u64,
}

#[derive(Debug, Default)]
struct Kept {
    entries: HashMap<Box<str>, Entry>,
    /// The length of every key.
    bytes: usize,
}

/// The shapes seen so far, for both dialects.
#[derive(Debug, Default)]
pub(crate) struct Shapes {
    mysql: Mutex<Kept>,
    postgres: Mutex<Kept>,
}

impl Shapes {
    fn kept(&self, dialect: Dialect) -> std::sync::MutexGuard<'_, Kept> {
        match dialect {
            Dialect::MySql => &self.mysql,
            Dialect::Postgres => &self.postgres,
        }
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
    }

    /// What is known of `shape` under the metadata at `metadata_version`; `None` when it must
    /// be learned.
    pub(crate) fn get(
        &self,
        dialect: Dialect,
        shape: &Shape,
        metadata_version: u64,
    ) -> Option<Known> {
        self.kept(dialect)
            .entries
            .get(shape.text())
            .filter(|e| e.metadata_version == metadata_version)
            .map(|e| e.known.clone())
    }

    /// Learns `shape` from `original`, a statement of it as parsed (`None` when it is not an
    /// INSERT into a sharded table); `slots` tells how the literals of the INSERT prepared
    /// from the shape can go as parameters.
    pub(crate) fn learn(
        &self,
        router: &Router,
        shape: &Shape,
        original: Option<&PreparedInsert>,
        metadata: &dyn Metadata,
        metadata_version: u64,
        slots: impl FnOnce(&PreparedInsert) -> Option<Box<[Slot]>>,
    ) {
        if shape.text().len() > LONGEST {
            return;
        }
        let known = match (original, router.prepare(shape.text(), metadata)) {
            (Some(original), Ok(Prepared::Insert(insert))) => {
                match insert.stands_for(original, shape) {
                    Some(true) => Known::Insert(Arc::new(ShapedInsert {
                        slots: slots(&insert),
                        insert,
                    })),
                    Some(false) => Known::Parse,
                    // This statement cannot tell: the next one of the shape will try.
                    None => return,
                }
            }
            _ => Known::Parse,
        };
        let text = shape.text();
        let mut kept = self.kept(router.dialect());
        if kept.entries.len() >= CAPACITY || kept.bytes + text.len() > CAPACITY_BYTES {
            kept.entries.clear();
            kept.bytes = 0;
        }
        let entry = Entry {
            known,
            metadata_version,
        };
        if kept.entries.insert(text.into(), entry).is_none() {
            kept.bytes += text.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use keyshard_router::NoMetadata;

    use super::*;

    const YAML: &str = r#"
databaseName: sharding_db
dataSources:
  ds_0:
    url: "sqlite::memory:"
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_0.t_order_${0..1}
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: t_mod
      keyGenerateStrategy:
        column: order_id
        keyGeneratorName: snowflake
  shardingAlgorithms:
    t_mod:
      type: MOD
      props:
        sharding-count: 2
  keyGenerators:
    snowflake:
      type: SNOWFLAKE
"#;

    fn router() -> Router {
        let config = keyshard_config::from_yaml_str(YAML, std::path::Path::new("."))
            .unwrap_or_else(|e| panic!("{e}"));
        Router::new(&config.sharding, Dialect::MySql)
    }

    /// Learns the shape of `sql` and tells what is then known of it.
    fn learn(shapes: &Shapes, router: &Router, sql: &str) -> Option<Known> {
        let shape = Shape::of(sql, Dialect::MySql).unwrap();
        let original = match router.prepare(sql, &NoMetadata) {
            Ok(Prepared::Insert(insert)) => Some(insert),
            _ => None,
        };
        shapes.learn(router, &shape, original.as_ref(), &NoMetadata, 7, |_| None);
        shapes.get(Dialect::MySql, &shape, 7)
    }

    #[test]
    fn kept_shapes_stay_within_bounds() {
        let (shapes, router) = (Shapes::default(), router());
        let sql = "INSERT INTO t_order (status) VALUES ('a')";
        assert!(matches!(
            learn(&shapes, &router, sql),
            Some(Known::Insert(_))
        ));
        let shape = Shape::of(sql, Dialect::MySql).unwrap();
        assert!(
            shapes.get(Dialect::MySql, &shape, 8).is_none(),
            "other metadata"
        );
        assert!(
            shapes.get(Dialect::Postgres, &shape, 7).is_none(),
            "other dialect"
        );

        // Distinct shapes (the row count differs) start the map over when it is full.
        for rows in 1..=CAPACITY + 10 {
            let values = vec!["('a')"; rows].join(",");
            learn(
                &shapes,
                &router,
                &format!("INSERT INTO t_order (status) VALUES {values}"),
            );
            let kept = shapes.kept(Dialect::MySql);
            assert!(kept.entries.len() <= CAPACITY && kept.bytes <= CAPACITY_BYTES);
        }

        let values = vec!["('a')"; LONGEST / 4].join(",");
        let long = format!("INSERT INTO t_order (status) VALUES {values}");
        assert!(learn(&shapes, &router, &long).is_none(), "too long to keep");
    }

    #[test]
    fn statements_the_shape_cannot_stand_for_are_parsed() {
        let (shapes, router) = (Shapes::default(), router());
        let cast = "INSERT INTO t_order (order_id, status) VALUES (CAST(5 AS SIGNED), 'a')";
        assert!(matches!(learn(&shapes, &router, cast), Some(Known::Parse)));
        let unsharded = "INSERT INTO t_other (status) VALUES ('a')";
        assert!(matches!(
            learn(&shapes, &router, unsharded),
            Some(Known::Parse)
        ));
        // A MySQL 0 key cannot decide; a later statement of the shape does.
        let zero = "INSERT INTO t_order (order_id, status) VALUES (0, 'a')";
        assert!(learn(&shapes, &router, zero).is_none());
        let given = "INSERT INTO t_order (order_id, status) VALUES (9, 'a')";
        assert!(matches!(
            learn(&shapes, &router, given),
            Some(Known::Insert(_))
        ));
    }
}
