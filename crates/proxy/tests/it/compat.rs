//! Real client libraries through the proxy, each checked by the keys it reports against the
//! rows stored in the shards: PyMySQL, mysql-connector-python, mysqlclient, SQLAlchemy (on
//! PyMySQL, on psycopg and on asyncpg), Django (on PyMySQL and on psycopg), psycopg 3, asyncpg,
//! node mysql2, node pg, Knex and ActiveRecord (on both); SQLAlchemy with keys from the UUID generator read back by RETURNING; and every
//! column type read by the MySQL and PostgreSQL drivers through the proxy and from a plain
//! database. The scripts
//! are in `tests/compat/`; `.ci/compat.sh`
//! installs their pinned libraries under `~/.cache/keyshard-compat` (or
//! `$KEYSHARD_COMPAT_DIR`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::postgres::{PgProxy, PgShards, yaml};

/// `t_order` as an application has it: timestamps, a price, a JSON document and a UUID beside
/// the key, in each database's types (a UUID as CHAR(36) on MariaDB, as the ORMs map one;
/// MariaDB's own UUID type is among `mysql_types.py`'s).
const CREATE_MYSQL: &str = "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, \
     user_id INT NOT NULL, status VARCHAR(32), created_at DATETIME(6) NULL, \
     updated_at DATETIME(6) NULL, price DECIMAL(10,2) NULL, doc JSON NULL, ref CHAR(36) NULL)";
const CREATE_PG: &str = "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, \
     user_id INT NOT NULL, status VARCHAR(32), created_at TIMESTAMPTZ NULL, \
     updated_at TIMESTAMPTZ NULL, price NUMERIC(10,2) NULL, doc JSONB NULL, ref UUID NULL)";

fn compat_dir() -> PathBuf {
    std::env::var_os("KEYSHARD_COMPAT_DIR").map_or_else(
        || {
            let home = std::env::var_os("HOME").expect("HOME is set");
            Path::new(&home).join(".cache/keyshard-compat")
        },
        PathBuf::from,
    )
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/compat")
        .join(name)
}

/// Runs a client script against `address` and returns the keys it printed, sorted.
fn keys_from(program: &str, script_name: &str, port: u16, extra: &[&str]) -> Vec<String> {
    let dir = compat_dir();
    let mut command = match program {
        "python" => Command::new(dir.join("venv/bin/python")),
        "ruby" => Command::new("ruby"),
        "php" => Command::new("php"),
        _ => {
            let mut node = Command::new("node");
            node.env("NODE_PATH", dir.join("node/node_modules"));
            node
        }
    };
    let output = command
        .arg(script(script_name))
        .args(["127.0.0.1", &port.to_string()])
        .args(extra)
        .output()
        .unwrap_or_else(|e| panic!("{script_name}: {e} (run .ci/compat.sh first)"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{script_name} failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout.lines().last().unwrap_or_default();
    let printed: serde_like::Keys = serde_like::parse(line)
        .unwrap_or_else(|| panic!("{script_name} printed no keys: {stdout}"));
    let mut keys = printed;
    keys.sort_unstable();
    keys
}

/// The `{"keys": ["1", …]}` line the scripts print, read without a JSON library.
mod serde_like {
    pub type Keys = Vec<String>;

    pub fn parse(line: &str) -> Option<Keys> {
        let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        let list = compact.strip_prefix("{\"keys\":[")?.strip_suffix("]}")?;
        Some(
            list.split(',')
                .map(|k| k.trim().trim_matches('"').to_owned())
                .filter(|k| !k.is_empty())
                .collect(),
        )
    }
}

/// [`keys_from`] off the runtime's threads: the proxy under test runs on them.
async fn run(program: &str, script_name: &str, port: u16, extra: &[&str]) -> Vec<i64> {
    let mut keys: Vec<i64> = run_for_text(program, script_name, port, extra)
        .await
        .iter()
        .map(|k| {
            k.parse()
                .unwrap_or_else(|_| panic!("{script_name}: key {k}"))
        })
        .collect();
    keys.sort_unstable();
    keys
}

/// [`run`] for keys that are text (UUIDs).
async fn run_for_text(program: &str, script_name: &str, port: u16, extra: &[&str]) -> Vec<String> {
    let (program, script_name) = (program.to_owned(), script_name.to_owned());
    let extra: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        keys_from(&program, &script_name, port, &extra)
    })
    .await
    .unwrap()
}

