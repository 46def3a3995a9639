//! The `keyshard` binary's commands, run as a user runs them.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{TempDir, keyshard};

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// A copy of the default configuration whose SQLite shards live in `dir`.
fn config_in(dir: &Path, second_url: Option<&str>) -> PathBuf {
    let mut yaml = std::fs::read_to_string("config/keyshard.yaml").unwrap();
    if let Some(url) = second_url {
        yaml = yaml.replace("sqlite://../data/ds_1.db", url);
    }
    let path = dir.join("keyshard.yaml");
    std::fs::write(&path, yaml.replace("../data/", "data/")).unwrap();
    path
}

#[test]
fn preview_prints_one_json_object() {
    let dir = TempDir::new("cli_preview_json");
    let config = config_in(&dir.0, None);
    let output = keyshard(&[
        "preview",
        "--config",
        config.to_str().unwrap(),
        "--format",
        "json",
        "--param",
        "7",
        "--param",
        "\"OK\"",
        "INSERT INTO t_order (user_id, status) VALUES (?, ?)",
    ]);
    assert!(output.status.success(), "{output:?}");
    let json: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    let key = json["generated_keys"][0].as_i64().unwrap();
    let units = json["units"].as_array().unwrap();
    assert_eq!(units.len(), 1);
    assert_eq!(units[0]["data_source"], "ds_1");
    assert_eq!(
        units[0]["sql"],
        format!(
            "INSERT INTO t_order_{} (user_id, status, order_id) VALUES (?, ?, ?)",
            key % 2
        )
    );
    assert_eq!(units[0]["params"], serde_json::json!([7, "OK", key]));
    // Nothing was executed: preview does not even open the shards for a statement with columns.
    assert!(!dir.0.join("data").exists());
}

#[test]
fn preview_reads_columns_from_the_shard_for_a_column_less_insert() {
    let dir = TempDir::new("cli_preview_columns");
    let config = config_in(&dir.0, None);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let config = keyshard_config::load(&config).unwrap();
        let backend = keyshard_backend::Backend::new(&config).unwrap();
        backend
            .execute_on(
                "ds_0",
                "CREATE TABLE t_order_0 (order_id BIGINT PRIMARY KEY, user_id INT, status TEXT)",
            )
            .await
            .unwrap();
        backend.close().await;
    });
    let output = keyshard(&[
        "preview",
        "-c",
        config.to_str().unwrap(),
        "INSERT INTO t_order VALUES (2, 'x')",
    ]);
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    assert!(text.starts_with("generated keys: "), "{text}");
    assert!(text.contains("ds_0 ::: INSERT INTO t_order_"), "{text}");
    assert!(
        text.contains("(user_id, status, order_id) VALUES (2, 'x', "),
        "{text}"
    );
}

