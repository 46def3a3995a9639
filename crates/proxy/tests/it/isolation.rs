//! Isolation levels and access modes reach every data source a transaction touches: two
//! clients, A and B, run one script through the proxy (rows on both shards) and against one
//! plain database, and what A sees of B's inserts must be the same on both sides.

use crate::common;

use crate::common::compare::{Answer, mysql_answer, pg_answer, transcript};
use crate::common::postgres::{PgProxy, PgShards, connect, yaml};
use crate::common::{Proxy, Shards};
use sqlx::Connection;

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";
const COUNT: &str = "SELECT COUNT(*) FROM t_order";
const A: usize = 0;
const B: usize = 1;

const PG_SCRIPT: &[(usize, &str)] = &[
    (A, "BEGIN ISOLATION LEVEL REPEATABLE READ"),
    (A, "SHOW transaction_isolation"),
    (A, COUNT),
    (
        B,
        "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'x')",
    ),
    (
        B,
        "INSERT INTO t_order (order_id, user_id, status) VALUES (2, 1, 'y')",
    ),
    // A's snapshot was taken on both shards by its first count.
    (A, COUNT),
    (A, "COMMIT"),
    (A, COUNT),
    (
        A,
        "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    ),
    (A, "SHOW default_transaction_isolation"),
    (A, "BEGIN"),
    (A, COUNT),
    (
        B,
        "INSERT INTO t_order (order_id, user_id, status) VALUES (3, 0, 'z')",
    ),
    (A, COUNT),
    (A, "COMMIT"),
    (
        A,
        "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED",
    ),
    (A, "BEGIN"),
    // Before any query: this transaction's level changes.
    (A, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"),
    (A, "SHOW transaction_isolation"),
    (A, COUNT),
    (
        B,
        "INSERT INTO t_order (order_id, user_id, status) VALUES (4, 1, 'w')",
    ),
    (A, COUNT),
    (A, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE"),
    (A, "ROLLBACK"),
    (A, "BEGIN READ ONLY"),
    (
        A,
        "INSERT INTO t_order (order_id, user_id, status) VALUES (5, 0, 'v')",
    ),
    (A, "ROLLBACK"),
    // A second BEGIN changes nothing in PostgreSQL.
    (A, "BEGIN"),
    (
        A,
        "INSERT INTO t_order (order_id, user_id, status) VALUES (6, 1, 'u')",
    ),
    (A, "BEGIN"),
    (A, "ROLLBACK"),
    (A, COUNT),
];

const MYSQL_SCRIPT: &[(usize, &str)] = &[
    (A, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"),
    (A, "SELECT @@tx_isolation"),
    (A, "BEGIN"),
    (A, COUNT),
    (
        B,
        "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'x')",
    ),
    (
        B,
        "INSERT INTO t_order (order_id, user_id, status) VALUES (2, 1, 'y')",
    ),
    // READ COMMITTED: A sees them at once (REPEATABLE READ, MariaDB's default, would not).
    (A, COUNT),
    (A, "COMMIT"),
    // The next transaction only.
    (A, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"),
    (A, "BEGIN"),
    (A, COUNT),
    (
        B,
        "INSERT INTO t_order (order_id, user_id, status) VALUES (3, 0, 'z')",
    ),
    (A, COUNT),
    (A, "COMMIT"),
    (A, "BEGIN"),
    (A, COUNT),
    (
        B,
        "INSERT INTO t_order (order_id, user_id, status) VALUES (4, 1, 'w')",
    ),
    (A, COUNT),
    (A, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE"),
    (A, "COMMIT"),
    (A, "START TRANSACTION READ ONLY"),
    (
        A,
        "INSERT INTO t_order (order_id, user_id, status) VALUES (5, 0, 'v')",
    ),
    (A, "ROLLBACK"),
    (A, COUNT),
];

fn statements(script: &[(usize, &'static str)]) -> Vec<&'static str> {
    script.iter().map(|(_, sql)| *sql).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgresql_isolation_levels_reach_every_shard() {
    let shards = PgShards::postgres().await;
    let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), false)).await;
    let through = [proxy.client().await, proxy.client().await];
    through[A].batch_execute(CREATE).await.unwrap();
    let plain_shards = PgShards::postgres().await;
    let config = plain_shards.url(0).parse().unwrap();
    let plain = [
        connect(&config).await.unwrap(),
        connect(&config).await.unwrap(),
    ];
    plain[A].batch_execute(CREATE).await.unwrap();

    let (mut expected, mut got): (Vec<Answer>, Vec<Answer>) = (Vec::new(), Vec::new());
    for (client, sql) in PG_SCRIPT {
        expected.push(pg_answer(&plain[*client], sql, false).await);
        got.push(pg_answer(&through[*client], sql, false).await);
    }
    let script = statements(PG_SCRIPT);
    assert_eq!(transcript(&script, &got), transcript(&script, &expected));
    proxy.stop().await;
    shards.cleanup().await;
    plain_shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mysql_isolation_levels_reach_every_shard() {
    let shards = Shards::mariadb().await;
    let proxy = Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let url = proxy.url("root", "root");
    let mut through = [
        sqlx::MySqlConnection::connect(&url).await.unwrap(),
        sqlx::MySqlConnection::connect(&url).await.unwrap(),
    ];
    sqlx::raw_sql(CREATE)
        .execute(&mut through[A])
        .await
        .unwrap();
    let plain_shards = Shards::mariadb().await;
    let plain_url = plain_shards.url(0);
    let mut plain = [
        sqlx::MySqlConnection::connect(&plain_url).await.unwrap(),
        sqlx::MySqlConnection::connect(&plain_url).await.unwrap(),
    ];
    sqlx::raw_sql(CREATE).execute(&mut plain[A]).await.unwrap();

    let (mut expected, mut got): (Vec<Answer>, Vec<Answer>) = (Vec::new(), Vec::new());
    for (client, sql) in MYSQL_SCRIPT {
        expected.push(mysql_answer(&mut plain[*client], sql).await);
        got.push(mysql_answer(&mut through[*client], sql).await);
    }
    let script = statements(MYSQL_SCRIPT);
    assert_eq!(transcript(&script, &got), transcript(&script, &expected));
    for conn in through.into_iter().chain(plain) {
        conn.close().await.unwrap();
    }
    proxy.stop().await;
    shards.cleanup().await;
    plain_shards.cleanup().await;
}
