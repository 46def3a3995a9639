//! ShardingSphere-Proxy 5.x's own sample configurations load unchanged: its `global.yaml`
//! (engine settings, `transaction:`, ZooKeeper mode) and `database-sharding.yaml` (auditors,
//! binding and broadcast tables) in one file, and the other forms its versions write.

use std::path::Path;

use crate::{Config, TransactionType, from_yaml_str};

fn load(text: &str) -> Result<Config, String> {
    from_yaml_str(text, Path::new("/tmp")).map_err(|e| e.to_string())
}

/// SS-Proxy 5.4's `conf/global.yaml` and the MySQL half of `conf/database-sharding.yaml`,
/// uncommented, as one file.
const PROXY_SAMPLE: &str = r#"
mode:
  type: Cluster
  repository:
    type: ZooKeeper
    props:
      namespace: governance_ds_1
      server-lists: localhost:2181
      retryIntervalMilliseconds: 500
      timeToLiveSeconds: 60
      maxRetries: 3
      operationTimeoutMilliseconds: 500
authority:
  users:
    - user: root@%
      password: root
    - user: sharding
      password: sharding
  privilege:
    type: ALL_PERMITTED
transaction:
  defaultType: XA
  providerType: Atomikos
sqlParser:
  sqlStatementCache:
    initialCapacity: 2000
    maximumSize: 65535
  parseTreeCache:
    initialCapacity: 128
    maximumSize: 1024
logging:
  loggers:
  - loggerName: ShardingSphere-SQL
    additivity: true
    level: INFO
    props:
      enable: false
sqlFederation:
  sqlFederationEnabled: false
  executionPlanCache:
    initialCapacity: 2000
    maximumSize: 65535
props:
  system-log-level: INFO
  max-connections-size-per-query: 1
  kernel-executor-size: 16  # Infinite by default.
  proxy-frontend-flush-threshold: 128  # The default value is 128.
  sql-show: false
  check-table-metadata-enabled: false
  proxy-backend-query-fetch-size: -1
  proxy-frontend-executor-size: 0
  proxy-frontend-max-connections: 0 # Less than or equal to 0 means no limitation.
  proxy-default-port: 3307 # Proxy default port.
  proxy-netty-backlog: 1024 # Proxy netty backlog.
  cdc-server-port: 33071 # CDC server port
  proxy-frontend-ssl-enabled: false
  proxy-frontend-ssl-cipher: ''
  proxy-frontend-ssl-version: TLSv1.2,TLSv1.3

databaseName: sharding_db

dataSources:
  ds_0:
    url: jdbc:mysql://127.0.0.1:3306/demo_ds_0?useSSL=false
    username: root
    password:
    connectionTimeoutMilliseconds: 30000
    idleTimeoutMilliseconds: 60000
    maxLifetimeMilliseconds: 1800000
    maxPoolSize: 50
    minPoolSize: 1
  ds_1:
    url: jdbc:mysql://127.0.0.1:3306/demo_ds_1?useSSL=false
    username: root
    password:
    connectionTimeoutMilliseconds: 30000
    idleTimeoutMilliseconds: 60000
    maxLifetimeMilliseconds: 1800000
    maxPoolSize: 50
    minPoolSize: 1

rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: t_order_inline
      keyGenerateStrategy:
        column: order_id
        keyGeneratorName: snowflake
      auditStrategy:
        auditorNames:
          - sharding_key_required_auditor
        allowHintDisable: true
    t_order_item:
      actualDataNodes: ds_${0..1}.t_order_item_${0..1}
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: t_order_item_inline
      keyGenerateStrategy:
        column: order_item_id
        keyGeneratorName: snowflake
  bindingTables:
    - t_order,t_order_item
  defaultDatabaseStrategy:
    standard:
      shardingColumn: user_id
      shardingAlgorithmName: database_inline
  defaultTableStrategy:
    none:
  defaultAuditStrategy:
    auditorNames:
      - sharding_key_required_auditor
    allowHintDisable: true

  shardingAlgorithms:
    database_inline:
      type: INLINE
      props:
        algorithm-expression: ds_${user_id % 2}
    t_order_inline:
      type: INLINE
      props:
        algorithm-expression: t_order_${order_id % 2}
    t_order_item_inline:
      type: INLINE
      props:
        algorithm-expression: t_order_item_${order_id % 2}

  keyGenerators:
    snowflake:
      type: SNOWFLAKE

  auditors:
    sharding_key_required_auditor:
      type: DML_SHARDING_CONDITIONS

