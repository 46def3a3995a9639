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

/// Statements prepared with the protocol (Parse) are reached by SQL's `DEALLOCATE`,
/// `DEALLOCATE ALL` and `DISCARD ALL`, as in PostgreSQL: the frontend that holds them applies
/// what the statement did. Each step's outcome (ok, or the SQLSTATE) is compared with one
/// plain PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn sql_reaches_statements_prepared_with_the_protocol_as_in_postgresql() {
    let both = PostgresAlike::start(CREATE).await;
    let code = |result: Result<(), tokio_postgres::Error>| match result {
        Ok(()) => "ok".to_owned(),
        Err(e) => e
            .code()
            .map_or_else(|| e.to_string(), |c| c.code().to_owned()),
    };
    let mut transcripts = Vec::new();
    for client in [&both.through, &both.plain] {
        let mut steps = Vec::new();
        let run = |statement: tokio_postgres::Statement| async move {
            code(client.query(&statement, &[]).await.map(drop))
        };
        let batch = |sql: &'static str| async move { code(client.batch_execute(sql).await) };
        steps.push(batch("DEALLOCATE no_such_statement").await);
        // Inside a transaction block, the unknown name fails the block as PostgreSQL does.
        steps.push(batch("BEGIN").await);
        steps.push(batch("DEALLOCATE no_such_statement").await);
        steps.push(batch("SELECT 1").await);
        steps.push(batch("ROLLBACK").await);
        let two = client.prepare("SELECT 2::int4").await.unwrap();
        let three = client.prepare("SELECT 3::int4").await.unwrap();
        steps.push(batch("DEALLOCATE ALL").await);
        steps.push(run(two).await);
        steps.push(run(three).await);
        let four = client.prepare("SELECT 4::int4").await.unwrap();
        steps.push(run(four.clone()).await);
        steps.push(batch("DISCARD ALL").await);
        steps.push(run(four).await);
        transcripts.push(steps);
    }
    // A statement DEALLOCATE names: sqlx names a connection's statements sqlx_s_1, sqlx_s_2 …
    let through = format!("postgres://root:root@{}/sharding_db", both.proxy.address);
    for url in [through, both.plain_url()] {
        use sqlx::Connection as _;
        let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
        let query = "SELECT 1::int4";
        let prepared = sqlx::query(query).fetch_one(&mut conn).await.map(drop);
        let deallocated = sqlx::raw_sql("DEALLOCATE sqlx_s_1")
            .execute(&mut conn)
            .await;
        // sqlx runs its cached statement by name: gone, it is unknown.
        let again = sqlx::query(query).fetch_one(&mut conn).await.map(drop);
        let code = |result: Result<(), sqlx::Error>| match result {
            Ok(()) => "ok".to_owned(),
            Err(e) => (e.as_database_error())
                .and_then(|e| e.code().map(|c| c.into_owned()))
                .unwrap_or_else(|| e.to_string()),
        };
        transcripts.push(vec![
            code(prepared),
            code(deallocated.map(drop)),
            code(again),
        ]);
        conn.close().await.unwrap();
    }
    assert_eq!(transcripts[0], transcripts[1]);
    assert_eq!(transcripts[2], transcripts[3]);
    // The script reaches what it means to: dropped statements are unknown (26000).
    assert_eq!(transcripts[0][6], "26000", "{:?}", transcripts[0]);
    assert_eq!(transcripts[0][10], "26000", "{:?}", transcripts[0]);
    assert_eq!(transcripts[2], ["ok", "ok", "26000"]);
    both.finish().await;
}
