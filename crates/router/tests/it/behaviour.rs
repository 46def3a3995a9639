//! The router's behaviour beyond ShardingSphere's own cases: real generators, both dialects,
//! every INSERT shape, and the errors a client sees.

use crate::common;

use std::sync::Arc;

use keyshard_keygen::Key;
use keyshard_router::{Other, Plan, Prepared, RouteError, Router};
use keyshard_types::{Dialect, Value};

fn router(yaml: &str, dialect: Dialect) -> Router {
    Router::new(&common::rule(yaml), dialect)
}

fn plan(router: &Router, sql: &str, params: &[Value]) -> Plan {
    router
        .plan(sql, params, &common::metadata())
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap_or_else(|o| panic!("{sql}: not planned: {o:?}"))
}

fn error(router: &Router, sql: &str, params: &[Value]) -> RouteError {
    match router.plan(sql, params, &common::metadata()) {
        Err(e) => e,
        Ok(other) => panic!("{sql}: expected an error, got {other:?}"),
    }
}

fn int(key: &Key) -> i64 {
    key.as_i64().unwrap()
}

/// A rule whose generator always returns `key`, to make expected SQL exact.
fn fixed(yaml: &str, dialect: Dialect) -> Router {
    Router::new(
        &common::with_generator(common::rule(yaml), Arc::new(common::ConstantOne)),
        dialect,
    )
}

#[test]
fn multi_row_insert_splits_over_four_nodes_with_one_block_of_keys() {
    let router = router(&common::T_ORDER, Dialect::MySql);
    let sql = "INSERT INTO t_order (user_id, status) VALUES (1, 'a'), (1, 'b'), (2, 'c'), (2, 'd'), (3, 'e'), (3, 'f'), (4, 'g'), (4, 'h')";
    let plan = plan(&router, sql, &[]);
    let keys: Vec<i64> = plan.generated_keys.iter().map(int).collect();
    assert_eq!(keys.len(), 8);
    // One block: consecutive integers, so last_insert_id + i is every row's key.
    assert!(keys.windows(2).all(|w| w[1] == w[0] + 1), "{keys:?}");
    assert_eq!(plan.units.len(), 4, "{plan:#?}");
    for (row, key) in keys.iter().enumerate() {
        let unit = &plan.units[plan.row_units[row]];
        // Consecutive keys alternate parity; user ids in pairs make all four combinations.
        let user_id = row as i64 / 2 + 1;
        assert_eq!(unit.data_source, format!("ds_{}", user_id % 2));
        assert_eq!(unit.table, format!("t_order_{}", key % 2));
        assert!(unit.rows.contains(&row));
        assert!(
            unit.sql.contains(&format!(
                "({user_id}, '{}', {key})",
                (b'a' + row as u8) as char
            )),
            "{}",
            unit.sql
        );
    }
    for unit in &plan.units {
        assert!(unit.sql.starts_with(&format!(
            "INSERT INTO {} (user_id, status, order_id) VALUES (",
            unit.table
        )));
        assert!(unit.params.is_empty());
    }
}

#[test]
fn postgres_placeholders_are_renumbered_per_unit_and_returning_is_kept() {
    let router = fixed(&common::T_ORDER, Dialect::Postgres);
    let sql = "INSERT INTO t_order (user_id, status) VALUES ($1, $2), ($3, $4) RETURNING order_id, status";
    let params = [
        Value::Int(10),
        Value::Text("x".into()),
        Value::Int(11),
        Value::Text("y".into()),
    ];
    let plan = plan(&router, sql, &params);
    assert_eq!(plan.units.len(), 2);
    let (ds0, ds1) = (&plan.units[0], &plan.units[1]);
    assert_eq!(
        (ds0.data_source.as_str(), ds0.table.as_str()),
        ("ds_0", "t_order_1")
    );
    assert_eq!(
        ds0.sql,
        "INSERT INTO t_order_1 (user_id, status, order_id) VALUES ($1, $2, $3) RETURNING order_id, status"
    );
    assert_eq!(
        ds0.params,
        [Value::Int(10), Value::Text("x".into()), Value::Int(1)]
    );
    assert_eq!(
        ds1.sql,
        "INSERT INTO t_order_1 (user_id, status, order_id) VALUES ($1, $2, $3) RETURNING order_id, status"
    );
    assert_eq!(
        ds1.params,
        [Value::Int(11), Value::Text("y".into()), Value::Int(1)]
    );
    assert_eq!(plan.row_units, [0, 1]);
}