- !BROADCAST
  tables:
    - t_address
"#;

#[test]
fn proxy_sample_loads_unchanged() {
    let config = load(PROXY_SAMPLE).unwrap();
    assert_eq!(config.transaction_type, TransactionType::Xa);
    assert_eq!(config.users.len(), 2);
    assert_eq!(config.broadcast_tables, ["t_address"]);
    assert_eq!(
        config.sharding.binding_groups,
        [vec!["t_order".to_owned(), "t_order_item".to_owned()]]
    );
    for table in ["t_order", "t_order_item"] {
        let rule = config.sharding.table(table).unwrap();
        assert_eq!(rule.auditors, ["sharding_key_required_auditor"]);
    }
    // 0 is ShardingSphere's "no limit": Keyshard's default stays.
    assert_eq!(config.props.max_connections, 10_000);
    let warned: Vec<&str> = config
        .warnings
        .iter()
        .map(|w| w.split(':').next().unwrap_or_default())
        .collect();
    for setting in [
        "sqlParser",
        "sqlFederation",
        "logging",
        "props.kernel-executor-size",
        "props.proxy-frontend-ssl-version",
    ] {
        assert!(warned.contains(&setting), "{setting} not in {warned:?}");
    }
    assert!(!warned.contains(&"props.sql-show"), "{warned:?}");
}

#[test]
fn other_versions_forms_load() {
    // SS 5.0–5.3: broadcast tables inside the sharding rule, global rules as tags.
    let older = PROXY_SAMPLE
        .replace("- !BROADCAST\n  tables:\n    - t_address\n", "")
        .replace(
            "  bindingTables:",
            "  broadcastTables:\n    - t_address\n  bindingTables:",
        )
        .replace(
            "transaction:\n  defaultType: XA\n  providerType: Atomikos\n",
            "",
        )
        + "- !TRANSACTION\n  defaultType: XA\n- !SQL_PARSER\n  sqlCommentParseEnabled: true\n";
    let config = load(&older).unwrap();
    assert_eq!(config.broadcast_tables, ["t_address"]);
    assert_eq!(config.transaction_type, TransactionType::Xa);
    assert!(config.warnings.iter().any(|w| w.contains("!SQL_PARSER")));

    // SS 5.4+'s named binding groups, as a string or as YAML reads `name: tables`.
    for group in ["ref_0:t_order,t_order_item", "ref_0: t_order, t_order_item"] {
        let named = PROXY_SAMPLE.replace("- t_order,t_order_item", &format!("- {group}"));
        let config = load(&named).unwrap();
        assert_eq!(
            config.sharding.binding_groups,
            [vec!["t_order".to_owned(), "t_order_item".to_owned()]],
            "{group}"
        );
    }

    // !SINGLE, and HikariCP's own names in a ShardingSphere-JDBC file.
    let single = PROXY_SAMPLE.replace("    maxPoolSize: 50\n", "    maximumPoolSize: 7\n")
        + "- !SINGLE\n  tables:\n    - \"*.*\"\n    - ds_1.t_audit\n  defaultDataSource: ds_1\n";
    let config = load(&single).unwrap();
    assert_eq!(config.data_sources["ds_0"].pool.max_size, Some(7));
    assert_eq!(config.sharding.default_data_source.as_deref(), Some("ds_1"));
    assert_eq!(config.sharding.single_tables.len(), 2);
}

