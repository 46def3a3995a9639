//! Loading whole configurations: the sample from the design brief, the shipped default, and one
//! test per validation error, each checking the exact path-naming message.

use std::path::Path;

use crate::inline::Value;
use crate::{Algorithm, Config, ConfigError, DatabaseKind, TransactionType, from_yaml_str};

const SAMPLE: &str = r#"
server:
  mysql:
    listen: 127.0.0.1:3307
  postgres:
    listen: 127.0.0.1:5433
authority:
  users:
    - user: root@%
      password: root
    - user: app
      password: 123456
props:
  sql-show: true
databaseName: sharding_db
dataSources:
  ds_0:
    url: sqlite://data/ds_0.db
  ds_1:
    url: mysql://root@127.0.0.1:3306/shop_1
    maxPoolSize: 16
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard:
          shardingColumn: user_id
          shardingAlgorithmName: db_inline
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: t_inline
      keyGenerateStrategy:
        column: order_id
        keyGeneratorName: snowflake
    T_Order_Item:
      actualDataNodes: ds_${0..1}.t_order_item_${0..1}
      tableStrategy:
        none:
    t_user:
      actualDataNodes: ds_0.t_user
  bindingTables:
    - t_order, t_order_item
  defaultDatabaseStrategy:
    standard:
      shardingColumn: user_id
      shardingAlgorithmName: db_inline
  defaultTableStrategy:
    standard:
      shardingColumn: id
      shardingAlgorithmName: mod4
  defaultKeyGenerateStrategy:
    column: id
    keyGeneratorName: uuid
  defaultDataSource: ds_0
  shardingAlgorithms:
    db_inline:
      type: INLINE
      props:
        algorithm-expression: ds_${user_id % 2}
    t_inline:
      type: INLINE
      props:
        algorithm-expression: t_order_$->{order_id % 2}
        allow-range-query-with-inline-sharding: true
    mod4:
      type: mod
      props:
        sharding-count: 4
  keyGenerators:
    snowflake:
      type: SNOWFLAKE
      props:
        worker-id: 1
        max-vibration-offset: 3
    uuid:
      type: UUID
- !BROADCAST
  tables: [t_dict]
"#;

fn load(text: &str) -> Result<Config, ConfigError> {
    from_yaml_str(text, Path::new("/srv/keyshard"))
}

#[test]
fn a_data_source_may_refuse_pinned_session_state() {
    let strict = SAMPLE.replacen(
        "maxPoolSize: 16",
        "maxPoolSize: 16\n    sessionState: strict",
        1,
    );
    let config = load(&strict).unwrap();
    assert!(config.data_sources["ds_1"].pool.strict_session_state);
    let error = error_with("maxPoolSize: 16", "sessionState: loose");
    assert!(
        error.contains("dataSources.ds_1.sessionState") && error.contains("pin or strict"),
        "{error}"
    );
}

