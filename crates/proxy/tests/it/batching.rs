//! Natural batching: single-row INSERTs of many clients at once go to a shard as one multi-row
//! INSERT, and each client is told exactly what it would have been told alone. Sixteen clients
//! share pools of two connections per shard and insert rows with timestamps, decimals and JSON,
//! some colliding on a unique key, some breaking NOT NULL or CHECK; then every row stored is
//! compared with what its client was told. On MariaDB, a shard is also killed mid-batch.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::common::throwaway::ThrowawayMariaDb;
use keyshard_proxy::Server;
use sqlx::{Connection, Executor, Row};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CLIENTS: usize = 16;
const STEPS: usize = 48;

/// A proxy with one frontend and the metrics endpoint, over `t_item` and `t_plain` on two data
/// sources: rows by `user_id`, one table per data source, keys generated.
struct Started {
    frontend: SocketAddr,
    metrics: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Started {
    async fn start(urls: [&str; 2], frontend: &str) -> Self {
        let yaml = format!(
            "databaseName: sharding_db\n\
             server:\n  {frontend}:\n    listen: 127.0.0.1:0\n  metrics:\n    listen: 127.0.0.1:0\n\
             authority:\n  users:\n    - user: root@%\n      password: root\n\
             dataSources:\n\
             \x20 ds_0: {{url: '{}', maxPoolSize: 2, connectionTimeoutMilliseconds: 3000}}\n\
             \x20 ds_1: {{url: '{}', maxPoolSize: 2, connectionTimeoutMilliseconds: 3000}}\n\
             rules:\n\
             - !SHARDING\n\
             \x20 tables:\n\
             \x20   t_item:\n\
             \x20     actualDataNodes: ds_${{0..1}}.t_item\n\
             \x20     databaseStrategy: {{standard: {{shardingColumn: user_id, shardingAlgorithmName: by_user}}}}\n\
             \x20     keyGenerateStrategy: {{column: item_id, keyGeneratorName: snowflake}}\n\
             \x20   t_plain:\n\
             \x20     actualDataNodes: ds_${{0..1}}.t_plain\n\
             \x20     databaseStrategy: {{standard: {{shardingColumn: user_id, shardingAlgorithmName: by_user}}}}\n\
             \x20     keyGenerateStrategy: {{column: item_id, keyGeneratorName: snowflake}}\n\
             \x20 shardingAlgorithms:\n\
             \x20   by_user: {{type: INLINE, props: {{algorithm-expression: 'ds_${{user_id % 2}}'}}}}\n\
             \x20 keyGenerators:\n\
             \x20   snowflake: {{type: SNOWFLAKE}}\n",
            urls[0], urls[1]
        );
        let config = keyshard_config::from_yaml_str(&yaml, Path::new("."))
            .unwrap_or_else(|e| panic!("{e}\n{yaml}"));
        let server = Server::bind(config).await.unwrap();
        let address = match frontend {
            "mysql" => server.mysql_address(),
            _ => server.postgres_address(),
        };
        let (frontend, metrics) = (address.unwrap(), server.metrics_address().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        Self {
            frontend,
            metrics,
            stop,
            task,
        }
    }

    fn mysql_url(&self) -> String {
        format!("mysql://root:root@{}/sharding_db", self.frontend)
    }

    /// `keyshard_insert_*` counters: batches, statements batched, batches retried one by one.
    async fn batching(&self) -> (u64, u64, u64) {
        let mut stream = TcpStream::connect(self.metrics).await.unwrap();
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: keyshard\r\n\r\n")
            .await
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        let value = |name: &str| -> u64 {
            response
                .lines()
                .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
                .unwrap_or_else(|| panic!("{name} missing from /metrics"))
        };
        (
            value("keyshard_insert_batches_total "),
            value("keyshard_insert_batched_statements_total "),
            value("keyshard_insert_batches_retried_total "),
        )
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

/// What a statement of the script should meet.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// Stored, with its own key.
    Fine,
    /// Every client's statement of a step has the same `code`, all on one table: one is stored.
    Collides,
    /// `status` NULL.
    NotNull,
    /// `qty` -1 against `CHECK (qty > 0)`.
    Check,
}

/// The tables the scripts insert into.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Table {
    /// `t_item`, with a DECIMAL, a timestamp and JSON (and on PostgreSQL a UUID): statements
    /// that go to the shards as text.
    Typed { uuid: bool },
    /// `t_plain`, integers and strings only: statements whose literals go to the shards as
    /// parameters (see the proxy's `shapes::typed`), so batches join parameters.
    Plain,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Typed { .. } => "t_item",
            Table::Plain => "t_plain",
        }
    }
}