#[test]
fn postgres_on_conflict_is_kept_with_its_parameters() {
    let router = fixed(&common::T_ORDER, Dialect::Postgres);
    let sql = "INSERT INTO t_order (user_id, status) VALUES ($2, 'n') ON CONFLICT (order_id) DO UPDATE SET status = $1";
    let plan = plan(&router, sql, &[Value::Text("dup".into()), Value::Int(4)]);
    assert_eq!(
        plan.units[0].sql,
        "INSERT INTO t_order_1 (user_id, status, order_id) VALUES ($1, 'n', $2) ON CONFLICT (order_id) DO UPDATE SET status = $3"
    );
    assert_eq!(
        plan.units[0].params,
        [Value::Int(4), Value::Int(1), Value::Text("dup".into())]
    );
}

#[test]
fn null_default_and_mysql_zero_keys_are_generated_in_place() {
    let router = fixed(&common::T_ORDER, Dialect::MySql);
    for given in ["NULL", "DEFAULT", "default", "0"] {
        let sql = format!("INSERT INTO t_order (order_id, user_id) VALUES ({given}, 2)");
        let plan = plan(&router, &sql, &[]);
        assert_eq!(
            plan.units[0].sql, "INSERT INTO t_order_1 (order_id, user_id) VALUES (1, 2)",
            "{given}"
        );
        assert_eq!(plan.generated_keys, [Key::Int(1)]);
    }
    // PostgreSQL has no AUTO_INCREMENT 0 rule: 0 is a key like any other.
    let router = fixed(&common::T_ORDER, Dialect::Postgres);
    let plan = plan(
        &router,
        "INSERT INTO t_order (order_id, user_id) VALUES (0, 2)",
        &[],
    );
    assert_eq!(
        plan.units[0].sql,
        "INSERT INTO t_order_0 (order_id, user_id) VALUES (0, 2)"
    );
    assert!(plan.generated_keys.is_empty());
}

#[test]
fn a_key_parameter_bound_to_null_or_zero_gets_a_generated_key() {
    let router = fixed(&common::T_ORDER, Dialect::MySql);
    let prepared = match router
        .prepare(
            "INSERT INTO t_order (order_id, user_id) VALUES (?, ?)",
            &common::metadata(),
        )
        .unwrap()
    {
        Prepared::Insert(p) => p,
        other => panic!("{other:?}"),
    };
    assert_eq!(prepared.param_count(), 2);
    for absent in [Value::Null, Value::Int(0)] {
        let plan = prepared.bind(&[absent, Value::Int(2)]).unwrap();
        assert_eq!(
            plan.units[0].sql,
            "INSERT INTO t_order_1 (order_id, user_id) VALUES (?, ?)"
        );
        assert_eq!(plan.units[0].params, [Value::Int(1), Value::Int(2)]);
        assert_eq!(plan.generated_keys, [Key::Int(1)]);
    }
    let plan = prepared.bind(&[Value::Int(6), Value::Int(3)]).unwrap();
    assert_eq!(
        (
            plan.units[0].data_source.as_str(),
            plan.units[0].table.as_str()
        ),
        ("ds_1", "t_order_0")
    );
    assert_eq!(plan.units[0].params, [Value::Int(6), Value::Int(3)]);
    assert!(plan.generated_keys.is_empty());
}

#[test]
fn each_execution_of_a_prepared_statement_generates_fresh_keys() {
    let router = router(&common::T_ORDER, Dialect::MySql);
    let Prepared::Insert(prepared) = router
        .prepare(
            "INSERT INTO t_order (user_id) VALUES (?), (?)",
            &common::metadata(),
        )
        .unwrap()
    else {
        panic!("not prepared");
    };
    let first = prepared.bind(&[Value::Int(1), Value::Int(1)]).unwrap();
    let second = prepared.bind(&[Value::Int(1), Value::Int(1)]).unwrap();
    assert_eq!(first.generated_keys.len(), 2);
    assert!(int(&second.generated_keys[0]) > int(&first.generated_keys[1]));
}

#[test]
fn replace_ignore_and_on_duplicate_key_update_with_qualified_columns() {
    let router = fixed(&common::T_ORDER, Dialect::MySql);
    let plan1 = plan(
        &router,
        "REPLACE INTO t_order (user_id, status) VALUES (1, 'a')",
        &[],
    );
    assert_eq!(
        plan1.units[0].sql,
        "REPLACE INTO t_order_1 (user_id, status, order_id) VALUES (1, 'a', 1)"
    );
    let plan2 = plan(
        &router,
        "INSERT IGNORE INTO t_order (user_id) VALUES (1)",
        &[],
    );
    assert_eq!(
        plan2.units[0].sql,
        "INSERT IGNORE INTO t_order_1 (user_id, order_id) VALUES (1, 1)"
    );
    let sql = "INSERT INTO t_order (user_id, status) VALUES (?, 'a'), (2, 'b') ON DUPLICATE KEY UPDATE t_order.status = VALUES(`T_ORDER`.status), user_id = ?";
    let plan3 = plan(&router, sql, &[Value::Int(1), Value::Int(9)]);
    assert_eq!(plan3.units.len(), 2);
    assert_eq!(
        plan3.units[0].sql,
        "INSERT INTO t_order_1 (user_id, status, order_id) VALUES (2, 'b', 1) ON DUPLICATE KEY UPDATE t_order_1.status = VALUES(`t_order_1`.status), user_id = ?"
    );
    assert_eq!(plan3.units[0].params, [Value::Int(9)]);
    assert_eq!(
        plan3.units[1].sql,
        "INSERT INTO t_order_1 (user_id, status, order_id) VALUES (?, 'a', ?) ON DUPLICATE KEY UPDATE t_order_1.status = VALUES(`t_order_1`.status), user_id = ?"
    );
    assert_eq!(
        plan3.units[1].params,
        [Value::Int(1), Value::Int(1), Value::Int(9)]
    );
    assert_eq!(plan3.row_units, [1, 0]);
}