#[test]
fn preview_errors_are_clear() {
    for (args, message) in [
        (
            &[
                "preview",
                "--param",
                "OK",
                "INSERT INTO t_order (user_id) VALUES (?)",
            ][..],
            "is not a JSON scalar",
        ),
        (
            &["preview", "SELECT 1"],
            "preview shows INSERTs into sharded tables",
        ),
        (
            &["preview", "INSERT INTO t_order (status) VALUES ('x')"],
            "must route to exactly one data node",
        ),
        (
            &[
                "preview",
                "--config",
                "/nonexistent.yaml",
                "INSERT INTO t_order (user_id) VALUES (1)",
            ],
            "/nonexistent.yaml",
        ),
    ] {
        let output = keyshard(args);
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn check_reports_each_data_source() {
    let dir = TempDir::new("cli_check");
    let good = config_in(&dir.0, None);
    let output = keyshard(&["check", "--config", good.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains("ds_0: ok") && text.contains("ds_1: ok"),
        "{text}"
    );
    assert!(
        text.contains("repository: JDBC on data source 'ds_0'; fleet records on ds_0, ds_1"),
        "{text}"
    );

    let bad = config_in(&dir.0, Some("mysql://root@127.0.0.1:1/nowhere"));
    let output = keyshard(&["check", "--config", bad.to_str().unwrap()]);
    assert!(!output.status.success());
    let text = stdout(&output);
    assert!(text.contains("ds_0: ok"), "{text}");
    assert!(text.contains("ds_1: error: data source 'ds_1'"), "{text}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("1 of 2 data sources failed"));
}

/// ShardingSphere-Proxy's layout: the default configuration split into `conf/global.yaml`
/// (mode, server, users, props) and `conf/database-sharding.yaml` (the logical database), beside
/// a database file that is all comments, as SS ships them.
#[test]
fn check_reads_a_proxy_configuration_directory() {
    let dir = TempDir::new("cli_conf");
    let yaml = std::fs::read_to_string(config_in(&dir.0, None)).unwrap();
    let at = yaml.find("\ndatabaseName:").unwrap();
    let conf = dir.0.join("conf");
    std::fs::create_dir_all(&conf).unwrap();
    // SQLite paths are relative to the directory read.
    let (global, database) = (
        &yaml[..at],
        yaml[at..].replace("sqlite://data/", "sqlite://../data/"),
    );
    std::fs::write(conf.join("global.yaml"), global).unwrap();
    std::fs::write(conf.join("database-sharding.yaml"), database).unwrap();
    std::fs::write(
        conf.join("database-readwrite-splitting.yaml"),
        "# databaseName: rw_db\n",
    )
    .unwrap();
    let output = keyshard(&["check", "--config", conf.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains("ds_0: ok") && text.contains("ds_1: ok"),
        "{text}"
    );
}

#[test]
fn keygen_prints_keys_and_rejects_bad_arguments() {
    let output = keyshard(&["keygen", "--prop", "worker-id=3", "--count", "3"]);
    assert!(output.status.success());
    assert_eq!(stdout(&output).lines().count(), 3);
    let output = keyshard(&["keygen", "--prop", "worker-id=4096"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("worker-id"));
}

#[test]
fn serve_refuses_xa_where_a_data_source_cannot_prepare() {
    let dir = TempDir::new("cli_xa");
    let config = config_in(&dir.0, None);
    let yaml = std::fs::read_to_string(&config)
        .unwrap()
        .replace("127.0.0.1:3307", "127.0.0.1:0");
    std::fs::write(&config, yaml + "- !TRANSACTION\n  defaultType: XA\n").unwrap();
    let output = keyshard(&["serve", "--config", config.to_str().unwrap()]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "data source 'ds_0' cannot take part in XA transactions: SQLite has no two-phase \
             commit"
        ),
        "{stderr}"
    );
}

/// An instance claims its worker id before it listens: while it fails to reach its
/// coordination repository (here a port nothing listens on, tried three more times), its own
/// port refuses connections, and it exits without ever having accepted one.
#[test]
fn an_instance_listens_only_once_its_worker_id_is_held() {
    let dir = TempDir::new("cli_claim_first");
    let port = common::free_port();
    let unreachable = common::free_port();
    let yaml = format!(
        "mode:\n  type: Standalone\n  repository:\n    type: JDBC\n    props:\n      \
         jdbc_url: mysql://root@127.0.0.1:{unreachable}/nowhere\n      maxRetries: 3\n      \
         retryIntervalMilliseconds: 400\n      operationTimeoutMilliseconds: 400\n{}",
        common::default_without_mode()
            .replace("../data/", "data/")
            .replace("127.0.0.1:3307", &format!("127.0.0.1:{port}"))
    );
    let path = dir.0.join("keyshard.yaml");
    std::fs::write(&path, yaml).unwrap();
    let mut serving = common::serve(&path);
    let started = std::time::Instant::now();
    let mut refused = 0;
    let status = loop {
        if let Some(status) = serving.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
            "the instance listened before it held a worker id"
        );
        refused += 1;
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "never exited"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(!status.success());
    assert!(
        refused > 10,
        "the instance exited too soon to tell ({refused} tries)"
    );
}

/// The second logical database of [`a_configuration_directory_serves_each_logical_database`]:
/// a table per month (INTERVAL over a DATETIME) with generated keys, tables by ranges of ten
/// (VOLUME_RANGE), a table routed by hints, an audited one, and `!SINGLE`'s tables on both
/// data sources.
const LOGS_DB: &str = r#"databaseName: logs_db
dataSources:
  ds_0:
    url: sqlite://../data/logs_0.db
  ds_1:
    url: sqlite://../data/logs_1.db
rules:
- !SHARDING
  tables:
    t_log:
      actualDataNodes: ds_0.t_log_20260${1..3},ds_1.t_log_20260${4..6}
      tableStrategy:
        standard:
          shardingColumn: at
          shardingAlgorithmName: by_month
      keyGenerateStrategy:
        column: id
        keyGeneratorName: snowflake
    t_volume:
      actualDataNodes: ds_0.t_volume_${0..2},ds_1.t_volume_${3..5}
      tableStrategy:
        standard:
          shardingColumn: id
          shardingAlgorithmName: by_tens
    t_hinted:
      actualDataNodes: ds_${0..1}.t_hinted
      databaseStrategy:
        hint:
          shardingAlgorithmName: by_hint
    t_audited:
      actualDataNodes: ds_${0..1}.t_audited
      databaseStrategy:
        standard:
          shardingColumn: user_id
          shardingAlgorithmName: by_user
      auditStrategy:
        auditorNames: [sharding_key_required]
        allowHintDisable: false
  shardingAlgorithms:
    by_month:
      type: INTERVAL
      props:
        datetime-pattern: "yyyy-MM-dd HH:mm:ss"
        datetime-lower: "2026-01-01 00:00:00"
        datetime-upper: "2026-06-30 23:59:59"
        sharding-suffix-pattern: yyyyMM
        datetime-interval-unit: MONTHS
    by_tens:
      type: VOLUME_RANGE
      props:
        range-lower: 10
        range-upper: 45
        sharding-volume: 10
    by_hint:
      type: HINT_INLINE
      props:
        algorithm-expression: ds_${value % 2}
    by_user:
      type: MOD
      props:
        sharding-count: 2
  keyGenerators:
    snowflake:
      type: SNOWFLAKE
      props:
        max-vibration-offset: 3
  auditors:
    sharding_key_required:
      type: DML_SHARDING_CONDITIONS
- !SINGLE
  tables: ["*.*"]
"#;

/// SS-Proxy's `conf/` in `dir`: the default configuration's proxy part listening on both
/// frontends, its database as `orders_db`, [`LOGS_DB`], and a database file that is all
/// comments. Returns the directory and the MySQL and PostgreSQL ports.
fn two_databases(dir: &Path) -> (PathBuf, u16, u16, u16) {
    let conf = dir.join("conf");
    std::fs::create_dir_all(&conf).unwrap();
    let yaml = std::fs::read_to_string("config/keyshard.yaml").unwrap();
    let at = yaml.find("\ndatabaseName:").unwrap();
    let (mysql_port, pg_port) = (common::free_port(), common::free_port());
    let metrics_port = common::free_port();
    // `logger` may use logs_db alone (SS's DATABASE_PERMITTED).
    let global = yaml[..at]
        .replace(
            "listen: 127.0.0.1:3307",
            &format!(
                "listen: 127.0.0.1:{mysql_port}\n  postgres:\n    listen: 127.0.0.1:{pg_port}\n  \
                 metrics:\n    listen: 127.0.0.1:{metrics_port}"
            ),
        )
        .replace(
            "      password: root\n",
            "      password: root\n    - user: logger@%\n      password: logger\n    \
             - user: nobody@%\n      password: nobody\n  privilege:\n    \
             type: DATABASE_PERMITTED\n    props:\n      \
             user-database-mappings: root@%=*, logger@%=logs_db\n",
        );
    std::fs::write(conf.join("global.yaml"), global).unwrap();
    let orders = yaml[at..]
        .replace("databaseName: sharding_db", "databaseName: orders_db")
        .replace("sqlite://../data/ds_", "sqlite://../data/orders_");
    std::fs::write(conf.join("database-orders.yaml"), orders).unwrap();
    std::fs::write(conf.join("database-logs.yaml"), LOGS_DB).unwrap();
    std::fs::write(
        conf.join("database-encrypt.yaml"),
        "# databaseName: encrypt_db\n",
    )
    .unwrap();
    (conf, mysql_port, pg_port, metrics_port)
}

/// The rows of `table` in SQLite file `file` of `dir`; 0 when it has no such table.
async fn stored(dir: &Path, file: &str, table: &str) -> i64 {
    use sqlx::{Connection, Row};
    let path = dir.join(file);
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    sqlx::query(&format!("SELECT COUNT(*) FROM {table}"))
        .fetch_one(&mut conn)
        .await
        .map_or(0, |r| r.get(0))
}

/// `PREVIEW sql`: each unit's data source and statement.
async fn preview(conn: &mut sqlx::MySqlConnection, sql: &str) -> Vec<(String, String)> {
    use sqlx::{Executor, Row};
    conn.fetch_all(format!("PREVIEW {sql}").as_str())
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

/// ShardingSphere-Proxy's directory with two logical databases, each with its own data sources
/// and rules: one process serves both on both frontends. A client picks one at login or with
/// USE; each sees its own tables only; SHOW DATABASES lists both. The second database's
/// rules route by month, by ranges, by hint and by `!SINGLE`, and audit, as SS does.
#[tokio::test]
async fn a_configuration_directory_serves_each_logical_database() {
    use sqlx::{Connection, Executor, MySqlConnection, PgConnection, Row};

    let dir = TempDir::new("cli_two_databases");
    let (conf, mysql_port, pg_port, metrics_port) = two_databases(&dir.0);
    // Single tables made before the start, one on each of logs_db's data sources.
    let data = dir.0.join("data");
    std::fs::create_dir_all(&data).unwrap();
    for (file, table) in [("logs_0.db", "t_notes"), ("logs_1.db", "t_settings")] {
        let url = format!("sqlite://{}?mode=rwc", data.join(file).display());
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        conn.execute(format!("CREATE TABLE {table} (id INT PRIMARY KEY)").as_str())
            .await
            .unwrap();
    }

    let output = keyshard(&["check", "--config", conf.to_str().unwrap()]);
    let text = stdout(&output);
    assert!(output.status.success(), "{output:?}");
    assert!(
        text.contains("database 'logs_db':") && text.contains("database 'orders_db':"),
        "{text}"
    );

    let mut serving = common::serve(&conf);
    let url = |database: &str| format!("mysql://root:root@127.0.0.1:{mysql_port}/{database}");
    let started = std::time::Instant::now();
    let mut orders = loop {
        match MySqlConnection::connect(&url("orders_db")).await {
            Ok(conn) => break conn,
            Err(e) => {
                assert!(serving.try_wait().unwrap().is_none(), "serve exited: {e}");
                assert!(started.elapsed().as_secs() < 60, "never listened: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    };
    let mut logs = MySqlConnection::connect(&url("logs_db")).await.unwrap();
    orders
        .execute("CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT, status TEXT)")
        .await
        .unwrap();
    orders
        .execute("INSERT INTO t_order (user_id, status) VALUES (1, 'new'), (2, 'paid')")
        .await
        .unwrap();
    logs.execute("CREATE TABLE t_log (id BIGINT PRIMARY KEY, at DATETIME NOT NULL, msg TEXT)")
        .await
        .unwrap();
    logs.execute(
        "INSERT INTO t_log (at, msg) VALUES ('2026-01-15 10:00:00', 'a'), \
         ('2026-03-02 08:00:00', 'b'), ('2026-05-20 12:00:00', 'c'), ('2026-05-21 12:00:00', 'd')",
    )
    .await
    .unwrap();
    // In the text protocol: a session with statements prepared in one database may not move
    // to another (checked below).
    let count = async |conn: &mut MySqlConnection, sql: &str| -> Result<i64, sqlx::Error> {
        conn.fetch_one(sql).await.map(|r| r.get(0))
    };
    assert_eq!(
        count(&mut orders, "SELECT COUNT(*) FROM t_order")
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        count(&mut logs, "SELECT COUNT(*) FROM t_log")
            .await
            .unwrap(),
        4
    );
    // Each database's tables are its own.
    assert!(
        count(&mut logs, "SELECT COUNT(*) FROM t_order")
            .await
            .is_err()
    );
    assert!(
        count(&mut orders, "SELECT COUNT(*) FROM t_log")
            .await
            .is_err()
    );
    let databases: Vec<String> = logs
        .fetch_all("SHOW DATABASES")
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(databases, ["logs_db", "orders_db"]);
    // A statement naming the other database is answered by it.
    let first_column = async |conn: &mut MySqlConnection, sql: &str| -> Vec<String> {
        let rows = conn.fetch_all(sql).await.unwrap();
        rows.iter().map(|r| r.get(0)).collect()
    };
    assert_eq!(
        first_column(&mut logs, "SHOW TABLES FROM orders_db").await,
        ["t_order"]
    );
    let rules = first_column(&mut orders, "SHOW SHARDING TABLE RULES FROM logs_db").await;
    assert_eq!(rules, ["t_audited", "t_hinted", "t_log", "t_volume"]);
    let rules = first_column(&mut logs, "SHOW SHARDING TABLE RULES FROM orders_db").await;
    assert_eq!(rules, ["t_order"]);

    // Rows by month, each where its month's table is, keys generated; a range of dates reads
    // the months it spans alone.
    for (file, table, rows) in [
        ("logs_0.db", "t_log_202601", 1),
        ("logs_0.db", "t_log_202602", 0),
        ("logs_0.db", "t_log_202603", 1),
        ("logs_1.db", "t_log_202605", 2),
    ] {
        assert_eq!(stored(&data, file, table).await, rows, "{table}");
    }
    let keys = count(
        &mut logs,
        "SELECT COUNT(DISTINCT id) FROM t_log WHERE id > 0",
    )
    .await;
    assert_eq!(keys.unwrap(), 4);
    let range =
        "SELECT msg FROM t_log WHERE at BETWEEN '2026-02-01 00:00:00' AND '2026-03-31 00:00:00'";
    let units = preview(&mut logs, range).await;
    let tables: Vec<(&str, bool)> = units
        .iter()
        .map(|(ds, sql)| {
            (
                ds.as_str(),
                sql.contains("t_log_202602") || sql.contains("t_log_202603"),
            )
        })
        .collect();
    assert_eq!(tables, [("ds_0", true), ("ds_0", true)], "{units:?}");
    let msg: String = logs.fetch_one(range).await.unwrap().get(0);
    assert_eq!(msg, "b");

    // Ranges of ten: each id in its range's table; a range of ids reads the tables it spans.
    logs.execute("CREATE TABLE t_volume (id INT PRIMARY KEY, v TEXT)")
        .await
        .unwrap();
    logs.execute(
        "INSERT INTO t_volume VALUES (5, 'a'), (15, 'b'), (25, 'c'), (44, 'd'), (50, 'e')",
    )
    .await
    .unwrap();
    for (file, table) in [
        ("logs_0.db", "t_volume_0"),
        ("logs_0.db", "t_volume_1"),
        ("logs_0.db", "t_volume_2"),
        ("logs_1.db", "t_volume_4"),
        ("logs_1.db", "t_volume_5"),
    ] {
        assert_eq!(stored(&data, file, table).await, 1, "{table}");
    }
    let units = preview(
        &mut logs,
        "SELECT v FROM t_volume WHERE id >= 12 AND id < 25",
    )
    .await;
    let read: Vec<bool> = units
        .iter()
        .map(|(_, sql)| sql.contains("t_volume_1") || sql.contains("t_volume_2"))
        .collect();
    assert_eq!(read, [true, true], "{units:?}");

    // A hint picks the data source; an audited table is not read without its sharding column.
    logs.execute("CREATE TABLE t_hinted (id INT PRIMARY KEY, v TEXT)")
        .await
        .unwrap();
    logs.execute(
        "/* SHARDINGSPHERE_HINT: t_hinted.SHARDING_DATABASE_VALUE=1 */ \
         INSERT INTO t_hinted VALUES (1, 'x')",
    )
    .await
    .unwrap();
    assert_eq!(stored(&data, "logs_1.db", "t_hinted").await, 1);
    assert_eq!(stored(&data, "logs_0.db", "t_hinted").await, 0);
    logs.execute("CREATE TABLE t_audited (user_id INT PRIMARY KEY, v TEXT)")
        .await
        .unwrap();
    let refused = logs.execute("SELECT v FROM t_audited").await.unwrap_err();
    assert!(
        refused.to_string().contains("sharding_key_required"),
        "{refused}"
    );
    logs.execute("SELECT v FROM t_audited WHERE user_id = 3")
        .await
        .unwrap();

    // `!SINGLE`'s tables where they were made.
    let homes = [
        preview(&mut logs, "SELECT id FROM t_notes").await,
        preview(&mut logs, "SELECT id FROM t_settings").await,
    ];
    assert_eq!(
        [homes[0][0].0.as_str(), homes[1][0].0.as_str()],
        ["ds_0", "ds_1"]
    );

    // USE moves a session that holds nothing to the other database; inside a transaction it is
    // refused, and the session stays where it was.
    logs.execute("BEGIN").await.unwrap();
    let refused = logs.execute("USE orders_db").await.unwrap_err();
    assert!(
        refused.to_string().contains("a transaction is open"),
        "{refused}"
    );
    logs.execute("ROLLBACK").await.unwrap();
    assert_eq!(
        count(&mut logs, "SELECT COUNT(*) FROM t_log")
            .await
            .unwrap(),
        4
    );
    logs.execute("USE orders_db").await.unwrap();
    assert_eq!(
        count(&mut logs, "SELECT COUNT(*) FROM t_order")
            .await
            .unwrap(),
        2
    );
    let database: String = logs.fetch_one("SELECT DATABASE()").await.unwrap().get(0);
    assert_eq!(database, "orders_db");
    // A statement prepared here was planned by this database's rules: it keeps the session
    // here.
    sqlx::query("SELECT 1").execute(&mut logs).await.unwrap();
    let refused = logs.execute("USE logs_db").await.unwrap_err();
    assert!(
        refused.to_string().contains("prepared statements"),
        "{refused}"
    );
    let unknown = MySqlConnection::connect(&url("nowhere_db"))
        .await
        .unwrap_err();
    assert!(unknown.to_string().contains("nowhere_db"), "{unknown}");

    // A user limited to logs_db sees and uses it alone, on both frontends.
    let logger =
        |database: &str| format!("mysql://logger:logger@127.0.0.1:{mysql_port}/{database}");
    let denied = MySqlConnection::connect(&logger("orders_db"))
        .await
        .unwrap_err();
    assert!(denied.to_string().contains("1044"), "{denied}");
    let mut limited = MySqlConnection::connect(&logger("logs_db")).await.unwrap();
    assert_eq!(
        first_column(&mut limited, "SHOW DATABASES").await,
        ["logs_db"]
    );
    assert_eq!(
        first_column(&mut limited, "SHOW GRANTS").await,
        ["GRANT ALL PRIVILEGES ON `logs_db`.* TO `logger`@`%` WITH GRANT OPTION"]
    );
    let denied = limited.execute("USE orders_db").await.unwrap_err();
    assert!(denied.to_string().contains("1044"), "{denied}");
    assert_eq!(
        count(&mut limited, "SELECT COUNT(*) FROM t_log")
            .await
            .unwrap(),
        4
    );
    // A user mapped to no database may not log in to any, named or not.
    let none = format!("mysql://nobody:nobody@127.0.0.1:{mysql_port}");
    let denied = MySqlConnection::connect(&none).await.unwrap_err();
    assert!(
        denied.to_string().contains("every logical database"),
        "{denied}"
    );
    let pg_denied = format!("postgres://logger:logger@127.0.0.1:{pg_port}/orders_db");
    let denied = PgConnection::connect(&pg_denied).await.unwrap_err();
    assert!(denied.to_string().contains("permission denied"), "{denied}");

    // The PostgreSQL frontend serves both too, by the startup's database.
    let pg_url = |database: &str| format!("postgres://root:root@127.0.0.1:{pg_port}/{database}");
    let mut pg_logs = PgConnection::connect(&pg_url("logs_db")).await.unwrap();
    let n: i64 = sqlx::query("SELECT COUNT(*) FROM t_log")
        .fetch_one(&mut pg_logs)
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 4);
    let mut pg_orders = PgConnection::connect(&pg_url("orders_db")).await.unwrap();
    let n: i64 = sqlx::query("SELECT COUNT(*) FROM t_order")
        .fetch_one(&mut pg_orders)
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 2);

    // One metrics endpoint counts every database's statements and pools.
    let metrics = {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", metrics_port))
            .await
            .unwrap();
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut body = String::new();
        stream.read_to_string(&mut body).await.unwrap();
        body
    };
    for pool in [
        "logs_db.ds_0",
        "logs_db.ds_1",
        "orders_db.ds_0",
        "orders_db.ds_1",
    ] {
        let line = format!("keyshard_pool_connections{{data_source=\"{pool}\"}}");
        assert!(metrics.contains(&line), "{line} in {metrics}");
    }

    // The orders are in orders_db's own files, none in logs_db's.
    let in_orders = stored(&data, "orders_0.db", "t_order_0").await
        + stored(&data, "orders_0.db", "t_order_1").await
        + stored(&data, "orders_1.db", "t_order_0").await
        + stored(&data, "orders_1.db", "t_order_1").await;
    assert_eq!(in_orders, 2);
    assert_eq!(stored(&data, "logs_0.db", "t_order_0").await, 0);
}
