//! Keyshard from an application's side: connect with an ordinary MySQL client (sqlx), create
//! the sharded table, insert rows without their key, and see every generated key and the shard
//! it went to.
//!
//! Start the proxy first (`cargo run --release`), then: `cargo run --example quickstart`.

use sqlx::mysql::MySqlConnection;
use sqlx::{Connection, Row};

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let url = std::env::var("KEYSHARD_URL")
        .unwrap_or_else(|_| "mysql://root:root@127.0.0.1:3307/sharding_db".into());
    let mut conn = MySqlConnection::connect(&url).await?;

    // DDL on the logic table creates every actual table (ds_0.t_order_0 … ds_1.t_order_1).
    sqlx::raw_sql(
        "CREATE TABLE IF NOT EXISTS t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))",
    )
    .execute(&mut conn)
    .await?;

    // One row: the OK packet carries the generated key as last_insert_id.
    let done = sqlx::query("INSERT INTO t_order (user_id, status) VALUES (?, ?)")
        .bind(1)
        .bind("paid")
        .execute(&mut conn)
        .await?;
    show(&mut conn, done.last_insert_id(), 1).await?;

    // Three rows: the keys are consecutive, so last_insert_id + i is row i's key.
    let done = sqlx::query(
        "INSERT INTO t_order (user_id, status) VALUES (?, 'new'), (?, 'new'), (?, 'new')",
    )
    .bind(2)
    .bind(3)
    .bind(4)
    .execute(&mut conn)
    .await?;
    for (i, user) in [2, 3, 4].into_iter().enumerate() {
        show(&mut conn, done.last_insert_id() + i as u64, user).await?;
    }
    conn.close().await?;
    Ok(())
}

/// Prints a key and where the row went, asking the proxy's own router (`PREVIEW`).
async fn show(conn: &mut MySqlConnection, key: u64, user_id: i32) -> anyhow::Result<()> {
    let preview =
        format!("PREVIEW INSERT INTO t_order (order_id, user_id) VALUES ({key}, {user_id})");
    let row = sqlx::raw_sql(&preview).fetch_one(&mut *conn).await?;
    let data_source: String = row.try_get(0)?;
    let actual_sql: String = row.try_get(1)?;
    let table = actual_sql.split_whitespace().nth(2).unwrap_or("?");
    println!("user {user_id}: key {key} -> {data_source}.{table}");
    Ok(())
}
