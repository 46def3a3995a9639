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
    "SHOW TABLES LIKE 't\\_ord%'",
    "SHOW TABLES LIKE 'nothing%'",
    "SHOW COLUMNS FROM t_order LIKE 'st%'",
    "DESCRIBE t_order 'user%'",
    "SHOW TABLES FROM keyshard_no_such_db",
    "DESCRIBE keyshard_no_such_db.t_order",
    "SHOW INDEX FROM t_order IN keyshard_no_such_db",
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
    // Qualified by the logic database, as SQLAlchemy's has_table() writes it.
    let qualified: Vec<(String, String)> = sqlx::query_as("DESCRIBE `sharding_db`.`t_order`")
        .fetch_all(&mut both.through)
        .await
        .unwrap();
    let plain: Vec<(String, String)> = sqlx::query_as("DESCRIBE t_order")
        .fetch_all(&mut both.plain)
        .await
        .unwrap();
    assert_eq!(qualified, plain);
    both.finish().await;
}