#[test]
fn every_byte_outside_the_edits_is_copied_unchanged() {
    let router = fixed(&common::T_ORDER, Dialect::MySql);
    let sql = "/* lead */ INSERT  INTO\n`t_order`  (  `user_id` ,status /* c */ )\tVALUES ( 3 , 'it''s \\' \\\\ é 漢字 🙂' -- row\n )  ;";
    let plan = plan(&router, sql, &[]);
    assert_eq!(
        plan.units[0].sql,
        "/* lead */ INSERT  INTO\n`t_order_1`  (  `user_id` ,status, order_id /* c */ )\tVALUES ( 3 , 'it''s \\' \\\\ é 漢字 🙂' -- row\n , 1)  ;"
    );
}

#[test]
fn quoted_column_lists_get_a_quoted_key_column() {
    let router = fixed(&common::T_ORDER, Dialect::MySql);
    let plan = plan(
        &router,
        "INSERT INTO `t_order` (`user_id`, `status`) VALUES (1, 'x')",
        &[],
    );
    assert_eq!(
        plan.units[0].sql,
        "INSERT INTO `t_order_1` (`user_id`, `status`, `order_id`) VALUES (1, 'x', 1)"
    );
}

#[test]
fn insert_set_gets_the_key_as_a_literal_without_parameters() {
    let router = fixed(&common::T_ORDER, Dialect::MySql);
    let plan = plan(
        &router,
        "INSERT INTO t_order SET user_id = 1, status = CONCAT('a', 'b') ON DUPLICATE KEY UPDATE status = 'c'",
        &[],
    );
    assert_eq!(
        plan.units[0].sql,
        "INSERT INTO t_order_1 SET user_id = 1, status = CONCAT('a', 'b'), order_id = 1 ON DUPLICATE KEY UPDATE status = 'c'"
    );
    let plan = plan_set_default(&router);
    assert_eq!(
        plan.units[0].sql,
        "INSERT INTO t_order_1 SET order_id = 1, user_id = 5"
    );
}

fn plan_set_default(router: &Router) -> Plan {
    plan(
        router,
        "INSERT INTO t_order SET order_id = DEFAULT, user_id = 5",
        &[],
    )
}

#[test]
fn column_less_inserts_use_the_visible_columns() {
    let router = fixed(&common::T_ORDER, Dialect::MySql);
    // All visible columns given: the key is present.
    let plan1 = plan(&router, "INSERT INTO t_order VALUES (10, 3, 'x')", &[]);
    assert_eq!(
        plan1.units[0].sql,
        "INSERT INTO t_order_0 VALUES (10, 3, 'x')"
    );
    assert_eq!((plan1.units[0].data_source.as_str()), "ds_1");
    // One short: the key is absent and a column list is written out.
    let plan2 = plan(
        &router,
        "INSERT INTO t_order VALUES (3, 'x'), (4, 'y')",
        &[],
    );
    assert_eq!(
        plan2.units[0].sql,
        "INSERT INTO t_order_1(user_id, status, order_id) VALUES (4, 'y', 1)"
    );
    assert_eq!(
        plan2.units[1].sql,
        "INSERT INTO t_order_1(user_id, status, order_id) VALUES (3, 'x', 1)"
    );
    // A NULL key in the key's position is generated.
    let plan3 = plan(&router, "INSERT INTO t_order VALUES (NULL, 3, 'x')", &[]);
    assert_eq!(
        plan3.units[0].sql,
        "INSERT INTO t_order_1 VALUES (1, 3, 'x')"
    );
    let err = router
        .plan("INSERT INTO t_order VALUES (1)", &[], &common::metadata())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Column count doesn't match value count at row 1"
    );
    let err = router
        .plan(
            "INSERT INTO t_order VALUES (1, 2)",
            &[],
            &keyshard_router::NoMetadata,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot insert into 't_order' without a column list: its columns are not known"
    );
}

