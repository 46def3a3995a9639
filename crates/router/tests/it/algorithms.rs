//! ShardingSphere's algorithms and auditors through the router: where INSERTs go, which nodes
//! range conditions (`BETWEEN`, `<`, `>=` …) reach on both dialects, and the statements the
//! `DML_SHARDING_CONDITIONS` auditor refuses.

use crate::common;

use crate::common::two_sources;

use keyshard_router::{Plan, RouteError, Router};
use keyshard_types::{Dialect, Value, Wire, WireKind};

/// `t_event` by month of `created_at` (INTERVAL), `t_volume` by `id` in tens (VOLUME_RANGE),
/// `t_auto` by 4-second spans (AUTO_INTERVAL), `t_mod` by `id % 4`.
const RULE: &str = two_sources!(
    r#"
- !SHARDING
  tables:
    t_event:
      actualDataNodes: ds_0.t_event_20210${1..9},ds_0.t_event_2021${10..12}
      tableStrategy:
        standard:
          shardingColumn: created_at
          shardingAlgorithmName: by_month
      keyGenerateStrategy:
        column: event_id
        keyGeneratorName: snowflake
    t_volume:
      actualDataNodes: ds_${0..1}.t_volume_${0..5}
      databaseStrategy:
        standard:
          shardingColumn: id
          shardingAlgorithmName: by_half
      tableStrategy:
        standard:
          shardingColumn: id
          shardingAlgorithmName: by_tens
    t_auto:
      actualDataNodes: ds_0.t_auto_${0..5}
      tableStrategy:
        standard:
          shardingColumn: created_at
          shardingAlgorithmName: by_spans
    t_mod:
      actualDataNodes: ds_0.t_mod_${0..3}
      tableStrategy:
        standard:
          shardingColumn: id
          shardingAlgorithmName: mod_4
  shardingAlgorithms:
    by_month:
      type: INTERVAL
      props:
        datetime-pattern: "yyyy-MM-dd HH:mm:ss"
        datetime-lower: "2021-01-01 00:00:00"
        datetime-upper: "2021-12-31 23:59:59"
        sharding-suffix-pattern: yyyyMM
        datetime-interval-amount: 1
        datetime-interval-unit: MONTHS
    by_tens:
      type: VOLUME_RANGE
      props:
        range-lower: 10
        range-upper: 45
        sharding-volume: 10
    by_half:
      type: BOUNDARY_RANGE
      props:
        sharding-ranges: 30
    by_spans:
      type: AUTO_INTERVAL
      props:
        datetime-lower: "2020-01-01 00:00:00"
        datetime-upper: "2020-01-01 00:00:16"
        sharding-seconds: 4
    mod_4:
      type: MOD
      props:
        sharding-count: 4
  keyGenerators:
    snowflake:
      type: SNOWFLAKE
"#
);

fn router(dialect: Dialect) -> Router {
    Router::new(&common::rule(RULE), dialect)
}

fn route(router: &Router, sql: &str, params: &[Value]) -> Result<Plan, RouteError> {
    router
        .plan(sql, params, &common::metadata())
        .map(|p| p.unwrap_or_else(|o| panic!("{sql}: not planned: {o:?}")))
}

/// The nodes a statement reaches, `ds.table`, in plan order.
fn nodes(router: &Router, sql: &str, params: &[Value]) -> Vec<String> {
    let plan = route(router, sql, params).unwrap_or_else(|e| panic!("{sql}: {e}"));
    plan.units
        .iter()
        .map(|u| format!("{}.{}", u.data_source, u.table))
        .collect()
}

fn months(months: &[u32]) -> Vec<String> {
    months
        .iter()
        .map(|m| format!("ds_0.t_event_2021{m:02}"))
        .collect()
}