/// The `qty` of step `i`: -1 where it breaks the CHECK.
fn qty(i: usize) -> i64 {
    match i % 8 {
        7 => -1,
        _ => 1 + i as i64 % 3,
    }
}

/// Client `c`'s statement of step `i`: its tag (unique), kind and text.
fn statement(c: usize, i: usize, table: Table) -> (String, Kind, String) {
    let tag = format!("c{c}s{i}");
    let unique = 100_000 + c * 1_000 + i;
    let (kind, user, code, status) = match i % 8 {
        5 => (Kind::Collides, 7, 500 + i, "'new'"),
        6 => (Kind::NotNull, c + i, unique, "NULL"),
        7 => (Kind::Check, c + i, unique, "'new'"),
        _ => (Kind::Fine, c + i, unique, "'new'"),
    };
    let qty = qty(i);
    let values = format!("{user}, {code}, '{tag}', {status}, {qty}");
    let sql = match table {
        Table::Plain => {
            format!("INSERT INTO t_plain (user_id, code, tag, status, qty) VALUES ({values})")
        }
        Table::Typed { uuid } => {
            let (column, value) = if uuid {
                (", ref", format!(", '00000000-0000-4000-8000-{unique:012}'"))
            } else {
                (Default::default(), String::new())
            };
            format!(
                "INSERT INTO t_item (user_id, code, tag, status, qty, price, created_at, \
                 doc{column}) VALUES ({values}, {c}.50, '2026-12-06 10:{:02}:00.125', \
                 '{{\"client\": {c}, \"step\": {i}}}'{value})",
                i % 60
            )
        }
    };
    (tag, kind, sql)
}

/// What a client was told: a key (MySQL's OK packet), an error code, or that the proxy does
/// not know whether the row was stored.
#[derive(Debug, Clone, PartialEq)]
enum Told {
    Stored(Option<u64>),
    Refused(String),
    Unknown,
}

/// The checks every script run ends with: each row stored is one a client was told was, with
/// its key, and every statement met what its kind says.
fn check(
    told: &HashMap<String, (Kind, Told)>,
    stored: &BTreeMap<String, (u64, String)>,
    codes: [&str; 3],
) {
    let [unique, not_null, check] = codes;
    let mut collisions: HashMap<String, usize> = HashMap::new();
    for (tag, (kind, told)) in told {
        let row = stored.get(tag);
        match (kind, told) {
            (_, Told::Stored(key)) => {
                let (stored_key, status) = row.unwrap_or_else(|| panic!("{tag}: told stored"));
                if let Some(key) = key {
                    assert_eq!(key, stored_key, "{tag}: its key");
                }
                assert_eq!(status, "new", "{tag}");
                if *kind == Kind::Collides {
                    *collisions
                        .entry(tag[tag.find('s').unwrap()..].to_owned())
                        .or_default() += 1;
                }
                assert_ne!(*kind, Kind::NotNull, "{tag}: a NULL status was stored");
                assert_ne!(*kind, Kind::Check, "{tag}: qty -1 was stored");
            }
            (kind, Told::Refused(code)) => {
                assert!(row.is_none(), "{tag}: refused ({code}) but stored");
                let expected = match kind {
                    Kind::Fine => "none",
                    Kind::Collides => unique,
                    Kind::NotNull => not_null,
                    Kind::Check => check,
                };
                assert_eq!(code, expected, "{tag}");
            }
            (_, Told::Unknown) => panic!("{tag}: outcome unknown with every shard up"),
        }
    }
    assert_eq!(
        stored.len(),
        told.values()
            .filter(|(_, t)| matches!(t, Told::Stored(_)))
            .count(),
        "rows stored that no client was told of"
    );
    for (step, count) in collisions {
        assert_eq!(count, 1, "step {step}: one of the colliding rows is stored");
    }
}

