//! Reflection of a logic table as tools and ORMs read it (`SHOW CREATE TABLE`, `SHOW INDEX`,
//! `DESCRIBE`): what one plain MariaDB database holding the same table answers, under the
//! logic table's name.

mod common;

use common::compare::MariaDbAlike;

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
    let mut both = MariaDbAlike::start(CREATE).await;
    both.compare(SCRIPT).await;
    // The definition itself, not only the first column.
    let sql = "SHOW CREATE TABLE t_order";
    let through: (String, String) = sqlx::query_as(sql)
        .fetch_one(&mut both.through)
        .await
        .unwrap();
    let plain: (String, String) = sqlx::query_as(sql)
        .fetch_one(&mut both.plain)
        .await
        .unwrap();
    assert_eq!(through, plain);
    both.finish().await;
}