#[test]
fn uuid_keys_are_quoted_literals_or_parameters() {
    let yaml = common::T_ACCOUNT
        .replace("type: SNOWFLAKE", "type: UUID")
        .replace(
            "t_account_${account_id % 2}",
            "t_account_${account_id.length() % 2}",
        );
    // Inline expressions are integer arithmetic only; route UUIDs with HASH_MOD instead.
    assert!(keyshard_config::from_yaml_str(&yaml, std::path::Path::new(".")).is_err());
    let yaml = common::T_ACCOUNT
        .replace("type: SNOWFLAKE", "type: UUID")
        .replace("type: INLINE", "type: HASH_MOD")
        .replace(
            "algorithm-expression: t_account_${account_id % 2}",
            "sharding-count: 2",
        );
    let router = router(&yaml, Dialect::MySql);
    let plan1 = plan(&router, "INSERT INTO t_account (amount) VALUES (5)", &[]);
    let Key::Text(key) = &plan1.generated_keys[0] else {
        panic!("not text")
    };
    assert_eq!(
        plan1.units[0].sql,
        format!(
            "INSERT INTO {} (amount, account_id) VALUES (5, '{key}')",
            plan1.units[0].table
        )
    );
    let plan2 = plan(
        &router,
        "INSERT INTO t_account (amount) VALUES (?)",
        &[Value::Int(5)],
    );
    let Key::Text(key) = &plan2.generated_keys[0] else {
        panic!("not text")
    };
    assert_eq!(
        plan2.units[0].params,
        [Value::Int(5), Value::Text(key.clone())]
    );
}

#[test]
fn mod_and_hash_mod_route_like_shardingsphere() {
    let yaml = common::T_ACCOUNT
        .replace("type: INLINE", "type: MOD")
        .replace(
            "algorithm-expression: t_account_${account_id % 2}",
            "sharding-count: 2",
        );
    let router = router(&yaml, Dialect::MySql);
    let plan1 = plan(
        &router,
        "INSERT INTO t_account (account_id, amount) VALUES (7, 1), (-3, 1), (8, 1)",
        &[],
    );
    // -3 mod 2 is 1 (BigInteger.mod, never negative).
    assert_eq!(plan1.row_units, [1, 1, 0]);
    let yaml = yaml.replace("type: MOD", "type: HASH_MOD");
    let router = self::router(&yaml, Dialect::MySql);
    let plan2 = plan(
        &router,
        "INSERT INTO t_account (account_id, amount) VALUES ('abc', 1), ('abd', 1)",
        &[],
    );
    // "abc".hashCode() = 96354 (even), "abd" = 96355 (odd).
    assert_eq!(plan2.units[plan2.row_units[0]].table, "t_account_0");
    assert_eq!(plan2.units[plan2.row_units[1]].table, "t_account_1");
}

#[test]
fn statements_that_are_not_sharded_inserts_are_passed_back() {
    let router = router(&common::T_ORDER, Dialect::MySql);
    let meta = common::metadata();
    assert_eq!(
        router.plan("SHOW TABLES", &[], &meta).unwrap().unwrap_err(),
        Other::NotRouted
    );
    assert_eq!(
        router
            .plan("INSERT INTO t_user (name) VALUES ('x')", &[], &meta)
            .unwrap()
            .unwrap_err(),
        Other::UnshardedTable("t_user".into())
    );
    // Table names match case-insensitively.
    assert!(
        router
            .plan("INSERT INTO T_ORDER (user_id) VALUES (1)", &[], &meta)
            .unwrap()
            .is_ok()
    );
}

#[test]
fn clear_errors() {
    let router = router(&common::T_ORDER, Dialect::MySql);
    let cases: &[(&str, &[Value], &str)] = &[
        (
            "INSERT INTO t_order (status) VALUES ('x')",
            &[],
            "row 1: insert must route to exactly one data node, but it matches 2 (the statement does not set user_id)",
        ),
        (
            "INSERT INTO t_order (user_id) VALUES (1), (1 + 1)",
            &[],
            "row 2: cannot route by column 'user_id': its value is an expression; only literals and parameters can be routed",
        ),
        (
            "INSERT INTO t_order (user_id) VALUES (NULL)",
            &[],
            "row 1: cannot route by column 'user_id': NULL cannot be sharded by",
        ),
        (
            "INSERT INTO t_order (user_id) VALUES ('x')",
            &[],
            "row 1: cannot route by column 'user_id': 'x' in ds_${user_id % 2}: operator '%' needs integer operands, got string and integer",
        ),
        (
            "INSERT INTO t_order (user_id, status) VALUES (1)",
            &[],
            "Column count doesn't match value count at row 1",
        ),
        (
            "INSERT INTO t_order (user_id) VALUES (1), (1, 2)",
            &[],
            "Column count doesn't match value count at row 2",
        ),
        (
            "INSERT INTO t_order (user_id) SELECT user_id FROM t_order",
            &[],
            "INSERT INTO ... SELECT can not support applying key generator with absent generate key column",
        ),
        (
            "INSERT INTO t_order (order_id, user_id) SELECT order_id, user_id FROM t_order",
            &[],
            "not supported: INSERT … SELECT from a sharded table",
        ),
        (
            "INSERT INTO t_order (user_id) VALUES (?)",
            &[],
            "the statement uses parameter 1 but 0 were bound",
        ),
        (
            "INSERT INTO t_order (user_id) VALUES (1); SELECT 1",
            &[],
            "expected exactly one statement, found 2",
        ),
        (
            "INSERT INTO t_order (user_id) VALUES (1",
            &[],
            "sql parser error: Expected: ), found: EOF",
        ),
    ];
    for (sql, params, want) in cases {
        let got = error(&router, sql, params).to_string();
        assert!(got.starts_with(want), "{sql}\n got: {got}\nwant: {want}");
    }
}