/// `t_item`, keyed by the UUID generator and spread over the data sources by `user_id`.
fn with_uuid_items(yaml: &str) -> String {
    let rule = "    t_item:\n      actualDataNodes: ds_${0..1}.t_item\n      databaseStrategy:\n        \
                standard:\n          shardingColumn: user_id\n          \
                shardingAlgorithmName: database_inline\n      keyGenerateStrategy:\n        \
                column: item_id\n        keyGeneratorName: uuid\n";
    let yaml = yaml
        .replacen("  tables:\n", &format!("  tables:\n{rule}"), 1)
        .replacen(
            "  keyGenerators:\n",
            "  keyGenerators:\n    uuid:\n      type: UUID\n",
            1,
        );
    assert!(yaml.contains("keyGeneratorName: uuid") && yaml.contains("type: UUID"));
    yaml
}

const CREATE_ITEM: &str =
    "CREATE TABLE t_item (item_id VARCHAR(36) PRIMARY KEY, user_id INT NOT NULL)";

/// SQLAlchemy with keys from the UUID generator on MariaDB shards: the keys it read back are
/// the rows stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn sqlalchemy_uuid_keys_on_mariadb() {
    use sqlx::{Connection, Row};
    let shards = common::Shards::mariadb().await;
    let proxy = common::Proxy::start(&with_uuid_items(&common::yaml(
        &shards.url(0),
        &shards.url(1),
    )))
    .await;
    let mut conn = sqlx::MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    sqlx::raw_sql(CREATE_ITEM).execute(&mut conn).await.unwrap();
    let keys = run_for_text(
        "python",
        "sqlalchemy_uuid_keys.py",
        proxy.address.port(),
        &["mariadb+pymysql"],
    )
    .await;
    let mut stored = Vec::new();
    for ds in 0..2 {
        let mut shard = sqlx::MySqlConnection::connect(&shards.url(ds))
            .await
            .unwrap();
        for row in sqlx::query("SELECT item_id FROM t_item")
            .fetch_all(&mut shard)
            .await
            .unwrap()
        {
            stored.push(row.get::<String, _>(0));
        }
    }
    stored.sort_unstable();
    assert_eq!(stored, keys, "stored rows against reported keys");
    proxy.stop().await;
    shards.cleanup().await;
}