/// The rows stored in `table` on the shards at `urls`, by tag: key and status; their other
/// values checked against what their statements inserted.
async fn mysql_rows(urls: &[String], table: Table) -> BTreeMap<String, (u64, String)> {
    let mut rows = BTreeMap::new();
    let sql = match table {
        Table::Plain => "SELECT tag, item_id, status, CAST(qty AS CHAR) FROM t_plain",
        Table::Typed { .. } => {
            "SELECT tag, item_id, status, CAST(qty AS CHAR), CAST(price AS CHAR), \
             CAST(created_at AS CHAR), CAST(doc AS CHAR) FROM t_item"
        }
    };
    for url in urls {
        let mut conn = sqlx::MySqlConnection::connect(url).await.unwrap();
        for row in sqlx::query(sql).fetch_all(&mut conn).await.unwrap() {
            let tag: String = row.get(0);
            let (c, i) = client_step(&tag);
            let values: Vec<String> = (3..row.len()).map(|n| row.get(n)).collect();
            let expected = [
                qty(i).to_string(),
                format!("{c}.50"),
                format!("2026-12-06 10:{:02}:00.125", i % 60),
                format!("{{\"client\": {c}, \"step\": {i}}}"),
            ];
            assert_eq!(values, expected[..values.len()], "{tag}");
            let item_id: i64 = row.get(1);
            assert!(
                rows.insert(tag.clone(), (item_id as u64, row.get(2)))
                    .is_none(),
                "{tag} stored twice"
            );
        }
    }
    rows
}

fn client_step(tag: &str) -> (usize, usize) {
    let (c, i) = tag[1..].split_once('s').unwrap();
    (c.parse().unwrap(), i.parse().unwrap())
}

/// The MySQL error number of a refusal, as text; `None`: the outcome is not known (20102).
fn mysql_told(result: Result<sqlx::mysql::MySqlQueryResult, sqlx::Error>) -> Told {
    match result {
        Ok(done) => {
            assert_eq!(done.rows_affected(), 1);
            Told::Stored(Some(done.last_insert_id()))
        }
        Err(e) => match common::mysql_code(&e) {
            Some(20_102) | None => Told::Unknown,
            Some(code) => Told::Refused(code.to_string()),
        },
    }
}

const MYSQL_TABLES: &str = "CREATE TABLE t_item (item_id BIGINT PRIMARY KEY, \
     user_id INT NOT NULL, code INT NOT NULL, tag VARCHAR(32) NOT NULL, \
     status VARCHAR(16) NOT NULL, qty INT NOT NULL CHECK (qty > 0), price DECIMAL(10,2), \
     created_at TIMESTAMP(3) NULL, doc JSON, UNIQUE KEY uk_code (code)); \
     CREATE TABLE t_plain (item_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
     code INT NOT NULL, tag VARCHAR(32) NOT NULL, status VARCHAR(16) NOT NULL, \
     qty INT NOT NULL CHECK (qty > 0), UNIQUE KEY uk_plain_code (code))";

/// What every client was told, by tag.
async fn gathered(
    clients: impl Iterator<Item = tokio::task::JoinHandle<Vec<(String, (Kind, Told))>>>,
) -> HashMap<String, (Kind, Told)> {
    let mut told = HashMap::new();
    for client in futures_util::future::join_all(clients).await {
        told.extend(client.unwrap());
    }
    told
}