#[test]
fn ddl_on_a_logic_table_goes_to_every_actual_table() {
    let router = router(&common::T_ORDER, Dialect::MySql);
    let meta = common::metadata();
    let ddl = |sql: &str| match router.prepare(sql, &meta).unwrap() {
        Prepared::Ddl(ddl) => ddl,
        other => panic!("{sql}: {other:?}"),
    };
    let create = ddl(
        "CREATE TABLE IF NOT EXISTS `t_order` (order_id BIGINT PRIMARY KEY, user_id INT) -- t_order",
    );
    assert_eq!(create.logic_table, "t_order");
    let units: Vec<(String, String)> = create
        .plan
        .units
        .iter()
        .map(|u| (u.data_source.clone(), u.sql.clone()))
        .collect();
    assert_eq!(
        units,
        [
            ("ds_0", "t_order_0"),
            ("ds_0", "t_order_1"),
            ("ds_1", "t_order_0"),
            ("ds_1", "t_order_1")
        ]
        .map(|(ds, t)| (
            ds.to_owned(),
            format!("CREATE TABLE IF NOT EXISTS `{t}` (order_id BIGINT PRIMARY KEY, user_id INT) -- t_order")
        ))
    );
    assert_eq!(
        ddl("DROP TABLE t_order").plan.units[3].sql,
        "DROP TABLE t_order_1"
    );
    assert_eq!(
        ddl("TRUNCATE TABLE T_ORDER").plan.units[0].sql,
        "TRUNCATE TABLE t_order_0"
    );
    assert_eq!(
        ddl("ALTER TABLE t_order ADD COLUMN note TEXT").plan.units[1].sql,
        "ALTER TABLE t_order_1 ADD COLUMN note TEXT"
    );
    // Index names are per schema in PostgreSQL and SQLite: each actual table gets its own.
    assert_eq!(
        ddl("CREATE INDEX idx_user ON t_order (user_id)").plan.units[1].sql,
        "CREATE INDEX idx_user_t_order_1 ON t_order_1 (user_id)"
    );
    assert_eq!(
        ddl("DROP INDEX idx_user ON t_order").plan.units[2].sql,
        "DROP INDEX idx_user_t_order_0 ON t_order_0"
    );
    // MySQL's qualifier is the logical database, which the shards do not have; PostgreSQL's
    // is a schema, which they do (a restored pg_dump creates `public.t_order` with an empty
    // search_path).
    assert_eq!(
        ddl("DROP TABLE sharding_db.t_order").plan.units[0].sql,
        "DROP TABLE t_order_0"
    );
    let postgres = Router::new(&common::rule(&common::T_ORDER), Dialect::Postgres);
    let pg_ddl = |sql: &str| match postgres.prepare(sql, &meta).unwrap() {
        Prepared::Ddl(ddl) => ddl.plan.units[1].sql.clone(),
        other => panic!("{sql}: {other:?}"),
    };
    assert_eq!(
        pg_ddl("CREATE TABLE public.\"t_order\" (order_id int8)"),
        "CREATE TABLE public.\"t_order_1\" (order_id int8)"
    );
    // pg_dump's primary key, named after the first shard's: its index is per schema too.
    assert_eq!(
        pg_ddl(
            "ALTER TABLE ONLY public.t_order ADD CONSTRAINT t_order_0_pkey PRIMARY KEY (order_id)"
        ),
        "ALTER TABLE ONLY public.t_order_1 ADD CONSTRAINT t_order_0_pkey_t_order_1 PRIMARY KEY (order_id)"
    );
    // Tables without a rule are not planned while the router knows no data source.
    assert!(matches!(
        router
            .prepare("CREATE TABLE t_user (id INT)", &meta)
            .unwrap(),
        Prepared::Other(Other::UnshardedTable(t)) if t == "t_user"
    ));
    let err = router
        .prepare("DROP TABLE t_order, t_user", &meta)
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("not supported: DDL naming several tables"),
        "{err}"
    );
}

