//! Savepoints, PostgreSQL's failed transaction block and `AND CHAIN`, compared with the real
//! database: one script runs through the proxy (two shards, rows on both) and against one plain
//! database, and every statement must answer alike, down to what is stored in the end.

use crate::common;

use crate::common::compare::{MariaDbAlike, PostgresAlike};

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";
const SELECT: &str = "SELECT order_id FROM t_order ORDER BY order_id";

/// Rows go to ds_{user_id % 2}.t_order_{order_id % 2}; the comments say where.
const PG_SCRIPT: &[&str] = &[
    "BEGIN",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a')", // ds_0
    "SAVEPOINT s1",
    // ds_1 is first touched after s1: rolling back to s1 must undo its work too.
    "INSERT INTO t_order (order_id, user_id, status) VALUES (2, 1, 'b')",
    "SAVEPOINT s2",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (3, 0, 'c')",
    "ROLLBACK TO SAVEPOINT s1",
    SELECT,
    "INSERT INTO t_order (order_id, user_id, status) VALUES (4, 1, 'd')",
    "SAVEPOINT s3",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'dup')",
    // The block failed: everything but ROLLBACK is refused.
    SELECT,
    "SAVEPOINT s4",
    "ROLLBACK TO s3",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (5, 0, 'e')",
    "RELEASE SAVEPOINT s1",
    "ROLLBACK TO s3",
    // COMMIT of a failed block rolls it back.
    "COMMIT",
    SELECT,
    "BEGIN",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (6, 1, 'f')",
    "SAVEPOINT \"Mixed Case\"",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (7, 0, 'g')",
    "ROLLBACK TO \"Mixed Case\"",
    "COMMIT AND CHAIN",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (8, 0, 'h')",
    "ROLLBACK",
    "SAVEPOINT outside",
    "ROLLBACK TO SAVEPOINT outside",
    "RELEASE outside",
    SELECT,
];

const MYSQL_SCRIPT: &[&str] = &[
    "BEGIN",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a')",
    "SAVEPOINT s1",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (2, 1, 'b')",
    "SAVEPOINT s2",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (3, 0, 'c')",
    // MySQL moves a savepoint set again: s1 now comes after s2.
    "SAVEPOINT s1",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (4, 1, 'd')",
    "ROLLBACK TO SAVEPOINT s2",
    SELECT,
    "ROLLBACK TO SAVEPOINT s1",
    // A failed statement leaves the transaction as it was.
    "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'dup')",
    "RELEASE SAVEPOINT s2",
    "ROLLBACK TO s2",
    "COMMIT",
    SELECT,
    "SAVEPOINT outside",
    "ROLLBACK TO SAVEPOINT outside",
    "SET autocommit = 0",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (5, 1, 'e')",
    "SAVEPOINT y",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (6, 0, 'f')",
    "ROLLBACK WORK TO y",
    "COMMIT AND CHAIN",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (7, 0, 'g')",
    "ROLLBACK",
    "SET autocommit = 1",
    SELECT,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgresql_savepoints_and_failed_blocks_answer_as_postgresql() {
    for extended in [false, true] {
        let both = PostgresAlike::start(CREATE).await;
        both.compare(PG_SCRIPT, extended).await;
        assert_eq!(both.shards.all_ids().await, [6]);
        both.finish().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mysql_savepoints_answer_as_mariadb() {
    let mut both = MariaDbAlike::start(CREATE).await;
    both.compare(MYSQL_SCRIPT).await;
    let mut stored = Vec::new();
    for (ds, table) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        stored.extend(both.shards.ids(ds, table).await);
    }
    stored.sort_unstable();
    assert_eq!(stored, [1, 2, 5]);
    both.finish().await;
}

/// Every savepoint is kept for the data sources a transaction reaches later: a client cannot
/// make the list grow without bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn savepoints_per_transaction_are_bounded() {
    let (shards, proxy) = common::postgres::on_sqlite(false).await;
    let client = proxy.client().await;
    client.batch_execute("BEGIN").await.unwrap();
    for _ in 0..1024 {
        client.batch_execute("SAVEPOINT a").await.unwrap();
    }
    let error = client.batch_execute("SAVEPOINT a").await.unwrap_err();
    assert!(
        format!("{error:?}").contains("at most 1024 savepoints"),
        "{error:?}"
    );
    client.batch_execute("ROLLBACK").await.unwrap();
    client
        .batch_execute("BEGIN; SAVEPOINT b; COMMIT")
        .await
        .unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}