/// Sixteen MySQL clients run their scripts at once; each checks `LAST_INSERT_ID()` after what
/// it was told was stored.
async fn run_mysql_clients(
    url: &str,
    table: Table,
    steps: usize,
    stop: Option<Arc<AtomicBool>>,
) -> HashMap<String, (Kind, Told)> {
    let clients = (0..CLIENTS).map(|c| {
        let (url, stop) = (url.to_owned(), stop.clone());
        tokio::spawn(async move {
            let mut conn = sqlx::MySqlConnection::connect(&url).await.unwrap();
            let mut told = Vec::new();
            for i in 0..steps {
                if stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)) {
                    break;
                }
                let (tag, kind, sql) = statement(c, i, table);
                let result = mysql_told(conn.execute(sql.as_str()).await);
                if let Told::Stored(Some(key)) = result
                    && stop.is_none()
                {
                    let last: u64 = sqlx::query_scalar("SELECT LAST_INSERT_ID()")
                        .fetch_one(&mut conn)
                        .await
                        .unwrap();
                    assert_eq!(last, key, "{tag}: LAST_INSERT_ID()");
                }
                if matches!(result, Told::Unknown) && stop.is_some() {
                    // The proxy's connection to the client may be gone with the shard's:
                    // reconnect for the next statement.
                    if let Ok(fresh) = sqlx::MySqlConnection::connect(&url).await {
                        conn = fresh;
                    }
                }
                told.push((tag, (kind, result)));
            }
            told
        })
    });
    gathered(clients).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs KEYSHARD_TEST_MYSQL_URL"]
async fn mariadb_clients_each_get_their_own_answer_from_batches() {
    let shards = common::Shards::mariadb().await;
    let urls = [shards.url(0), shards.url(1)];
    let proxy = Started::start([&urls[0], &urls[1]], "mysql").await;
    let mut conn = sqlx::MySqlConnection::connect(&proxy.mysql_url())
        .await
        .unwrap();
    conn.execute(MYSQL_TABLES).await.unwrap();
    let mut counted = proxy.batching().await;
    for table in [Table::Typed { uuid: false }, Table::Plain] {
        warm_up(&mut conn, table).await;
        let told = run_mysql_clients(&proxy.mysql_url(), table, STEPS, None).await;
        let stored = mysql_rows(&urls, table).await;
        check(&told, &stored, ["1062", "1048", "4025"]);
        counted = batched_since(&proxy, counted, table).await;
    }

    // Batches are never formed for a table with a trigger: its rows would meet it per
    // statement. A schema change through the proxy has it look at the tables again.
    for url in &urls {
        let mut direct = sqlx::MySqlConnection::connect(url).await.unwrap();
        direct
            .execute(
                "CREATE TRIGGER t_item_note BEFORE INSERT ON t_item FOR EACH ROW \
                 SET NEW.qty = NEW.qty",
            )
            .await
            .unwrap();
    }
    conn.execute("ALTER TABLE t_item ADD COLUMN note VARCHAR(10)")
        .await
        .unwrap();
    let table = Table::Typed { uuid: false };
    warm_up(&mut conn, table).await;
    let before = proxy.batching().await;
    let told = run_mysql_clients(&proxy.mysql_url(), table, 8, None).await;
    assert!(told.values().any(|(_, t)| matches!(t, Told::Stored(_))));
    assert_eq!(
        before,
        proxy.batching().await,
        "a batch on a table with a trigger"
    );

    drop(conn);
    proxy.stop().await;
    shards.cleanup().await;
}

/// Lets the proxy find out whether `table` allows batches (on its first INSERT, which runs
/// alone), and empties it.
async fn warm_up(conn: &mut sqlx::MySqlConnection, table: Table) {
    for c in [99, 98] {
        conn.execute(statement(c, 0, table).2.as_str())
            .await
            .unwrap();
    }
    conn.execute(format!("DELETE FROM {}", table.name()).as_str())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
}

/// Checks that a script on `table` was batched, some batches refused and run one by one,
/// since `counted`; answers the counts now.
async fn batched_since(proxy: &Started, counted: (u64, u64, u64), table: Table) -> (u64, u64, u64) {
    let now = proxy.batching().await;
    let (batches, batched, retried) = (now.0 - counted.0, now.1 - counted.1, now.2 - counted.2);
    println!(
        "{table:?}: {batches} batches carried {batched} INSERTs; {retried} refused and run one \
         by one"
    );
    assert!(
        batches > 0 && batched > batches,
        "{table:?}: nothing was batched"
    );
    assert!(retried > 0, "{table:?}: no batch met a refused row");
    now
}

