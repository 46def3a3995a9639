//! The metrics endpoint scraped over real HTTP while real clients work: its figures move by
//! exactly the statements, errors and keys the clients caused.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

use crate::common::postgres::{PgShards, connect, yaml};
use keyshard_proxy::Server;
use sqlx::{Connection, Executor};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

/// A GET of `path`: the status line and the body.
async fn get(address: SocketAddr, path: &str) -> (String, String) {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: keyshard\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_owned(), body.to_owned())
}

/// The samples of the text format, by name with labels.
async fn scrape(address: SocketAddr) -> BTreeMap<String, f64> {
    let (status, body) = get(address, "/metrics").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (name, value) = l.rsplit_once(' ').unwrap();
            (name.to_owned(), value.parse().unwrap())
        })
        .collect()
}

fn delta(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>, name: &str) -> f64 {
    let value = |m: &BTreeMap<String, f64>| m.get(name).copied().unwrap_or(0.0);
    value(after) - value(before)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scraped_figures_match_the_statements_sent() {
    let shards = PgShards::sqlite();
    let config = yaml(&shards.url(0), &shards.url(1), true).replacen(
        "server:\n",
        "server:\n  metrics:\n    listen: 127.0.0.1:0\n",
        1,
    );
    let config = keyshard_config::from_yaml_str(&config, Path::new(".")).unwrap();
    let server = Server::bind(config).await.unwrap();
    let (metrics, mysql_address, pg_address) = (
        server.metrics_address().unwrap(),
        server.mysql_address().unwrap(),
        server.postgres_address().unwrap(),
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));

    let mut mysql =
        sqlx::MySqlConnection::connect(&format!("mysql://root:root@{mysql_address}/sharding_db"))
            .await
            .unwrap();
    mysql.execute(CREATE).await.unwrap();
    let mut pg_config = tokio_postgres::Config::new();
    pg_config
        .host("127.0.0.1")
        .port(pg_address.port())
        .user("root")
        .password("root")
        .dbname("sharding_db");
    let pg = connect(&pg_config).await.unwrap();

    let before = scrape(metrics).await;
    for user in 1..=3 {
        let insert = format!("INSERT INTO t_order (user_id, status) VALUES ({user}, 'm')");
        mysql.execute(insert.as_str()).await.unwrap();
    }
    mysql
        .execute("INSERT INTO t_order (user_id, status) VALUES (4, 'a'), (5, 'b')")
        .await
        .unwrap();
    mysql.execute("SELECT * FROM t_order").await.unwrap();
    assert!(mysql.execute("SELEC 1").await.is_err());
    pg.simple_query("SELECT order_id FROM t_order")
        .await
        .unwrap();
    pg.simple_query("SELECT order_id FROM t_order WHERE user_id = 1")
        .await
        .unwrap();
    assert!(pg.simple_query("SELEC 1").await.is_err());
    let after = scrape(metrics).await;

    let mysql_kind =
        |kind: &str| format!("keyshard_statements_total{{frontend=\"mysql\",kind=\"{kind}\"}}");
    assert_eq!(delta(&before, &after, &mysql_kind("insert")), 4.0);
    assert_eq!(delta(&before, &after, &mysql_kind("select")), 1.0);
    assert_eq!(
        delta(
            &before,
            &after,
            "keyshard_statements_total{frontend=\"postgresql\",kind=\"select\"}"
        ),
        2.0
    );
    assert_eq!(
        delta(
            &before,
            &after,
            "keyshard_statement_duration_seconds_count{frontend=\"mysql\"}"
        ),
        6.0
    );
    assert_eq!(
        delta(
            &before,
            &after,
            "keyshard_keys_generated_total{generator=\"snowflake\"}"
        ),
        5.0
    );
    assert_eq!(
        delta(
            &before,
            &after,
            "keyshard_errors_total{frontend=\"mysql\",sqlstate=\"42000\"}"
        ),
        1.0
    );
    assert_eq!(
        delta(
            &before,
            &after,
            "keyshard_errors_total{frontend=\"postgresql\",sqlstate=\"42601\"}"
        ),
        1.0
    );
    for frontend in ["mysql", "postgresql"] {
        let open = format!("keyshard_client_connections{{frontend=\"{frontend}\"}}");
        assert_eq!(after.get(&open), Some(&1.0), "{open}");
    }
    for data_source in ["ds_0", "ds_1"] {
        let open = format!("keyshard_pool_connections{{data_source=\"{data_source}\"}}");
        assert!(after.get(&open).is_some_and(|&n| n >= 1.0), "{open}");
    }
    assert_eq!(get(metrics, "/").await.0, "HTTP/1.1 404 Not Found");

    mysql.close().await.unwrap();
    drop(pg);
    let _ = stop.send(());
    let _ = task.await;
    shards.cleanup().await;
}