/// The message of loading `SAMPLE` with `from` replaced by `to`.
fn error_with(from: &str, to: &str) -> String {
    assert!(SAMPLE.contains(from), "sample has no {from:?}");
    match load(&SAMPLE.replacen(from, to, 1)) {
        Ok(_) => panic!("{from:?} -> {to:?} loaded"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn sample_loads_with_defaults_resolved() {
    let config = load(SAMPLE).unwrap();
    assert_eq!(config.server.mysql, Some("127.0.0.1:3307".parse().unwrap()));
    assert_eq!(
        config.server.postgres,
        Some("127.0.0.1:5433".parse().unwrap())
    );
    assert_eq!(config.users[0].name, "root");
    assert_eq!(config.users[0].host.as_deref(), Some("%"));
    assert_eq!(config.users[1].password, "123456");
    assert!(config.props.sql_show);
    assert_eq!(config.database_name, "sharding_db");

    let ds0 = &config.data_sources["ds_0"];
    assert_eq!(
        (ds0.kind, ds0.url.as_str()),
        (DatabaseKind::Sqlite, "sqlite:///srv/keyshard/data/ds_0.db")
    );
    assert_eq!(config.data_sources["ds_1"].pool.max_size, Some(16));
    assert!(!config.data_sources["ds_1"].pool.strict_session_state);

    let sharding = &config.sharding;
    let order = sharding.table("T_ORDER").unwrap();
    let nodes: Vec<String> = order.data_nodes.iter().map(ToString::to_string).collect();
    assert_eq!(
        nodes,
        [
            "ds_0.t_order_0",
            "ds_0.t_order_1",
            "ds_1.t_order_0",
            "ds_1.t_order_1"
        ]
    );
    assert_eq!(order.data_source_names(), ["ds_0", "ds_1"]);
    let db = order.database_strategy.as_ref().unwrap();
    assert_eq!(
        (db.column.as_str(), db.algorithm_name.as_str()),
        ("user_id", "db_inline")
    );
    let Algorithm::Inline {
        expression,
        allow_range_query,
    } = &*order.table_strategy.as_ref().unwrap().algorithm
    else {
        panic!("t_inline is INLINE");
    };
    assert!(*allow_range_query);
    assert_eq!(
        expression.evaluate_with(Value::Int(7)).unwrap(),
        "t_order_1"
    );
    let key = order.key_generate.as_ref().unwrap();
    assert_eq!(
        (key.column.as_str(), key.generator_name.as_str()),
        ("order_id", "snowflake")
    );
    assert_eq!(key.generator.type_name(), "SNOWFLAKE");
    // One shared instance per generator name.
    assert!(std::sync::Arc::ptr_eq(
        &key.generator,
        &config.key_generators.get("snowflake").unwrap()
    ));

    // Explicit `none` overrides the default table strategy; the database default is inherited.
    let item = sharding.table("t_order_item").unwrap();
    assert_eq!(item.logic_table, "T_Order_Item");
    assert!(item.table_strategy.is_none());
    assert_eq!(
        item.database_strategy.as_ref().unwrap().algorithm_name,
        "db_inline"
    );
    assert_eq!(item.key_generate.as_ref().unwrap().generator_name, "uuid");

    let user = sharding.table("t_user").unwrap();
    let table = user.table_strategy.as_ref().unwrap();
    assert_eq!(
        (table.column.as_str(), &*table.algorithm),
        ("id", &Algorithm::Mod { sharding_count: 4 })
    );

    assert_eq!(
        sharding.binding_groups,
        [vec!["t_order".to_owned(), "t_order_item".to_owned()]]
    );
    assert_eq!(sharding.binding_group("T_ORDER_ITEM").unwrap().len(), 2);
    assert_eq!(sharding.default_data_source.as_deref(), Some("ds_0"));
    assert!(config.is_broadcast_table("T_DICT"));
    assert!(sharding.table("t_dict").is_none());
}

#[test]
fn minimal_config_uses_defaults() {
    let config =
        load("databaseName: db\ndataSources:\n  ds:\n    url: \"sqlite::memory:\"\n").unwrap();
    assert_eq!(config.server.mysql, Some("127.0.0.1:3307".parse().unwrap()));
    assert_eq!(config.server.postgres, None);
    assert!(config.users.is_empty());
    assert!(!config.props.sql_show);
    assert_eq!(config.props.max_connections_per_query, 1);
    assert!(config.sharding.is_empty());
    assert_eq!(config.data_sources["ds"].url, "sqlite::memory:");
}

#[test]
fn connections_per_query_are_shardingspheres_prop() {
    let with = |n: &str| {
        SAMPLE.replacen(
            "  sql-show: true",
            &format!("  sql-show: true\n  max-connections-size-per-query: {n}"),
            1,
        )
    };
    let config = load(&with("4")).unwrap();
    assert_eq!(config.props.max_connections_per_query, 4);
    let error = load(&with("0")).unwrap_err().to_string();
    assert!(
        error.contains("props.max-connections-size-per-query"),
        "{error}"
    );
}

#[test]
fn cache_bounds_are_props() {
    let sized = SAMPLE.replacen(
        "  sql-show: true",
        "  sql-show: true\n  shape-cache-entries: 10\n  column-cache-bytes: 65536",
        1,
    );
    let props = load(&sized).unwrap().props;
    let defaults = crate::Props::default();
    assert_eq!(props.shape_cache.entries, 10);
    assert_eq!(props.shape_cache.bytes, defaults.shape_cache.bytes);
    assert_eq!(props.column_cache.bytes, 65536);
    assert_eq!(props.column_cache.entries, 1024);
}

#[test]
fn tls_paths_are_relative_to_the_file_and_plain_by_default() {
    let base = "databaseName: db\ndataSources:\n  ds:\n    url: \"sqlite::memory:\"\n";
    assert_eq!(load(base).unwrap().server.tls, None);
    let tls = "server:\n  mysql:\n    listen: 127.0.0.1:0\n  tls:\n    certificate: tls/cert.pem\n    \
               key: /etc/keyshard/key.pem\n";
    let config = load(&format!("{tls}{base}")).unwrap();
    let tls = config.server.tls.unwrap();
    assert_eq!(tls.certificate, Path::new("/srv/keyshard/tls/cert.pem"));
    assert_eq!(tls.key, Path::new("/etc/keyshard/key.pem"));
    assert!(!tls.required);
    let error = load(&format!(
        "server:\n  mysql:\n    listen: 127.0.0.1:0\n  tls:\n    certificate: c.pem\n{base}"
    ))
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("server.tls") && error.contains("key"),
        "{error}"
    );
}

#[test]
fn worker_threads_default_to_one() {
    let base = "databaseName: db\ndataSources:\n  ds:\n    url: \"sqlite::memory:\"\n";
    assert_eq!(load(base).unwrap().server.worker_threads, 1);
    let server = |threads: &str| {
        format!("server:\n  mysql:\n    listen: 127.0.0.1:0\n  workerThreads: {threads}\n{base}")
    };
    assert_eq!(load(&server("1")).unwrap().server.worker_threads, 1);
    assert_eq!(load(&server("4")).unwrap().server.worker_threads, 4);
    assert_eq!(load(&server("0")).unwrap().server.worker_threads, 0);
    let error = load(&server("5000")).unwrap_err().to_string();
    assert!(
        error.contains("server.workerThreads") && error.contains("5000"),
        "{error}"
    );
    assert!(load(&server("-1")).is_err());
}

#[test]
fn table_without_strategies_or_nodes_is_on_every_data_source_unsharded() {
    let text = "databaseName: db\ndataSources:\n  a:\n    url: \"sqlite::memory:\"\n  b:\n    url: \"sqlite::memory:\"\nrules:\n- !SHARDING\n  tables:\n    t: {}\n";
    let config = load(text).unwrap();
    let t = config.sharding.table("t").unwrap();
    assert_eq!(
        t.data_nodes
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["a.t", "b.t"]
    );
    assert!(
        t.database_strategy.is_none() && t.table_strategy.is_none() && t.key_generate.is_none()
    );
}

#[test]
fn reference_errors_name_path_and_value() {
    assert_eq!(
        error_with("keyGeneratorName: snowflake", "keyGeneratorName: snowflak"),
        "rules[0].tables.t_order.keyGenerateStrategy.keyGeneratorName: no key generator named 'snowflak'"
    );
    assert_eq!(
        error_with(
            "shardingAlgorithmName: t_inline",
            "shardingAlgorithmName: t_inlin"
        ),
        "rules[0].tables.t_order.tableStrategy.standard.shardingAlgorithmName: no sharding algorithm named 't_inlin'"
    );
    assert_eq!(
        error_with("ds_${0..1}.t_order_${0..1}", "ds_${0..2}.t_order_${0..1}"),
        "rules[0].tables.t_order.actualDataNodes: no data source named 'ds_2'"
    );
    assert_eq!(
        error_with("t_order, t_order_item", "t_order, t_ordr_item"),
        "rules[0].bindingTables[0]: no sharded table named 't_ordr_item'"
    );
    assert_eq!(
        error_with("defaultDataSource: ds_0", "defaultDataSource: ds_9"),
        "rules[0].defaultDataSource: no data source named 'ds_9'"
    );
    assert_eq!(
        error_with("actualDataNodes: ds_0.t_user", "actualDataNodes: t_user"),
        "rules[0].tables.t_user.actualDataNodes: data node 't_user' is not of the form <data source>.<table>"
    );
    assert_eq!(
        error_with("tables: [t_dict]", "tables: [t_dict, T_ORDER]"),
        "rules[1].tables[1]: table 'T_ORDER' is both sharded and broadcast"
    );
}

#[test]
fn algorithm_errors_name_path_and_value() {
    assert_eq!(
        error_with("ds_${user_id % 2}", "ds_${user_id.hashCode() % 2}"),
        "rules[0].shardingAlgorithms.db_inline.props.algorithm-expression: unsupported syntax at column 13: \
         '.hashCode()' (method calls and property access are not supported)"
    );
    // Each strategy that uses it so: the default and t_order's own.
    assert_eq!(
        error_with("ds_${user_id % 2}", "ds_${order_id % 2}"),
        "rules[0].defaultDatabaseStrategy.standard: algorithm 'db_inline' uses variable 'order_id' \
         but the sharding column is 'user_id'\nrules[0].tables.t_order.databaseStrategy.standard: \
         algorithm 'db_inline' uses variable 'order_id' but the sharding column is 'user_id'"
    );
    assert_eq!(
        error_with("sharding-count: 4", "sharding-count: 0"),
        "rules[0].shardingAlgorithms.mod4.props.sharding-count: expected a positive integer, got '0'"
    );
    assert_eq!(
        error_with("sharding-count: 4", "sharding-cnt: 4"),
        "rules[0].shardingAlgorithms.mod4.props: unknown property 'sharding-cnt' for MOD (allowed: sharding-count)"
    );
    assert_eq!(
        error_with(
            "type: mod\n      props:\n        sharding-count: 4",
            "type: HASH_MOD"
        ),
        "rules[0].shardingAlgorithms.mod4.props: missing property 'sharding-count'"
    );
    assert_eq!(
        error_with("type: mod", "type: VOLUME_RANGE"),
        "rules[0].shardingAlgorithms.mod4.props: unknown property 'sharding-count' for VOLUME_RANGE \
         (allowed: range-lower, range-upper, sharding-volume)"
    );
    assert_eq!(
        error_with("type: mod", "type: CLASS_BASED"),
        "rules[0].shardingAlgorithms.mod4.type: unsupported sharding algorithm type 'CLASS_BASED' \
         (supported: INLINE, MOD, HASH_MOD, VOLUME_RANGE, BOUNDARY_RANGE, AUTO_INTERVAL, INTERVAL, \
         COMPLEX_INLINE, HINT_INLINE; CLASS_BASED runs a Java class, which Keyshard cannot)"
    );
    assert_eq!(
        error_with(
            "type: mod\n      props:\n        sharding-count: 4",
            "type: INTERVAL\n      props:\n        datetime-pattern: yyyy-MM-dd\n        \
             datetime-lower: '2021-01-01'\n        sharding-suffix-pattern: yyyyMMdd\n        \
             datetime-interval-unit: HOURS"
        ),
        "rules[0].shardingAlgorithms.mod4.props: datetime-interval-unit Hours does not apply to \
         values of datetime-pattern 'yyyy-MM-dd'"
    );
    assert_eq!(
        error_with("worker-id: 1", "worker-id: 1024"),
        "rules[0].keyGenerators.snowflake: property 'worker-id' = '1024' is invalid: expected an integer \
         from 0 to 1023"
    );
    assert_eq!(
        error_with("tableStrategy:\n        none:", "tableStrategy: {}"),
        "rules[0].tables.T_Order_Item.tableStrategy: expected exactly one of 'standard', 'complex', 'hint' or 'none'"
    );
}

#[test]
fn shape_errors_name_path() {
    assert_eq!(
        error_with("- !BROADCAST", "- !ENCRYPT"),
        "rules[1]: unsupported rule '!ENCRYPT' (supported: !SHARDING, !READWRITE_SPLITTING, !BROADCAST, !SINGLE, \
         !TRANSACTION, !AUTHORITY; ShardingSphere's engine settings such as !SQL_PARSER load with \
         a warning)"
    );
    let unknown = error_with(
        "actualDataNodes: ds_0.t_user",
        "actualDataNode: ds_0.t_user",
    );
    assert!(
        unknown.starts_with(
            "rules[0].tables.t_user: unknown field `actualDataNode`, expected one of `actualDataNodes`"
        ),
        "{unknown}"
    );
    assert_eq!(
        error_with("sql-show: true", "sql-shown: true"),
        "props.sql-shown: unknown setting 'sql-shown' (neither Keyshard's nor ShardingSphere's)"
    );
    assert_eq!(
        error_with("listen: 127.0.0.1:5433", "listen: 127.0.0.1"),
        "server.postgres.listen: expected an address such as 127.0.0.1:3307, got '127.0.0.1'"
    );
    assert_eq!(
        load("databaseName: db\ndataSources: {}\n")
            .unwrap_err()
            .to_string(),
        "dataSources: at least one data source is required"
    );
}

#[test]
fn data_source_errors_name_path() {
    let err = error_with(
        "url: mysql://root@127.0.0.1:3306/shop_1",
        "url: oracle://h/db",
    );
    assert!(
        err.starts_with("dataSources.ds_1.url: unsupported database URL 'oracle://h/db'"),
        "{err}"
    );
    assert_eq!(
        error_with(
            "url: mysql://root@127.0.0.1:3306/shop_1",
            "url: mysql://${KEYSHARD_TEST_SURELY_UNSET_9F2}/db"
        ),
        "dataSources.ds_1.url: environment variable 'KEYSHARD_TEST_SURELY_UNSET_9F2' is not set"
    );
}

#[test]
fn jdbc_url_alias_credentials_and_env_placeholders() {
    // SAFETY: the variable name is unique to this test and only this test reads it; no other
    // thread of the test binary touches it.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("KEYSHARD_CONFIG_TEST_PW_7C1", "p@ss word");
    }
    let text = SAMPLE.replacen(
        "url: mysql://root@127.0.0.1:3306/shop_1",
        "jdbcUrl: jdbc:mysql://127.0.0.1:3306/shop_1?serverTimezone=UTC\n    username: app\n    password: ${KEYSHARD_CONFIG_TEST_PW_7C1}",
        1,
    );
    let config = load(&text).unwrap();
    let ds = &config.data_sources["ds_1"];
    assert_eq!(ds.kind, DatabaseKind::MySql);
    assert_eq!(
        ds.url,
        "mysql://app:p%40ss%20word@127.0.0.1:3306/shop_1?serverTimezone=UTC"
    );
    assert_eq!(
        ds.redacted_url(),
        "mysql://app:***@127.0.0.1:3306/shop_1?serverTimezone=UTC"
    );
}

#[test]
fn shipped_default_loads_and_spreads_over_four_tables() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config");
    let from_file = crate::load(&dir.join("keyshard.yaml")).unwrap();
    let embedded = from_yaml_str(crate::embedded_default(), &dir).unwrap();
    for config in [&from_file, &embedded] {
        let order = config.sharding.table("t_order").unwrap();
        assert_eq!(order.data_nodes.len(), 4);
        assert_eq!(
            order.key_generate.as_ref().unwrap().generator.type_name(),
            "SNOWFLAKE"
        );
        assert_eq!(config.users[0].name, "root");
        assert_eq!(config.server.mysql, Some("127.0.0.1:3307".parse().unwrap()));
    }
    let url = &from_file.data_sources["ds_0"].url;
    assert!(
        url.starts_with("sqlite:///") && url.ends_with("/config/../data/ds_0.db"),
        "{url}"
    );
}

