//! SELECT, UPDATE and DELETE routing, rewriting and merge plans; statements on unsharded and
//! broadcast tables.

use crate::common;

use crate::common::two_sources;

use keyshard_router::merge::{
    Aggregate, AggregateColumn, Arithmetic, ColumnRef, Comparison, Computed, ComputedColumn,
    Filter, FilterOperand, SortKey,
};
use keyshard_router::{NoMetadata, Plan, Prepared, RouteError, Router};
use keyshard_types::{Dialect, Value};

const RULE: &str = two_sources!(
    r#"
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard:
          shardingColumn: user_id
          shardingAlgorithmName: db_mod
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: t_mod
    t_order_item:
      actualDataNodes: ds_${0..1}.t_order_item_${0..1}
      databaseStrategy:
        standard:
          shardingColumn: user_id
          shardingAlgorithmName: db_mod
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: item_mod
    t_log:
      actualDataNodes: ds_${0..1}.t_log
      databaseStrategy:
        standard:
          shardingColumn: id
          shardingAlgorithmName: db_mod_id
  bindingTables:
    - t_order, t_order_item
  shardingAlgorithms:
    db_mod:
      type: INLINE
      props:
        algorithm-expression: ds_${user_id % 2}
    db_mod_id:
      type: INLINE
      props:
        algorithm-expression: ds_${id % 2}
    t_mod:
      type: INLINE
      props:
        algorithm-expression: t_order_${order_id % 2}
    item_mod:
      type: INLINE
      props:
        algorithm-expression: t_order_item_${order_id % 2}
- !BROADCAST
  tables: [t_dict]
"#
);

fn router(dialect: Dialect) -> Router {
    Router::new(&common::rule(RULE), dialect)
        .with_data_sources(vec!["ds_0".into(), "ds_1".into()], vec!["t_dict".into()])
}

fn plan(sql: &str, params: &[Value]) -> Result<Plan, RouteError> {
    plan_in(Dialect::MySql, sql, params)
}

fn plan_in(dialect: Dialect, sql: &str, params: &[Value]) -> Result<Plan, RouteError> {
    router(dialect)
        .plan(sql, params, &NoMetadata)?
        .map_err(|other| RouteError::Unsupported(format!("{other:?}")))
}