#[test]
fn interval_places_rows_by_their_month() {
    let router = router(Dialect::MySql);
    let insert = "INSERT INTO t_event (created_at, note) VALUES ('2021-03-15 10:00:00', 'a'), \
                  ('2021-12-31 23:00:00.5', 'b'), ('2021-07-01', 'c')";
    let plan = route(&router, insert, &[]).unwrap();
    let tables: Vec<&str> = plan
        .row_units
        .iter()
        .map(|&u| plan.units[u].table.as_str())
        .collect();
    assert_eq!(
        tables,
        ["t_event_202103", "t_event_202112", "t_event_202107"]
    );
    // A MySQL DATETIME parameter arrives as its text.
    let one = nodes(
        &router,
        "INSERT INTO t_event (created_at) VALUES (?)",
        &[Value::Text("2021-05-31 23:59:59.999999".into())],
    );
    assert_eq!(one, months(&[5]));
    let outside = route(
        &router,
        "INSERT INTO t_event (created_at) VALUES ('2022-01-01 00:00:00')",
        &[],
    )
    .unwrap_err();
    assert!(
        outside
            .to_string()
            .contains("outside INTERVAL's datetime-lower to datetime-upper"),
        "{outside}"
    );
}

#[test]
fn interval_ranges_reach_only_their_months() {
    let router = router(Dialect::MySql);
    let select = |condition: &str| {
        nodes(
            &router,
            &format!("SELECT * FROM t_event WHERE {condition}"),
            &[],
        )
    };
    assert_eq!(
        select("created_at BETWEEN '2021-03-01' AND '2021-04-30 23:59:59'"),
        months(&[3, 4])
    );
    assert_eq!(select("created_at >= '2021-11-10'"), months(&[11, 12]));
    assert_eq!(select("'2021-11-10' <= created_at"), months(&[11, 12]));
    assert_eq!(
        select("created_at < TIMESTAMP '2021-02-01 00:00:00'"),
        months(&[1])
    );
    assert_eq!(
        select("created_at >= '2021-06-01' AND created_at < '2021-08-01' AND note = 'x'"),
        months(&[6, 7])
    );
    assert_eq!(
        select("created_at < '2021-02-01' OR created_at = '2021-09-09 09:09:09'"),
        months(&[1, 9])
    );
    // Nothing the algorithm reads narrows nothing.
    assert_eq!(select("created_at > NOW()").len(), 12);
    assert_eq!(
        select("NOT created_at BETWEEN '2021-01-01' AND '2021-02-01'").len(),
        12
    );
    // A range no month meets still answers, from one node, with no rows.
    assert_eq!(select("created_at < '2020-06-01'").len(), 1);
}

#[test]
fn interval_ranges_bind_parameters_of_both_dialects() {
    let mysql = router(Dialect::MySql);
    assert_eq!(
        nodes(
            &mysql,
            "SELECT * FROM t_event WHERE created_at BETWEEN ? AND ?",
            &[
                Value::Text("2021-04-02 00:00:00".into()),
                Value::Text("2021-05-01 00:00:00".into())
            ]
        ),
        months(&[4, 5])
    );
    let postgres = router(Dialect::Postgres);
    // psycopg and asyncpg send a timestamp in PostgreSQL's binary form: microseconds since
    // 2000-01-01. 2021-10-05 is 7,948 days after it.
    let micros = 7_948i64 * 86_400 * 1_000_000;
    let binary = Value::Wire(Wire::new(
        WireKind::PgTimestamp,
        true,
        &micros.to_be_bytes(),
    ));
    assert_eq!(
        nodes(
            &postgres,
            "SELECT * FROM t_event WHERE created_at >= $1::timestamp",
            std::slice::from_ref(&binary)
        ),
        months(&[10, 11, 12])
    );
    assert_eq!(
        nodes(
            &postgres,
            "SELECT * FROM t_event WHERE created_at = $1",
            &[binary]
        ),
        months(&[10])
    );
    assert_eq!(
        nodes(
            &postgres,
            "SELECT * FROM t_event WHERE created_at < '2021-03-01'::timestamp",
            &[]
        ),
        months(&[1, 2])
    );
}