/// SQLAlchemy's `add_all` and Django's `bulk_create` on PostgreSQL: the SELECT reads no sharded
/// table, so it runs on one data source, and its rows become an ordinary multi-row INSERT.
#[test]
fn insert_select_from_values_or_unnest_runs_its_select_then_inserts_the_rows() {
    let router = fixed(&common::T_ORDER, Dialect::Postgres);
    let sql = "INSERT INTO t_order (user_id, status) SELECT p0::INTEGER, p1::VARCHAR FROM \
               (VALUES ($1, $2, 0), ($3, $4, 1)) AS imp_sen(p0, p1, sen_counter) \
               ORDER BY sen_counter RETURNING t_order.order_id, t_order.order_id AS order_id__1";
    let Ok(Prepared::InsertSelect(select)) = router.prepare(sql, &common::metadata()) else {
        panic!("{sql}: not an INSERT … SELECT");
    };
    assert_eq!(select.param_count(), 4);
    let params = [
        Value::Int(1),
        Value::Text("a".into()),
        Value::Int(2),
        Value::Text("b".into()),
    ];
    let source = select.source().bind(&params);
    assert_eq!(source.units.len(), 1);
    assert_eq!(
        source.units[0].sql,
        "SELECT p0::INTEGER, p1::VARCHAR FROM (VALUES ($1, $2, 0), ($3, $4, 1)) AS \
         imp_sen(p0, p1, sen_counter) ORDER BY sen_counter"
    );
    assert_eq!(source.units[0].params, params);
    let rows = [
        vec![Value::Int(1), Value::Text("it's".into())],
        vec![Value::Int(2), Value::Null],
    ];
    let values = select.with_rows(&rows).unwrap();
    assert_eq!(
        values,
        "INSERT INTO t_order (user_id, status) VALUES (1, 'it''s'), (2, NULL) RETURNING \
         t_order.order_id, t_order.order_id AS order_id__1"
    );
    assert!(select.with_rows(&[]).is_none());
    let plan = plan(&router, &values, &[]);
    assert_eq!(plan.generated_keys.len(), 2);

    let unnest = "INSERT INTO t_order (user_id, status) SELECT * FROM \
                  UNNEST('{3,4}'::integer[], '{c,d}'::varchar[]) RETURNING order_id";
    let prepared = router.prepare(unnest, &common::metadata());
    assert!(
        matches!(prepared, Ok(Prepared::InsertSelect(_))),
        "{prepared:?}"
    );
    let outside = "INSERT INTO t_order (user_id, status) SELECT 1, 'x' WHERE true \
                   ON CONFLICT (order_id) DO UPDATE SET status = $1";
    let err = router.prepare(outside, &common::metadata()).unwrap_err();
    assert!(
        err.to_string().contains("a parameter outside the SELECT"),
        "{err}"
    );
}

/// MariaDB's `NEXT VALUE FOR` / `PREVIOUS VALUE FOR`, which the parser does not read: as
/// written where unsharded tables live, refused on a sharded table.
#[test]
fn statements_on_mariadb_sequences_go_where_unsharded_tables_live() {
    let router = router(&common::T_ORDER, Dialect::MySql)
        .with_data_sources(vec!["ds_0".into(), "ds_1".into()], Vec::new());
    for (sql, params, read) in [
        ("SELECT NEXT VALUE FOR s", 0, true),
        ("select previous  value\nfor `db`.`s`", 0, true),
        ("INSERT INTO t_plain VALUES (NEXT VALUE FOR s, ?)", 1, false),
        (
            "CREATE TABLE t_seq (id BIGINT DEFAULT NEXT VALUE FOR s PRIMARY KEY)",
            0,
            false,
        ),
    ] {
        let Some(Ok(Prepared::Direct(direct))) = router.prepare_unparsed(sql) else {
            panic!("{sql}");
        };
        assert_eq!(
            (direct.param_count(), direct.is_read()),
            (params, read),
            "{sql}"
        );
        let plan = direct.bind(&[]);
        assert_eq!(plan.units.len(), 1, "{sql}");
        assert_eq!(plan.units[0].data_source, "ds_0", "{sql}");
        assert_eq!(plan.units[0].sql, sql);
    }
    assert!(matches!(
        router.prepare_unparsed("INSERT INTO t_order VALUES (NEXT VALUE FOR s, 1)"),
        Some(Err(RouteError::Unsupported(_)))
    ));
    for none in [
        "SELECT 'next value for' FROM t",
        "SELECT `next` value for s",
        "SELEC 1",
    ] {
        assert!(router.prepare_unparsed(none).is_none(), "{none}");
    }
    let postgres = Router::new(&common::rule(&common::T_ORDER), Dialect::Postgres);
    assert!(
        postgres
            .prepare_unparsed("SELECT NEXT VALUE FOR s")
            .is_none()
    );
}