#[test]
fn without_mode_the_first_data_source_is_the_repository() {
    let config = load(SAMPLE).unwrap();
    assert_eq!(config.mode.kind, crate::ModeType::Standalone);
    match &config.mode.repository {
        crate::Repository::Jdbc { data_source } => assert_eq!(data_source.name, "ds_0"),
        other => panic!("{other:?}"),
    }
    assert_eq!(config.mode.timing, crate::Timing::default());
    // Chosen by sort order, which a new data source can change: said, with the fix.
    assert!(
        config
            .warnings
            .iter()
            .any(|w| w.starts_with("mode.repository: none is named")
                && w.ends_with("mode.repository.props.data-source: ds_0")),
        "{:?}",
        config.warnings
    );
}

#[test]
fn the_repository_can_be_a_data_source_by_name() {
    let named = |name: &str| {
        format!(
            "mode:\n  type: Cluster\n  repository:\n    type: JDBC\n    props:\n      \
             data-source: {name}\n{SAMPLE}"
        )
    };
    let config = load(&named("ds_1")).unwrap();
    match &config.mode.repository {
        crate::Repository::Jdbc { data_source } => assert_eq!(data_source.name, "ds_1"),
        other => panic!("{other:?}"),
    }
    assert!(
        config
            .warnings
            .iter()
            .all(|w| !w.starts_with("mode.repository"))
    );
    let unknown = load(&named("ds_9")).unwrap_err().to_string();
    assert_eq!(
        unknown,
        "mode.repository.props.data-source: expected the name of a data source under \
         dataSources, got 'ds_9'"
    );
}

