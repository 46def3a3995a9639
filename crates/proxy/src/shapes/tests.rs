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
    Router::new(&config.sharding, Dialect::MySql).with_data_sources(vec!["ds_0".into()], vec![])
}

/// Learns the shape of `sql` (seen, then learned: as from two statements of it) and tells what
/// is then known of it.
fn learn(shapes: &Shapes, router: &Router, sql: &str) -> Option<Known> {
    let shape = Shape::of(sql, Dialect::MySql).unwrap();
    let original = match router.prepare(sql, &NoMetadata) {
        Ok(Prepared::Insert(insert)) => Planned::Insert(Box::new(insert)),
        Ok(Prepared::Query(query)) => Planned::Query(Box::new(query)),
        Ok(Prepared::Direct(direct)) => Planned::Direct(Box::new(direct)),
        other => panic!("{other:?}"),
    };
    for _ in 0..2 {
        shapes.learn(router, &shape, &original, &NoMetadata, 7, false, |_| None);
    }
    shapes
        .get(Dialect::MySql, &shape, 7)
        .map(|(known, _)| known)
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

    // Distinct shapes (the row count differs, and the rows do not fold: the first is spelt
    // unlike the others) make room for each other, and the one in use stays.
    let bounds = keyshard_config::Props::default().shape_cache;
    for rows in 1..=bounds.entries + 10 {
        let values = vec!["( 'a')"; rows].join(",");
        learn(
            &shapes,
            &router,
            &format!("INSERT INTO t_order (status) VALUES ('a'),{values}"),
        );
        assert!(
            shapes.get(Dialect::MySql, &shape, 7).is_some(),
            "in use, {rows} rows: {:?}",
            shapes.stats()
        );
        let kept = shapes.kept(Dialect::MySql).stats();
        assert!(kept.entries <= bounds.entries && kept.bytes <= bounds.bytes);
    }
    assert!(shapes.stats()[0].1.evictions > 0);

    let values = vec!["( 'a')"; bounds.bytes / 16 / 4].join(",");
    let long = format!("INSERT INTO t_order (status) VALUES ('a'),{values}");
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
    assert!(matches!(learn(&shapes, &router, zero), Some(Known::Seen)));
    let given = "INSERT INTO t_order (order_id, status) VALUES (9, 'a')";
    assert!(matches!(
        learn(&shapes, &router, given),
        Some(Known::Insert(_))
    ));
}

#[test]
fn a_shape_seen_once_is_only_noted() {
    let (shapes, router) = (Shapes::default(), router());
    let sql = "SELECT status FROM t_order WHERE order_id = 5";
    let shape = Shape::of(sql, Dialect::MySql).unwrap();
    let original = match router.prepare(sql, &NoMetadata) {
        Ok(Prepared::Query(query)) => Planned::Query(Box::new(query)),
        other => panic!("{other:?}"),
    };
    shapes.learn(&router, &shape, &original, &NoMetadata, 7, false, |_| None);
    assert!(matches!(
        shapes.get(Dialect::MySql, &shape, 7),
        Some((Known::Seen, _))
    ));
    // Under other metadata it was not seen.
    shapes.learn(&router, &shape, &original, &NoMetadata, 8, false, |_| None);
    assert!(matches!(
        shapes.get(Dialect::MySql, &shape, 8),
        Some((Known::Seen, _))
    ));
    shapes.learn(&router, &shape, &original, &NoMetadata, 8, false, |_| None);
    assert!(matches!(
        shapes.get(Dialect::MySql, &shape, 8),
        Some((Known::Query(_), _))
    ));
}

#[test]
fn reads_and_writes_by_key_are_bound_through_their_shapes() {
    let (shapes, router) = (Shapes::default(), router());
    for sql in [
        "SELECT status FROM t_order WHERE order_id = 5",
        "SELECT status FROM t_order WHERE order_id IN (5, 6) ORDER BY status LIMIT 3",
        "UPDATE t_order SET status = 'b' WHERE order_id = 5 AND status = 'a'",
        "DELETE FROM t_order WHERE order_id = 5 OR order_id = 7",
    ] {
        assert!(
            matches!(learn(&shapes, &router, sql), Some(Known::Query(_))),
            "{sql}"
        );
    }
    // A table without a rule goes as written: nothing to bind.
    let unsharded = "SELECT status FROM t_other WHERE id = 5";
    assert!(matches!(
        learn(&shapes, &router, unsharded),
        Some(Known::Parse)
    ));
}

#[test]
fn rows_alike_are_learned_from_the_first_at_once() {
    let (shapes, router) = (Shapes::default(), router());
    let sql = "INSERT INTO t_order (order_id, status) VALUES (1, 'a'), (2, 'b'), (3, 'c')";
    let shape = Shape::of(sql, Dialect::MySql).unwrap();
    assert_eq!(shape.folded_rows(), Some(3));
    let first = shape.first_row_only(sql).unwrap();
    let original = match router.prepare(&first, &NoMetadata) {
        Ok(Prepared::Insert(insert)) => Planned::Insert(Box::new(insert)),
        other => panic!("{other:?}"),
    };
    let first_shape = Shape::of(&first, Dialect::MySql).unwrap();
    let learned = shapes.learn(
        &router,
        &first_shape,
        &original,
        &NoMetadata,
        7,
        true,
        |_| None,
    );
    let Some(Known::Insert(shaped)) = learned else {
        panic!("{learned:?}");
    };
    // One shape for every row count: the three rows bind the one-row INSERT.
    assert!(matches!(
        shapes.get(Dialect::MySql, &shape, 7),
        Some((Known::Insert(_), _))
    ));
    let plan = shaped.insert.bind_shape(sql, &shape).unwrap();
    let units: Vec<_> = plan.units.iter().map(|u| (&*u.sql, &u.rows)).collect();
    assert_eq!(
        units,
        [
            (
                "INSERT INTO t_order_0 (order_id, status) VALUES (2, 'b')",
                &vec![1]
            ),
            (
                "INSERT INTO t_order_1 (order_id, status) VALUES (1, 'a'), (3, 'c')",
                &vec![0, 2]
            ),
        ]
    );
}
