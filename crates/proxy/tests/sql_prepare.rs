//! PREPARE, EXECUTE and DEALLOCATE sent as SQL, on both frontends, answer as one plain
//! database does, though the statements run on shards that never saw the PREPARE.

mod common;

use common::compare::{Answer, mysql_answer, pg_answer, transcript};
use common::postgres::{PgProxy, PgShards, connect, yaml};
use common::{Proxy, Shards};
use sqlx::Connection;

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
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mysql_sql_prepared_statements_answer_as_mariadb() {
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
    for sql in MYSQL_SCRIPT {
        expected.push(mysql_answer(&mut plain, sql).await);
        got.push(mysql_answer(&mut through, sql).await);
    }
    assert_eq!(
        transcript(MYSQL_SCRIPT, &got),
        transcript(MYSQL_SCRIPT, &expected)
    );
    through.close().await.unwrap();
    plain.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
    plain_shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgresql_sql_prepared_statements_answer_as_postgresql() {
    let shards = PgShards::postgres().await;
    let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), false)).await;
    let through = proxy.client().await;
    through.batch_execute(CREATE).await.unwrap();
    let plain_shards = PgShards::postgres().await;
    let plain = connect(&plain_shards.url(0).parse().unwrap())
        .await
        .unwrap();
    plain.batch_execute(CREATE).await.unwrap();

    let (mut expected, mut got): (Vec<Answer>, Vec<Answer>) = (Vec::new(), Vec::new());
    for sql in PG_SCRIPT {
        expected.push(pg_answer(&plain, sql, false).await);
        got.push(pg_answer(&through, sql, false).await);
    }
    assert_eq!(
        transcript(PG_SCRIPT, &got),
        transcript(PG_SCRIPT, &expected)
    );
    proxy.stop().await;
    shards.cleanup().await;
    plain_shards.cleanup().await;
}
