//! `COPY … FROM STDIN` through the PostgreSQL frontend: every row gets a key and lands on its
//! shard, in the text and CSV formats, by the extended protocol (tokio-postgres) and the simple
//! one (psql); a load that fails leaves nothing behind, and the connection goes on.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use bytes::Bytes;
use common::postgres::{PgProxy, PgShards, yaml};
use futures_util::SinkExt;

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

fn message(e: tokio_postgres::Error) -> String {
    e.as_db_error()
        .map_or_else(|| e.to_string(), |d| d.message().to_owned())
}

async fn copy(client: &tokio_postgres::Client, sql: &str, data: &str) -> Result<u64, String> {
    let sink = client.copy_in(sql).await.map_err(message)?;
    let mut sink = Box::pin(sink);
    sink.send(Bytes::copy_from_slice(data.as_bytes()))
        .await
        .map_err(message)?;
    sink.as_mut().finish().await.map_err(message)
}

async fn stored(client: &tokio_postgres::Client) -> Vec<(i64, i32, Option<String>)> {
    let mut rows: Vec<_> = client
        .query("SELECT order_id, user_id, status FROM t_order", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    rows.sort();
    rows
}

async fn loads(shards: PgShards) {
    let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), false)).await;
    let client = proxy.client().await;
    client.batch_execute(CREATE).await.unwrap();

    let text = "1\tone\n2\t\\N\n3\ttab\\there\n";
    let n = copy(&client, "COPY t_order (user_id, status) FROM STDIN", text).await;
    assert_eq!(n, Ok(3));
    let csv = "user_id,status\n4,\"quoted, \"\"comma\"\"\"\n5,\n";
    let sql = "COPY t_order (user_id, status) FROM STDIN WITH (FORMAT csv, HEADER true)";
    assert_eq!(copy(&client, sql, csv).await, Ok(2));
    let rows = stored(&client).await;
    let mut seen: Vec<(i32, Option<String>)> =
        rows.iter().map(|(_, u, s)| (*u, s.clone())).collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            (1, Some("one".into())),
            (2, None),
            (3, Some("tab\there".into())),
            (4, Some("quoted, \"comma\"".into())),
            (5, None),
        ]
    );
    // Every key is where the rule puts it: ds_{user_id % 2}.t_order_{key % 2}.
    let mut placed = Vec::new();
    for ds in 0..2 {
        for table in 0..2 {
            for key in shards.ids(ds, table).await {
                let (_, user, _) = rows.iter().find(|(k, _, _)| *k == key).unwrap();
                assert_eq!((*user as usize % 2, key as usize % 2), (ds, table));
                placed.push(key);
            }
        }
    }
    assert_eq!(placed.len(), 5);

    // A bad row fails the whole load: nothing of it is stored.
    let bad = "6\tsix\n7\n";
    let error = copy(&client, "COPY t_order (user_id, status) FROM STDIN", bad)
        .await
        .unwrap_err();
    assert!(error.contains("missing data for a column"), "{error}");
    assert_eq!(stored(&client).await.len(), 5, "after a bad row");
    // Refused at Execute: tokio-postgres then loses step with the server, against PostgreSQL
    // itself as well, so this one goes as a simple query.
    let error = client
        .simple_query("COPY t_order FROM STDIN (FORMAT binary)")
        .await
        .unwrap_err();
    assert!(message(error).contains("binary"));
    assert_eq!(stored(&client).await.len(), 5, "the connection goes on");

    // psql's \copy streams over the simple protocol.
    let mut psql = Command::new("psql")
        .env("PGPASSWORD", "root")
        .args(["-X", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p"])
        .arg(proxy.address.port().to_string())
        .args(["-U", "root", "-d", "sharding_db", "-c"])
        .arg("\\copy t_order (user_id, status) FROM STDIN WITH (FORMAT csv)")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("psql");
    psql.stdin
        .take()
        .unwrap()
        .write_all(b"8,psql\n9,psql\n")
        .unwrap();
    let out = tokio::task::spawn_blocking(move || psql.wait_with_output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "COPY 2");
    assert_eq!(stored(&client).await.len(), 7);
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_from_stdin_on_sqlite_shards() {
    loads(PgShards::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn copy_from_stdin_on_postgres_shards() {
    loads(PgShards::postgres().await).await;
}