/// A type, a domain or an extension may be a column type of a sharded table's actual tables on
/// any data source: defining one runs on every data source, as a broadcast write does; other
/// statements of kinds the router does not plan stay on the default data source.
#[test]
fn type_definitions_run_on_every_data_source() {
    let router = router(&common::T_ORDER, Dialect::Postgres)
        .with_data_sources(vec!["ds_0".into(), "ds_1".into()], Vec::new());
    for sql in [
        "CREATE TYPE mood AS ENUM ('sad', 'ok')",
        "ALTER TYPE mood ADD VALUE 'happy'",
        "DROP TYPE mood",
        "CREATE DOMAIN price AS numeric(8,2) CHECK (VALUE >= 0)",
        "DROP DOMAIN price",
        "CREATE EXTENSION IF NOT EXISTS citext",
        "DROP EXTENSION citext",
    ] {
        let p = plan(&router, sql, &[]);
        let sources: Vec<&str> = p.units.iter().map(|u| u.data_source.as_str()).collect();
        assert_eq!(sources, ["ds_0", "ds_1"], "{sql}");
        assert!(p.units.iter().all(|u| u.sql == sql), "{sql}");
        assert!(p.replicated, "{sql}");
    }
    let p = plan(&router, "CREATE SEQUENCE s", &[]);
    assert_eq!(p.units.len(), 1);
    assert_eq!(p.units[0].data_source, "ds_0");
}

/// Gene keys (`gene-bits: 4` on t_order's generator): each generated key carries its row's
/// `user_id`'s low 4 bits, so a read, update or delete by the key alone goes to the one node
/// `user_id` chose; a given key that would be looked for on another node than its row's is
/// refused; on MySQL a multi-row INSERT's keys are not `LAST_INSERT_ID() + i`, so it is refused
/// without RETURNING.
#[test]
fn gene_keys_route_by_the_key_alone() {
    let yaml = common::T_ORDER.replace(
        "max-vibration-offset: 3",
        "max-vibration-offset: 3\n        gene-bits: 4",
    );
    let router = router(&yaml, Dialect::Postgres);
    let node = |plan: &Plan| {
        assert_eq!(plan.units.len(), 1, "{plan:#?}");
        (
            plan.units[0].data_source.clone(),
            plan.units[0].table.clone(),
        )
    };
    for user_id in 0..40_i64 {
        let insert = format!("INSERT INTO t_order (user_id, status) VALUES ({user_id}, 'x')");
        let inserted = plan(&router, &insert, &[]);
        let key = int(&inserted.generated_keys[0]);
        assert_eq!(key & 15, user_id & 15, "{key:#x}");
        assert!(inserted.units[0].sql.contains(&key.to_string()));
        let at = node(&inserted);
        assert_eq!(
            at,
            (
                format!("ds_{}", user_id % 2),
                format!("t_order_{}", key % 2)
            )
        );
        for (sql, params) in [
            (
                format!("SELECT status FROM t_order WHERE order_id = {key}"),
                vec![],
            ),
            (
                "SELECT status FROM t_order WHERE order_id = $1".into(),
                vec![Value::Int(key)],
            ),
            (
                format!("UPDATE t_order SET status = 'y' WHERE order_id = {key}"),
                vec![],
            ),
            (
                format!("DELETE FROM t_order WHERE order_id = {key}"),
                vec![],
            ),
        ] {
            assert_eq!(node(&plan(&router, &sql, &params)), at, "{sql}");
        }
    }
    // Several rows, each key its own row's gene.
    let sql = "INSERT INTO t_order (user_id, status) VALUES (1, 'a'), (2, 'b'), (3, 'c')";
    let keys: Vec<i64> = plan(&router, sql, &[])
        .generated_keys
        .iter()
        .map(int)
        .collect();
    assert_eq!(keys.iter().map(|k| k & 15).collect::<Vec<_>>(), [1, 2, 3]);
    // A given key must be found where its row goes: 17 carries 1, as user 3 does (both odd).
    plan(
        &router,
        "INSERT INTO t_order (order_id, user_id) VALUES (17, 3)",
        &[],
    );
    let e = error(
        &router,
        "INSERT INTO t_order (order_id, user_id) VALUES (16, 3)",
        &[],
    );
    assert!(e.to_string().contains("gene"), "{e}");
    let e = error(&router, "INSERT INTO t_order (user_id) VALUES (-1)", &[]);
    assert!(e.to_string().contains("non-negative"), "{e}");
    // A key as text says nothing sure (MySQL compares it with a BIGINT as a double, so it
    // finds neighbouring keys too): every node its other conditions allow.
    let any = plan(
        &router,
        "SELECT status FROM t_order WHERE order_id = '17'",
        &[],
    );
    assert!(any.units.len() > 1, "{any:#?}");
    let double = plan(
        &router,
        "SELECT status FROM t_order WHERE order_id = $1",
        &[Value::Double(17.0)],
    );
    assert_eq!(node(&double), ("ds_1".to_owned(), "t_order_1".to_owned()));

    let mysql = self::router(&yaml, Dialect::MySql);
    plan(&mysql, "INSERT INTO t_order (user_id) VALUES (1)", &[]);
    let e = error(&mysql, "INSERT INTO t_order (user_id) VALUES (1), (2)", &[]);
    assert!(e.to_string().contains("RETURNING"), "{e}");
}