const PG_TABLES: &str = "CREATE TABLE t_item (item_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
     code INT NOT NULL UNIQUE, tag VARCHAR(32) NOT NULL, status VARCHAR(16) NOT NULL, \
     qty INT NOT NULL CHECK (qty > 0), price NUMERIC(10,2), created_at TIMESTAMPTZ, doc JSONB, \
     ref UUID); \
     CREATE TABLE t_plain (item_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
     code INT NOT NULL UNIQUE, tag VARCHAR(32) NOT NULL, status VARCHAR(16) NOT NULL, \
     qty INT NOT NULL CHECK (qty > 0))";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs KEYSHARD_TEST_PG_URL"]
async fn postgres_clients_each_get_their_own_answer_from_batches() {
    let shards = common::postgres::PgShards::postgres().await;
    let urls = [shards.url(0), shards.url(1)];
    let proxy = Started::start([&urls[0], &urls[1]], "postgres").await;
    let mut config = tokio_postgres::Config::new();
    config
        .host("127.0.0.1")
        .port(proxy.frontend.port())
        .user("root")
        .password("root")
        .dbname("sharding_db");
    let admin = common::postgres::connect(&config).await.unwrap();
    admin.batch_execute(PG_TABLES).await.unwrap();
    let mut counted = proxy.batching().await;
    for table in [Table::Typed { uuid: true }, Table::Plain] {
        for c in [99, 98] {
            admin
                .batch_execute(&statement(c, 0, table).2)
                .await
                .unwrap();
        }
        admin
            .batch_execute(&format!("DELETE FROM {}", table.name()))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let told = run_pg_clients(&config, table).await;
        let stored = pg_rows(&urls, table).await;
        check(&told, &stored, ["23505", "23502", "23514"]);
        counted = batched_since(&proxy, counted, table).await;
    }

    drop(admin);
    proxy.stop().await;
    shards.cleanup().await;
}

/// Sixteen PostgreSQL clients run their scripts at once (simple query protocol); every fourth
/// fine row asks for its key back with RETURNING, which runs alone, beside the batches.
async fn run_pg_clients(
    config: &tokio_postgres::Config,
    table: Table,
) -> HashMap<String, (Kind, Told)> {
    let clients = (0..CLIENTS).map(|c| {
        let config = config.clone();
        tokio::spawn(async move {
            let client = common::postgres::connect(&config).await.unwrap();
            let mut told = Vec::new();
            for i in 0..STEPS {
                let (tag, kind, mut sql) = statement(c, i, table);
                let returning = kind == Kind::Fine && i % 4 == 0;
                if returning {
                    sql.push_str(" RETURNING item_id");
                }
                let result = match client.simple_query(&sql).await {
                    Ok(messages) => {
                        let mut key = None;
                        for message in messages {
                            match message {
                                tokio_postgres::SimpleQueryMessage::Row(row) => {
                                    key = row.get(0).map(|k| k.parse::<u64>().unwrap());
                                }
                                tokio_postgres::SimpleQueryMessage::CommandComplete(n) => {
                                    assert_eq!(n, 1, "{tag}");
                                }
                                _ => {}
                            }
                        }
                        assert_eq!(key.is_some(), returning, "{tag}");
                        Told::Stored(key)
                    }
                    Err(e) => match e.code().map(|c| c.code().to_owned()) {
                        Some(code) if code != "XAKS2" => Told::Refused(code),
                        _ => Told::Unknown,
                    },
                };
                told.push((tag, (kind, result)));
            }
            told
        })
    });
    gathered(clients).await
}

