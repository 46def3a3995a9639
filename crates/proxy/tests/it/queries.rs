//! Reads, updates, deletes, unsharded and broadcast tables and transactions through the MySQL
//! frontend. Every query's answer through the proxy is compared with the same query on one
//! plain database holding the same rows: SQLite files in `cargo test`, MariaDB databases with
//! `--include-ignored`.

use crate::common;

use std::time::Duration;

use crate::common::{Proxy, Shards};
use sqlx::mysql::{MySqlConnection, MySqlRow};
use sqlx::sqlite::SqliteConnection;
use sqlx::{Column, Connection, Row};

const RULES: &str = r#"
server:
  mysql:
    listen: 127.0.0.1:0
authority:
  users:
    - user: root@%
      password: root
databaseName: sharding_db
props:
  # Every read below gathers at most t_order's 40 rows and t_event's 36; the bulk rows added
  # later take t_order beyond.
  gather-max-rows: 80
# Small pools, shared by the test's clients: a gathered read takes a connection of its own
# beside them.
dataSources:
  ds_0:
    url: URL_0
    maxPoolSize: 2
  ds_1:
    url: URL_1
    maxPoolSize: 2
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard:
          shardingColumn: user_id
          shardingAlgorithmName: by_user
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: order_table
      keyGenerateStrategy:
        column: order_id
        keyGeneratorName: snowflake
    t_order_item:
      actualDataNodes: ds_${0..1}.t_order_item_${0..1}
      databaseStrategy:
        standard:
          shardingColumn: user_id
          shardingAlgorithmName: by_user
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: item_table
    # An actual table named as its logic table, which a gathered read's temporary table
    # hides on its own connection only.
    t_event:
      actualDataNodes: ds_${0..1}.t_event
      databaseStrategy:
        standard:
          shardingColumn: user_id
          shardingAlgorithmName: by_user
    t_log:
      actualDataNodes: ds_${0..1}.t_log
      databaseStrategy:
        standard:
          shardingColumn: user_id
          shardingAlgorithmName: by_user
    # A table per month of 2026, the first half on ds_0 (see `ranges`).
    t_timed:
      actualDataNodes: ds_0.t_timed_20260${1..6},ds_1.t_timed_20260${7..9},ds_1.t_timed_2026${10..12}
      tableStrategy:
        standard:
          shardingColumn: created_at
          shardingAlgorithmName: by_month
    t_volume:
      actualDataNodes: ds_0.t_volume_${0..2},ds_1.t_volume_${3..5}
      tableStrategy:
        standard:
          shardingColumn: id
          shardingAlgorithmName: by_tens
  # As DistSQL's CREATE SHARDING TABLE RULE stores one: t_auto_0 … t_auto_3 over ds_0, ds_1.
  autoTables:
    t_auto:
      actualDataSources: ds_${0..1}
      shardingStrategy:
        standard:
          shardingColumn: id
          shardingAlgorithmName: mod_4
  bindingTables:
    - t_order, t_order_item
  shardingAlgorithms:
    mod_4:
      type: MOD
      props:
        sharding-count: 4
    by_user:
      type: INLINE
      props:
        algorithm-expression: ds_${user_id % 2}
    order_table:
      type: INLINE
      props:
        algorithm-expression: t_order_${order_id % 2}
    item_table:
      type: INLINE
      props:
        algorithm-expression: t_order_item_${order_id % 2}
    by_month:
      type: INTERVAL
      props:
        datetime-pattern: "yyyy-MM-dd HH:mm:ss"
        datetime-lower: "2026-01-01 00:00:00"
        datetime-upper: "2026-12-31 23:59:59"
        sharding-suffix-pattern: yyyyMM
        datetime-interval-unit: MONTHS
    by_tens:
      type: VOLUME_RANGE
      props:
        range-lower: 10
        range-upper: 45
        sharding-volume: 10
  keyGenerators:
    snowflake:
      type: SNOWFLAKE
      props:
        worker-id: 1
        max-vibration-offset: 3
- !BROADCAST
  tables: [t_dict]
# Tables without a rule live where the data sources hold them (`t_audit` on ds_1 alone).
- !SINGLE
  tables: ["*.*"]
"#;

const TABLES: [&str; 4] = [
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(20), amount INT)",
    "CREATE TABLE t_order_item (item_id INT PRIMARY KEY, order_id BIGINT NOT NULL, user_id INT NOT NULL, qty INT)",
    "CREATE TABLE t_user (id INT PRIMARY KEY, name VARCHAR(20))",
    "CREATE TABLE t_dict (code VARCHAR(20) PRIMARY KEY, label VARCHAR(20))",
];

/// A plain database to compare with, holding the same rows in unsharded tables.
enum Reference {
    Sqlite(SqliteConnection),
    MariaDb(MySqlConnection),
}

/// A result as text: column names and rows, numbers with a fraction rounded to 4 places (MariaDB's
/// AVG scale; SQLite's AVG is a REAL).
type Table = (Vec<String>, Vec<Vec<Option<String>>>);

fn normalise(value: Option<String>) -> Option<String> {
    value.map(|v| match v.parse::<f64>() {
        // SQLite's REAL 45.0 is the MySQL protocol's DOUBLE 45.
        Ok(f) if v.contains('.') && f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.0}"),
        Ok(f) if v.contains('.') => format!("{f:.4}"),
        _ => v,
    })
}

async fn fetch_mysql(conn: &mut MySqlConnection, sql: &str) -> Table {
    fetch_text(conn, sql, false).await
}

/// The rows as text: `exact`, as sent (against MariaDB, whose decimals have the same scale),
/// else with fractions rounded to four places (against SQLite, whose REAL is not a DECIMAL).
async fn fetch_text(conn: &mut MySqlConnection, sql: &str, exact: bool) -> Table {
    let rows = rows_of(conn, sql, false).await;
    table(&rows, |row, i| {
        let value = text_value(row, i);
        if exact { value } else { normalise(value) }
    })
}

/// The rows of `sql` run as a prepared statement: each value's bytes in the binary protocol,
/// in hex.
async fn fetch_binary(conn: &mut MySqlConnection, sql: &str) -> Table {
    table(&rows_of(conn, sql, true).await, hex_value)
}