/// SS 5.x's auto tables, as DistSQL's `CREATE SHARDING TABLE RULE t_auto (STORAGE_UNITS(ds_0,
/// ds_1), SHARDING_COLUMN=id, TYPE(NAME='mod', PROPERTIES('sharding-count'='4')))` stores them.
#[test]
fn auto_tables_are_numbered_over_their_data_sources() {
    let auto = PROXY_SAMPLE.replace(
        "  auditors:",
        "  autoTables:
    t_auto:
      actualDataSources: ds_${0..1}
      shardingStrategy:
        standard:
          shardingColumn: id
          shardingAlgorithmName: t_auto_mod
      keyGenerateStrategy:
        column: id
        keyGeneratorName: snowflake
  auditors:",
    )
    .replace(
        "  shardingAlgorithms:",
        "  shardingAlgorithms:\n    t_auto_mod:\n      type: MOD\n      props:\n        sharding-count: 4",
    );
    let config = load(&auto).unwrap();
    let rule = config.sharding.table("t_auto").unwrap();
    let nodes: Vec<String> = rule.data_nodes.iter().map(|n| n.to_string()).collect();
    assert_eq!(
        nodes,
        [
            "ds_0.t_auto_0",
            "ds_1.t_auto_1",
            "ds_0.t_auto_2",
            "ds_1.t_auto_3"
        ]
    );
    assert!(rule.database_strategy.is_none());
    assert_eq!(rule.table_strategy.as_ref().unwrap().column, "id");
    assert_eq!(rule.key_generate.as_ref().unwrap().column, "id");
    // The rule's default auditor applies to it too.
    assert_eq!(rule.auditors, ["sharding_key_required_auditor"]);

    // Without actualDataSources, over every data source in the order they are written (as
    // ShardingSphere does), not in name order: here ds_1 first.
    let ds_0 = &auto[auto.find("  ds_0:").unwrap()..auto.find("  ds_1:").unwrap()];
    let reordered = auto
        .replacen(ds_0, "", 1)
        .replacen("\nrules:", &format!("{ds_0}\nrules:"), 1)
        .replacen("      actualDataSources: ds_${0..1}\n", "", 1);
    let config = load(&reordered).unwrap();
    let nodes: Vec<String> = config
        .sharding
        .table("t_auto")
        .unwrap()
        .data_nodes
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert_eq!(
        nodes,
        [
            "ds_1.t_auto_0",
            "ds_0.t_auto_1",
            "ds_1.t_auto_2",
            "ds_0.t_auto_3"
        ]
    );
    assert!(
        load(&auto.replacen("  ds_1:", "  ds_0:", 1))
            .unwrap_err()
            .contains("given twice")
    );
}

/// SS 5.5+'s `keyGenerateStrategies` in place of the tables' own `keyGenerateStrategy`.
#[test]
fn key_generate_strategies_name_each_tables_key() {
    let newest = PROXY_SAMPLE
        .replace(
            "      keyGenerateStrategy:\n        column: order_id\n        keyGeneratorName: snowflake\n",
            "",
        )
        .replace(
            "  shardingAlgorithms:",
            "  keyGenerateStrategies:
    t_order_order_id:
      keyGenerateType: column
      keyGeneratorName: snowflake
      logicTable: t_order
      keyGenerateColumn: order_id
  shardingAlgorithms:",
        );
    let config = load(&newest).unwrap();
    let key = config
        .sharding
        .table("t_order")
        .unwrap()
        .key_generate
        .as_ref();
    assert_eq!(key.map(|k| k.column.as_str()), Some("order_id"));
    // Both forms for one table, a sequence, an unknown table: named.
    let twice = PROXY_SAMPLE.replace(
        "  shardingAlgorithms:",
        "  keyGenerateStrategies:\n    k:\n      keyGenerateType: column\n      keyGeneratorName: \
         snowflake\n      logicTable: t_order\n      keyGenerateColumn: order_id\n  shardingAlgorithms:",
    );
    assert_eq!(
        load(&twice).unwrap_err(),
        "rules[0].keyGenerateStrategies.k: table 't_order' has its own keyGenerateStrategy already"
    );
    let sequence = newest.replace("keyGenerateType: column", "keyGenerateType: sequence");
    assert!(
        load(&sequence)
            .unwrap_err()
            .contains("is not supported yet")
    );
    let unknown = newest.replace("logicTable: t_order", "logicTable: t_nothing");
    assert!(
        load(&unknown)
            .unwrap_err()
            .contains("no sharded table named 't_nothing'")
    );
}

