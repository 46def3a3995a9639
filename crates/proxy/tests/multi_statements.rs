//! Several statements in one COM_QUERY (CLIENT_MULTI_STATEMENTS, which sqlx, PyMySQL and
//! Connector/J's allowMultiQueries use): one result each, stopping at the first error, as on one
//! plain MariaDB database.

mod common;

use common::compare::{Answer, mysql_answer, transcript};
use common::{Proxy, Shards};
use sqlx::Connection;

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
    let shards = Shards::mariadb().await;
    let proxy = Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let mut through = sqlx::MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    sqlx::raw_sql(CREATE).execute(&mut through).await.unwrap();
    let plain_shards = Shards::mariadb().await;
    let mut plain = sqlx::MySqlConnection::connect(&plain_shards.url(0))
        .await
        .unwrap();
    sqlx::raw_sql(CREATE).execute(&mut plain).await.unwrap();

    let (mut expected, mut got): (Vec<Answer>, Vec<Answer>) = (Vec::new(), Vec::new());
    for sql in SCRIPT {
        expected.push(mysql_answer(&mut plain, sql).await);
        got.push(mysql_answer(&mut through, sql).await);
    }
    assert_eq!(transcript(SCRIPT, &got), transcript(SCRIPT, &expected));

    // The generated key of the first statement, asked for by the second.
    let answer = mysql_answer(
        &mut through,
        "INSERT INTO t_order (user_id, status) VALUES (7, 'gen'); SELECT LAST_INSERT_ID()",
    )
    .await
    .unwrap();
    let key: i64 = answer[0].parse().unwrap();
    let stored = shards.ids(1, (key % 2) as usize).await;
    assert!(stored.contains(&key), "{key} not in {stored:?}");

    through.close().await.unwrap();
    plain.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
    plain_shards.cleanup().await;
}
