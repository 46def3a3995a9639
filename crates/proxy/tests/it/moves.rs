//! An UPDATE that sets a sharding column its WHERE clause does not pin (Django's and
//! Hibernate's `save()` of a row found by its key) runs when no row would change data node, and
//! is refused, changing nothing, when one would: on both frontends, as text and prepared.

use crate::common::postgres::on_sqlite;
use sqlx::{Connection, Executor};

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_that_would_move_a_row_are_refused_and_the_others_run() {
    let (shards, proxy) = on_sqlite(true).await;
    let address = proxy.mysql_address.expect("a MySQL frontend");
    let mut mysql =
        sqlx::MySqlConnection::connect(&format!("mysql://root:root@{address}/sharding_db"))
            .await
            .unwrap();
    mysql.execute(CREATE).await.unwrap();
    // ds_{user_id % 2}.t_order_{order_id % 2}: user 1's row 7 is on ds_1.
    mysql
        .execute("INSERT INTO t_order (order_id, user_id, status) VALUES (7, 1, 'new')")
        .await
        .unwrap();

    // Every column written back, the sharding column unchanged: runs.
    let done = mysql
        .execute("UPDATE t_order SET user_id = 1, status = 'saved' WHERE order_id = 7")
        .await
        .unwrap();
    assert_eq!(done.rows_affected(), 1);
    // Another value on the same data node (3 % 2 = 1): the row stays where it is.
    let done = sqlx::query("UPDATE t_order SET status = ?, user_id = ? WHERE order_id = ?")
        .bind("renumbered")
        .bind(3)
        .bind(7)
        .execute(&mut mysql)
        .await
        .unwrap();
    assert_eq!(done.rows_affected(), 1);
    assert_eq!(row(&mut mysql).await, [(3, "renumbered".to_owned())]);

    // A value on another data node would move the row: refused, nothing changed.
    for attempt in [
        "UPDATE t_order SET user_id = 2 WHERE order_id = 7",
        "UPDATE t_order SET user_id = 2, status = 'moved'",
    ] {
        let error = mysql.execute(attempt).await.unwrap_err();
        assert!(
            error.to_string().contains("sharding column 'user_id'"),
            "{error}"
        );
    }
    let error = sqlx::query("UPDATE t_order SET user_id = ? WHERE order_id = ?")
        .bind(4)
        .bind(7)
        .execute(&mut mysql)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("sharding column 'user_id'"),
        "{error}"
    );
    assert_eq!(row(&mut mysql).await, [(3, "renumbered".to_owned())]);
    // No row matches on the other node: nothing would move, so it runs (and changes nothing).
    let done = mysql
        .execute("UPDATE t_order SET user_id = 2 WHERE order_id = 8")
        .await
        .unwrap();
    assert_eq!(done.rows_affected(), 0);

    // The same through the PostgreSQL frontend, `$n` parameters included.
    let pg = proxy.client().await;
    let updated = pg
        .execute(
            "UPDATE t_order SET user_id = $2, status = $3 WHERE order_id = $1",
            &[&7i64, &5i32, &"pg"],
        )
        .await
        .unwrap();
    assert_eq!(updated, 1);
    let error = pg
        .execute(
            "UPDATE t_order SET user_id = $1 WHERE order_id = $2",
            &[&6i32, &7i64],
        )
        .await
        .unwrap_err();
    assert!(
        format!("{error:?}").contains("sharding column"),
        "{error:?}"
    );
    assert_eq!(row(&mut mysql).await, [(5, "pg".to_owned())]);
    assert_eq!(shards.all_ids().await, [7]);
    mysql.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

async fn row(conn: &mut sqlx::MySqlConnection) -> Vec<(i64, String)> {
    sqlx::query_as("SELECT user_id, status FROM t_order WHERE order_id = 7")
        .fetch_all(conn)
        .await
        .unwrap()
}
