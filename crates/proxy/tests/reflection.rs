//! Reflection of a logic table as tools and ORMs read it (`SHOW CREATE TABLE`, `SHOW INDEX`,
//! `DESCRIBE`): what one plain MariaDB database holding the same table answers, under the
//! logic table's name.

mod common;

use common::compare::{Answer, mysql_answer, transcript};
use common::{Proxy, Shards};
use sqlx::Connection;

const CREATE: &str = "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
                      status VARCHAR(32), KEY idx_user (user_id, status))";

const SCRIPT: &[&str] = &[
    "SHOW CREATE TABLE t_order",
    "SHOW INDEX FROM t_order",
    "SHOW KEYS IN `t_order`",
    "DESCRIBE t_order",
    "SHOW CREATE TABLE t_nowhere",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn logic_tables_reflect_as_one_mariadb_table() {
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
    // The definition itself, not only the first column.
    assert_eq!(definition(&mut through).await, definition(&mut plain).await);

    through.close().await.unwrap();
    plain.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
    plain_shards.cleanup().await;
}

async fn definition(conn: &mut sqlx::MySqlConnection) -> (String, String) {
    sqlx::query_as("SHOW CREATE TABLE t_order")
        .fetch_one(conn)
        .await
        .unwrap()
}
