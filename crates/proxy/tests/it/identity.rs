//! The proxy reports its shards' versions: over MariaDB shards it is MariaDB (in the handshake,
//! `VERSION()` and `@@version`), over PostgreSQL shards it has their version; over SQLite it
//! names versions of its own.

use crate::common;

use crate::common::{Proxy, Shards};
use sqlx::{Connection, Row};

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

/// `VERSION()` and `@@version` at `url`, and the version in the handshake of `address`.
async fn mysql_version(url: &str, address: std::net::SocketAddr) -> (String, String, String) {
    let mut conn = sqlx::MySqlConnection::connect(url).await.unwrap();
    let row = sqlx::query("SELECT VERSION(), @@version")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    (row.get(0), row.get(1), greeting(address).await)
}

/// The server version of the handshake: after the packet header and the protocol version
/// byte, up to a NUL.
async fn greeting(address: std::net::SocketAddr) -> String {
    use tokio::io::AsyncReadExt;
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let mut header = [0u8; 4];
    stream.read_exact(&mut header).await.unwrap();
    let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload).await.unwrap();
    let end = payload[1..].iter().position(|b| *b == 0).unwrap() + 1;
    String::from_utf8(payload[1..end].to_vec()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn over_mariadb_the_proxy_is_mariadb() {
    let (shards, proxy) = common::on_mariadb(CREATE).await;
    let shard = std::env::var("KEYSHARD_TEST_MYSQL_URL").unwrap();
    let direct: String = {
        let mut conn = sqlx::MySqlConnection::connect(&shard).await.unwrap();
        sqlx::query("SELECT VERSION()")
            .fetch_one(&mut conn)
            .await
            .unwrap()
            .get(0)
    };
    let number = direct.split('-').next().unwrap();
    let (version, variable, greeting) =
        mysql_version(&proxy.url("root", "root"), proxy.address).await;
    assert_eq!(version, format!("{number}-MariaDB-Keyshard"));
    assert_eq!(variable, version);
    assert_eq!(greeting, format!("5.5.5-{version}"));
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn over_postgresql_the_proxy_has_its_version() {
    let (shards, proxy) = common::postgres::on_postgres().await;
    let direct_url = std::env::var("KEYSHARD_TEST_PG_URL").unwrap();
    let direct = common::postgres::connect(&direct_url.parse().unwrap())
        .await
        .unwrap();
    let client = proxy.client().await;
    let ask = "SELECT current_setting('server_version_num')";
    let expected: String = direct.query_one(ask, &[]).await.unwrap().get(0);
    let shown = client
        .simple_query("SHOW server_version_num")
        .await
        .unwrap();
    let shown = match &shown[1] {
        tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).unwrap().to_owned(),
        other => panic!("{other:?}"),
    };
    assert_eq!(shown, expected);
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_sqlite_the_proxy_names_its_own_version() {
    let shards = Shards::sqlite();
    let proxy = Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let (version, _, greeting) = mysql_version(&proxy.url("root", "root"), proxy.address).await;
    assert_eq!(version, "8.0.36-Keyshard");
    assert_eq!(greeting, version);
    proxy.stop().await;
    shards.cleanup().await;
}