/// A table sharded by its key alone, whose generator has gene bits (all SNOWFLAKE generators
/// share one layout): its keys' gene bits repeat the bits above them, so `account_id % 2`
/// spreads rows as the sequence does.
#[test]
fn gene_bits_without_a_gene_repeat_the_sequence() {
    let yaml = common::T_ACCOUNT.replace(
        "      type: SNOWFLAKE\n",
        "      type: SNOWFLAKE\n      props:\n        gene-bits: 4\n        max-vibration-offset: 3\n",
    );
    let router = router(&yaml, Dialect::Postgres);
    let mut tables = std::collections::HashSet::new();
    for _ in 0..40 {
        let plan = plan(&router, "INSERT INTO t_account (amount) VALUES (1)", &[]);
        let key = int(&plan.generated_keys[0]);
        assert_eq!(key & 15, (key >> 4) & 15, "{key:#x}");
        tables.insert(plan.units[0].table.clone());
    }
    assert_eq!(tables.len(), 2, "{tables:?}");
}

#[test]
fn only_one_row_of_plain_values_may_share_a_batch_with_other_sessions() {
    for dialect in [Dialect::MySql, Dialect::Postgres] {
        let router = router(&common::T_ORDER, dialect);
        let joins = |sql: &str| {
            let plan = plan(&router, sql, &[]);
            let batch = plan.batch_row?;
            Some(plan.units[0].sql[batch.row].to_owned())
        };
        let row = joins("INSERT INTO t_order (user_id, status) VALUES (1, 'a''b')").unwrap();
        assert!(
            row.starts_with("(1, 'a''b', ") && row.ends_with(')'),
            "{row}"
        );
        assert!(
            joins("INSERT INTO t_order (user_id, status) VALUES (1, CAST(-1 AS CHAR(3)))")
                .is_some()
        );
        // The key slot may hold what asks for a key.
        assert!(
            joins("INSERT INTO t_order (order_id, user_id, status) VALUES (DEFAULT, 1, 'a')")
                .is_some()
        );
        for sql in [
            "INSERT INTO t_order (user_id, status) VALUES (1, 'a'), (2, 'b')",
            "INSERT INTO t_order (user_id, status) VALUES (1, concat('a', 'b'))",
            "INSERT INTO t_order (user_id, status) VALUES (1, (SELECT 'x'))",
        ] {
            assert_eq!(joins(sql), None, "{sql}");
        }
        let placeholder = match dialect {
            Dialect::MySql => "?",
            Dialect::Postgres => "$1",
        };
        let sql = format!("INSERT INTO t_order (user_id, status) VALUES ({placeholder}, 'a')");
        let plan = plan(&router, &sql, &[Value::Int(1)]);
        let batch = plan
            .batch_row
            .expect("a row with a parameter may join a batch");
        let marks: Vec<&str> = (batch.placeholders.iter())
            .map(|&at| &plan.units[0].sql[at..at + 2])
            .collect();
        // PostgreSQL's are numbered: where each is, so that a batch numbers them on.
        match dialect {
            Dialect::MySql => assert!(marks.is_empty()),
            // The generated key goes in as a parameter too.
            Dialect::Postgres => assert_eq!(marks, ["$1", "$2"]),
        }
    }
    let mysql = router(&common::T_ORDER, Dialect::MySql);
    for sql in [
        "INSERT IGNORE INTO t_order (user_id, status) VALUES (1, 'a')",
        "REPLACE INTO t_order (user_id, status) VALUES (1, 'a')",
        "INSERT INTO t_order (user_id, status) VALUES (1, 'a') ON DUPLICATE KEY UPDATE status = 'b'",
        "INSERT INTO t_order SET user_id = 1, status = 'a'",
    ] {
        assert_eq!(plan(&mysql, sql, &[]).batch_row, None, "{sql}");
    }
    let pg = router(&common::T_ORDER, Dialect::Postgres);
    for sql in [
        "INSERT INTO t_order (user_id, status) VALUES (1, 'a') RETURNING order_id",
        "INSERT INTO t_order (user_id, status) VALUES (1, 'a') ON CONFLICT DO NOTHING",
        "INSERT INTO t_order (user_id, status) VALUES (1, now()::text)",
    ] {
        assert_eq!(plan(&pg, sql, &[]).batch_row, None, "{sql}");
    }
}