fn units(plan: &Plan) -> Vec<(String, String)> {
    plan.units
        .iter()
        .map(|u| (u.data_source.clone(), u.sql.clone()))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn point_queries_touch_one_node() {
    let p = plan(
        "SELECT * FROM t_order WHERE user_id = 3 AND order_id = 10",
        &[],
    )
    .unwrap();
    assert_eq!(
        units(&p),
        pairs(&[(
            "ds_1",
            "SELECT * FROM t_order_0 WHERE user_id = 3 AND order_id = 10"
        )])
    );
    assert!(p.merge.is_none());
    let p = plan(
        "select o.status from `t_order` o where o.order_id = ? and (o.user_id = ?)",
        &[Value::Int(7), Value::Int(4)],
    )
    .unwrap();
    assert_eq!(
        units(&p),
        pairs(&[(
            "ds_0",
            "select o.status from `t_order_1` o where o.order_id = ? and (o.user_id = ?)"
        )])
    );
    assert_eq!(p.units[0].params, vec![Value::Int(7), Value::Int(4)]);
}

#[test]
fn partial_conditions_narrow_to_some_nodes() {
    let p = plan("SELECT * FROM t_order WHERE user_id = 1", &[]).unwrap();
    assert_eq!(
        units(&p),
        pairs(&[
            ("ds_1", "SELECT * FROM t_order_0 WHERE user_id = 1"),
            ("ds_1", "SELECT * FROM t_order_1 WHERE user_id = 1"),
        ])
    );
    let p = plan(
        "SELECT * FROM t_order WHERE user_id IN (1, 2) AND order_id = 4 OR user_id = 3 AND order_id = 5",
        &[],
    )
    .unwrap();
    let nodes: Vec<_> = p
        .units
        .iter()
        .map(|u| format!("{}.{}", u.data_source, u.table))
        .collect();
    assert_eq!(
        nodes,
        ["ds_0.t_order_0", "ds_1.t_order_0", "ds_1.t_order_1"]
    );
    // Anything else on a sharding column: every node.
    let p = plan("SELECT * FROM t_order WHERE order_id > 3", &[]).unwrap();
    assert_eq!(p.units.len(), 4);
    let p = plan(
        "SELECT * FROM t_order WHERE order_id = 3 OR status = 'x'",
        &[],
    )
    .unwrap();
    assert_eq!(p.units.len(), 4);
}

#[test]
fn qualified_columns_and_aliases_are_rewritten() {
    let p = plan(
        "SELECT t_order.status FROM t_order WHERE t_order.user_id = 2 AND t_order.order_id = 2",
        &[],
    )
    .unwrap();
    assert_eq!(
        units(&p),
        pairs(&[(
            "ds_0",
            "SELECT t_order_0.status FROM t_order_0 WHERE t_order_0.user_id = 2 AND t_order_0.order_id = 2"
        )])
    );
}

#[test]
fn bound_tables_join_node_by_node() {
    let p = plan(
        "SELECT o.order_id, i.item_id FROM t_order o JOIN t_order_item i ON o.order_id = i.order_id WHERE o.user_id = 1",
        &[],
    )
    .unwrap();
    assert_eq!(
        units(&p),
        pairs(&[
            (
                "ds_1",
                "SELECT o.order_id, i.item_id FROM t_order_0 o JOIN t_order_item_0 i ON o.order_id = i.order_id WHERE o.user_id = 1"
            ),
            (
                "ds_1",
                "SELECT o.order_id, i.item_id FROM t_order_1 o JOIN t_order_item_1 i ON o.order_id = i.order_id WHERE o.user_id = 1"
            ),
        ])
    );
    // Joins the nodes cannot answer one by one are gathered: every node of each table.
    let p = plan(
        "SELECT * FROM t_order o JOIN t_log l ON o.order_id = l.id WHERE o.user_id = 1",
        &[],
    )
    .unwrap();
    let gather = p.gather.expect("gathered");
    assert!(gather.reason.contains("not bound"), "{}", gather.reason);
    let reads: Vec<usize> = gather.tables.iter().map(|t| t.reads.len()).collect();
    assert_eq!(reads, [4, 2]);
    let gather = plan(
        "SELECT * FROM t_order a JOIN t_order b ON a.order_id = b.order_id",
        &[],
    )
    .unwrap()
    .gather
    .expect("gathered");
    assert!(gather.reason.contains("twice"), "{}", gather.reason);
    assert_eq!(gather.tables.len(), 1);
}

#[test]
fn writes_route_like_reads_and_keep_sharding_columns() {
    let p = plan(
        "UPDATE t_order SET status = 'paid' WHERE order_id = 3 AND user_id = 5",
        &[],
    )
    .unwrap();
    assert_eq!(
        units(&p),
        pairs(&[(
            "ds_1",
            "UPDATE t_order_1 SET status = 'paid' WHERE order_id = 3 AND user_id = 5"
        )])
    );
    let p = plan("DELETE FROM t_order WHERE status = 'x'", &[]).unwrap();
    assert_eq!(p.units.len(), 4);
    assert!(p.merge.is_none());
    // A sharding column the WHERE clause does not pin (Django's save() of a row found by its
    // key): the UPDATE runs where the new value routes, after a read of the other nodes
    // finds no row it would move.
    let p = plan("UPDATE t_order SET user_id = 2 WHERE order_id = 3", &[]).unwrap();
    assert_eq!(
        units(&p),
        pairs(&[(
            "ds_0",
            "UPDATE t_order_1 SET user_id = 2 WHERE order_id = 3"
        )])
    );
    let guard = p.guard.as_ref().expect("a guard");
    assert_eq!(
        units(&guard.reads),
        pairs(&[("ds_1", "SELECT 1 FROM t_order_1 WHERE order_id = 3 LIMIT 1")])
    );
    assert!(
        guard
            .refusal()
            .to_string()
            .contains("sharding column 'user_id'")
    );
    // MySQL's `?` before the WHERE clause are not the guard's.
    let p = plan(
        "UPDATE t_order SET status = ?, user_id = ? WHERE order_id = ?",
        &[Value::Text("x".into()), Value::Int(2), Value::Int(3)],
    )
    .unwrap();
    let guard = p.guard.as_ref().expect("a guard");
    assert_eq!(guard.reads.units[0].params, [Value::Int(3)]);
    for guarded in [
        "UPDATE t_order SET user_id = 5 WHERE order_id = 3 OR user_id = 5",
        "UPDATE t_order SET user_id = 5 WHERE user_id IN (5, 6)",
        "UPDATE t_order SET user_id = 5",
    ] {
        let p = plan(guarded, &[]).unwrap();
        assert!(p.guard.is_some(), "{guarded}");
    }
    // Writing every column (Django's save(), Hibernate) keeps a sharding column at the value
    // the WHERE clause pins it to: the row stays where it is.
    let p = plan(
        "UPDATE t_order SET user_id = 5, status = 'x' WHERE order_id = 3 AND user_id = 5",
        &[],
    )
    .unwrap();
    assert_eq!(
        units(&p),
        pairs(&[(
            "ds_1",
            "UPDATE t_order_1 SET user_id = 5, status = 'x' WHERE order_id = 3 AND user_id = 5"
        )])
    );
    let same = "UPDATE t_order SET user_id = ?, status = ? WHERE order_id = ? AND user_id = ?";
    let bound = [
        Value::Int(5),
        Value::Text("x".into()),
        Value::Int(3),
        Value::Int(5),
    ];
    assert_eq!(plan(same, &bound).unwrap().units.len(), 1);
    let moved = [
        Value::Int(6),
        Value::Text("x".into()),
        Value::Int(3),
        Value::Int(5),
    ];
    let e = plan(same, &moved).unwrap_err();
    assert!(e.to_string().contains("sharding column 'user_id'"), "{e}");
    for refused in [
        "UPDATE t_order SET user_id = 6 WHERE order_id = 3 AND user_id = 5",
        "UPDATE t_order SET user_id = user_id + 0 WHERE user_id = 5",
    ] {
        let e = plan(refused, &[]).unwrap_err();
        assert!(
            e.to_string().contains("sharding column 'user_id'"),
            "{refused}: {e}"
        );
    }
    let e = plan("DELETE FROM t_order WHERE status = 'x' LIMIT 1", &[]).unwrap_err();
    assert!(matches!(e, RouteError::Unsupported(_)), "{e}");
    let e = plan(
        "UPDATE t_order SET status = 'x' WHERE amount > (SELECT AVG(amount) FROM t_order)",
        &[],
    )
    .unwrap_err();
    assert!(e.to_string().contains("also reads"), "{e}");
    // On one node, LIMIT is the database's business.
    assert!(
        plan(
            "DELETE FROM t_order WHERE user_id = 1 AND order_id = 1 LIMIT 1",
            &[]
        )
        .is_ok()
    );
}

#[test]
fn reads_over_several_nodes_say_how_to_merge() {
    let p = plan(
        "SELECT user_id, COUNT(*), AVG(amount) FROM t_order GROUP BY user_id ORDER BY user_id DESC LIMIT 2, 3",
        &[],
    )
    .unwrap();
    assert_eq!(
        p.units[0].sql,
        "SELECT user_id, COUNT(*), SUM(amount) AS `AVG(amount)`, COUNT(amount), \
         (/*! @@div_precision_increment + 1 + */ 0) FROM t_order_0 GROUP BY user_id ORDER BY user_id DESC \
         LIMIT 0, 9223372036854775807"
    );
    let spec = p.merge.unwrap();
    assert_eq!(spec.group_by, vec![ColumnRef::Index(0)]);
    assert_eq!(
        spec.aggregates,
        vec![
            AggregateColumn {
                index: 1,
                function: Aggregate::Count,
                distinct: None,
                joined: None,
            },
            AggregateColumn {
                index: 2,
                function: Aggregate::Avg { count_index: 3 },
                distinct: None,
                joined: None,
            },
        ]
    );
    assert_eq!(
        spec.order_by,
        vec![SortKey {
            column: ColumnRef::Index(0),
            descending: true,
            nulls_first: None
        }]
    );
    assert_eq!(
        (
            spec.offset,
            spec.limit,
            spec.hidden_columns,
            spec.division_scale
        ),
        (2, Some(3), 2, Some(4))
    );

    let p = plan(
        "SELECT order_id FROM t_order ORDER BY status LIMIT ? OFFSET ?",
        &[Value::Int(5), Value::Int(10)],
    )
    .unwrap();
    assert_eq!(
        p.units[0].sql,
        "SELECT order_id, status AS ks_hidden_0 FROM t_order_0 ORDER BY status LIMIT 15 OFFSET 0"
    );
    // Django's `.values_list("price").order_by("-price", "order_id")`: the hidden column's
    // qualifier is the actual table on each node, as the statement's own are.
    let qualified = plan_in(
        Dialect::Postgres,
        "SELECT \"t_order\".\"status\" FROM \"t_order\" ORDER BY \"t_order\".\"status\" DESC, \"t_order\".\"order_id\" ASC",
        &[],
    )
    .unwrap();
    assert_eq!(
        qualified.units[1].sql,
        "SELECT \"t_order_1\".\"status\", \"t_order_1\".\"order_id\" AS ks_hidden_0 FROM \"t_order_1\" ORDER BY \"t_order_1\".\"status\" DESC, \"t_order_1\".\"order_id\" ASC"
    );
    // Hibernate's and peewee's alias that is the table's own name: the qualifiers name the
    // alias, which stays.
    let aliased = plan_in(
        Dialect::Postgres,
        "SELECT t_order.* FROM t_order t_order ORDER BY t_order.status LIMIT $1::INTEGER",
        &[Value::Int(2)],
    )
    .unwrap();
    assert_eq!(
        aliased.units[1].sql,
        "SELECT t_order.*, status AS ks_hidden_0 FROM t_order_1 t_order ORDER BY t_order.status LIMIT 2::INTEGER"
    );
    let cast = plan(
        "SELECT order_id FROM t_order ORDER BY order_id LIMIT CAST(? AS UNSIGNED)",
        &[Value::Int(4)],
    )
    .unwrap();
    assert_eq!(cast.merge.unwrap().limit, Some(4));
    assert!(p.units[0].params.is_empty());
    let spec = p.merge.unwrap();
    assert_eq!(
        (spec.offset, spec.limit, spec.hidden_columns),
        (10, Some(5), 1)
    );
    assert_eq!(spec.order_by[0].column, ColumnRef::Index(1));

    // A count past what every database takes is capped, not passed on.
    let p = plan(
        "SELECT order_id FROM t_order ORDER BY order_id LIMIT 18446744073709551615",
        &[],
    )
    .unwrap();
    assert!(
        p.units[0].sql.ends_with("LIMIT 9223372036854775807"),
        "{}",
        p.units[0].sql
    );

    let p = plan("SELECT * FROM t_order ORDER BY order_id", &[]).unwrap();
    assert_eq!(
        p.merge.unwrap().order_by[0].column,
        ColumnRef::Name("order_id".into())
    );
}

#[test]
fn postgres_placeholders_are_renumbered_per_unit() {
    let p = plan_in(
        Dialect::Postgres,
        "SELECT avg(amount) FROM t_order WHERE status = $2 LIMIT $1",
        &[Value::Int(3), Value::Text("x".into())],
    )
    .unwrap();
    assert_eq!(
        p.units[0].sql,
        // Aggregated: a group spans nodes, so no node may cut its rows short.
        "SELECT SUM(amount) AS avg, COUNT(amount) FROM t_order_0 WHERE status = $1 LIMIT 9223372036854775807"
    );
    assert_eq!(p.units[0].params, vec![Value::Text("x".into())]);
}

#[test]
fn having_is_tested_on_the_merged_groups() {
    // The nodes group without it; an aggregate it names that is not selected is fetched as a
    // hidden column, its qualifier renamed per node.
    let p = plan(
        "SELECT status, COUNT(*) FROM t_order GROUP BY status \
         HAVING COUNT(*) > 1 AND SUM(t_order.amount) <= -2.5 ORDER BY status LIMIT 3",
        &[],
    )
    .unwrap();
    assert!(p.gather.is_none());
    assert_eq!(
        p.units[0].sql,
        "SELECT status, COUNT(*), SUM(t_order_0.amount) FROM t_order_0 GROUP BY status  \
         ORDER BY status LIMIT 9223372036854775807"
    );
    let merge = p.merge.expect("merged");
    assert_eq!(merge.hidden_columns, 1);
    assert_eq!(
        merge.having,
        Some(Filter::And(vec![
            Filter::Compare {
                left: FilterOperand::Column(1),
                op: Comparison::Gt,
                right: FilterOperand::Number("1".into()),
            },
            Filter::Compare {
                left: FilterOperand::Column(2),
                op: Comparison::LtEq,
                right: FilterOperand::Number("-2.5".into()),
            },
        ]))
    );
    // A parameter, text or an expression in it is left to a database.
    for sql in [
        "SELECT status FROM t_order GROUP BY status HAVING COUNT(*) > ?",
        "SELECT status FROM t_order GROUP BY status HAVING SUM(amount) / COUNT(*) > 2",
        "SELECT status FROM t_order GROUP BY status HAVING AVG(amount) > 2",
    ] {
        let p = plan(sql, &[Value::Int(1)]).unwrap();
        assert!(p.gather.is_some(), "{sql}");
    }
}

#[test]
fn distinct_aggregates_group_the_nodes_by_their_argument() {
    // Each node sends each of its values once; the merge counts and sums one row per value.
    let p = plan(
        "SELECT status, COUNT(DISTINCT t_order.user_id), SUM(DISTINCT user_id), \
         AVG(DISTINCT user_id), COUNT(*) FROM t_order GROUP BY status ORDER BY status",
        &[],
    )
    .unwrap();
    assert!(p.gather.is_none());
    assert_eq!(
        p.units[0].sql,
        "SELECT status, COUNT(DISTINCT t_order_0.user_id), SUM(DISTINCT user_id), \
         SUM(DISTINCT user_id) AS `AVG(DISTINCT user_id)`, COUNT(*), t_order_0.user_id, \
         user_id, COUNT(DISTINCT user_id), (/*! @@div_precision_increment + 1 + */ 0) FROM t_order_0 \
         GROUP BY status, t_order_0.user_id, user_id ORDER BY status"
    );
    let merge = p.merge.expect("merged");
    let distinct: Vec<_> = merge.aggregates.iter().map(|a| a.distinct).collect();
    assert_eq!(distinct, [Some(5), Some(6), Some(6), None]);
    assert_eq!(merge.when_empty, None);
    // Without GROUP BY the nodes are grouped by the argument alone, and the merge answers
    // one row even when no node has any.
    let p = plan(
        "SELECT COUNT(DISTINCT status), MAX(DISTINCT amount) FROM t_order",
        &[],
    )
    .unwrap();
    assert_eq!(
        p.units[0].sql,
        "SELECT COUNT(DISTINCT status), MAX(DISTINCT amount), status FROM t_order_0 GROUP BY status"
    );
    assert_eq!(
        p.merge.expect("merged").when_empty,
        Some(vec![Value::Int(0), Value::Null, Value::Null])
    );
}

#[test]
fn ordered_string_aggregates_group_the_nodes_by_their_keys() {
    // Each node sends one piece per key (hidden, and grouped by); the merge joins a group's
    // pieces in the keys' order. MySQL's nodes also send their group_concat_max_len.
    let p = plan(
        "SELECT user_id, GROUP_CONCAT(status ORDER BY t_order.order_id DESC SEPARATOR '; ') AS s, \
         COUNT(*) FROM t_order GROUP BY user_id ORDER BY user_id",
        &[],
    )
    .unwrap();
    assert!(p.gather.is_none());
    assert_eq!(
        p.units[0].sql,
        "SELECT user_id, GROUP_CONCAT(status ORDER BY t_order_0.order_id DESC SEPARATOR '; ') AS s, \
         COUNT(*), t_order_0.order_id, (/*! @@group_concat_max_len + */ 0) FROM t_order_0 \
         GROUP BY user_id, t_order_0.order_id ORDER BY user_id"
    );
    let merge = p.merge.expect("merged");
    let joined = merge.aggregates[0].joined.as_ref().expect("joined");
    assert_eq!(merge.aggregates[0].function, Aggregate::Join);
    assert_eq!(&*joined.separator, "; ");
    assert_eq!(
        joined.order,
        [SortKey {
            column: ColumnRef::Index(3),
            descending: true,
            nulls_first: None,
        }]
    );
    assert_eq!(joined.max_length, Some(4));
    assert_eq!(merge.hidden_columns, 2);

    // PostgreSQL's string_agg: unbounded; without ORDER BY the pieces are joined as they come.
    let p = plan_in(
        Dialect::Postgres,
        "SELECT string_agg(status, ',') FROM t_order",
        &[],
    )
    .unwrap();
    assert_eq!(
        p.units[0].sql,
        "SELECT string_agg(status, ',') FROM t_order_0"
    );
    let merge = p.merge.expect("merged");
    let joined = merge.aggregates[0].joined.as_ref().expect("joined");
    assert!(joined.order.is_empty() && joined.max_length.is_none());

    // DISTINCT: the value is the key, and the merge joins equal values once.
    let p = plan_in(
        Dialect::Postgres,
        "SELECT string_agg(DISTINCT status, ',') FROM t_order",
        &[],
    )
    .unwrap();
    assert_eq!(
        p.units[0].sql,
        "SELECT string_agg(DISTINCT status, ','), status FROM t_order_0 GROUP BY status"
    );
    let merge = p.merge.expect("merged");
    let joined = merge.aggregates[0].joined.as_ref().expect("joined");
    assert!(joined.distinct);
    assert_eq!(
        joined.order,
        [SortKey {
            column: ColumnRef::Index(1),
            descending: false,
            nulls_first: None,
        }]
    );

    // DISTINCT ordered by another key or of several values, an expression key, a separator
    // with an escape or not a literal: gathered.
    for sql in [
        "SELECT GROUP_CONCAT(DISTINCT status ORDER BY order_id) FROM t_order",
        "SELECT GROUP_CONCAT(DISTINCT status, user_id) FROM t_order",
        "SELECT GROUP_CONCAT(status ORDER BY amount + 1) FROM t_order",
        "SELECT GROUP_CONCAT(status SEPARATOR '\\n') FROM t_order",
        "SELECT string_agg(status, ? ORDER BY status) FROM t_order",
        "SELECT status, GROUP_CONCAT(status ORDER BY order_id) FROM t_order",
    ] {
        let p = plan(sql, &[Value::Text(",".into())]).unwrap();
        assert!(p.gather.is_some(), "{sql}");
    }
}

#[test]
fn expressions_over_aggregates_are_computed_from_the_merged_aggregates() {
    // Each aggregate in the expression is a hidden merged column; MySQL's nodes compute the
    // expression over their part too (its value is replaced, its description kept).
    let p = plan(
        "SELECT status, SUM(amount) / COUNT(*) AS mean, -(MAX(t_order.amount) - 1.5) * 2, COUNT(*) >= 3 \
         FROM t_order GROUP BY status",
        &[],
    )
    .unwrap();
    assert!(p.gather.is_none());
    assert_eq!(
        p.units[0].sql,
        "SELECT status, SUM(amount) / COUNT(*) AS mean, -(MAX(t_order_0.amount) - 1.5) * 2, \
         COUNT(*) >= 3, SUM(amount), COUNT(*), MAX(t_order_0.amount), COUNT(*), \
         (/*! @@div_precision_increment + 1 + */ 0) FROM t_order_0 GROUP BY status"
    );
    let merge = p.merge.expect("merged");
    let column = |i| Box::new(Computed::Column(i));
    assert_eq!(
        merge.computed,
        [
            ComputedColumn {
                index: 1,
                expr: Computed::Arithmetic(column(4), Arithmetic::Divide, column(5)),
            },
            ComputedColumn {
                index: 2,
                expr: Computed::Arithmetic(
                    Box::new(Computed::Negate(Box::new(Computed::Arithmetic(
                        column(6),
                        Arithmetic::Subtract,
                        Box::new(Computed::Number("1.5".into())),
                    )))),
                    Arithmetic::Multiply,
                    Box::new(Computed::Number("2".into())),
                ),
            },
            ComputedColumn {
                index: 3,
                expr: Computed::Compare(
                    column(7),
                    Comparison::GtEq,
                    Box::new(Computed::Number("3".into())),
                ),
            },
        ]
    );
    assert_eq!(merge.hidden_columns, 5);
    assert_eq!(merge.division_scale, Some(8));

    // PostgreSQL's nodes only describe it: a part must not divide by zero.
    let p = plan_in(
        Dialect::Postgres,
        "SELECT count(*) / count(amount), sum(amount) * 2 AS twice FROM t_order",
        &[],
    )
    .unwrap();
    assert_eq!(
        p.units[0].sql,
        "SELECT CASE WHEN false THEN (count(*) / count(amount)) END AS \"?column?\", \
         CASE WHEN false THEN (sum(amount) * 2) END AS twice, count(*), count(amount), sum(amount) \
         FROM t_order_0"
    );

    // Functions, parameters, DISTINCT and AVG inside, or an exponent: gathered.
    for sql in [
        "SELECT ROUND(SUM(amount)) + 1 FROM t_order",
        "SELECT SUM(amount) * ? FROM t_order",
        "SELECT COUNT(DISTINCT status) + 1 FROM t_order",
        "SELECT AVG(amount) * 2 FROM t_order",
        "SELECT SUM(amount) * 1e2 FROM t_order",
        "SELECT SUM(amount) + amount FROM t_order GROUP BY amount",
    ] {
        let p = plan(sql, &[Value::Int(2)]).unwrap();
        assert!(p.gather.is_some(), "{sql}");
    }
}

#[test]
fn what_cannot_be_merged_is_gathered_only_over_several_nodes() {
    for sql in [
        "SELECT DISTINCT status, COUNT(*) OVER () FROM t_order",
        "SELECT status FROM t_order GROUP BY status HAVING MAX(note) = 'x'",
        "SELECT status, COUNT(DISTINCT user_id) FROM t_order",
        "SELECT * FROM t_order WHERE amount > (SELECT AVG(amount) FROM t_order)",
        "SELECT ROUND(SUM(amount) / COUNT(*), 2) FROM t_order",
        "SELECT status FROM t_order EXCEPT ALL SELECT status FROM t_order_item",
    ] {
        let gather = plan(sql, &[]).unwrap().gather.expect(sql);
        assert_eq!(gather.statement.sql, sql);
        assert_eq!(gather.tables[0].reads.len(), 4, "{sql}");
        let narrowed = sql.replacen(
            "FROM t_order",
            "FROM t_order WHERE user_id = 1 AND order_id = 1 AND 1 = 1",
            1,
        );
        if !sql.contains("EXCEPT") && !sql.contains("(SELECT") {
            let p = plan(&narrowed, &[]).unwrap();
            assert!(p.gather.is_none() && p.units.len() == 1, "{narrowed}");
        }
    }
    // Over the nodes its WHERE clause routes to; without the qualifier, which names no schema
    // of the gathered table; with the actual table's, on each node.
    let p = plan_in(
        Dialect::Postgres,
        "SELECT COUNT(*) + COUNT(DISTINCT status) FROM public.t_order WHERE user_id = $1",
        &[Value::Int(1)],
    )
    .unwrap();
    let gather = p.gather.expect("gathered");
    assert_eq!(
        gather.statement.sql,
        "SELECT COUNT(*) + COUNT(DISTINCT status) FROM t_order WHERE user_id = $1"
    );
    assert_eq!(gather.statement.params, [Value::Int(1)]);
    let reads: Vec<(&str, &str)> = gather.tables[0]
        .reads
        .iter()
        .map(|r| (r.data_source.as_str(), r.sql.as_str()))
        .collect();
    assert_eq!(
        reads,
        [
            ("ds_1", "SELECT * FROM public.\"t_order_0\""),
            ("ds_1", "SELECT * FROM public.\"t_order_1\"")
        ]
    );
    // Its condition goes to each node too when it reads the one table and means the same
    // there: no function, subquery, variable or parameter.
    let reads = |sql: &str, params: &[Value]| -> Vec<String> {
        let gather = plan(sql, params).unwrap().gather.expect(sql);
        gather.tables[0]
            .reads
            .iter()
            .map(|r| r.sql.clone())
            .collect()
    };
    assert_eq!(
        reads(
            "SELECT JSON_ARRAYAGG(status) FROM t_order o WHERE o.amount > 5 AND (status <> 'x' OR status IS NULL) ORDER BY status",
            &[]
        )[0],
        "SELECT * FROM `t_order_0` AS o WHERE o.amount > 5 AND (status <> 'x' OR status IS NULL)"
    );
    for sql in [
        "SELECT JSON_ARRAYAGG(status) FROM t_order WHERE amount > RAND()",
        "SELECT JSON_ARRAYAGG(status) FROM t_order WHERE amount > @floor",
        "SELECT JSON_ARRAYAGG(status) FROM t_order WHERE amount IN (SELECT 1)",
        "SELECT JSON_ARRAYAGG(status) FROM t_order WHERE amount > ?",
        "SELECT JSON_ARRAYAGG(o.status) FROM t_order o JOIN t_dict d ON o.status = d.code WHERE amount > 1",
    ] {
        let params = [Value::Int(1)];
        let params = &params[..sql.matches('?').count()];
        assert_eq!(reads(sql, params)[0], "SELECT * FROM `t_order_0`", "{sql}");
    }
    // A locking read locks every row each node reads for it.
    assert_eq!(
        reads(
            "SELECT JSON_ARRAYAGG(status) FROM t_order WHERE amount > 1 FOR UPDATE SKIP LOCKED",
            &[]
        )[0],
        "SELECT * FROM `t_order_0` AS t_order WHERE amount > 1 FOR UPDATE SKIP LOCKED"
    );
    assert_eq!(
        reads("SELECT JSON_ARRAYAGG(status) FROM t_order FOR SHARE", &[])[0],
        "SELECT * FROM `t_order_0` LOCK IN SHARE MODE"
    );
    // SELECT … INTO cannot be gathered: it would store its result on the gathering connection.
    let e = plan("SELECT JSON_ARRAYAGG(status) INTO @s FROM t_order", &[]).unwrap_err();
    assert!(matches!(e, RouteError::Unsupported(_)), "{e}");
}

#[test]
fn unsharded_broadcast_and_tableless_statements() {
    assert_eq!(
        units(&plan("SELECT 1", &[]).unwrap()),
        pairs(&[("ds_0", "SELECT 1")])
    );
    assert_eq!(
        units(&plan("SELECT * FROM t_user WHERE id = ?", &[Value::Int(1)]).unwrap()),
        pairs(&[("ds_0", "SELECT * FROM t_user WHERE id = ?")])
    );
    let p = plan("INSERT INTO t_dict VALUES (1, 'a')", &[]).unwrap();
    assert_eq!(p.units.len(), 2);
    assert!(p.replicated);
    let p = plan("SELECT * FROM t_dict", &[]).unwrap();
    assert_eq!(p.units.len(), 1);
    let p = plan("CREATE TABLE t_dict (id INT)", &[]).unwrap();
    assert_eq!(p.units.len(), 2);
    let p = plan("CREATE TABLE t_user (id INT)", &[]).unwrap();
    assert_eq!(
        units(&p),
        pairs(&[("ds_0", "CREATE TABLE t_user (id INT)")])
    );
    // A broadcast table beside a sharded one is on every node.
    let p = plan("SELECT * FROM t_order o JOIN t_dict d ON o.status = d.code WHERE o.user_id = 2 AND o.order_id = 2", &[]).unwrap();
    assert_eq!(
        units(&p),
        pairs(&[(
            "ds_0",
            "SELECT * FROM t_order_0 o JOIN t_dict d ON o.status = d.code WHERE o.user_id = 2 AND o.order_id = 2"
        )])
    );
    // With an unsharded table: gathered where that table lives, even from one node.
    let p = plan(
        "SELECT * FROM t_order o JOIN t_user u ON o.user_id = u.id WHERE o.user_id = 1 AND o.order_id = 1",
        &[],
    )
    .unwrap();
    let gather = p.gather.expect("gathered");
    assert!(
        gather.reason.contains("unsharded table 't_user'"),
        "{}",
        gather.reason
    );
    assert_eq!(gather.data_source, "ds_0");
    let e = plan(
        "DELETE FROM t_order WHERE user_id IN (SELECT id FROM t_user)",
        &[],
    )
    .unwrap_err();
    assert!(e.to_string().contains("unsharded table 't_user'"), "{e}");
}

mod mutations {
    use proptest::prelude::*;

    use super::*;

    const SEEDS: &[&str] = &[
        "SELECT user_id, COUNT(*), AVG(amount) FROM t_order o WHERE o.user_id IN (1, ?) AND order_id = ? GROUP BY user_id ORDER BY 2 DESC LIMIT ?, 3",
        "SELECT t_order.*, i.qty FROM t_order JOIN t_order_item i ON t_order.order_id = i.order_id WHERE t_order.user_id = 1 OR i.order_id = 2 ORDER BY i.qty NULLS LAST",
        "UPDATE t_order SET status = ? WHERE order_id IN (1, 2, 3) AND (user_id = 4 OR user_id = ?) LIMIT 1",
        "DELETE FROM t_order WHERE order_id = -5 ORDER BY status",
        "SELECT MIN(amount), MAX(`amount`) FROM `t_order` WHERE status = 'é' LIMIT 10 OFFSET 2",
    ];

    proptest! {
        /// Cutting, repeating or replacing any part of a query never panics the router: it
        /// plans it or says why not.
        #[test]
        fn mangled_queries_never_panic(
            seed in 0..SEEDS.len(),
            at in 0usize..200,
            len in 0usize..40,
            insert in "[ ,()?'`*=.0-9a-z]{0,6}",
            dialect in prop_oneof![Just(Dialect::MySql), Just(Dialect::Postgres)],
        ) {
            let sql = SEEDS[seed];
            let mut cut = at.min(sql.len());
            while !sql.is_char_boundary(cut) {
                cut -= 1;
            }
            let mut end = (cut + len).min(sql.len());
            while !sql.is_char_boundary(end) {
                end -= 1;
            }
            let mangled = format!("{}{insert}{}", &sql[..cut], &sql[end..]);
            let params = [Value::Int(1), Value::Text("x".into()), Value::Int(-3)];
            let _ = plan_in(dialect, &mangled, &params);
        }
    }
}

fn nodes_of(plan: &Plan) -> Vec<String> {
    plan.units
        .iter()
        .map(|u| format!("{}.{}", u.data_source, u.table))
        .collect()
}

#[test]
fn equals_any_array_routes_as_the_in_list() {
    let pg =
        |sql: &str, params: &[Value]| nodes_of(&plan_in(Dialect::Postgres, sql, params).unwrap());
    let in_list = pg(
        "SELECT * FROM t_order WHERE user_id IN (1, 3) AND order_id IN (4, 6)",
        &[],
    );
    assert_eq!(in_list, ["ds_1.t_order_0"]);
    let user_ids = Value::Array(keyshard_types::Array::new(
        20,
        vec![Value::Int(1), Value::Int(3)],
    ));
    for sql in [
        "SELECT * FROM t_order WHERE user_id = ANY(ARRAY[1, 3]) AND order_id = ANY(ARRAY[4, 6])",
        "SELECT * FROM t_order WHERE user_id = ANY('{1,3}'::bigint[]) AND order_id = ANY('{4, 6}'::int8[])",
        "SELECT * FROM t_order WHERE user_id = ANY(ARRAY[[1], [3]]) AND order_id = SOME(ARRAY[4, 6]::bigint[])",
        "SELECT * FROM t_order WHERE user_id = ANY($1) AND order_id = ANY(ARRAY[$2, $3])",
        "SELECT * FROM t_order WHERE user_id = ANY($1::bigint[]) AND order_id = ANY('{4,6,NULL}'::int[])",
    ] {
        let params = [user_ids.clone(), Value::Int(4), Value::Int(6)];
        let params = &params[..sql.matches('$').count()];
        assert_eq!(pg(sql, params), in_list, "{sql}");
    }
    // The array parameter's elements route each row; NULL elements match nothing.
    let mixed = Value::Array(keyshard_types::Array::new(
        20,
        vec![Value::Int(2), Value::Null, Value::Int(5)],
    ));
    assert_eq!(
        pg(
            "DELETE FROM t_order WHERE order_id = ANY($1) AND user_id = 2",
            &[mixed]
        ),
        ["ds_0.t_order_0", "ds_0.t_order_1"]
    );
    // Values that cannot be known, and other comparisons: every node, never a wrong subset.
    for sql in [
        "SELECT * FROM t_order WHERE user_id = ANY(current_user_ids())",
        "SELECT * FROM t_order WHERE user_id <> ALL(ARRAY[1, 3])",
        "SELECT * FROM t_order WHERE user_id < ANY(ARRAY[1, 3])",
        "SELECT * FROM t_order WHERE user_id = ANY(ARRAY[1, status])",
        "SELECT * FROM t_order WHERE user_id = ANY(string_to_array('1,3', ',')::int[])",
        "SELECT * FROM t_order WHERE user_id = ANY('{1,3')",
    ] {
        assert_eq!(pg(sql, &[]).len(), 4, "{sql}");
    }
    // A subquery's array is never routed by: the read is gathered from every node.
    let p = plan_in(
        Dialect::Postgres,
        "SELECT * FROM t_order WHERE user_id = ANY(SELECT id FROM t_dict)",
        &[],
    )
    .unwrap();
    assert_eq!(p.gather.expect("gathered").tables[0].reads.len(), 4);
    // A parameter that is not an array: every node (the database reports the error).
    assert_eq!(
        pg(
            "SELECT * FROM t_order WHERE user_id = ANY($1)",
            &[Value::Int(1)]
        )
        .len(),
        4
    );
}

#[test]
fn table_locks_lock_every_actual_table_on_its_data_source() {
    let mysql = |sql| units(&plan(sql, &[]).unwrap());
    assert_eq!(
        mysql("LOCK TABLES t_order READ, t_plain WRITE, `t_log` AS l LOW_PRIORITY WRITE"),
        pairs(&[
            (
                "ds_0",
                "LOCK TABLES t_order_0 READ, t_order_1 READ, t_plain WRITE, `t_log` AS l LOW_PRIORITY WRITE"
            ),
            (
                "ds_1",
                "LOCK TABLES t_order_0 READ, t_order_1 READ, `t_log` AS l LOW_PRIORITY WRITE"
            ),
        ])
    );
    // Two actual tables of one data source cannot share an alias.
    let refused = plan("LOCK TABLES t_order AS o READ", &[]).unwrap_err();
    assert!(
        refused.to_string().contains("several actual tables"),
        "{refused}"
    );
    // Broadcast tables are written everywhere, so they are locked everywhere.
    assert_eq!(
        mysql("LOCK TABLES t_dict READ LOCAL"),
        pairs(&[
            ("ds_0", "LOCK TABLES t_dict READ LOCAL"),
            ("ds_1", "LOCK TABLES t_dict READ LOCAL"),
        ])
    );
    // Let go where the session holds them, which only the proxy knows.
    assert_eq!(mysql("UNLOCK TABLES"), pairs(&[]));
    assert_eq!(
        units(
            &plan_in(
                Dialect::Postgres,
                "LOCK TABLE ONLY public.\"t_order\", t_plain IN SHARE MODE NOWAIT",
                &[]
            )
            .unwrap()
        ),
        pairs(&[
            (
                "ds_0",
                "LOCK TABLE ONLY public.\"t_order_0\", ONLY public.\"t_order_1\", t_plain IN SHARE MODE NOWAIT"
            ),
            (
                "ds_1",
                "LOCK TABLE ONLY public.\"t_order_0\", ONLY public.\"t_order_1\" IN SHARE MODE NOWAIT"
            ),
        ])
    );
}

#[test]
fn statements_of_other_kinds_go_where_unsharded_tables_live_unless_they_name_sharded_ones() {
    for sql in ["CREATE SEQUENCE s", "GRANT SELECT ON t_plain TO someone"] {
        assert_eq!(
            units(&plan_in(Dialect::Postgres, sql, &[]).unwrap()),
            pairs(&[("ds_0", sql)])
        );
    }
    for sql in [
        "COMMENT ON TABLE t_order IS 'orders'",
        "GRANT SELECT ON t_dict TO someone",
        "LISTEN orders",
        "KILL 5",
        "COPY t_plain TO '/tmp/rows'",
        "COPY (SELECT * FROM t_order) TO STDOUT",
    ] {
        assert!(plan_in(Dialect::Postgres, sql, &[]).is_err(), "{sql}");
    }
}

#[test]
fn copy_to_stdout_reads_every_data_node_of_a_sharded_table_its_schema_kept() {
    let sql = "COPY public.\"t_order\" (order_id, status) TO STDOUT WITH (FORMAT csv)";
    assert_eq!(
        units(&plan_in(Dialect::Postgres, sql, &[]).unwrap()),
        pairs(&[
            (
                "ds_0",
                "COPY public.\"t_order_0\" (order_id, status) TO STDOUT WITH (FORMAT csv)"
            ),
            (
                "ds_0",
                "COPY public.\"t_order_1\" (order_id, status) TO STDOUT WITH (FORMAT csv)"
            ),
            (
                "ds_1",
                "COPY public.\"t_order_0\" (order_id, status) TO STDOUT WITH (FORMAT csv)"
            ),
            (
                "ds_1",
                "COPY public.\"t_order_1\" (order_id, status) TO STDOUT WITH (FORMAT csv)"
            ),
        ])
    );
    for sql in [
        "COPY t_plain TO STDOUT",
        "COPY (SELECT id FROM t_plain) TO STDOUT",
    ] {
        assert_eq!(
            units(&plan_in(Dialect::Postgres, sql, &[]).unwrap()),
            pairs(&[("ds_0", sql)])
        );
    }
}

#[test]
fn explain_of_a_statement_on_sharded_tables_explains_each_node_statement() {
    let sql =
        "EXPLAIN ANALYZE SELECT order_id FROM t_order WHERE user_id = 3 ORDER BY order_id LIMIT 2";
    assert_eq!(
        units(&plan(sql, &[]).unwrap()),
        pairs(&[
            (
                "ds_1",
                "EXPLAIN ANALYZE SELECT order_id FROM t_order_0 WHERE user_id = 3 ORDER BY order_id LIMIT 2"
            ),
            (
                "ds_1",
                "EXPLAIN ANALYZE SELECT order_id FROM t_order_1 WHERE user_id = 3 ORDER BY order_id LIMIT 2"
            ),
        ])
    );
    for sql in [
        "EXPLAIN ANALYZE UPDATE t_order SET status = 'x'",
        "EXPLAIN SELECT * FROM t_order WHERE user_id = ?",
    ] {
        assert!(plan(sql, &[]).is_err(), "{sql}");
    }
    // Reading no sharded table, it goes as written where such tables live.
    assert_eq!(
        units(&plan("EXPLAIN SELECT * FROM t_plain", &[]).unwrap()),
        pairs(&[("ds_0", "EXPLAIN SELECT * FROM t_plain")])
    );
    // MariaDB's ANALYZE of a statement is its EXPLAIN ANALYZE: each node is sent its own.
    assert_eq!(
        units(
            &plan(
                " analyze format=json SELECT * FROM t_order WHERE user_id = 3",
                &[]
            )
            .unwrap()
        ),
        pairs(&[
            (
                "ds_1",
                " analyze format=json SELECT * FROM t_order_0 WHERE user_id = 3"
            ),
            (
                "ds_1",
                " analyze format=json SELECT * FROM t_order_1 WHERE user_id = 3"
            ),
        ])
    );
    assert!(plan("ANALYZE UPDATE t_order SET status = 'x'", &[]).is_err());
    assert_eq!(
        units(&plan("ANALYZE SELECT * FROM t_plain", &[]).unwrap()),
        pairs(&[("ds_0", "ANALYZE SELECT * FROM t_plain")])
    );
    // ANALYZE TABLE is not one.
    let table = plan("ANALYZE TABLE t_order", &[]);
    assert!(!format!("{table:?}").contains("EXPLAIN"), "{table:?}");
}

#[test]
fn a_condition_on_another_tables_column_does_not_route() {
    // `user_id` here is the broadcast table's: the subquery's t_order rows may be anywhere.
    let p = plan(
        "SELECT * FROM t_dict WHERE user_id = 1 AND order_id = 1 AND EXISTS (SELECT 1 FROM t_order o WHERE o.status = t_dict.code)",
        &[],
    )
    .unwrap();
    assert_eq!(p.gather.expect("gathered").tables[0].reads.len(), 4);
    let p = plan(
        "SELECT * FROM t_order WHERE user_id = 1 AND order_id = 1 AND status IN (SELECT code FROM t_dict)",
        &[],
    )
    .unwrap();
    assert_eq!(units(&p).len(), 1);
}

/// A read whose merge met values it cannot compare as the database does is gathered instead:
/// over the nodes its condition routes to, with the merge's reason; on one node, as before.
#[test]
fn an_unmergeable_read_is_gathered_on_request() {
    let r = router(Dialect::MySql);
    let gathered = |sql: &str, params: &[Value]| -> Plan {
        match r
            .prepare_gathered(sql, &NoMetadata, "text in a collation")
            .unwrap()
        {
            Prepared::Query(query) => query.bind(params).unwrap(),
            other => panic!("{sql}: {other:?}"),
        }
    };
    let sql = "SELECT status FROM t_order WHERE user_id = ? ORDER BY status";
    let merged = plan(sql, &[Value::Int(1)]).unwrap();
    assert!(merged.gather.is_none() && merged.units.len() == 2);
    let gather = gathered(sql, &[Value::Int(1)]).gather.expect(sql);
    assert_eq!(gather.reason, "text in a collation");
    assert_eq!(gather.statement.sql, sql);
    assert_eq!(gather.tables[0].reads.len(), 2);
    let one = "SELECT status FROM t_order WHERE user_id = 1 AND order_id = 1 ORDER BY status";
    let p = gathered(one, &[]);
    assert!(p.gather.is_none() && p.units.len() == 1);
    assert!(matches!(
        r.prepare_gathered("DELETE FROM t_order", &NoMetadata, "why"),
        Err(RouteError::Unsupported(why)) if why == "why"
    ));
}

/// `SELECT DISTINCT` is merged as a GROUP BY of its list: each node sends its own distinct
/// rows, all of them (a node may not cut short what the merge dedupes), and the merge keeps
/// one of each. Ordered by something it does not select, it is gathered: that column would be
/// one more each node tells rows apart by.
#[test]
fn distinct_is_merged_as_a_group_by_of_its_list() {
    let sql = "SELECT DISTINCT status, user_id FROM t_order ORDER BY status LIMIT 2";
    let p = plan(sql, &[]).unwrap();
    assert!(p.gather.is_none());
    let merge = p.merge.expect("merged");
    assert_eq!(merge.group_by, [ColumnRef::Index(0), ColumnRef::Index(1)]);
    assert_eq!(p.units.len(), 4);
    assert!(
        p.units[0]
            .sql
            .starts_with("SELECT DISTINCT status, user_id FROM t_order_0 ORDER BY status LIMIT 9223372036854775807"),
        "{}",
        p.units[0].sql
    );
    for gathered in [
        "SELECT DISTINCT status FROM t_order ORDER BY amount",
        "SELECT DISTINCT * FROM t_order",
        "SELECT DISTINCT status, COUNT(*) FROM t_order GROUP BY status",
    ] {
        assert!(plan(gathered, &[]).unwrap().gather.is_some(), "{gathered}");
    }
}

#[test]
fn union_all_of_sharded_branches_is_concatenated() {
    let p = plan(
        "SELECT order_id, status FROM t_order WHERE amount > 1 \
         UNION ALL SELECT order_id, status FROM t_order_item ORDER BY status DESC, 1 LIMIT 2, 3",
        &[],
    )
    .unwrap();
    assert!(p.gather.is_none());
    assert_eq!(p.units.len(), 4);
    assert_eq!(
        p.units[0].sql,
        "SELECT order_id, status FROM t_order_0 WHERE amount > 1 \
         UNION ALL SELECT order_id, status FROM t_order_item_0 ORDER BY status DESC, 1 LIMIT 0, 5"
    );
    let merge = p.merge.expect("merged");
    let keys: Vec<(ColumnRef, bool)> = merge
        .order_by
        .iter()
        .map(|k| (k.column.clone(), k.descending))
        .collect();
    assert_eq!(
        keys,
        [(ColumnRef::Index(1), true), (ColumnRef::Index(0), false)]
    );
    assert_eq!((merge.offset, merge.limit), (2, Some(3)));
    // The same table in two branches is fine; what the nodes' rows do not add up to is not.
    let p = plan(
        "SELECT status FROM t_order WHERE user_id = 1 UNION ALL SELECT status FROM t_order",
        &[],
    )
    .unwrap();
    assert!(p.gather.is_none() && p.units.len() == 4);
    // UNION keeps one of each row: the whole row is the merge's GROUP BY, and a branch may read
    // a broadcast table alone (its rows come from every node, and are kept once).
    for sql in [
        "SELECT status FROM t_order UNION SELECT status FROM t_order_item ORDER BY 1 LIMIT 3",
        "SELECT status FROM t_order UNION SELECT code FROM t_dict UNION SELECT DISTINCT status FROM t_order",
    ] {
        let p = plan(sql, &[]).unwrap();
        assert!(p.gather.is_none(), "{sql}");
        let merge = p.merge.expect(sql);
        assert_eq!(merge.group_by, [ColumnRef::Index(0)], "{sql}");
        assert!(p.units[0].sql.contains("LIMIT 9223372036854775807") || !sql.contains("LIMIT"));
    }
    for sql in [
        "SELECT status FROM t_order UNION SELECT status FROM t_order_item UNION ALL SELECT status FROM t_order",
        "SELECT * FROM t_order UNION SELECT * FROM t_order_item",
        "SELECT status FROM t_order UNION ALL SELECT code FROM t_dict",
        "SELECT status FROM t_order UNION ALL SELECT COUNT(*) FROM t_order_item",
        "SELECT status FROM t_order UNION ALL SELECT DISTINCT status FROM t_order_item",
        "SELECT status FROM t_order UNION ALL SELECT o.status FROM t_order o JOIN t_order p ON p.user_id = o.user_id",
        "SELECT status FROM t_order UNION ALL SELECT status FROM t_order_item ORDER BY UPPER(status)",
        "SELECT status FROM t_order UNION ALL SELECT status FROM t_order_item WHERE order_id IN (SELECT 1)",
        "SELECT status FROM t_order INTERSECT ALL SELECT status FROM t_order_item",
        "SELECT status FROM t_order INTERSECT SELECT status FROM t_order_item EXCEPT SELECT code FROM t_dict",
    ] {
        let p = plan(sql, &[]).unwrap();
        assert!(p.gather.is_some(), "{sql}");
    }
    // INTERSECT and EXCEPT run as a UNION ALL whose rows say their branch; the merge keeps
    // a row by the MIN and MAX of that.
    let p = plan(
        "SELECT status, user_id FROM t_order INTERSECT DISTINCT SELECT status, user_id FROM t_order_item ORDER BY 1",
        &[],
    )
    .unwrap();
    assert!(p.gather.is_none());
    assert_eq!(
        p.units[0].sql,
        "SELECT status, user_id, 0, 0 FROM t_order_0 UNION ALL SELECT status, user_id, 1, 1 FROM \
         t_order_item_0 ORDER BY 1"
    );
    let merge = p.merge.expect("merged");
    assert_eq!(merge.group_by, [ColumnRef::Index(0), ColumnRef::Index(1)]);
    assert_eq!(merge.hidden_columns, 2);
    assert!(matches!(merge.having, Some(Filter::And(_))));
    let p = plan(
        "SELECT status FROM t_order EXCEPT SELECT code FROM t_dict",
        &[],
    )
    .unwrap();
    assert!(p.gather.is_none());
    assert!(
        p.units[0]
            .sql
            .contains("UNION ALL SELECT code, 1, 1 FROM t_dict")
    );
    assert!(matches!(
        p.merge.expect("merged").having,
        Some(Filter::Compare { .. })
    ));
}

#[test]
fn postgres_limits_may_be_integer_expressions() {
    let p = plan_in(
        Dialect::Postgres,
        "SELECT * FROM t_order ORDER BY order_id LIMIT 2 * 3 OFFSET (1 + 1)",
        &[],
    )
    .unwrap();
    assert!(p.gather.is_none());
    let merge = p.merge.expect("merged");
    assert_eq!((merge.offset, merge.limit), (2, Some(6)));
    assert!(
        p.units[0].sql.ends_with("LIMIT 8 OFFSET (0)"),
        "{}",
        p.units[0].sql
    );
    // Division, and MySQL (whose LIMIT takes no expression), are left to a database.
    let p = plan_in(
        Dialect::Postgres,
        "SELECT * FROM t_order ORDER BY order_id LIMIT 7 / 2",
        &[],
    )
    .unwrap();
    assert!(p.gather.is_some());
}

#[test]
fn only_reads_that_change_and_lock_nothing_may_go_to_a_replica() {
    let safe = |dialect, sql: &str| {
        plan_in(dialect, sql, &[Value::Int(1)])
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .replica_safe
    };
    for sql in [
        "SELECT * FROM t_order WHERE user_id = ?",
        "SELECT COUNT(*) FROM t_order WHERE order_id > ?",
        "SELECT * FROM t_user WHERE id = ?",
        // `for` and `into` as names, and the hint's other keys, change nothing.
        "SELECT status AS \"for\" FROM t_order WHERE user_id = ? ORDER BY order_id",
        "/* SHARDINGSPHERE_HINT: writeRouteOnly=false */ SELECT * FROM t_order WHERE user_id = ?",
    ] {
        assert!(safe(Dialect::MySql, sql), "{sql}");
        let numbered = sql.replace('?', "$1").replace('"', "");
        assert!(safe(Dialect::Postgres, &numbered), "{numbered}");
    }
    for (dialect, sql) in [
        (
            Dialect::MySql,
            "SELECT * FROM t_order WHERE user_id = ? FOR UPDATE",
        ),
        (
            Dialect::Postgres,
            "SELECT * FROM t_order WHERE user_id = $1 FOR SHARE",
        ),
        (
            Dialect::Postgres,
            "SELECT * FROM t_user WHERE id = $1 FOR UPDATE",
        ),
        (Dialect::MySql, "SELECT LAST_INSERT_ID(), ? FROM t_user"),
        (Dialect::Postgres, "SELECT nextval('s'), $1"),
        (Dialect::Postgres, "SELECT pg_advisory_lock($1)"),
        (Dialect::MySql, "SELECT GET_LOCK('a', ?)"),
        (
            Dialect::MySql,
            "/* SHARDINGSPHERE_HINT: writeRouteOnly=true */ SELECT * FROM t_order WHERE user_id = ?",
        ),
        (
            Dialect::MySql,
            "UPDATE t_order SET status = 'x' WHERE user_id = ?",
        ),
        (Dialect::MySql, "DELETE FROM t_user WHERE id = ?"),
    ] {
        assert!(!safe(dialect, sql), "{sql}");
    }
}