/// `keyshard check` reports every bad data source, algorithm or table of a file at once.
#[test]
fn every_problem_of_a_kind_is_reported_in_one_run() {
    let urls = PROXY_SAMPLE
        .replace("jdbc:mysql://127.0.0.1:3306/demo_ds_0", "oracle://h/a")
        .replace("jdbc:mysql://127.0.0.1:3306/demo_ds_1", "db2://h/b");
    let error = load(&urls).unwrap_err();
    let lines: Vec<&str> = error.lines().collect();
    assert_eq!(lines.len(), 2, "{error}");
    assert!(lines[0].starts_with("dataSources.ds_0.url"), "{error}");
    assert!(lines[1].starts_with("dataSources.ds_1.url"), "{error}");

    let tables = PROXY_SAMPLE
        .replace(
            "shardingAlgorithmName: t_order_inline",
            "shardingAlgorithmName: nope_1",
        )
        .replace(
            "shardingAlgorithmName: t_order_item_inline",
            "shardingAlgorithmName: nope_2",
        );
    let error = load(&tables).unwrap_err();
    assert!(
        error.contains("no sharding algorithm named 'nope_1'"),
        "{error}"
    );
    assert!(
        error.contains("no sharding algorithm named 'nope_2'"),
        "{error}"
    );

    let algorithms = PROXY_SAMPLE
        .replace("type: SNOWFLAKE", "type: SNOWFLAKES")
        .replace(
            "algorithm-expression: t_order_item_${order_id % 2}",
            "algorithm-expression: t_${",
        );
    assert_eq!(load(&algorithms).unwrap_err().lines().count(), 2);

    let rules = PROXY_SAMPLE.to_owned()
        + "- !ENCRYPT
  tables: {}
- !MASK
  tables: {}
";
    assert_eq!(load(&rules).unwrap_err().lines().count(), 2);
}

#[test]
fn what_keyshard_cannot_honour_is_named() {
    let with = |from: &str, to: &str| {
        assert!(PROXY_SAMPLE.contains(from), "{from}");
        load(&PROXY_SAMPLE.replacen(from, to, 1)).unwrap_err()
    };
    // A rule Keyshard does not implement is named before anything else can fail on it.
    let shadow = PROXY_SAMPLE.replace("ds_${0..1}.t_order_${0..1}", "shadow_ds.t_order_${0..1}")
        + "- !SHADOW\n  dataSources: {}\n";
    let error = load(&shadow).unwrap_err();
    assert!(
        error.starts_with("rules[2]: unsupported rule '!SHADOW'"),
        "{error}"
    );
    assert_eq!(
        with("kernel-executor-size: 16", "kernel-executor-sise: 16"),
        "props.kernel-executor-sise: unknown setting 'kernel-executor-sise' (neither Keyshard's \
         nor ShardingSphere's)"
    );
    assert_eq!(
        with("type: DML_SHARDING_CONDITIONS", "type: CUSTOM"),
        "rules[0].auditors.sharding_key_required_auditor.type: unsupported auditor type 'CUSTOM' \
         (supported: DML_SHARDING_CONDITIONS)"
    );
    assert!(
        with(
            "          - sharding_key_required_auditor\n        allowHintDisable",
            "          - nobody\n        allowHintDisable"
        )
        .contains("no auditor named 'nobody'")
    );
    assert_eq!(
        with(
            "  defaultTableStrategy:\n    none:",
            "  defaultTableStrategy:\n    complex:\n      shardingColumns: user_id\n      \
             shardingAlgorithmName: database_inline"
        ),
        "rules[0].defaultTableStrategy.complex.shardingAlgorithmName: 'database_inline' is \
         INLINE: a hint strategy takes a HINT_INLINE algorithm and a complex one COMPLEX_INLINE, \
         and only they do"
    );
    assert_eq!(
        with(
            "  auditors:",
            "  autoTables:\n    t_x:\n      actualDataSources: ds_0\n  auditors:"
        ),
        "rules[0].autoTables.t_x.shardingStrategy: an auto table needs a standard strategy"
    );
    assert_eq!(
        with(
            "  auditors:",
            "  autoTables:\n    t_x:\n      shardingStrategy:\n        standard:\n          \
             shardingColumn: order_id\n          shardingAlgorithmName: t_order_inline\n  auditors:"
        ),
        "rules[0].autoTables.t_x.shardingStrategy: INLINE does not number auto tables (MOD, \
         HASH_MOD, VOLUME_RANGE, BOUNDARY_RANGE and AUTO_INTERVAL do)"
    );
    assert!(
        load(&(PROXY_SAMPLE.to_owned() + "- !SINGLE\n  tables:\n    - ds_9.t_x\n"))
            .unwrap_err()
            .contains("no data source named 'ds_9'")
    );
}

