//! PREPARE, EXECUTE and DEALLOCATE sent as SQL, on both frontends, answer as one plain
//! database does, though the statements run on shards that never saw the PREPARE.

use crate::common::compare::{MariaDbAlike, PostgresAlike};

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

const MYSQL_SCRIPT: &[&str] = &[
    "PREPARE ins FROM 'INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)'",
    "SET @id = 1, @u = 0, @s = 'it''s'",
    "EXECUTE ins USING @id, @u, @s",
    "SET @id = 2, @u = 1",
    "EXECUTE ins USING @id, @u, @s",
    "SET @q = 'SELECT order_id FROM t_order WHERE order_id IN (?, ?) ORDER BY order_id'",
    "PREPARE sel FROM @q",
    "EXECUTE sel USING @id, @u",
    "EXECUTE sel USING @id",
    "SELECT status FROM t_order WHERE order_id = 2",
    "DEALLOCATE PREPARE sel",
    "EXECUTE sel USING @id, @u",
    "DROP PREPARE ins",
    "DEALLOCATE PREPARE ins",
    "PREPARE again FROM 'EXECUTE again'",
    "SET @q = 'PREPARE x FROM ''SELECT 1'''",
    "PREPARE again FROM @q",
    "PREPARE again FROM 'DEALLOCATE PREPARE ins'",
    "EXECUTE again",
    // A syntax error is reported at PREPARE, not as a wrong argument count at EXECUTE.
    "PREPARE bad FROM 'SELECT order_id FROM t_order WHERE user_id = ? AND'",
    "EXECUTE bad USING @u",
];

const PG_SCRIPT: &[&str] = &[
    "PREPARE ins (bigint, int, text) AS \
     INSERT INTO t_order (order_id, user_id, status) VALUES ($1, $2, $3)",
    "EXECUTE ins(1, 0, 'a')",
    "EXECUTE ins(2, 1, 'it''s')",
    "PREPARE sel AS SELECT order_id FROM t_order WHERE user_id = $1 ORDER BY order_id",
    "EXECUTE sel(1)",
    "EXECUTE sel(1, 2)",
    "DEALLOCATE sel",
    "EXECUTE sel(1)",
    "DEALLOCATE PREPARE sel",
    "SELECT status FROM t_order WHERE order_id = 2",
    "DEALLOCATE ALL",
    "EXECUTE ins(3, 0, 'c')",
    "PREPARE again AS EXECUTE again",
    "PREPARE again AS DEALLOCATE ALL",
    "EXECUTE again",
    "PREPARE bad AS SELECT order_id FROM t_order WHERE user_id = $1 AND",
    "EXECUTE bad(1)",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mysql_sql_prepared_statements_answer_as_mariadb() {
    let mut both = MariaDbAlike::start(CREATE).await;
    both.compare(MYSQL_SCRIPT).await;
    both.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgresql_sql_prepared_statements_answer_as_postgresql() {
    let both = PostgresAlike::start(CREATE).await;
    both.compare(PG_SCRIPT, false).await;
    both.finish().await;
}