/// The same on PostgreSQL shards, through psycopg.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL and .ci/compat.sh"]
async fn sqlalchemy_uuid_keys_on_postgresql() {
    let shards = PgShards::postgres().await;
    let proxy = PgProxy::start(&with_uuid_items(&yaml(
        &shards.url(0),
        &shards.url(1),
        false,
    )))
    .await;
    proxy
        .client()
        .await
        .batch_execute(CREATE_ITEM)
        .await
        .unwrap();
    let keys = run_for_text(
        "python",
        "sqlalchemy_uuid_keys.py",
        proxy.address.port(),
        &["postgresql+psycopg"],
    )
    .await;
    let mut stored = Vec::new();
    for ds in 0..2 {
        let (shard, connection) = tokio_postgres::connect(&shards.url(ds), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        for row in shard
            .query("SELECT item_id FROM t_item", &[])
            .await
            .unwrap()
        {
            stored.push(row.get::<_, String>(0));
        }
    }
    stored.sort_unstable();
    assert_eq!(stored, keys, "stored rows against reported keys");
    proxy.stop().await;
    shards.cleanup().await;
}

/// Runs a `*_types.py` script, which compares what the drivers read through the proxy on
/// `port` with what they read from database `plain` on the server of `admin_url`; it prints
/// every difference and fails on any.
async fn types_agree(script_name: &str, port: u16, admin_url: &str, plain: &str) {
    let (_, server) = admin_url.rsplit_once('@').expect("a URL with a user");
    let server_port = server.split(['/', ':']).nth(1).expect("a URL with a port");
    let printed = run_for_text("python", script_name, port, &[server_port, plain]).await;
    assert!(printed.is_empty(), "{printed:?}");
}

/// PyMySQL, mysqlclient and mysql-connector (text and binary protocol) read every column type
/// through Keyshard as they read it from one plain MariaDB database holding the same rows:
/// the same Python value of the same Python type, merged and from one node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn mysql_drivers_read_every_type_as_from_mariadb() {
    use sqlx::Connection;
    let shards = common::Shards::mariadb().await;
    let proxy = common::Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let admin_url =
        std::env::var("KEYSHARD_TEST_MYSQL_URL").expect("KEYSHARD_TEST_MYSQL_URL is not set");
    let plain = common::unique("keyshard_plain");
    let mut admin = sqlx::MySqlConnection::connect(&admin_url).await.unwrap();
    sqlx::raw_sql(&format!("CREATE DATABASE {plain}"))
        .execute(&mut admin)
        .await
        .unwrap();
    types_agree("mysql_types.py", proxy.address.port(), &admin_url, &plain).await;
    sqlx::raw_sql(&format!("DROP DATABASE {plain}"))
        .execute(&mut admin)
        .await
        .unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

/// psycopg (text and binary results) and asyncpg read every column type through Keyshard as
/// they read it from one plain PostgreSQL database holding the same rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL and .ci/compat.sh"]
async fn postgres_drivers_read_every_type_as_from_postgresql() {
    let shards = PgShards::postgres().await;
    let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), false)).await;
    let admin_url = std::env::var("KEYSHARD_TEST_PG_URL").expect("KEYSHARD_TEST_PG_URL is not set");
    let plain = common::unique("keyshard_plain");
    let admin = common::postgres::admin(&admin_url).await;
    admin
        .batch_execute(&format!("CREATE DATABASE {plain}"))
        .await
        .unwrap();
    types_agree(
        "postgres_types.py",
        proxy.address.port(),
        &admin_url,
        &plain,
    )
    .await;
    admin
        .batch_execute(&format!("DROP DATABASE {plain}"))
        .await
        .unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

async fn mysql_client(script_name: &str, program: &str, extra: &[&str]) {
    let (shards, proxy) = common::on_mariadb(CREATE_MYSQL).await;
    let port = proxy.address.port();
    let keys = run(program, script_name, port, extra).await;
    let mut stored = Vec::new();
    for (ds, table) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        stored.extend(shards.ids(ds, table).await);
    }
    stored.sort_unstable();
    assert_eq!(
        stored, keys,
        "{script_name}: stored rows against reported keys"
    );
    proxy.stop().await;
    shards.cleanup().await;
}

async fn postgres_client(script_name: &str, program: &str, extra: &[&str]) {
    let shards = PgShards::postgres().await;
    let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), false)).await;
    proxy.client().await.batch_execute(CREATE_PG).await.unwrap();
    let port = proxy.address.port();
    let keys = run(program, script_name, port, extra).await;
    assert_eq!(
        shards.all_ids().await,
        keys,
        "{script_name}: stored rows against reported keys"
    );
    proxy.stop().await;
    shards.cleanup().await;
}

