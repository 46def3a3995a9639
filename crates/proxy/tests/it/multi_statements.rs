//! Several statements in one COM_QUERY (CLIENT_MULTI_STATEMENTS, which sqlx, PyMySQL and
//! Connector/J's allowMultiQueries use): one result each, stopping at the first error, as on one
//! plain MariaDB database.

use crate::common;

use crate::common::compare::{MariaDbAlike, mysql_answer};
use crate::common::java::{PGJDBC, Programs};

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

/// `INSERT INTO t_order` of one row, for the PostgreSQL script.
fn pg_row(order_id: u32, user_id: u32) -> String {
    format!("INSERT INTO t_order (order_id, user_id, status) VALUES ({order_id}, {user_id}, 's')")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn several_statements_in_one_postgresql_query_are_one_transaction_as_in_postgresql() {
    let both = common::compare::PostgresAlike::start(CREATE).await;
    let ten: Vec<String> = (10..20).map(|id| pg_row(id, id % 3)).collect();
    let script = [
        // An error rolls back every statement before it in the message, on every shard.
        format!("{}; {}; SELECT 1/0", pg_row(1, 0), pg_row(2, 1)),
        format!("{}; {}", ten.join("; "), pg_row(10, 1)),
        "SELECT order_id FROM t_order ORDER BY order_id".to_owned(),
        // COMMIT and ROLLBACK end the block; the statements after them start another.
        format!("{}; COMMIT; {}; SELECT 1/0", pg_row(20, 0), pg_row(21, 1)),
        format!("{}; ROLLBACK; {}", pg_row(30, 1), pg_row(31, 0)),
        // Savepoints and AND CHAIN belong to transaction blocks.
        format!("{}; SAVEPOINT a; {}", pg_row(40, 0), pg_row(41, 1)),
        format!("{}; COMMIT AND CHAIN", pg_row(50, 1)),
        format!("{}; ROLLBACK AND CHAIN", pg_row(51, 1)),
        "SELECT order_id FROM t_order ORDER BY order_id".to_owned(),
        // BEGIN makes the block the client's, statements before it included.
        format!("{}; BEGIN; {}", pg_row(60, 0), pg_row(61, 1)),
        "SELECT order_id FROM t_order ORDER BY order_id".to_owned(),
        "ROLLBACK".to_owned(),
        format!(
            "BEGIN; {}; COMMIT; {}; SELECT 1/0",
            pg_row(70, 0),
            pg_row(71, 1)
        ),
        // An error inside the client's own block leaves it failed, not rolled back.
        format!("BEGIN; {}; SELECT 1/0", pg_row(80, 1)),
        "SELECT 1".to_owned(),
        "ROLLBACK".to_owned(),
        // Settings made in a block that rolls back go back too.
        format!(
            "SET statement_timeout = '5s'; {}; SELECT 1/0",
            pg_row(90, 1)
        ),
        "SHOW statement_timeout".to_owned(),
        // Without an error, the whole message commits.
        format!("{}; {}; {}", pg_row(100, 0), pg_row(101, 1), pg_row(102, 2)),
        "SELECT order_id FROM t_order ORDER BY order_id".to_owned(),
        // A schema change and statements that need it, in one message (a setup script).
        format!(
            "DROP TABLE t_order; {CREATE}; INSERT INTO t_order VALUES (200, 1, 'new'); \
             SELECT order_id FROM t_order"
        ),
    ];
    let script: Vec<&str> = script.iter().map(String::as_str).collect();
    both.compare(&script, false).await;
    both.finish().await;
}

/// pgjdbc's executeBatch sends every entry before one Sync: one implicit transaction, so an
/// entry that fails leaves nothing of its batch stored, through Keyshard as on one plain
/// PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL), a JDK and pgjdbc"]
async fn a_pgjdbc_batch_is_one_transaction_as_in_postgresql() {
    let both = common::compare::PostgresAlike::start(CREATE).await;
    let programs = Programs::compile(&["PgBatch.java"]);
    let batch = |url: String, user: &str, password: &str| {
        programs.run("PgBatch", PGJDBC, &[&url, user, password])
    };
    let through = batch(
        format!("jdbc:postgresql://{}/sharding_db", both.proxy.address),
        "root",
        "root",
    );
    let plain = both
        .plain_url()
        .replace("postgres://postgres@", "jdbc:postgresql://");
    let plain = batch(plain, "postgres", "");
    assert_eq!(through, plain);
    assert!(through.contains("stored: 4 5 6 7\n"), "{through}");
    both.finish().await;
}
