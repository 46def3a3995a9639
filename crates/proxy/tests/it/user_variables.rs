//! MySQL user variables live in the session: `SET @x = …` and every later `@x` answer as on
//! one plain MariaDB database, though the statements go to shards that never saw the SET.

use crate::common::compare::{MariaDbAlike, mysql_answer};
use sqlx::{Column as _, Row as _};

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

const SCRIPT: &[&str] = &[
    "SELECT @unset",
    "SET @x = 5",
    "SELECT @x",
    "SET @s = 'it''s', @n = NULL, @X = 7",
    "SELECT @s",
    "SELECT @n IS NULL",
    "SELECT @x",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (@x, 1, @s)",
    "SET @y = @x + 1",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (@y, 0, 'b')",
    "SELECT status FROM t_order WHERE order_id = @x",
    "SET @m = @x * 2 + 1",
    "SELECT @m",
    "SELECT order_id FROM t_order WHERE order_id IN (@x, @m - 7) ORDER BY order_id",
    "UPDATE t_order SET status = @s WHERE order_id = @y",
    "SELECT status FROM t_order WHERE order_id = @y",
    // ROW_COUNT() is the session's: the rows its last statement changed over every shard.
    "SELECT ROW_COUNT()",
    "UPDATE t_order SET status = 'c' WHERE order_id IN (@x, @y)",
    "SELECT ROW_COUNT()",
    "INSERT INTO t_order (order_id, user_id) VALUES (100, 0), (101, 1), (102, 2)",
    "SELECT ROW_COUNT()",
    "SELECT ROW_COUNT()",
    "DELETE FROM t_order WHERE order_id >= 100",
    "SELECT ROW_COUNT() FROM t_order WHERE order_id = @x",
    // A float kept from a query stays a float: its text, its arithmetic, and as a sharding
    // value the integer it holds.
    "SET @f = 1.5e0 * 2, @g = 1e300",
    "SELECT CAST(@f AS CHAR), CAST(@g AS CHAR)",
    "SET @h = @f / 4",
    "SELECT CAST(@h AS CHAR), CAST(@g * 10 AS CHAR)",
    "INSERT INTO t_order (order_id, user_id, status) VALUES (203, @f, 'float')",
    "SELECT order_id, user_id FROM t_order WHERE status = 'float'",
    // SELECT … INTO stores the one row it finds in the session's variables, from one shard
    // or merged from all; no row changes nothing; more rows or other columns are refused.
    "SELECT status, user_id INTO @st, @u FROM t_order WHERE order_id = 203",
    "SELECT @st",
    "SELECT @u + 1",
    "SELECT status FROM t_order WHERE order_id = 999 INTO @st",
    "SELECT @st",
    // (MariaDB has stored some first row by the time it refuses; the proxy stores none.)
    "SELECT status INTO @st FROM t_order",
    "SELECT 1, 2 INTO @a",
    "SELECT COUNT(*), MAX(order_id) INTO @cnt, @top FROM t_order",
    "SELECT @cnt * 10 + @top",
    "select 'x' into @T",
    "SELECT @t",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn user_variables_answer_as_mariadb() {
    let mut both = MariaDbAlike::start(CREATE).await;
    both.compare(SCRIPT).await;

    // A generated key kept in a variable finds its row on whichever shard it went to.
    let through = &mut both.through;
    for sql in [
        "INSERT INTO t_order (user_id, status) VALUES (3, 'generated')",
        "SET @key = LAST_INSERT_ID()",
    ] {
        mysql_answer(through, sql).await.unwrap();
    }
    let found = mysql_answer(
        through,
        "SELECT status FROM t_order WHERE order_id = @key AND user_id = 3",
    )
    .await;
    assert_eq!(found, Ok(vec!["generated".to_owned()]));
    // An assignment inside a statement would stay on a shard: refused, clearly.
    let refused = mysql_answer(through, "SELECT @y := 1").await;
    assert_eq!(refused, Err("1235".to_owned()));
    // A prepared statement cannot carry a session value either.
    let prepared = sqlx::query("SELECT * FROM t_order WHERE order_id = @x")
        .fetch_all(&mut *through)
        .await
        .unwrap_err();
    assert!(prepared.to_string().contains("user variable"), "{prepared}");
    // A session value standing alone as a select item keeps its label, as MariaDB labels it.
    let row = sqlx::raw_sql("SELECT LAST_INSERT_ID(), row_count(), @key, @key AS k")
        .fetch_one(&mut *through)
        .await
        .unwrap();
    let labels: Vec<&str> = row.columns().iter().map(|c| c.name()).collect();
    assert_eq!(labels, ["LAST_INSERT_ID()", "row_count()", "@key", "k"]);
    both.finish().await;
}