/// node mysql2 with its defaults reads keys as JavaScript numbers: with a SNOWFLAKE layout
/// that keeps keys below 2^53 (5 worker id bits, 7 sequence bits) every key it reports and
/// reads is exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn node_mysql2_defaults_with_js_safe_keys() {
    use sqlx::Connection;
    let shards = common::Shards::mariadb().await;
    let yaml = common::yaml(&shards.url(0), &shards.url(1)).replace(
        "        max-vibration-offset: 3\n",
        "        max-vibration-offset: 3\n        worker-id-bits: 5\n        sequence-bits: 7\n        \
         epoch: 2024-01-01T00:00:00Z\n",
    );
    let proxy = common::Proxy::start(&yaml).await;
    let mut conn = sqlx::MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    sqlx::raw_sql(CREATE_MYSQL)
        .execute(&mut conn)
        .await
        .unwrap();
    let keys = run("node", "mysql2_js_safe_keys.js", proxy.address.port(), &[]).await;
    assert_eq!(keys.len(), 43);
    assert!(keys.iter().all(|k| *k < 1 << 53), "{keys:?}");
    let mut stored = Vec::new();
    for (ds, table) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        stored.extend(shards.ids(ds, table).await);
    }
    stored.sort_unstable();
    assert_eq!(stored, keys, "stored rows against reported keys");
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn peewee() {
    mysql_client("peewee_reads.py", "python", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn pymysql() {
    mysql_client("pymysql_keys.py", "python", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn mysql_connector_python() {
    mysql_client("connector_keys.py", "python", &["connector"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn mysqlclient() {
    mysql_client("connector_keys.py", "python", &["mysqlclient"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn sqlalchemy_on_pymysql() {
    mysql_client("sqlalchemy_keys.py", "python", &["mysql+pymysql"]).await;
}

/// SQLAlchemy's MariaDB dialect connects only to a server that says it is MariaDB, as the
/// proxy does over MariaDB shards; it then inserts with RETURNING.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn sqlalchemy_on_mariadb_pymysql() {
    mysql_client("sqlalchemy_keys.py", "python", &["mariadb+pymysql"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn django_on_mysql() {
    mysql_client("django_keys.py", "python", &["mysql"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn node_mysql2() {
    mysql_client("mysql2_keys.js", "node", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL and .ci/compat.sh"]
async fn psycopg() {
    postgres_client("psycopg_keys.py", "python", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL and .ci/compat.sh"]
async fn sqlalchemy_on_psycopg() {
    postgres_client("sqlalchemy_keys.py", "python", &["postgresql+psycopg"]).await;
}

/// SQLAlchemy's asyncpg dialect, which renders `.limit()` as `LIMIT $n::INTEGER`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL and .ci/compat.sh"]
async fn sqlalchemy_on_asyncpg() {
    postgres_client("sqlalchemy_keys.py", "python", &["postgresql+asyncpg"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL and .ci/compat.sh"]
async fn django_on_postgresql() {
    postgres_client("django_keys.py", "python", &["postgresql"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL and .ci/compat.sh"]
async fn asyncpg() {
    postgres_client("asyncpg_keys.py", "python", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL and .ci/compat.sh"]
async fn node_pg() {
    postgres_client("pg_keys.js", "node", &[]).await;
}

/// ActiveRecord (Debian's) on mysql2 and on pg: an application's table of timestamps it fills
/// in, a price, a JSON document and a UUID, saved, read back, filtered, ordered, aggregated,
/// updated and destroyed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn activerecord_on_mysql2() {
    mysql_client("activerecord_orders.rb", "ruby", &["mysql2"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL and .ci/compat.sh"]
async fn activerecord_on_postgresql() {
    postgres_client("activerecord_orders.rb", "ruby", &["postgresql"]).await;
}

/// PHP's PDO (Debian's) on MySQL and PostgreSQL: keys read back by `lastInsertId()` (which
/// on PostgreSQL asks `SELECT lastval()`), server-side and emulated prepares, updates,
/// deletes, transactions and an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn php_pdo_on_mysql() {
    mysql_client("pdo_orders.php", "php", &["mysql"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL and .ci/compat.sh"]
async fn php_pdo_on_postgresql() {
    postgres_client("pdo_orders.php", "php", &["pgsql"]).await;
}

/// Knex on node mysql2 and on node pg: an application's table of timestamps, a price, a JSON
/// document and a UUID, written, read back, filtered, ordered and aggregated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and .ci/compat.sh"]
async fn knex_on_mysql2() {
    mysql_client("knex_orders.js", "node", &["mysql2"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL and .ci/compat.sh"]
async fn knex_on_pg() {
    postgres_client("knex_orders.js", "node", &["pg"]).await;
}