/// The rows of `sql`, sent as text or, `prepared`, as a prepared statement.
async fn rows_of(conn: &mut MySqlConnection, sql: &str, prepared: bool) -> Vec<MySqlRow> {
    let rows = match prepared {
        false => sqlx::raw_sql(sql).fetch_all(conn).await,
        true => sqlx::query(sql).fetch_all(conn).await,
    };
    rows.unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn text_value(row: &MySqlRow, i: usize) -> Option<String> {
    row.try_get_unchecked::<Option<String>, _>(i).unwrap()
}

/// A value's bytes, in hex.
fn hex_value(row: &MySqlRow, i: usize) -> Option<String> {
    let bytes = row.try_get_unchecked::<Option<Vec<u8>>, _>(i).unwrap();
    bytes.map(|b| b.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// The type each result column is described with (sqlx's name for it: `BIGINT UNSIGNED`,
/// `DECIMAL`, `VARCHAR`, `DATETIME` …).
async fn column_types(conn: &mut MySqlConnection, sql: &str) -> Vec<String> {
    use sqlx::{Column, Executor, TypeInfo};
    let described = conn
        .describe(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    described
        .columns()
        .iter()
        .map(|c| format!("{} {}", c.name(), c.type_info().name()))
        .collect()
}

fn table<R: Row>(rows: &[R], value: impl Fn(&R, usize) -> Option<String>) -> Table {
    let names = rows
        .first()
        .map(|r| r.columns().iter().map(|c| c.name().to_owned()).collect())
        .unwrap_or_default();
    let rows = rows
        .iter()
        .map(|r| (0..r.len()).map(|i| value(r, i)).collect())
        .collect();
    (names, rows)
}

impl Reference {
    async fn open(shards: &Shards) -> (Self, Option<String>) {
        match shards {
            Shards::Sqlite(dir) => {
                let url = format!("sqlite://{}?mode=rwc", dir.join("reference.db").display());
                (
                    Reference::Sqlite(SqliteConnection::connect(&url).await.unwrap()),
                    None,
                )
            }
            Shards::MariaDb { admin_url, .. } => {
                let name = common::unique("keyshard_reference");
                let mut admin = MySqlConnection::connect(admin_url).await.unwrap();
                sqlx::raw_sql(&format!("CREATE DATABASE {name}"))
                    .execute(&mut admin)
                    .await
                    .unwrap();
                let (server, _) = admin_url.rsplit_once('/').unwrap();
                let conn = MySqlConnection::connect(&format!("{server}/{name}"))
                    .await
                    .unwrap();
                (Reference::MariaDb(conn), Some(name))
            }
        }
    }

    async fn execute(&mut self, sql: &str) {
        let result = match self {
            Reference::Sqlite(c) => sqlx::raw_sql(sql).execute(c).await.map(|_| ()),
            Reference::MariaDb(c) => sqlx::raw_sql(sql).execute(c).await.map(|_| ()),
        };
        result.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    async fn fetch(&mut self, sql: &str) -> Table {
        match self {
            Reference::Sqlite(c) => {
                let rows = sqlx::raw_sql(sql)
                    .fetch_all(c)
                    .await
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
                table(&rows, |row, i| {
                    normalise(row.try_get_unchecked::<Option<String>, _>(i).unwrap())
                })
            }
            Reference::MariaDb(c) => fetch_text(c, sql, true).await,
        }
    }

    /// Whether its values compare as sent.
    fn exact(&self) -> bool {
        matches!(self, Reference::MariaDb(_))
    }
}

async fn count(conn: &mut MySqlConnection, filter: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM t_order WHERE {filter}");
    let row = sqlx::raw_sql(&sql).fetch_one(conn).await.unwrap();
    row.try_get_unchecked::<String, _>(0)
        .unwrap()
        .parse()
        .unwrap()
}

async fn affected(conn: &mut MySqlConnection, sql: &str) -> u64 {
    sqlx::raw_sql(sql)
        .execute(conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .rows_affected()
}

/// Loads the same rows through the proxy and into the reference.
async fn load(conn: &mut MySqlConnection, reference: &mut Reference) {
    for sql in TABLES {
        affected(conn, sql).await;
        reference.execute(sql).await;
    }
    let statuses = ["new", "paid", "shipped"];
    for batch in 0..4 {
        let rows: Vec<String> = (0..10)
            .map(|n| {
                let i = batch * 10 + n;
                let amount = if i % 7 == 0 {
                    "NULL".to_owned()
                } else {
                    ((i * 37) % 100).to_string()
                };
                format!("({}, '{}', {amount})", i % 5 + 1, statuses[i % 3])
            })
            .collect();
        let sql = format!(
            "INSERT INTO t_order (user_id, status, amount) VALUES {}",
            rows.join(", ")
        );
        assert_eq!(affected(conn, &sql).await, 10);
    }
    // The rows as stored, generated keys included, go into the reference as they are.
    let (_, rows) = fetch_mysql(
        conn,
        "SELECT order_id, user_id, status, amount FROM t_order",
    )
    .await;
    assert_eq!(rows.len(), 40);
    for (n, row) in rows.iter().enumerate() {
        // Text in quotes, numbers as they are: a quoted number does not shard by INLINE's `%`.
        let value = |i: usize| {
            row[i].clone().map_or(
                "NULL".to_owned(),
                |v| {
                    if i == 2 { format!("'{v}'") } else { v }
                },
            )
        };
        reference
            .execute(&format!(
                "INSERT INTO t_order VALUES ({}, {}, {}, {})",
                value(0),
                value(1),
                value(2),
                value(3)
            ))
            .await;
        if n % 2 == 0 {
            let item = format!(
                "INSERT INTO t_order_item VALUES ({n}, {}, {}, {})",
                value(0),
                value(1),
                n % 4 + 1
            );
            affected(conn, &item).await;
            reference.execute(&item).await;
        }
    }
    let events = [
        common::random_select::event_table("DATETIME", "JSON", "CHAR(36)"),
        common::random_select::event_rows(),
    ];
    for sql in &events {
        affected(conn, sql).await;
        reference.execute(sql).await;
    }
    for sql in [
        "INSERT INTO t_user VALUES (1, 'ann'), (2, 'bob')",
        "INSERT INTO t_dict VALUES ('new', 'New'), ('paid', 'Paid'), ('shipped', 'Shipped')",
    ] {
        affected(conn, sql).await;
        reference.execute(sql).await;
    }
}

const QUERIES: &[&str] = &[
    "SELECT order_id, user_id, status, amount FROM t_order ORDER BY order_id",
    "SELECT * FROM t_order ORDER BY amount DESC, order_id",
    "SELECT order_id, amount FROM t_order ORDER BY amount, order_id LIMIT 5",
    "SELECT order_id FROM t_order ORDER BY order_id LIMIT 3 OFFSET 4",
    "SELECT order_id FROM t_order ORDER BY order_id DESC LIMIT 4, 3",
    "SELECT t_order.order_id FROM t_order t_order ORDER BY t_order.order_id LIMIT 3",
    "SELECT order_id FROM t_order ORDER BY user_id, status, order_id",
    "SELECT COUNT(*) FROM t_order",
    "SELECT COUNT(*), COUNT(amount), SUM(amount), MIN(amount), MAX(amount), AVG(amount) FROM t_order",
    "SELECT user_id, COUNT(*), SUM(amount), AVG(amount) FROM t_order GROUP BY user_id ORDER BY user_id",
    "SELECT status, COUNT(*) AS n, MAX(amount) AS top FROM t_order GROUP BY status ORDER BY n DESC, status",
    "SELECT status, MIN(order_id) FROM t_order GROUP BY status",
    "SELECT user_id, status, COUNT(*) FROM t_order GROUP BY user_id, status ORDER BY user_id, status LIMIT 2, 5",
    "SELECT * FROM t_order WHERE user_id = 3 ORDER BY order_id",
    "SELECT order_id, status FROM t_order WHERE user_id IN (1, 2) AND status = 'paid' ORDER BY order_id",
    "SELECT o.order_id, o.status FROM t_order o WHERE o.user_id = 4 OR o.user_id = 5 ORDER BY o.order_id",
    "SELECT t_order.order_id FROM t_order WHERE t_order.amount > 50 ORDER BY t_order.order_id",
    "SELECT COUNT(*) FROM t_order WHERE user_id = 2",
    "SELECT o.order_id, i.item_id, i.qty FROM t_order o JOIN t_order_item i ON o.order_id = i.order_id AND o.user_id = i.user_id ORDER BY i.item_id",
    "SELECT i.qty, COUNT(*) FROM t_order o JOIN t_order_item i ON o.order_id = i.order_id GROUP BY i.qty ORDER BY i.qty",
    "SELECT o.order_id, d.label FROM t_order o JOIN t_dict d ON o.status = d.code ORDER BY o.order_id",
    "SELECT * FROM t_user ORDER BY id",
    "SELECT label FROM t_dict ORDER BY code",
    "SELECT 1 + 1 AS two",
    // Ordered string aggregates: each node's pieces joined in the call's order.
    "SELECT user_id, GROUP_CONCAT(status ORDER BY amount DESC, order_id) AS s, COUNT(*) FROM t_order GROUP BY user_id ORDER BY user_id",
    "SELECT GROUP_CONCAT(order_id ORDER BY order_id) FROM t_order",
    "SELECT user_id, GROUP_CONCAT(DISTINCT status ORDER BY status) AS s FROM t_order GROUP BY user_id ORDER BY user_id",
    "SELECT kind, GROUP_CONCAT(note ORDER BY price DESC, event_id) AS notes FROM t_event GROUP BY kind ORDER BY kind",
];

/// Expressions over aggregates: computed from the merged aggregates on MariaDB, gathered on
/// SQLite (whose arithmetic is its own).
const COMPUTED: &[&str] = &[
    "SELECT user_id, SUM(amount) / COUNT(*) AS mean, COUNT(*) >= 8 AS many, MAX(amount) - MIN(amount) AS spread FROM t_order GROUP BY user_id ORDER BY user_id",
    "SELECT SUM(amount) * 2 + COUNT(*) AS x, COUNT(amount) / 3 AS third, -SUM(amount) * 0.25 FROM t_order",
    "SELECT status, SUM(amount) / COUNT(*) AS mean FROM t_order GROUP BY status ORDER BY mean DESC",
    "SELECT COUNT(*) + 1, SUM(amount) / COUNT(*), SUM(amount) / (COUNT(*) - COUNT(*)) FROM t_order WHERE amount > 100000",
    "SELECT kind, SUM(price) / COUNT(price) AS mean, SUM(price) * 1.5 - COUNT(*) AS y, MIN(price) < 5 FROM t_event GROUP BY kind ORDER BY kind",
];

/// Reads no merge answers: their rows are gathered on one data source, where the database
/// runs them as written.
const GATHERED: &[&str] = &[
    "SELECT DISTINCT status FROM t_order ORDER BY status",
    "SELECT COUNT(DISTINCT status), COUNT(DISTINCT user_id) FROM t_order",
    // INTERSECT and EXCEPT: a row on one node in one branch and on another in the other.
    "SELECT status FROM t_order INTERSECT SELECT status FROM t_order WHERE amount > 20 ORDER BY 1",
    "SELECT amount FROM t_order EXCEPT SELECT amount FROM t_order WHERE user_id = 1 ORDER BY 1",
    "SELECT status FROM t_order EXCEPT SELECT status FROM t_order WHERE user_id = 1 AND amount > 80 ORDER BY 1",
    // DISTINCT aggregates over no row at all: still the one row of zero and NULLs.
    "SELECT COUNT(DISTINCT status), SUM(DISTINCT amount), AVG(DISTINCT amount) FROM t_order WHERE amount > 100000",
    "SELECT user_id, COUNT(DISTINCT status) FROM t_order GROUP BY user_id HAVING COUNT(DISTINCT status) > 1 ORDER BY user_id",
    "SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id HAVING COUNT(*) > 7 ORDER BY user_id",
    "SELECT COUNT(1) FROM (SELECT 1 FROM t_order WHERE amount > 20) AS _wrapped",
    "SELECT EXISTS(SELECT 1 FROM t_order WHERE status = 'paid')",
    "SELECT status FROM t_order UNION SELECT code FROM t_dict ORDER BY 1",
    "SELECT order_id, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY order_id) AS rn FROM t_order ORDER BY order_id",
    "SELECT SUM(amount) * 2 + COUNT(*) AS x FROM t_order",
    "SELECT o.order_id, u.name FROM t_order o JOIN t_user u ON o.user_id = u.id ORDER BY o.order_id",
    "SELECT order_id FROM t_order WHERE order_id IN (SELECT order_id FROM t_order_item WHERE qty > 2) ORDER BY order_id",
    "SELECT a.order_id, b.order_id FROM t_order a JOIN t_order b ON a.user_id = b.user_id AND a.amount < b.amount WHERE a.user_id = 3 ORDER BY 1, 2",
    "SELECT status, COUNT(*) FROM t_order GROUP BY status HAVING MIN(amount) < 10 ORDER BY 1",
];

/// Random SELECTs (see `common::random_select`), each compared with the plain database as a
/// set of rows (an order the statement does not fix may differ), column names included, and
/// run twice.
async fn random_selects(conn: &mut MySqlConnection, reference: &mut Reference, items: bool) {
    use crate::common::random_select::{Paths, RandomSelects, fixes_its_order, seed};
    let mut selects = RandomSelects::new(seed(), items);
    let mut paths = Paths::default();
    for _ in 0..300 {
        let sql = selects.select();
        let mut through = fetch_text(conn, &sql, reference.exact()).await;
        // Again: an ordered read over two tables of a data source is merged by the proxy the
        // first time, sent as one UNION ALL statement after (see the backend's `combined`).
        let mut again = fetch_text(conn, &sql, reference.exact()).await;
        let mut expected = reference.fetch(&sql).await;
        if !fixes_its_order(&sql) {
            through.1.sort();
            again.1.sort();
            expected.1.sort();
        }
        assert_eq!(again, through, "{sql}, again");
        assert_eq!(through, expected, "{sql}");
        // MariaDB against MariaDB: the column types too, as the client is told them, and the
        // rows of the prepared statement, byte for byte in the binary protocol (twice through
        // the proxy: a combined read's second run is prepared as one statement).
        if let Reference::MariaDb(plain) = reference {
            assert_eq!(
                column_types(conn, &sql).await,
                column_types(plain, &sql).await,
                "{sql}"
            );
            let mut through = fetch_binary(conn, &sql).await;
            let mut again = fetch_binary(conn, &sql).await;
            let mut expected = fetch_binary(plain, &sql).await;
            if !fixes_its_order(&sql) {
                through.1.sort();
                again.1.sort();
                expected.1.sort();
            }
            assert_eq!(again, through, "{sql}, prepared again");
            assert_eq!(through, expected, "{sql}, prepared");
        }
        let (_, preview) = fetch_mysql(conn, &format!("PREVIEW {sql}")).await;
        let preview: Vec<String> = preview.into_iter().filter_map(|r| r[1].clone()).collect();
        paths.count(&preview);
    }
    println!("random SELECTs: {paths}");
    assert!(paths.gathered > 0 && paths.merged > 0, "{paths}");
}

async fn compare(conn: &mut MySqlConnection, reference: &mut Reference, sql: &str) {
    let through = fetch_text(conn, sql, reference.exact()).await;
    let expected = reference.fetch(sql).await;
    assert!(!expected.1.is_empty(), "{sql} returns nothing to compare");
    assert_eq!(through, expected, "{sql}");
}

async fn scenario(proxy: &Proxy, shards: &Shards, reference: &mut Reference) {
    let mut conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    load(&mut conn, reference).await;
    let mariadb = matches!(shards, Shards::MariaDb { .. });
    for sql in QUERIES.iter().chain(GATHERED).chain(COMPUTED) {
        compare(&mut conn, reference, sql).await;
        if sql.contains("GROUP_CONCAT(") || (mariadb && COMPUTED.contains(sql)) {
            let (_, preview) = fetch_mysql(&mut conn, &format!("PREVIEW {sql}")).await;
            assert!(common::random_select::is_merged(preview), "{sql} is merged");
        }
    }
    random_selects(&mut conn, reference, true).await;
    if matches!(shards, Shards::MariaDb { .. }) {
        // MySQL's GROUP_CONCAT with its SEPARATOR, which SQLite spells otherwise.
        for sql in [
            "SELECT user_id, GROUP_CONCAT(DISTINCT status ORDER BY status DESC SEPARATOR '|') AS s FROM t_order GROUP BY user_id ORDER BY user_id",
            "SELECT status, GROUP_CONCAT(order_id, '=', amount ORDER BY status DESC, order_id SEPARATOR '; ') AS s FROM t_order GROUP BY status ORDER BY status",
        ] {
            compare(&mut conn, reference, sql).await;
            let (_, preview) = fetch_mysql(&mut conn, &format!("PREVIEW {sql}")).await;
            assert!(common::random_select::is_merged(preview), "{sql} is merged");
        }
        // Joined longer than group_concat_max_len, which MySQL cuts: gathered, so cut as
        // the database cuts it.
        let set = "SET SESSION group_concat_max_len = 25";
        affected(&mut conn, set).await;
        reference.execute(set).await;
        let sql = "SELECT GROUP_CONCAT(status ORDER BY order_id) AS s FROM t_order";
        compare(&mut conn, reference, sql).await;
        let (_, cut) = fetch_mysql(&mut conn, sql).await;
        assert_eq!(cut[0][0].as_ref().map(String::len), Some(25));
        let set = "SET SESSION group_concat_max_len = DEFAULT";
        affected(&mut conn, set).await;
        reference.execute(set).await;
        // AVG and division take the session's div_precision_increment, as the nodes say it.
        let set = "SET SESSION div_precision_increment = 7";
        affected(&mut conn, set).await;
        reference.execute(set).await;
        let sql = "SELECT user_id, AVG(amount), SUM(amount) / COUNT(*) FROM t_order GROUP BY user_id ORDER BY user_id";
        compare(&mut conn, reference, sql).await;
        let (_, rows) = fetch_text(&mut conn, sql, true).await;
        assert_eq!(rows[0][1].as_deref(), Some("47.5000000"));
        let set = "SET SESSION div_precision_increment = DEFAULT";
        affected(&mut conn, set).await;
        reference.execute(set).await;
    }

    // A write to a broadcast table reaches every data source and counts once.
    let returned = sqlx::raw_sql("INSERT INTO t_dict VALUES ('void', 'Void') RETURNING code")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(returned.len(), 1);
    assert_eq!(
        affected(&mut conn, "DELETE FROM t_dict WHERE code = 'void'").await,
        1
    );

    // Prepared statements with parameters route and merge the same way.
    let keys: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT order_id, user_id FROM t_order WHERE user_id IN (?, ?) ORDER BY order_id LIMIT ?",
    )
    .bind(1)
    .bind(2)
    .bind(50)
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(keys.len(), 16);
    let (key, user) = keys[3];

    // A gathered read as a prepared statement: parameters bound on the gathering data
    // source, rows in the binary protocol.
    let sql = "SELECT DISTINCT status, COUNT(*) OVER (PARTITION BY status) AS n FROM t_order WHERE amount > ? ORDER BY status";
    let through: Vec<(String, i64)> = sqlx::query_as(sql)
        .bind(10)
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let expected = reference
        .fetch(&sql.replace('?', "10"))
        .await
        .1
        .into_iter()
        .map(|r| {
            (
                r[0].clone().unwrap(),
                r[1].clone().unwrap().parse().unwrap(),
            )
        })
        .collect::<Vec<(String, i64)>>();
    assert!(!expected.is_empty());
    assert_eq!(through, expected);

    // A point query by key touches one shard.
    let preview = fetch_mysql(
        &mut conn,
        &format!("PREVIEW SELECT * FROM t_order WHERE order_id = {key} AND user_id = {user}"),
    )
    .await;
    assert_eq!(preview.1.len(), 1, "{preview:?}");
    assert_eq!(
        preview.1[0][0].as_deref(),
        Some(format!("ds_{}", user % 2).as_str())
    );
    let status: (String,) =
        sqlx::query_as("SELECT status FROM t_order WHERE order_id = ? AND user_id = ?")
            .bind(key)
            .bind(user)
            .fetch_one(&mut conn)
            .await
            .unwrap();
    assert!(!status.0.is_empty());

    // An UPDATE and a DELETE by key change exactly the intended row.
    let update = format!(
        "UPDATE t_order SET status = 'refunded' WHERE order_id = {key} AND user_id = {user}"
    );
    assert_eq!(affected(&mut conn, &update).await, 1);
    reference.execute(&update).await;
    let delete = format!("DELETE FROM t_order WHERE order_id = {}", keys[4].0);
    assert_eq!(affected(&mut conn, &delete).await, 1);
    reference.execute(&delete).await;
    let spread = "UPDATE t_order SET amount = amount + 1 WHERE status = 'new'";
    let changed = affected(&mut conn, spread).await;
    reference.execute(spread).await;
    assert!(changed > 5, "{changed}");
    compare(&mut conn, reference, QUERIES[0]).await;
    compare(&mut conn, reference, QUERIES[1]).await;

    // Unsupported statements say so and leave the connection usable; moving a row to the
    // other data source is one.
    let moving = format!(
        "UPDATE t_order SET user_id = {} WHERE order_id = {key}",
        user + 1
    );
    for sql in [
        moving.as_str(),
        // A write is not gathered.
        "DELETE FROM t_order WHERE user_id IN (SELECT id FROM t_user)",
    ] {
        let error = sqlx::raw_sql(sql).execute(&mut conn).await.expect_err(sql);
        let code = common::mysql_code(&error);
        assert_eq!(code, Some(1235), "{sql}: {error}");
    }

    // The catalog shows logic tables, not actual ones; those configured but not created yet
    // (t_auto, t_log, t_timed, t_volume, below) are not there, as a database has no such table.
    let (_, tables) = fetch_mysql(&mut conn, "SHOW TABLES").await;
    let tables: Vec<_> = tables.into_iter().flatten().flatten().collect();
    assert_eq!(
        tables,
        ["t_dict", "t_event", "t_order", "t_order_item", "t_user"]
    );
    let (names, columns) = fetch_mysql(&mut conn, "DESCRIBE t_order").await;
    assert_eq!(names[0], "Field");
    let fields: Vec<_> = columns.iter().map(|c| c[0].clone().unwrap()).collect();
    assert_eq!(fields, ["order_id", "user_id", "status", "amount"]);

    ranges(shards, &mut conn, reference).await;
    single_tables_and_hints(shards, &mut conn, reference).await;
    shaped(&mut conn, reference).await;
    same_names(proxy, &mut conn, reference).await;
    gather_limit(&mut conn).await;
    if matches!(shards, Shards::MariaDb { .. }) {
        gathered_lock(proxy, &mut conn).await;
    }
    transactions(proxy, shards, &mut conn).await;
    conn.close().await.unwrap();
}

/// Runs `sql` on data source `ds` directly.
async fn on_shard_execute(shards: &Shards, ds: usize, sql: &str) {
    let url = shards.url(ds);
    match shards {
        Shards::Sqlite(_) => {
            let mut conn = SqliteConnection::connect(&format!("{url}?mode=rwc"))
                .await
                .unwrap();
            sqlx::raw_sql(sql).execute(&mut conn).await.unwrap();
        }
        Shards::MariaDb { .. } => {
            let mut conn = MySqlConnection::connect(&url).await.unwrap();
            sqlx::raw_sql(sql).execute(&mut conn).await.unwrap();
        }
    }
}

/// `t_audit`, made on ds_1 alone before the proxy started: `!SINGLE`'s `*.*` finds it there,
/// and reads and writes of it go there, the default data source's tables staying where they
/// are.
async fn single_tables_and_hints(
    shards: &Shards,
    conn: &mut MySqlConnection,
    reference: &mut Reference,
) {
    let insert = "INSERT INTO t_audit VALUES (1, 'login'), (2, 'logout')";
    assert_eq!(affected(conn, insert).await, 2);
    reference.execute(insert).await;
    compare(conn, reference, "SELECT id, what FROM t_audit ORDER BY id").await;
    let (_, preview) = fetch_mysql(conn, "PREVIEW SELECT * FROM t_audit").await;
    assert_eq!(preview[0][0].as_deref(), Some("ds_1"), "{preview:?}");
    assert_eq!(
        on_shard(shards, 1, "SELECT what FROM t_audit ORDER BY id").await,
        ["login", "logout"]
    );
    let (_, preview) = fetch_mysql(conn, "PREVIEW SELECT * FROM t_user").await;
    assert_eq!(preview[0][0].as_deref(), Some("ds_0"), "{preview:?}");

    // ShardingSphere's hint runs a statement as written where it says, text or prepared.
    let hinted =
        "/* SHARDINGSPHERE_HINT: dataSourceName=ds_1 */ SELECT label FROM t_volume_5 ORDER BY id";
    let (_, rows) = fetch_mysql(conn, hinted).await;
    assert_eq!(rows, [[Some("g".to_owned())], [Some("h".to_owned())]]);
    let prepared: Vec<(String,)> =
        sqlx::query_as(&hinted.replace("ORDER BY id", "WHERE id > ? ORDER BY id"))
            .bind(50)
            .fetch_all(&mut *conn)
            .await
            .unwrap();
    assert_eq!(prepared, [("h".to_owned(),)]);

    // A table made on ds_1 behind the proxy's back is found by `REFRESH TABLE METADATA`; one
    // dropped through the proxy is forgotten, its name the default data source's again.
    on_shard_execute(
        shards,
        1,
        "CREATE TABLE t_late (id INT PRIMARY KEY); INSERT INTO t_late VALUES (7)",
    )
    .await;
    let home = async |conn: &mut MySqlConnection| {
        let (_, preview) = fetch_mysql(conn, "PREVIEW SELECT id FROM t_late").await;
        preview[0][0].clone()
    };
    assert_eq!(home(conn).await.as_deref(), Some("ds_0"));
    affected(conn, "REFRESH TABLE METADATA").await;
    assert_eq!(home(conn).await.as_deref(), Some("ds_1"));
    let (_, rows) = fetch_mysql(conn, "SELECT id FROM t_late").await;
    assert_eq!(rows, [[Some("7".to_owned())]]);
    affected(conn, "DROP TABLE t_late").await;
    // Dropped where it lived: ds_1 can make it again.
    on_shard_execute(shards, 1, "CREATE TABLE t_late (id INT PRIMARY KEY)").await;
    on_shard_execute(shards, 1, "DROP TABLE t_late").await;
    assert_eq!(home(conn).await.as_deref(), Some("ds_0"));
}

/// The text of the first column of `sql`'s rows, read from data source `ds` directly.
async fn on_shard(shards: &Shards, ds: usize, sql: &str) -> Vec<String> {
    let url = shards.url(ds);
    match shards {
        Shards::Sqlite(_) => {
            let mut conn = SqliteConnection::connect(&url).await.unwrap();
            sqlx::query_scalar(sql).fetch_all(&mut conn).await.unwrap()
        }
        Shards::MariaDb { .. } => {
            let mut conn = MySqlConnection::connect(&url).await.unwrap();
            let rows = sqlx::raw_sql(sql).fetch_all(&mut conn).await.unwrap();
            rows.iter()
                .map(|r| r.try_get_unchecked::<String, _>(0).unwrap())
                .collect()
        }
    }
}

/// INTERVAL by a DATETIME column and VOLUME_RANGE by an integer: each row lands in the table
/// of its month or range, and range conditions read only the tables they can match while
/// answering as the plain database does.
async fn ranges(shards: &Shards, conn: &mut MySqlConnection, reference: &mut Reference) {
    for sql in [
        "CREATE TABLE t_timed (id INT PRIMARY KEY, created_at DATETIME NOT NULL, price DECIMAL(10,2))",
        "CREATE TABLE t_volume (id INT PRIMARY KEY, label VARCHAR(10))",
        "CREATE TABLE t_auto (id INT PRIMARY KEY, label VARCHAR(10))",
    ] {
        affected(conn, sql).await;
        reference.execute(sql).await;
    }
    // Created, they are listed.
    let (_, tables) = fetch_mysql(conn, "SHOW TABLES LIKE 't\\_%o%'").await;
    let tables: Vec<_> = tables.into_iter().flatten().flatten().collect();
    assert_eq!(tables, ["t_auto", "t_order", "t_order_item", "t_volume"]);
    let rows: Vec<String> = (0..48)
        .map(|i| {
            format!(
                "({i}, '2026-{:02}-{:02} {:02}:{:02}:00', {}.{:02})",
                i % 12 + 1,
                (i * 7) % 28 + 1,
                (i * 5) % 24,
                (i * 13) % 60,
                i % 9,
                (i * 31) % 100
            )
        })
        .collect();
    let insert = format!("INSERT INTO t_timed VALUES {}", rows[..40].join(", "));
    assert_eq!(affected(conn, &insert).await, 40);
    reference.execute(&insert).await;
    // The rest as a prepared statement: the date-time arrives as a bound parameter.
    for i in 40..48 {
        let at = format!("2026-{:02}-28 23:59:59", i % 12 + 1);
        sqlx::query("INSERT INTO t_timed (id, created_at, price) VALUES (?, ?, 1.5)")
            .bind(i)
            .bind(&at)
            .execute(&mut *conn)
            .await
            .unwrap();
        reference
            .execute(&format!(
                "INSERT INTO t_timed (id, created_at, price) VALUES ({i}, '{at}', 1.5)"
            ))
            .await;
    }
    for month in 1..=12 {
        let ds = usize::from(month > 6);
        let stored = on_shard(
            shards,
            ds,
            &format!("SELECT created_at FROM t_timed_2026{month:02}"),
        )
        .await;
        assert_eq!(stored.len(), 4, "t_timed_2026{month:02}: {stored:?}");
        let prefix = format!("2026-{month:02}-");
        assert!(
            stored.iter().all(|at| at.starts_with(&prefix)),
            "{stored:?}"
        );
    }
    let volume = "INSERT INTO t_volume VALUES (3, 'a'), (10, 'b'), (19, 'c'), (20, 'd'), (38, 'e'), (44, 'f'), (45, 'g'), (90, 'h')";
    affected(conn, volume).await;
    reference.execute(volume).await;
    assert_eq!(
        on_shard(shards, 1, "SELECT label FROM t_volume_5 ORDER BY id").await,
        ["g", "h"]
    );

    for (sql, units) in [
        (
            "SELECT id, created_at, price FROM t_timed WHERE created_at BETWEEN '2026-03-01' AND '2026-04-30 23:59:59' ORDER BY id",
            2,
        ),
        (
            "SELECT id, created_at FROM t_timed WHERE created_at >= '2026-11-15' ORDER BY created_at",
            2,
        ),
        (
            "SELECT id, price FROM t_timed WHERE created_at < '2026-02-10' AND price > 2 ORDER BY id",
            2,
        ),
        (
            "SELECT COUNT(*), SUM(price) FROM t_timed WHERE created_at > '2026-06-30 12:00:00' AND created_at <= '2026-08-01'",
            3,
        ),
        (
            "SELECT id FROM t_timed WHERE created_at < '2026-02-01' OR created_at = '2026-09-28 23:59:59' ORDER BY id",
            2,
        ),
        (
            "SELECT id, label FROM t_volume WHERE id BETWEEN 12 AND 38 ORDER BY id",
            3,
        ),
        (
            "SELECT id, label FROM t_volume WHERE id >= 40 ORDER BY id",
            2,
        ),
    ] {
        compare(conn, reference, sql).await;
        let (_, preview) = fetch_mysql(conn, &format!("PREVIEW {sql}")).await;
        assert_eq!(preview.len(), units, "{sql}: {preview:?}");
    }
    // Random ranges, at partition boundaries and beyond the configured span: never a row
    // fewer (or more) than the plain database.
    let mut ranges = common::random_select::RandomRanges::new(common::random_select::seed());
    for _ in 0..200 {
        let sql = ranges.select();
        assert_eq!(
            fetch_text(conn, &sql, reference.exact()).await,
            reference.fetch(&sql).await,
            "{sql}"
        );
    }

    // The auto table: each row in t_auto_<id % 4>, on ds_<id % 2>.
    let auto = "INSERT INTO t_auto VALUES (0, 'a'), (1, 'b'), (2, 'c'), (3, 'd'), (4, 'e'), (5, 'f'), (6, 'g'), (7, 'h')";
    affected(conn, auto).await;
    reference.execute(auto).await;
    for table in 0..4 {
        let labels = on_shard(
            shards,
            table % 2,
            &format!("SELECT label FROM t_auto_{table} ORDER BY id"),
        )
        .await;
        let expected: Vec<String> = [table, table + 4]
            .iter()
            .map(|i| ((b'a' + *i as u8) as char).to_string())
            .collect();
        assert_eq!(labels, expected, "t_auto_{table}");
    }
    let sql = "SELECT id, label FROM t_auto WHERE id BETWEEN 5 AND 6 ORDER BY id";
    compare(conn, reference, sql).await;
    let (_, preview) = fetch_mysql(conn, &format!("PREVIEW {sql}")).await;
    assert_eq!(preview.len(), 2, "{preview:?}");

    let through: (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM t_timed WHERE created_at BETWEEN ? AND ?")
            .bind("2026-05-01")
            .bind("2026-05-31 23:59:59")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
    assert_eq!(through.0, 4);
}

/// Text statements of one shape: the proxy parses the first two and binds the others through it;
/// each answers as the plain database does, whichever shards its literals pick.
async fn shaped(conn: &mut MySqlConnection, reference: &mut Reference) {
    let (_, stored) = fetch_mysql(conn, common::compare::STORED_KEYS).await;
    let (reads, writes) = common::compare::shaped_statements(&stored);
    for sql in &reads {
        assert_eq!(
            fetch_text(conn, sql, reference.exact()).await,
            reference.fetch(sql).await,
            "{sql}"
        );
    }
    for sql in &writes {
        assert_eq!(affected(conn, sql).await, 1, "{sql}");
        reference.execute(sql).await;
    }
    for (sql, rows) in &common::compare::bulk_statements() {
        assert_eq!(affected(conn, sql).await, *rows, "{sql}");
        reference.execute(sql).await;
    }
    compare(conn, reference, QUERIES[0]).await;
}

/// A gathered read of a logic table whose actual tables have its name: the temporary table
/// hides the real one on the gathering connection alone, and is gone after.
async fn same_names(proxy: &Proxy, conn: &mut MySqlConnection, reference: &mut Reference) {
    for sql in [
        "CREATE TABLE t_log (id INT PRIMARY KEY, user_id INT NOT NULL, level VARCHAR(10))",
        "INSERT INTO t_log VALUES (1, 1, 'info'), (2, 2, 'warn'), (3, 3, 'info'), (4, 4, 'error')",
    ] {
        affected(conn, sql).await;
        reference.execute(sql).await;
    }
    for sql in [
        "SELECT DISTINCT level FROM t_log ORDER BY level",
        "SELECT a.id, b.id FROM t_log a JOIN t_log b ON a.level = b.level AND a.id < b.id ORDER BY 1",
        "SELECT level, COUNT(*) FROM t_log GROUP BY level HAVING COUNT(*) > 1 OR MAX(level) = 'warn'",
    ] {
        compare(conn, reference, sql).await;
    }
    // Every pooled connection still reads the real tables, on both data sources.
    let mut others = Vec::new();
    for _ in 0..4 {
        let mut other = MySqlConnection::connect(&proxy.url("root", "root"))
            .await
            .unwrap();
        let (_, rows) = fetch_mysql(&mut other, "SELECT id FROM t_log ORDER BY id").await;
        assert_eq!(rows.len(), 4);
        others.push(other);
    }
}

/// A read that would gather more rows than `gather-max-rows` is refused with ER_OUTOFMEMORY,
/// naming the limit, and the connection goes on.
async fn gather_limit(conn: &mut MySqlConnection) {
    assert!(count(conn, "1 = 1").await > 80 - 36);
    let error = sqlx::raw_sql(
        "SELECT DISTINCT o.status FROM t_order o JOIN t_event e ON e.user_id = o.user_id",
    )
    .fetch_all(&mut *conn)
    .await
    .unwrap_err();
    let code = common::mysql_code(&error);
    assert_eq!(code, Some(1037), "{error}");
    assert!(error.to_string().contains("gather-max-rows"), "{error}");
    // Narrowed by its WHERE clause to one user's nodes, it gathers few enough.
    let (_, rows) = fetch_mysql(
        conn,
        "SELECT DISTINCT status FROM t_order WHERE user_id = 1",
    )
    .await;
    assert!(!rows.is_empty());
}

/// A gathered locking read locks the rows it reads on every node, in the reader's transaction:
/// another client's UPDATE of such a row waits for it (and times out), as on one database.
async fn gathered_lock(proxy: &Proxy, conn: &mut MySqlConnection) {
    let mut other = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    affected(&mut other, "SET SESSION innodb_lock_wait_timeout = 1").await;
    let update = "UPDATE t_order SET amount = amount WHERE user_id = 2";
    affected(conn, "BEGIN").await;
    let (_, locked) = fetch_mysql(
        conn,
        "SELECT DISTINCT user_id FROM t_order WHERE user_id IN (1, 2) FOR UPDATE",
    )
    .await;
    assert_eq!(locked.len(), 2);
    let error = sqlx::raw_sql(update).execute(&mut other).await.unwrap_err();
    let code = common::mysql_code(&error);
    assert_eq!(code, Some(1205), "{error}");
    affected(conn, "ROLLBACK").await;
    affected(&mut other, update).await;
    other.close().await.unwrap();
}

/// Users 1001 and 1002 live on different data sources.
const TWO_SHARDS: &str = "INSERT INTO t_order (user_id, status) VALUES (1001, 'tx'); INSERT INTO t_order (user_id, status) VALUES (1002, 'tx')";

async fn insert_on_two_shards(conn: &mut MySqlConnection) {
    for sql in TWO_SHARDS.split("; ") {
        affected(conn, sql).await;
    }
}

async fn transactions(proxy: &Proxy, _shards: &Shards, conn: &mut MySqlConnection) {
    let ours = "status = 'tx'";
    affected(conn, "BEGIN").await;
    insert_on_two_shards(conn).await;
    // The transaction reads its own writes.
    assert_eq!(count(conn, ours).await, 2);
    affected(conn, "ROLLBACK").await;
    assert_eq!(count(conn, ours).await, 0);

    affected(conn, "START TRANSACTION").await;
    insert_on_two_shards(conn).await;
    affected(conn, "COMMIT").await;
    assert_eq!(count(conn, ours).await, 2);

    affected(conn, "SET autocommit = 0").await;
    affected(conn, "DELETE FROM t_order WHERE status = 'tx'").await;
    affected(conn, "ROLLBACK").await;
    assert_eq!(count(conn, ours).await, 2);
    affected(conn, "DELETE FROM t_order WHERE status = 'tx'").await;
    affected(conn, "COMMIT").await;
    affected(conn, "SET autocommit = 1").await;
    assert_eq!(count(conn, ours).await, 0);

    // A client that leaves mid-transaction leaves nothing behind.
    let mut leaving = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    affected(&mut leaving, "BEGIN").await;
    insert_on_two_shards(&mut leaving).await;
    drop(leaving);
    let mut left = -1;
    for _ in 0..50 {
        left = count(conn, ours).await;
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        left, 0,
        "a disconnected client's transaction was not rolled back"
    );
    insert_on_two_shards(conn).await;
    assert_eq!(count(conn, ours).await, 2);
}

async fn run(shards: Shards) {
    let yaml = RULES
        .replace("URL_0", &shards.url(0))
        .replace("URL_1", &shards.url(1));
    let audit = "CREATE TABLE t_audit (id INT PRIMARY KEY, what VARCHAR(20))";
    on_shard_execute(&shards, 1, audit).await;
    let proxy = Proxy::start(&yaml).await;
    let (mut reference, reference_db) = Reference::open(&shards).await;
    reference.execute(audit).await;
    scenario(&proxy, &shards, &mut reference).await;
    proxy.stop().await;
    if let (Some(name), Shards::MariaDb { admin_url, .. }) = (reference_db, &shards) {
        let mut admin = MySqlConnection::connect(admin_url).await.unwrap();
        sqlx::raw_sql(&format!("DROP DATABASE IF EXISTS {name}"))
            .execute(&mut admin)
            .await
            .unwrap();
    }
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_on_sqlite_shards_match_one_database() {
    run(Shards::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn queries_on_mariadb_shards_match_one_database() {
    run(Shards::mariadb().await).await;
}

/// A proxy over fresh MariaDB shards with pools of one connection per data source, and a
/// client.
async fn on_pools_of_one() -> (Shards, Proxy, MySqlConnection) {
    let shards = Shards::mariadb().await;
    let yaml = RULES
        .replace("URL_0", &shards.url(0))
        .replace("URL_1", &shards.url(1))
        .replace("maxPoolSize: 2", "maxPoolSize: 1");
    let proxy = Proxy::start(&yaml).await;
    let conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    (shards, proxy, conn)
}

/// Several clients sharing pools of one connection per data source run gathered reads at once:
/// each gathering connection copies its own data source's nodes itself, so no read waits for
/// a second connection that does not exist. Merged reads interleave with them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn gathered_reads_share_pools_of_one_connection() {
    let (shards, proxy, mut conn) = on_pools_of_one().await;
    affected(&mut conn, TABLES[0]).await;
    let rows: Vec<String> = (0..40)
        .map(|i| format!("({}, 's{}', {i})", i % 5 + 1, i % 3))
        .collect();
    let insert = format!(
        "INSERT INTO t_order (user_id, status, amount) VALUES {}",
        rows.join(", ")
    );
    affected(&mut conn, &insert).await;
    conn.close().await.unwrap();
    let clients = (0..4).map(|_| {
        let url = proxy.url("root", "root");
        async move {
            let mut conn = MySqlConnection::connect(&url).await.unwrap();
            for _ in 0..10 {
                let (_, distinct) = fetch_mysql(
                    &mut conn,
                    // Aggregates inside expressions: gathered.
                    "SELECT COUNT(DISTINCT status) + 0, COUNT(DISTINCT user_id) + 0 FROM t_order",
                )
                .await;
                assert_eq!(distinct, [[Some("3".to_owned()), Some("5".to_owned())]]);
                let (_, wrapped) = fetch_mysql(
                    &mut conn,
                    "SELECT COUNT(1) FROM (SELECT 1 FROM t_order WHERE amount >= 20) AS _wrapped",
                )
                .await;
                assert_eq!(wrapped, [[Some("20".to_owned())]]);
                // Merged: a string aggregate in its order, an expression over aggregates.
                let (_, merged) = fetch_mysql(
                    &mut conn,
                    "SELECT GROUP_CONCAT(status ORDER BY amount DESC), SUM(amount) / COUNT(*) FROM t_order",
                )
                .await;
                let joined: Vec<String> = (0..40).rev().map(|i| format!("s{}", i % 3)).collect();
                assert_eq!(
                    merged,
                    [[Some(joined.join(",")), Some("19.5000".to_owned())]]
                );
            }
            conn.close().await.unwrap();
        }
    });
    // On this task, at once: the clients' statements interleave on the proxy's pools.
    futures_util::future::join_all(clients).await;
    proxy.stop().await;
    shards.cleanup().await;
}

/// Merges that compare text read its collation on a connection of their own: with pools of
/// one connection per data source and two clients inside transactions (which hold their data
/// sources' only connections), each merge still answers, exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn text_merges_in_transactions_share_pools_of_one_connection() {
    let (shards, proxy, mut conn) = on_pools_of_one().await;
    affected(&mut conn, TABLES[0]).await;
    affected(
        &mut conn,
        "INSERT INTO t_order (user_id, status, amount) VALUES \
         (1, 's2', 1), (2, 's0', 2), (3, 's1', 3), (4, 's0', 4)",
    )
    .await;
    conn.close().await.unwrap();
    let clients = (0..2).map(|_| {
        let url = proxy.url("root", "root");
        async move {
            let mut conn = MySqlConnection::connect(&url).await.unwrap();
            for _ in 0..5 {
                affected(&mut conn, "BEGIN").await;
                let (_, rows) = fetch_mysql(
                    &mut conn,
                    "SELECT status FROM t_order WHERE amount > 0 ORDER BY status, amount",
                )
                .await;
                let statuses: Vec<_> = rows.into_iter().map(|r| r[0].clone()).collect();
                let want = ["s0", "s0", "s1", "s2"].map(|s| Some(s.to_owned()));
                assert_eq!(statuses, want);
                affected(&mut conn, "COMMIT").await;
            }
            conn.close().await.unwrap();
        }
    });
    futures_util::future::join_all(clients).await;
    proxy.stop().await;
    shards.cleanup().await;
}

/// Streamed reads share pools of one connection per data source. Each node's 500 rows go out
/// as they are read, the data source's one connection held meanwhile: four clients reading
/// every row at once take turns on it and each gets every row, one that walks away after the
/// first rows of a long read gives its connection back, and INSERTs from another client go
/// through between.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn streamed_reads_share_pools_of_one_connection() {
    use futures_util::TryStreamExt;
    let (shards, proxy, mut conn) = on_pools_of_one().await;
    affected(&mut conn, TABLES[0]).await;
    for chunk in 0..20 {
        let rows: Vec<String> = (0..100)
            .map(|i| {
                // From 1: MySQL's 0 asks for a generated key.
                let id = chunk * 100 + i + 1;
                // Node by node: the order id's parity picks the table, the user id's the source.
                format!("({id}, {}, 's{id}', {id})", 1 + (id / 2) % 2)
            })
            .collect();
        let insert = format!(
            "INSERT INTO t_order (order_id, user_id, status, amount) VALUES {}",
            rows.join(", ")
        );
        assert_eq!(affected(&mut conn, &insert).await, 100);
    }
    let url = proxy.url("root", "root");
    // Reads its first rows of 20 MB, more than the sockets hold, then closes the connection
    // with the rest unread, while the proxy waits to write it.
    let walker = async {
        let mut conn = MySqlConnection::connect(&url).await.unwrap();
        let sql = "SELECT order_id, REPEAT('x', 10000) FROM t_order";
        let mut rows = sqlx::raw_sql(sql).fetch(&mut conn);
        for _ in 0..10 {
            rows.try_next().await.unwrap().unwrap();
        }
    };
    let readers = (0..4).map(|reader| {
        let url = url.clone();
        async move {
            let mut conn = MySqlConnection::connect(&url).await.unwrap();
            for round in 0..3 {
                // Not the rows the writer adds meanwhile.
                let sql = "SELECT order_id, status, amount FROM t_order WHERE status <> 'late'";
                let mut ids = Vec::new();
                let mut rows = match (reader + round) % 2 {
                    0 => sqlx::raw_sql(sql).fetch(&mut conn),
                    _ => sqlx::query(sql).fetch(&mut conn),
                };
                while let Some(row) = rows.try_next().await.unwrap() {
                    let (id, status, amount): (i64, String, i32) =
                        (row.get(0), row.get(1), row.get(2));
                    assert_eq!((status, i64::from(amount)), (format!("s{id}"), id));
                    ids.push(id);
                    if ids.len() % 100 == 0 {
                        // A client that reads slower than the shards send.
                        tokio::time::sleep(Duration::from_millis(2)).await;
                    }
                }
                drop(rows);
                ids.sort_unstable();
                assert_eq!(ids, (1..=2000).collect::<Vec<i64>>(), "reader {reader}");
            }
            conn.close().await.unwrap();
        }
    });
    let writer = async {
        let mut conn = MySqlConnection::connect(&url).await.unwrap();
        for i in 0..20 {
            let insert = format!(
                "INSERT INTO t_order (order_id, user_id, status, amount) \
                 VALUES ({}, {}, 'late', 0)",
                10_000 + i,
                1 + i % 2
            );
            assert_eq!(affected(&mut conn, &insert).await, 1);
        }
        conn.close().await.unwrap();
    };
    // On this task, at once: the clients' statements interleave on the proxy's pools.
    let ((), _, ()) = tokio::join!(walker, futures_util::future::join_all(readers), writer);
    // The late rows are all there, and the pools still answer.
    assert_eq!(count(&mut conn, "status = 'late'").await, 20);
    assert_eq!(count(&mut conn, "amount >= 0").await, 2020);
    conn.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

/// Results of the same and of other columns alternate on one shard connection, which keeps
/// the column definitions it met last and reuses their columns (vendor/README.md): each read,
/// as text and prepared, is described and answered as a plain MariaDB database answers it,
/// every time, whether its columns were met just before, evicted since, or never.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn kept_column_definitions_answer_as_a_plain_database() {
    let (shards, proxy, mut conn) = on_pools_of_one().await;
    let (mut reference, reference_db) = Reference::open(&shards).await;
    let Reference::MariaDb(plain) = &mut reference else {
        panic!("a MariaDB reference")
    };
    let rows = "INSERT INTO t_order (order_id, user_id, status, amount) VALUES \
                (11, 1, 'a', 5), (12, 1, 'b', 6), (13, 2, 'c', 7), (14, 2, 'd', 8)";
    for sql in [TABLES[0], rows] {
        affected(&mut conn, sql).await;
        affected(plain, sql).await;
    }
    // The same names over other types (JSON, DECIMAL, DATETIME, UUID), other tables' columns,
    // constants.
    let reads = [
        "SELECT order_id, status FROM t_order WHERE user_id = 1 ORDER BY order_id",
        "SELECT order_id, status FROM t_order WHERE user_id = 2 ORDER BY order_id",
        "SELECT status AS order_id, order_id AS status FROM t_order WHERE user_id = 1 ORDER BY status",
        "SELECT 1 AS v",
        "SELECT JSON_OBJECT('a', 1) AS v",
        "SELECT 1.50 AS v, amount AS w FROM t_order WHERE user_id = 2 ORDER BY amount",
        "SELECT CAST('2020-01-02 03:04:05.123' AS DATETIME(3)) AS v, \
         CAST('123e4567-e89b-12d3-a456-426614174000' AS UUID) AS w, 12.345 AS x",
    ];
    for i in common::KEPT_ORDER {
        let sql = reads[i];
        for prepared in [false, true] {
            let through = typed(&mut conn, sql, prepared).await;
            let expected = typed(plain, sql, prepared).await;
            assert_eq!(through, expected, "{sql} (prepared: {prepared})");
        }
    }
    conn.close().await.unwrap();
    proxy.stop().await;
    if let (Some(name), Shards::MariaDb { admin_url, .. }) = (reference_db, &shards) {
        let mut admin = MySqlConnection::connect(admin_url).await.unwrap();
        affected(&mut admin, &format!("DROP DATABASE IF EXISTS {name}")).await;
    }
    shards.cleanup().await;
}

/// Each column's name and type as a result describes it, and the rows: as text, or
/// (`prepared`) each value's bytes in the binary protocol, in hex.
async fn typed(conn: &mut MySqlConnection, sql: &str, prepared: bool) -> (Vec<String>, Table) {
    let rows = rows_of(conn, sql, prepared).await;
    let value = if prepared { hex_value } else { text_value };
    (described(&rows), table(&rows, value))
}

fn described<R: Row>(rows: &[R]) -> Vec<String> {
    use sqlx::TypeInfo;
    rows.first()
        .map(|row| {
            row.columns()
                .iter()
                .map(|c| format!("{} {}", c.name(), c.type_info().name()))
                .collect()
        })
        .unwrap_or_default()
}
