//! Real MySQL clients other than sqlx against the proxy on MariaDB shards: the `mariadb`
//! command-line client and MariaDB Connector/J (JDBC). Both need software from Debian packages
//! (`mariadb-client`, `libmariadb-java`, a JDK) that `.ci/run` installs.

use crate::common;

use std::path::Path;
use std::process::Command;

use crate::common::{Proxy, Shards};

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";
const CONNECTOR_J: &str = "/usr/share/java/mariadb-java-client.jar";

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

fn run(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL) and the mariadb client"]
async fn mariadb_command_line_client() {
    let (shards, proxy) = start().await;
    let port = proxy.address.port().to_string();
    let out = run(Command::new("mariadb").args([
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
    let classes = std::env::temp_dir().join(common::unique("keyshard_jdbc"));
    std::fs::create_dir_all(&classes).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jdbc/GeneratedKeys.java");
    run(Command::new("javac").arg("-d").arg(&classes).arg(&source));
    let url = format!("jdbc:mariadb://{}/sharding_db", proxy.address);
    let out = run(Command::new("java")
        .arg("-cp")
        .arg(format!("{}:{CONNECTOR_J}", classes.display()))
        .args(["GeneratedKeys", &url, "root", "root"]));
    let keys = |label: &str| -> Vec<i64> {
        let line = out
            .lines()
            .find_map(|l| l.strip_prefix(label))
            .unwrap_or_else(|| panic!("{out}"));
        line.split_whitespace()
            .map(|k| k.parse().unwrap())
            .collect()
    };
    let one = keys("one:");
    let three = keys("three:");
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
    let _ = std::fs::remove_dir_all(&classes);
    proxy.stop().await;
    shards.cleanup().await;
}