#[test]
fn volume_and_boundary_ranges_route_as_shardingsphere_does() {
    let router = router(Dialect::MySql);
    let select = |condition: &str| {
        nodes(
            &router,
            &format!("SELECT * FROM t_volume WHERE {condition}"),
            &[],
        )
    };
    assert_eq!(select("id = 0"), ["ds_0.t_volume_0"]);
    assert_eq!(select("id = 44"), ["ds_1.t_volume_4"]);
    assert_eq!(select("id = '12'"), ["ds_0.t_volume_1"]);
    assert_eq!(select("id < 12"), ["ds_0.t_volume_0", "ds_0.t_volume_1"]);
    // Each strategy narrows on its own, as in ShardingSphere: both data sources (30 splits
    // them), tables 1 to 5 on each.
    assert_eq!(select("id BETWEEN 12 AND 55").len(), 10);
    assert_eq!(
        select("id BETWEEN 12 AND 25"),
        ["ds_0.t_volume_1", "ds_0.t_volume_2"]
    );
    assert_eq!(select("id > 40"), ["ds_1.t_volume_4", "ds_1.t_volume_5"]);
    // An end given as text compares as text where the column is text: not narrowed.
    assert_eq!(select("id > '40'").len(), 12);
    let insert = route(
        &router,
        "INSERT INTO t_volume (id) VALUES (9), (10), (45)",
        &[],
    )
    .unwrap();
    let placed: Vec<String> = insert
        .row_units
        .iter()
        .map(|&u| format!("{}.{}", insert.units[u].data_source, insert.units[u].table))
        .collect();
    assert_eq!(
        placed,
        ["ds_0.t_volume_0", "ds_0.t_volume_1", "ds_1.t_volume_5"]
    );
}

#[test]
fn auto_interval_and_mod_ranges() {
    let router = router(Dialect::MySql);
    let auto = |condition: &str| {
        nodes(
            &router,
            &format!("SELECT * FROM t_auto WHERE {condition}"),
            &[],
        )
    };
    assert_eq!(
        auto("created_at = '2020-01-01 00:00:01'"),
        ["ds_0.t_auto_1"]
    );
    assert_eq!(
        auto("created_at BETWEEN '2020-01-01 00:00:04' AND '2020-01-01 00:00:10'"),
        ["ds_0.t_auto_1", "ds_0.t_auto_2", "ds_0.t_auto_3"]
    );
    assert_eq!(
        auto("created_at > '2020-01-01 00:00:09'"),
        ["ds_0.t_auto_3", "ds_0.t_auto_4", "ds_0.t_auto_5"]
    );
    let modulo = |condition: &str| {
        nodes(
            &router,
            &format!("SELECT * FROM t_mod WHERE {condition}"),
            &[],
        )
    };
    assert_eq!(
        modulo("id BETWEEN 5 AND 6"),
        ["ds_0.t_mod_1", "ds_0.t_mod_2"]
    );
    assert_eq!(
        modulo("id > 5 AND id <= 7"),
        ["ds_0.t_mod_2", "ds_0.t_mod_3"]
    );
    assert_eq!(modulo("id BETWEEN 1 AND 10").len(), 4);
    // A long span is not walked value by value, whatever the count.
    let huge = Router::new(
        &common::rule(&RULE.replace("sharding-count: 4", "sharding-count: 1000000000000")),
        Dialect::MySql,
    );
    let sql = "SELECT * FROM t_mod WHERE id BETWEEN 0 AND 1000000000";
    assert_eq!(nodes(&huge, sql, &[]).len(), 4);
    assert_eq!(modulo("id >= 5").len(), 4);
}

/// ShardingSphere's `DML_SHARDING_CONDITIONS` auditor on `t_order` (its sample configuration's).
const AUDITED: &str = two_sources!(
    r#"
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order
      databaseStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: by_order
      auditStrategy:
        auditorNames: [sharding_key_required_auditor]
        allowHintDisable: true
    t_free:
      actualDataNodes: ds_${0..1}.t_free
      databaseStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: by_order
  shardingAlgorithms:
    by_order:
      type: MOD
      props:
        sharding-count: 2
  auditors:
    sharding_key_required_auditor:
      type: DML_SHARDING_CONDITIONS
"#
);