#[test]
fn mode_takes_shardingsphere_properties() {
    let zookeeper = "mode:\n  type: Cluster\n  repository:\n    type: ZooKeeper\n    props:\n      \
                     namespace: fleet\n      server-lists: zk1:2181,zk2:2181\n      \
                     timeToLiveSeconds: 20\n      operationTimeoutMilliseconds: 800\n      \
                     retryIntervalMilliseconds: 100\n      maxRetries: 5\n      digest: u:p\n";
    let config = load(&format!("{zookeeper}{SAMPLE}")).unwrap();
    assert_eq!(config.mode.kind, crate::ModeType::Cluster);
    assert_eq!(
        config.mode.repository,
        crate::Repository::ZooKeeper {
            server_lists: "zk1:2181,zk2:2181".into(),
            namespace: "fleet".into(),
            digest: Some("u:p".into()),
        }
    );
    let timing = config.mode.timing;
    assert_eq!(timing.time_to_live, std::time::Duration::from_secs(20));
    assert_eq!(
        timing.operation_timeout,
        std::time::Duration::from_millis(800)
    );
    assert_eq!(timing.retry_interval, std::time::Duration::from_millis(100));
    assert_eq!(timing.max_retries, 5);

    let jdbc = "mode:\n  type: Standalone\n  repository:\n    type: JDBC\n    props:\n      \
                jdbc_url: jdbc:postgresql://db:5432/keyshard\n      username: ks\n      \
                password: pw\n      provider: MySQL\n";
    let config = load(&format!("{jdbc}{SAMPLE}")).unwrap();
    match &config.mode.repository {
        crate::Repository::Jdbc { data_source } => {
            assert_eq!(data_source.kind, DatabaseKind::Postgres);
            assert_eq!(data_source.url, "postgres://ks:pw@db:5432/keyshard");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn mode_errors_name_path_and_value() {
    let message = |mode: &str| match load(&format!("{mode}{SAMPLE}")) {
        Ok(_) => panic!("{mode} loaded"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        message("mode:\n  type: Fleet\n"),
        "mode.type: expected Standalone or Cluster, got 'Fleet'"
    );
    assert_eq!(
        message("mode:\n  type: Cluster\n  repository:\n    type: Etcd\n"),
        "mode.repository.type: expected JDBC or ZooKeeper, got 'Etcd'"
    );
    assert_eq!(
        message("mode:\n  type: Cluster\n  repository:\n    type: ZooKeeper\n"),
        "mode.repository.props: missing property 'server-lists'"
    );
    assert!(
        message(
            "mode:\n  type: Cluster\n  repository:\n    type: ZooKeeper\n    props:\n      \
             server-lists: zk:2181\n      jdbc_url: x\n"
        )
        .starts_with("mode.repository.props.jdbc_url: ")
    );
    assert_eq!(
        message(
            "mode:\n  type: Cluster\n  repository:\n    type: JDBC\n    props:\n      \
             timeToLiveSeconds: 1\n"
        ),
        "mode.repository.props.timeToLiveSeconds: expected a positive integer, got '1'"
    );
}

#[test]
fn generator_props_take_env_placeholders() {
    // SAFETY: the variable name is unique to this test and only this test reads it.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("KEYSHARD_CONFIG_TEST_WORKER_9F2", "7");
    }
    let config = load(&SAMPLE.replacen(
        "worker-id: 1",
        "worker-id: ${KEYSHARD_CONFIG_TEST_WORKER_9F2}",
        1,
    ))
    .unwrap();
    let (_, snowflake) = config.key_generators.iter().next().unwrap();
    assert_eq!(snowflake.props["worker-id"], "7");
    assert_eq!(
        error_with(
            "worker-id: 1",
            "worker-id: ${KEYSHARD_CONFIG_TEST_UNSET_4B1}"
        ),
        "rules[0].keyGenerators.snowflake.props.worker-id: environment variable \
         'KEYSHARD_CONFIG_TEST_UNSET_4B1' is not set"
    );
}

#[test]
fn transaction_rule_sets_the_default_type() {
    assert_eq!(
        load(SAMPLE).unwrap().transaction_type,
        TransactionType::Local
    );
    let xa = SAMPLE.replacen(
        "- !BROADCAST",
        "- !TRANSACTION\n  defaultType: XA\n  providerType: Atomikos\n  props:\n    a: 1\n- !BROADCAST",
        1,
    );
    assert_eq!(load(&xa).unwrap().transaction_type, TransactionType::Xa);
    assert_eq!(
        error_with(
            "- !BROADCAST",
            "- !TRANSACTION\n  defaultType: BASE\n- !BROADCAST"
        ),
        "rules[1].defaultType: expected LOCAL or XA (BASE is not supported), got 'BASE'"
    );
}

/// `gene-bits` on t_order's generator: its keys carry `user_id`'s low bits, which its data
/// source's `ds_${user_id % 2}` routes by. A table whose algorithm reads more of the value
/// than those bits loads without gene keys, with a warning naming the algorithm.
#[test]
fn gene_keys_carry_the_other_sharding_column() {
    let genes = SAMPLE.replacen(
        "max-vibration-offset: 3",
        "max-vibration-offset: 3\n        gene-bits: 4",
        1,
    );
    let config = load(&genes).unwrap();
    let gene = config.sharding.tables["t_order"].gene.clone().unwrap();
    assert_eq!(
        (gene.key_column.as_str(), gene.column.as_str(), gene.bits),
        ("order_id", "user_id", 4)
    );
    assert_eq!((gene.of(0x1234_5677), gene.of(-1)), (Some(7), None));
    assert!(config.sharding.tables["t_user"].gene.is_none());
    assert!(config.warnings.iter().all(|w| !w.contains("gene keys")));
    for to in ["ds_${(user_id + 1) % 2}", "ds_${user_id % 32}"] {
        let config = load(&genes.replacen("ds_${user_id % 2}", to, 1)).unwrap();
        assert!(config.sharding.tables["t_order"].gene.is_none());
        let warning = config
            .warnings
            .iter()
            .find(|w| w.contains("gene keys"))
            .unwrap();
        assert!(
            warning.contains("tables.t_order") && warning.contains("db_inline"),
            "{warning}"
        );
    }
}

/// Problems of different kinds are all reported in one run, and what names a bad item is not
/// reported again: a bad algorithm (and not the tables that use it), a bad table, a binding
/// group naming an unknown table (but not one naming the bad table), an unknown default data
/// source.
#[test]
fn every_kind_of_problem_is_reported_in_one_run() {
    let text = SAMPLE
        .replacen("sharding-count: 4", "sharding-count: 0", 1)
        .replacen(
            "actualDataNodes: ds_0.t_user",
            "actualDataNodes: ds_9.t_user",
            1,
        )
        .replacen(
            "    - t_order, t_order_item",
            "    - t_order, t_order_item\n    - t_user, t_nowhere",
            1,
        )
        .replacen("defaultDataSource: ds_0", "defaultDataSource: ds_7", 1);
    let error = load(&text).unwrap_err().to_string();
    let lines: Vec<&str> = error.lines().collect();
    assert_eq!(lines.len(), 4, "{error}");
    for (line, wanted) in lines.iter().zip([
        "shardingAlgorithms.mod4.props.sharding-count",
        "tables.t_user.actualDataNodes",
        "bindingTables[1]: no sharded table named 't_nowhere'",
        "defaultDataSource",
    ]) {
        assert!(line.contains(wanted), "{line} / {wanted}\n{error}");
    }
}

/// SS's `DATABASE_PERMITTED`: each user the databases its `user-database-mappings` list (host
/// parts aside, as Keyshard does not match hosts), `*` for all.
#[test]
fn database_permitted_maps_users_to_their_databases() {
    let privilege = "authority:\n  privilege:\n    type: DATABASE_PERMITTED\n    props:\n      \
                     user-database-mappings: root@%=*, app@127.0.0.1=sharding_db, app@%=logs_db\n";
    let text = SAMPLE.replace("authority:\n", privilege);
    let config = load(&text).unwrap();
    let user = |name: &str| config.users.iter().find(|u| u.name == name).unwrap();
    assert_eq!(user("root").databases, None);
    assert_eq!(
        user("app").databases.as_deref(),
        Some(&["sharding_db".to_owned(), "logs_db".to_owned()][..])
    );
    assert!(user("app").may_use("LOGS_DB") && !user("app").may_use("orders_db"));

    let bad = SAMPLE.replace(
        "authority:\n",
        "authority:\n  privilege:\n    type: DATABASE_PERMITTED\n    props:\n      \
         user-database-mappings: root@%\n",
    );
    let error = load(&bad).unwrap_err().to_string();
    assert!(
        error.contains("authority.privilege.props.user-database-mappings")
            && error.contains("root@%"),
        "{error}"
    );
    let other = SAMPLE.replace(
        "authority:\n",
        "authority:\n  privilege:\n    type: SOMETHING_ELSE\n",
    );
    let error = load(&other).unwrap_err().to_string();
    assert!(error.contains("DATABASE_PERMITTED"), "{error}");
}
