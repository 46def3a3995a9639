//! Several statements in one COM_QUERY (CLIENT_MULTI_STATEMENTS, which sqlx, PyMySQL and
//! Connector/J's allowMultiQueries use): one result each, stopping at the first error, as on one
//! plain MariaDB database.

mod common;

use common::compare::{MariaDbAlike, mysql_answer};

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

const SCRIPT: &[&str] = &[
    "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'); \
     INSERT INTO t_order (order_id, user_id, status) VALUES (2, 1, 'b'); \
     SELECT order_id FROM t_order ORDER BY order_id",
    "SELECT 1; SELECT 2",
    "SELECT 'a;b'; SELECT 3 -- ;\n",
    "BEGIN; INSERT INTO t_order (order_id, user_id, status) VALUES (3, 0, 'c'); ROLLBACK; \
     SELECT COUNT(*) FROM t_order",
    // The duplicate fails; what follows it never runs.
    "INSERT INTO t_order (order_id, user_id, status) VALUES (4, 1, 'd'); \
     INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'dup'); \
     INSERT INTO t_order (order_id, user_id, status) VALUES (5, 0, 'never')",
    "SELECT order_id FROM t_order ORDER BY order_id",
    "SET @a = 6; SELECT @a",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn several_statements_in_one_query_answer_as_mariadb() {
    let mut both = MariaDbAlike::start(CREATE).await;
    both.compare(SCRIPT).await;

    // The generated key of the first statement, asked for by the second.
    let answer = mysql_answer(
        &mut both.through,
        "INSERT INTO t_order (user_id, status) VALUES (7, 'gen'); SELECT LAST_INSERT_ID()",
    )
    .await
    .unwrap();
    let key: i64 = answer[0].parse().unwrap();
    let stored = both.shards.ids(1, (key % 2) as usize).await;
    assert!(stored.contains(&key), "{key} not in {stored:?}");
    both.finish().await;
}