#[test]
fn the_auditor_refuses_statements_that_would_read_every_shard() {
    let router = Router::new(&common::rule(AUDITED), Dialect::MySql);
    for sql in [
        "SELECT * FROM t_order",
        "SELECT * FROM t_order WHERE status = 'x'",
        "SELECT * FROM t_order WHERE order_id = 1 OR status = 'x'",
        "UPDATE t_order SET status = 'x'",
        "DELETE FROM t_order WHERE status = 'x'",
    ] {
        let error = route(&router, sql, &[]).unwrap_err();
        assert!(
            matches!(&error, RouteError::Unsupported(m) if m.contains("sharding_key_required_auditor")),
            "{sql}: {error}"
        );
    }
    for sql in [
        "SELECT * FROM t_order WHERE order_id = 1",
        "SELECT * FROM t_order WHERE order_id IN (1, 2) AND status = 'x'",
        "SELECT * FROM t_order WHERE order_id BETWEEN 1 AND 2",
        "UPDATE t_order SET status = 'x' WHERE order_id = ?",
        "INSERT INTO t_order (order_id, status) VALUES (1, 'x')",
        "SELECT * FROM t_free",
    ] {
        let params = [Value::Int(1)];
        assert!(route(&router, sql, &params).is_ok(), "{sql}");
    }
}

#[test]
fn hints_force_a_data_source_or_switch_auditors_off() {
    let router = Router::new(&common::rule(AUDITED), Dialect::MySql)
        .with_data_sources(vec!["ds_0".into(), "ds_1".into()], vec![]);
    let off = "/* SHARDINGSPHERE_HINT: disableAuditNames=sharding_key_required_auditor */ \
               SELECT * FROM t_order";
    assert_eq!(nodes(&router, off, &[]).len(), 2);
    // Only where the audit strategy allows it.
    let strict = Router::new(
        &common::rule(&AUDITED.replace("allowHintDisable: true", "allowHintDisable: false")),
        Dialect::MySql,
    );
    assert!(route(&strict, off, &[]).is_err());

    // As written, on the data source named: an actual table, a statement the router would
    // otherwise refuse.
    let forced = "/* SHARDINGSPHERE_HINT: dataSourceName=ds_1 */ SELECT * FROM t_order WHERE ? = 1";
    let plan = route(&router, forced, &[Value::Int(1)]).unwrap();
    assert_eq!(plan.units.len(), 1);
    assert_eq!(plan.units[0].data_source, "ds_1");
    assert_eq!(plan.units[0].sql, forced);
    assert_eq!(plan.units[0].params, [Value::Int(1)]);
    let unknown = "/* SHARDINGSPHERE_HINT: dataSourceName=ds_9 */ SELECT 1";
    assert!(
        route(&router, unknown, &[])
            .unwrap_err()
            .to_string()
            .contains("ds_9")
    );
    let skip =
        "/* SHARDINGSPHERE_HINT: skipSQLRewrite=true */ SELECT * FROM t_order WHERE order_id = 1";
    assert!(route(&router, skip, &[]).is_err());
}

/// `t_order` routed by hint alone: its data source by `SHARDING_DATABASE_VALUE`, its table by
/// `SHARDING_TABLE_VALUE`, each through HINT_INLINE (SS's `HintInlineShardingAlgorithmTest`:
/// `t_order_$->{value % 4}` of 1, 2, 3 is `t_order_1`, `t_order_2`, `t_order_3`).
const HINTED: &str = two_sources!(
    r#"
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..3}
      databaseStrategy:
        hint:
          shardingAlgorithmName: db_hint
      tableStrategy:
        hint:
          shardingAlgorithmName: t_hint
  shardingAlgorithms:
    db_hint:
      type: HINT_INLINE
      props:
        algorithm-expression: ds_${value % 2}
    t_hint:
      type: HINT_INLINE
      props:
        algorithm-expression: t_order_$->{value % 4}
"#
);

