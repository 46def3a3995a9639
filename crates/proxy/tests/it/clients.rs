//! Real MySQL clients other than sqlx against the proxy on MariaDB shards: the `mariadb`
//! command-line client and MariaDB Connector/J (JDBC). Both need software from Debian packages
//! (`mariadb-client`, `libmariadb-java`, a JDK) that `.ci/run` installs.

use crate::common;

use std::process::Command;

use crate::common::java::{CONNECTOR_J, Programs, keys, succeeded};
use crate::common::{Proxy, Shards};

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

async fn start() -> (Shards, Proxy) {
    common::on_mariadb(CREATE).await
}

async fn assert_stored(shards: &Shards, user_id: i64, key: i64) {
    let ids = shards.ids((user_id % 2) as usize, (key % 2) as usize).await;
    assert!(
        ids.contains(&key),
        "key {key} of user {user_id} is not where it routes: {ids:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL) and the mariadb client"]
async fn mariadb_command_line_client() {
    let (shards, proxy) = start().await;
    let port = proxy.address.port().to_string();
    let out = succeeded(Command::new("mariadb").args([
        "--protocol=tcp",
        "-h",
        "127.0.0.1",
        "-P",
        &port,
        "-uroot",
        "-proot",
        "-N",
        "sharding_db",
        "-e",
        "INSERT INTO t_order (user_id, status) VALUES (1, 'cli'); SELECT LAST_INSERT_ID(); \
         INSERT INTO t_order (user_id, status) VALUES (2, 'a'), (3, 'b'); SELECT LAST_INSERT_ID();",
    ]));
    let keys: Vec<i64> = out
        .lines()
        .map(|l| l.trim().parse().unwrap_or_else(|_| panic!("{out}")))
        .collect();
    assert_eq!(keys.len(), 2, "{out}");
    assert_stored(&shards, 1, keys[0]).await;
    assert_stored(&shards, 2, keys[1]).await;
    assert_stored(&shards, 3, keys[1] + 1).await;
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL), a JDK and MariaDB Connector/J"]
async fn jdbc_generated_keys() {
    let (shards, proxy) = start().await;
    let url = format!("jdbc:mariadb://{}/sharding_db", proxy.address);
    let out = Programs::compile(&["GeneratedKeys.java"]).run(
        "GeneratedKeys",
        CONNECTOR_J,
        &[&url, "root", "root"],
    );
    let one = keys(&out, "one:");
    let three = keys(&out, "three:");
    assert_eq!(one.len(), 1, "{out}");
    assert_eq!(three.len(), 3, "{out}");
    assert_stored(&shards, 21, one[0]).await;
    for (key, user) in three.iter().zip([22, 23, 24]) {
        assert_stored(&shards, user, *key).await;
    }
    // Exactly these keys and no others are stored.
    let mut stored = Vec::new();
    for (ds, table) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        stored.extend(shards.ids(ds, table).await);
    }
    stored.sort_unstable();
    let mut expected = [one, three].concat();
    expected.sort_unstable();
    assert_eq!(stored, expected);
    proxy.stop().await;
    shards.cleanup().await;
}