/// The rows stored in `table` on the PostgreSQL shards at `urls`, as [`mysql_rows`].
async fn pg_rows(urls: &[String], table: Table) -> BTreeMap<String, (u64, String)> {
    let sql = match table {
        Table::Plain => "SELECT tag, item_id, status, qty::text FROM t_plain",
        Table::Typed { .. } => {
            "SELECT tag, item_id, status, qty::text, price::text, \
             to_char(created_at AT TIME ZONE current_setting('TimeZone'), \
             'YYYY-MM-DD HH24:MI:SS.MS'), doc::text, ref::text FROM t_item"
        }
    };
    let mut stored = BTreeMap::new();
    for url in urls {
        let direct = common::postgres::admin(url).await;
        for row in direct.query(sql, &[]).await.unwrap() {
            let tag: String = row.get(0);
            let (c, i) = client_step(&tag);
            let unique = 100_000 + c * 1_000 + i;
            let values: Vec<String> = (3..row.len()).map(|n| row.get(n)).collect();
            let expected = [
                qty(i).to_string(),
                format!("{c}.50"),
                format!("2026-12-06 10:{:02}:00.125", i % 60),
                format!("{{\"step\": {i}, \"client\": {c}}}"),
                format!("00000000-0000-4000-8000-{unique:012}"),
            ];
            assert_eq!(values, expected[..values.len()], "{tag}");
            let item_id: i64 = row.get(1);
            assert!(
                stored
                    .insert(tag.clone(), (item_id as u64, row.get(2)))
                    .is_none(),
                "{tag} stored twice"
            );
        }
    }
    stored
}

/// A shard server killed while sixteen clients insert through batches: no client was told a
/// row was stored that is not, none was told it was refused when it is stored; a statement the
/// kill cut is reported as of unknown outcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs mariadb-install-db and mariadbd (a throwaway server)"]
async fn a_shard_killed_mid_batch_tells_no_client_a_wrong_outcome() {
    let mut server = ThrowawayMariaDb::start(&[]).await;
    let mut admin = sqlx::MySqlConnection::connect(&server.url("mysql"))
        .await
        .unwrap();
    admin
        .execute("CREATE DATABASE ks_b0; CREATE DATABASE ks_b1")
        .await
        .unwrap();
    let urls = [server.url("ks_b0"), server.url("ks_b1")];
    let proxy = Started::start([&urls[0], &urls[1]], "mysql").await;
    let mut conn = sqlx::MySqlConnection::connect(&proxy.mysql_url())
        .await
        .unwrap();
    conn.execute(MYSQL_TABLES).await.unwrap();
    // Parameters (t_plain's) make the batches of this test.
    warm_up(&mut conn, Table::Plain).await;
    drop(conn);

    let stop = Arc::new(AtomicBool::new(false));
    let clients = tokio::spawn({
        let (url, stop) = (proxy.mysql_url(), Arc::clone(&stop));
        async move { run_mysql_clients(&url, Table::Plain, 100_000, Some(stop)).await }
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (batches, _, _) = proxy.batching().await;
    server.kill();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    stop.store(true, Ordering::Relaxed);
    let told = clients.await.unwrap();
    server.run().await;

    let stored = mysql_rows(&urls, Table::Plain).await;
    let mut counts = [0; 3];
    for (tag, (kind, told)) in &told {
        let row = stored.get(tag);
        match told {
            Told::Stored(key) => {
                counts[0] += 1;
                let (stored_key, _) = row.unwrap_or_else(|| panic!("{tag}: told stored, lost"));
                assert_eq!(key, &Some(*stored_key), "{tag}");
            }
            Told::Refused(code) => {
                counts[1] += 1;
                assert!(
                    row.is_none(),
                    "{tag} ({kind:?}): refused ({code}) but stored"
                );
            }
            Told::Unknown => counts[2] += 1,
        }
    }
    for tag in stored.keys() {
        assert!(told.contains_key(tag), "{tag}: stored, never sent");
    }
    println!(
        "{} statements: {} told stored, {} refused, {} of unknown outcome; {batches} batches \
         before the kill",
        told.len(),
        counts[0],
        counts[1],
        counts[2]
    );
    assert!(batches > 0, "nothing was batched before the kill");
    assert!(counts[1] + counts[2] > 0, "the kill cut no statement");
    proxy.stop().await;
}