#[test]
fn hint_strategies_route_by_the_statements_hint() {
    let router = Router::new(&common::rule(HINTED), Dialect::MySql);
    let hint = |db: &str, table: &str| {
        format!(
            "/* SHARDINGSPHERE_HINT: t_order.SHARDING_DATABASE_VALUE={db}, \
             t_order.SHARDING_TABLE_VALUE={table} */ "
        )
    };
    for (value, table) in [(1, "t_order_1"), (2, "t_order_2"), (3, "t_order_3")] {
        let sql = format!("{}SELECT * FROM t_order", hint("1", &value.to_string()));
        assert_eq!(nodes(&router, &sql, &[]), [format!("ds_1.{table}")]);
    }
    // Either level alone narrows that level; no hint leaves every node.
    let db_only = "/* SHARDINGSPHERE_HINT: SHARDING_DATABASE_VALUE=0 */ SELECT * FROM t_order";
    assert_eq!(
        nodes(&router, db_only, &[]),
        (0..4)
            .map(|t| format!("ds_0.t_order_{t}"))
            .collect::<Vec<_>>()
    );
    assert_eq!(nodes(&router, "SELECT * FROM t_order", &[]).len(), 8);
    // A hint for another table changes nothing here.
    let other = "/* SHARDINGSPHERE_HINT: t_user.SHARDING_DATABASE_VALUE=0 */ SELECT * FROM t_order";
    assert_eq!(nodes(&router, other, &[]).len(), 8);
    // Writes: where the hint says, each row; without a hint an INSERT has no node to go to.
    let insert = format!(
        "{}INSERT INTO t_order (order_id, status) VALUES (1, 'a'), (2, 'b')",
        hint("0", "2")
    );
    let plan = route(&router, &insert, &[]).unwrap();
    assert_eq!(plan.units.len(), 1);
    assert_eq!(
        (
            plan.units[0].data_source.as_str(),
            plan.units[0].table.as_str()
        ),
        ("ds_0", "t_order_2")
    );
    assert!(
        plan.units[0].sql.contains("INSERT INTO t_order_2"),
        "{}",
        plan.units[0].sql
    );
    let e = route(&router, "INSERT INTO t_order (order_id) VALUES (1)", &[]).unwrap_err();
    assert!(
        e.to_string().contains("the hint's SHARDING_DATABASE_VALUE"),
        "{e}"
    );
    let update = format!(
        "{}UPDATE t_order SET status = 'c' WHERE order_id = 1",
        hint("1", "3")
    );
    assert_eq!(nodes(&router, &update, &[]), ["ds_1.t_order_3"]);
}

#[test]
fn hint_algorithms_and_strategies_must_match() {
    let load = |yaml: &str| keyshard_config::from_yaml_str(yaml, std::path::Path::new("."));
    // A hint strategy with an INLINE algorithm, and a standard one with HINT_INLINE.
    let wrong_algorithm = HINTED.replacen("type: HINT_INLINE", "type: INLINE", 1);
    let e = load(&wrong_algorithm).unwrap_err().to_string();
    assert!(
        e.contains("databaseStrategy.hint") && e.contains("HINT_INLINE"),
        "{e}"
    );
    let standard = HINTED.replacen(
        "hint:\n          shardingAlgorithmName: db_hint",
        "standard:\n          shardingColumn: user_id\n          shardingAlgorithmName: db_hint",
        1,
    );
    let e = load(&standard).unwrap_err().to_string();
    assert!(
        e.contains("databaseStrategy.standard") && e.contains("HINT_INLINE"),
        "{e}"
    );
    // HINT_INLINE's one variable is `value`; its default expression is `${value}`.
    let other_variable = HINTED.replacen("${value % 2}", "${user_id % 2}", 1);
    let e = load(&other_variable).unwrap_err().to_string();
    assert!(e.contains("user_id"), "{e}");
    let default = HINTED.replacen(
        "      props:\n        algorithm-expression: ds_${value % 2}\n",
        "",
        1,
    );
    let router = Router::new(&common::rule(&default), Dialect::MySql);
    let sql = "/* SHARDINGSPHERE_HINT: SHARDING_DATABASE_VALUE=ds_1 */ SELECT * FROM t_order";
    assert_eq!(nodes(&router, sql, &[]).len(), 4);
    assert!(
        nodes(&router, sql, &[])
            .iter()
            .all(|n| n.starts_with("ds_1."))
    );
}