/// A fresh directory under the system's temporary one.
fn conf_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("keyshard_conf_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// SS-Proxy's `conf/` as it ships and as a user edits it: `global.yaml`, the one database file
/// uncommented, the others all comments. It loads as the same configuration in one file does;
/// a second database file with content is refused, naming both.
#[test]
fn a_proxy_configuration_directory_loads_unchanged() {
    let (global, database) = PROXY_SAMPLE.split_at(PROXY_SAMPLE.find("\ndatabaseName:").unwrap());
    for (proxy_file, database_file) in [
        ("global.yaml", "database-sharding.yaml"),
        ("server.yaml", "config-sharding.yaml"),
    ] {
        let dir = conf_dir(proxy_file);
        std::fs::write(dir.join(proxy_file), global).unwrap();
        std::fs::write(dir.join(database_file), database).unwrap();
        let commented: String = database.lines().map(|l| format!("#{l}\n")).collect();
        std::fs::write(dir.join("database-encrypt.yaml"), &commented).unwrap();
        std::fs::write(dir.join("config-shadow.yaml"), &commented).unwrap();
        std::fs::write(dir.join("logback.xml"), "<configuration/>").unwrap();
        let config = crate::load(&dir).unwrap();
        let whole = load(PROXY_SAMPLE).unwrap();
        assert_eq!(config.database_name, whole.database_name);
        assert_eq!(config.transaction_type, TransactionType::Xa);
        assert_eq!(config.users.len(), 2);
        assert_eq!(config.broadcast_tables, ["t_address"]);
        assert_eq!(config.sharding.tables.len(), whole.sharding.tables.len());
        assert_eq!(config.warnings, whole.warnings);

        // A second database file is a second logical database, of its own name.
        std::fs::write(dir.join("database-other.yaml"), database).unwrap();
        let error = crate::load_databases(&dir).unwrap_err().to_string();
        assert!(
            error.contains("databaseName 'sharding_db' twice"),
            "{error}"
        );
        let other = database.replace("databaseName: sharding_db", "databaseName: other_db");
        std::fs::write(dir.join("database-other.yaml"), other).unwrap();
        let databases = crate::load_databases(&dir).unwrap();
        let names: Vec<&str> = databases.iter().map(|d| d.database_name.as_str()).collect();
        let expected = match database_file {
            "database-sharding.yaml" => ["other_db", "sharding_db"],
            _ => ["sharding_db", "other_db"],
        };
        assert_eq!(names, expected);
        assert!(databases.iter().all(|d| d.users.len() == 2));
        let error = crate::load(&dir).unwrap_err().to_string();
        assert!(error.contains("several logical databases"), "{error}");
        let _ = std::fs::remove_dir_all(&dir);
    }
    let empty = conf_dir("empty");
    std::fs::write(empty.join("global.yaml"), global).unwrap();
    let error = crate::load(&empty).unwrap_err().to_string();
    assert!(error.contains("database-*.yaml"), "{error}");
    let _ = std::fs::remove_dir_all(&empty);
}