#[test]
fn complex_strategies_route_by_all_their_columns_at_once() {
    for dialect in [Dialect::MySql, Dialect::Postgres] {
        let router = Router::new(&common::rule(common::T_ORDER_COMPLEX), dialect);
        let insert =
            "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 2, 'a'), (1, 1, 'b')";
        let plan = route(&router, insert, &[]).unwrap();
        let units: Vec<String> = plan
            .units
            .iter()
            .map(|u| format!("{}.{}", u.data_source, u.table))
            .collect();
        assert_eq!(units, ["ds_0.t_order_1", "ds_1.t_order_1"]);
        assert_eq!(
            plan.row_units
                .iter()
                .map(|u| units[*u].as_str())
                .collect::<Vec<_>>(),
            ["ds_1.t_order_1", "ds_0.t_order_1"]
        );
        let e = route(&router, "INSERT INTO t_order (order_id) VALUES (1)", &[]).unwrap_err();
        assert!(e.to_string().contains("user_id, order_id"), "{e}");

        let select = "SELECT * FROM t_order WHERE ";
        for (condition, want) in [
            ("user_id = 2 AND order_id = 1", vec!["ds_1.t_order_1"]),
            (
                "order_id = 1 AND status = 'a' AND user_id = 1",
                vec!["ds_0.t_order_1"],
            ),
            (
                "user_id IN (1, 2) AND order_id = 1",
                vec!["ds_0.t_order_1", "ds_1.t_order_1"],
            ),
            ("order_id = 1", vec!["ds_0.t_order_1", "ds_1.t_order_1"]),
            (
                "(user_id = 2 AND order_id = 1) OR (user_id = 4 AND order_id = 3)",
                vec!["ds_1.t_order_1"],
            ),
        ] {
            assert_eq!(
                nodes(&router, &format!("{select}{condition}"), &[]),
                want,
                "{condition}"
            );
        }
        assert_eq!(
            nodes(&router, &format!("{select}user_id = 2"), &[]).len(),
            4
        );
        let placeholders = match dialect {
            Dialect::MySql => "user_id = ? AND order_id = ?",
            Dialect::Postgres => "user_id = $1 AND order_id = $2",
        };
        let bound = nodes(
            &router,
            &format!("{select}{placeholders}"),
            &[Value::Int(2), Value::Int(1)],
        );
        assert_eq!(bound, ["ds_1.t_order_1"]);
        // A row's columns may be set to what the WHERE clause pins them to; anything else could
        // leave the row where its new pair does not send it, so it is refused.
        let pinned =
            "UPDATE t_order SET user_id = 2, status = 'x' WHERE user_id = 2 AND order_id = 1";
        assert_eq!(nodes(&router, pinned, &[]), ["ds_1.t_order_1"]);
        let moved = "UPDATE t_order SET user_id = 3 WHERE user_id = 2 AND order_id = 1";
        assert!(route(&router, moved, &[]).is_err(), "{moved}");
        let unpinned = "UPDATE t_order SET user_id = 3 WHERE order_id = 1";
        assert!(route(&router, unpinned, &[]).is_err(), "{unpinned}");
    }
}

#[test]
fn complex_algorithms_and_strategies_must_match() {
    let load = |yaml: &str| keyshard_config::from_yaml_str(yaml, std::path::Path::new("."));
    let inline = common::T_ORDER_COMPLEX
        .replacen("type: COMPLEX_INLINE", "type: INLINE", 1)
        .replacen("        sharding-columns: user_id,order_id\n", "", 1);
    let e = load(&inline).unwrap_err().to_string();
    assert!(
        e.contains("databaseStrategy.complex") && e.contains("COMPLEX_INLINE"),
        "{e}"
    );
    let unknown =
        common::T_ORDER_COMPLEX.replacen("(user_id + order_id)", "(user_id + item_id)", 1);
    let e = load(&unknown).unwrap_err().to_string();
    assert!(e.contains("item_id"), "{e}");
    let config = load(common::T_ORDER_COMPLEX).unwrap();
    let strategy = config.sharding.tables["t_order"]
        .database_strategy
        .clone()
        .unwrap();
    assert_eq!(
        (strategy.kind(), strategy.sharding_column()),
        ("COMPLEX", "user_id,order_id".to_owned())
    );
}
