//! The PostgreSQL frontend end to end: the proxy in-process, driven over TCP by tokio-postgres
//! (simple and extended protocols), `psql` and pgjdbc; on SQLite shards in `cargo test` and on
//! PostgreSQL shards with `--include-ignored`.

use crate::common;

use std::path::Path;
use std::process::Command;

use crate::common::java::{PGJDBC, Programs, keys, succeeded};
use crate::common::postgres::{PgProxy, PgShards, connect, texts, yaml};
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, SimpleQueryMessage};

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

/// A proxy over `shards` with `t_order` created through it, and a client.
async fn start(shards: &PgShards) -> (PgProxy, Client) {
    let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), false)).await;
    let client = proxy.client().await;
    client.batch_execute(CREATE).await.unwrap();
    (proxy, client)
}

/// Where the default rule puts a row: `ds_{user_id % 2}.t_order_{key % 2}`.
async fn assert_stored(shards: &PgShards, user_id: i64, key: i64) {
    let ids = shards.ids((user_id % 2) as usize, (key % 2) as usize).await;
    assert!(
        ids.contains(&key),
        "key {key} of user {user_id} not in ds_{}.t_order_{}: {ids:?}",
        user_id % 2,
        key % 2
    );
}

fn code(error: &tokio_postgres::Error) -> Option<&SqlState> {
    error.code()
}

/// A VARCHAR parameter whose bytes are not UTF-8.
#[derive(Debug)]
struct NotUtf8;

impl tokio_postgres::types::ToSql for NotUtf8 {
    fn to_sql(
        &self,
        _: &tokio_postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(b"caf\xc3(");
        Ok(tokio_postgres::types::IsNull::No)
    }

    fn accepts(ty: &tokio_postgres::types::Type) -> bool {
        *ty == tokio_postgres::types::Type::VARCHAR
    }

    tokio_postgres::types::to_sql_checked!();
}

/// The keys every way of inserting returns are the keys stored, each where it routes.
async fn keys_reach_the_client_and_the_shards(shards: &PgShards) {
    let (proxy, client) = start(shards).await;
    let mut returned: Vec<(i64, i64)> = Vec::new();

    // One row, literals, extended protocol: RETURNING typed from the table (BIGINT → i64).
    let row = client
        .query_one(
            "INSERT INTO t_order (user_id, status) VALUES (1, 'one') RETURNING order_id",
            &[],
        )
        .await
        .unwrap();
    returned.push((1, row.get::<_, i64>(0)));

    // Three rows, literals, two columns back in the client's row order.
    let rows = client
        .query(
            "INSERT INTO t_order (user_id, status) VALUES (2, 'a'), (3, 'b'), (4, 'c') \
             RETURNING order_id, user_id",
            &[],
        )
        .await
        .unwrap();
    let users: Vec<i32> = rows.iter().map(|r| r.get(1)).collect();
    assert_eq!(users, [2, 3, 4]);
    // PDO's lastInsertId(): `SELECT LASTVAL()` answers the last key generated, by either
    // protocol; a session that generated none gets PostgreSQL's 55000.
    let last: i64 = rows[2].get(0);
    let lastval = client.query_one("SELECT LASTVAL()", &[]).await.unwrap();
    assert_eq!(lastval.get::<_, i64>(0), last);
    let simple = common::postgres::simple_rows(&client, "select lastval();").await;
    assert_eq!(simple, [[Some(last.to_string())]]);
    let fresh = proxy.client().await;
    let error = fresh.query_one("SELECT lastval()", &[]).await.unwrap_err();
    assert_eq!(error.code().map(|c| c.code()), Some("55000"), "{error}");
    drop(fresh);
    returned.extend(
        rows.iter()
            .map(|r| (i64::from(r.get::<_, i32>(1)), r.get(0))),
    );

    // Parameters, typed by the statement (INT → i32, VARCHAR → &str), RETURNING *.
    let statement = client
        .prepare("INSERT INTO t_order (user_id, status) VALUES ($1, $2), ($3, $4) RETURNING *")
        .await
        .unwrap();
    assert_eq!(
        statement.params(),
        [
            tokio_postgres::types::Type::INT4,
            tokio_postgres::types::Type::VARCHAR,
            tokio_postgres::types::Type::INT4,
            tokio_postgres::types::Type::VARCHAR
        ]
    );
    for (a, b) in [(5, 6), (7, 8)] {
        let rows = client
            .query(&statement, &[&a, &"p", &b, &"q"])
            .await
            .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].get::<_, &str>("status"), "q");
        returned.extend(
            rows.iter()
                .map(|r| (i64::from(r.get::<_, i32>("user_id")), r.get("order_id"))),
        );
    }
    // Fresh keys at each execution of the same statement.
    let mut keys: Vec<i64> = returned.iter().map(|(_, k)| *k).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), returned.len());

    // Without RETURNING: the command tag counts the rows.
    let inserted = client
        .execute(
            "INSERT INTO t_order (user_id, status) VALUES ($1, $2), ($3, 'x')",
            &[&9i32, &"r", &10i32],
        )
        .await
        .unwrap();
    assert_eq!(inserted, 2);

    // Simple protocol: two statements in one message, a RETURNING result in text.
    let messages = client
        .simple_query(
            "INSERT INTO t_order (user_id, status) VALUES (11, 's'); \
             INSERT INTO t_order (user_id) VALUES (12), (13) RETURNING order_id, user_id",
        )
        .await
        .unwrap();
    let mut counts = Vec::new();
    for message in &messages {
        match message {
            SimpleQueryMessage::CommandComplete(n) => counts.push(*n),
            SimpleQueryMessage::Row(row) => returned.push((
                row.get(1).unwrap().parse().unwrap(),
                row.get(0).unwrap().parse().unwrap(),
            )),
            _ => {}
        }
    }
    assert_eq!(counts, [1, 2]);

    // Text INSERTs of one shape: the first two are parsed, the others bind its plan.
    for user in 14..=18_i64 {
        let sql = format!(
            "INSERT INTO t_order (user_id, status) VALUES ({user}, 'shape {user}') RETURNING order_id"
        );
        let messages = client.simple_query(&sql).await.unwrap();
        let key = messages.iter().find_map(|m| match m {
            SimpleQueryMessage::Row(row) => row.get(0).and_then(|k| k.parse::<i64>().ok()),
            _ => None,
        });
        returned.push((user, key.unwrap_or_else(|| panic!("{sql}: {messages:?}"))));
    }
    let mut keys: Vec<i64> = returned.iter().map(|(_, key)| *key).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), returned.len());

    for (user, key) in &returned {
        assert_stored(shards, *user, *key).await;
    }
    // Everything returned, plus the three rows inserted without RETURNING, and nothing else.
    assert_eq!(shards.all_ids().await.len(), returned.len() + 3);
    proxy.stop().await;
}

/// Errors carry PostgreSQL's SQLSTATE and leave the connection usable.
async fn errors_leave_the_connection_usable(shards: &PgShards) {
    let (proxy, client) = start(shards).await;
    let e = client.simple_query("INSERT INTO").await.unwrap_err();
    assert_eq!(code(&e), Some(&SqlState::SYNTAX_ERROR), "{e}");
    let e = client
        .query("INSERT INTO t_order (user_id) VALUES ($1", &[&1i32])
        .await
        .unwrap_err();
    assert_eq!(code(&e), Some(&SqlState::SYNTAX_ERROR), "{e}");
    // Text that is not UTF-8, bound in binary: refused as PostgreSQL refuses it, not stored
    // as other bytes.
    let e = client
        .query(
            "INSERT INTO t_order (user_id, status) VALUES ($1, $2)",
            &[&1i32, &NotUtf8],
        )
        .await
        .unwrap_err();
    assert_eq!(
        code(&e),
        Some(&SqlState::CHARACTER_NOT_IN_REPERTOIRE),
        "{e}"
    );
    // Extended protocol: the error skipped to Sync, the next statement runs.
    let row = client
        .query_one(
            "INSERT INTO t_order (user_id, status) VALUES ($1, 'after') RETURNING order_id",
            &[&2i32],
        )
        .await
        .unwrap();
    assert!(row.get::<_, i64>(0) > 0);
    let e = client
        .batch_execute("INSERT INTO t_order (user_id, status) VALUES (1, 'a', 'b')")
        .await
        .unwrap_err();
    assert!(e.code().is_some(), "{e}");
    // Session statements clients send when they connect.
    let isolation = client
        .query_one("SHOW TRANSACTION ISOLATION LEVEL", &[])
        .await
        .unwrap();
    assert_eq!(isolation.get::<_, &str>(0), "read committed");
    let version = client.query_one("SELECT version()", &[]).await.unwrap();
    assert!(version.get::<_, &str>(0).starts_with("PostgreSQL "));
    let schema = client
        .simple_query("select current_schema()")
        .await
        .unwrap();
    assert!(matches!(&schema[1], SimpleQueryMessage::Row(r) if r.get(0) == Some("public")));
    client
        .batch_execute("SET extra_float_digits = 3; SET application_name = 'test'")
        .await
        .unwrap();
    let one: i32 = client.query_one("SELECT 1", &[]).await.unwrap().get(0);
    assert_eq!(one, 1);
    // DISCARD ALL ends an open transaction: what it did is rolled back.
    client
        .batch_execute("BEGIN; INSERT INTO t_order (user_id, status) VALUES (3, 'gone')")
        .await
        .unwrap();
    client.batch_execute("DISCARD ALL").await.unwrap();
    let gone = client
        .query("SELECT order_id FROM t_order WHERE status = 'gone'", &[])
        .await
        .unwrap();
    assert!(gone.is_empty());
    proxy.stop().await;
}

/// Reads, updates, deletes and transactions: parameters typed from the columns they are
/// compared with, results typed from the table.
async fn reads_writes_and_transactions(shards: &PgShards) {
    let (proxy, mut client) = start(shards).await;
    let rows = client
        .query(
            "INSERT INTO t_order (user_id, status) VALUES ($1, 'a'), ($2, 'b'), ($3, 'c') \
             RETURNING order_id",
            &[&1i32, &2i32, &3i32],
        )
        .await
        .unwrap();
    let keys: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
    let row = client
        .query_one(
            "SELECT order_id, user_id, status FROM t_order WHERE order_id = $1",
            &[&keys[1]],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), keys[1]);
    assert_eq!(row.get::<_, i32>(1), 2);
    assert_eq!(row.get::<_, &str>(2), "b");
    let count: i64 = client
        .query_one("SELECT COUNT(*) FROM t_order", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(count, 3);
    let updated = client
        .execute(
            "UPDATE t_order SET status = $1 WHERE order_id = $2",
            &[&"paid", &keys[0]],
        )
        .await
        .unwrap();
    assert_eq!(updated, 1);
    let status: String = client
        .query_one(
            "SELECT status FROM t_order WHERE order_id = $1",
            &[&keys[0]],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(status, "paid");
    // An expression the proxy cannot type from the text: a PostgreSQL shard describes it.
    if let PgShards::Postgres { .. } = shards {
        let total: i64 = client
            .query_one("SELECT SUM(user_id) AS total FROM t_order", &[])
            .await
            .unwrap()
            .get("total");
        assert_eq!(total, 6);
    }

    // A transaction rolled back leaves nothing; one committed keeps its rows.
    let transaction = client.transaction().await.unwrap();
    transaction
        .execute("DELETE FROM t_order WHERE order_id = $1", &[&keys[2]])
        .await
        .unwrap();
    transaction.rollback().await.unwrap();
    let transaction = client.transaction().await.unwrap();
    transaction
        .execute(
            "INSERT INTO t_order (user_id, status) VALUES ($1, 'tx')",
            &[&4i32],
        )
        .await
        .unwrap();
    transaction.commit().await.unwrap();
    let count: i64 = client
        .query_one("SELECT COUNT(*) FROM t_order", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(count, 4);
    proxy.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_shards_reads_writes_and_transactions() {
    let shards = PgShards::sqlite();
    reads_writes_and_transactions(&shards).await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgres_shards_reads_writes_and_transactions() {
    let shards = PgShards::postgres().await;
    reads_writes_and_transactions(&shards).await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_shards_keys() {
    let shards = PgShards::sqlite();
    keys_reach_the_client_and_the_shards(&shards).await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_shards_errors() {
    let shards = PgShards::sqlite();
    errors_leave_the_connection_usable(&shards).await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgres_shards_keys() {
    let shards = PgShards::postgres().await;
    keys_reach_the_client_and_the_shards(&shards).await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgres_shards_errors() {
    let shards = PgShards::postgres().await;
    errors_leave_the_connection_usable(&shards).await;
    shards.cleanup().await;
}

/// Text INSERTs of one shape, whose literals the proxy sends to PostgreSQL shards as
/// parameters wherever that reads them alike, store what PostgreSQL stores for the literals
/// themselves (in a reference table on one shard's database), and fail where those fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgres_shards_store_literals_as_postgresql_reads_them() {
    let shards = PgShards::postgres().await;
    let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), false)).await;
    let client = proxy.client().await;
    const COLUMNS: &str = "user_id INT NOT NULL, status VARCHAR(8), amount NUMERIC(10, 2), \
                           ratio DOUBLE PRECISION, code CHAR(4), note TEXT";
    const NAMES: &str = "user_id, status, amount, ratio, code, note";
    client
        .batch_execute(&format!(
            "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, {COLUMNS})"
        ))
        .await
        .unwrap();
    let reference = connect(&shards.url(0).parse().unwrap()).await.unwrap();
    reference
        .batch_execute(&format!(
            "CREATE TABLE reference (order_id BIGINT PRIMARY KEY, {COLUMNS})"
        ))
        .await
        .unwrap();
    let rows = [
        "7, 'a', 5, 1.5, 'ab', 42",
        "'8', '9', 12, 3, 'xyz ', -5",
        "9, 'b', 1.505, 0.1, 'c', 007",
        "-10, 'c', '3', '2.5', 'd', 'n'",
        "12, 'f', 2, 18446744073709551615, 'h', 18446744073709551615",
        "13, 'g', -4, -0.25, '', '+1'",
        "11, 'too long!', 1, 1, 'e', 'x'",
        "3000000000, 'd', 1, 1, 'f', 'x'",
        "1, 'e', 'x1', 1, 'g', 'x'",
        "14, 'h', ' 3', 1, 'abcde', 'x'",
        "15, 'i', ' 3', '1_0', 'j', 'x'",
    ];
    let select =
        "SELECT user_id::text, status::text, amount::text, ratio::text, code::text, note FROM";
    let mut stored = 0;
    // The first two statements of the shape are parsed (the second learns it); the others
    // bind it.
    for values in rows.iter().chain(&rows) {
        let sql = format!("INSERT INTO t_order ({NAMES}) VALUES ({values}) RETURNING order_id");
        let proxied = client.simple_query(&sql).await;
        let key = match &proxied {
            Ok(messages) => texts(messages)[0][0].clone().unwrap(),
            Err(_) => "0".to_owned(),
        };
        let direct = reference
            .simple_query(&format!(
                "INSERT INTO reference (order_id, {NAMES}) VALUES ({key}, {values})"
            ))
            .await;
        match (&proxied, &direct) {
            (Ok(_), Ok(_)) => stored += 1,
            (Err(a), Err(b)) => assert_eq!(code(a), code(b), "{values}: {a:?} / {b:?}"),
            _ => panic!("{values}: through the proxy {proxied:?}, straight {direct:?}"),
        }
        if proxied.is_ok() {
            let by_proxy = client
                .simple_query(&format!("{select} t_order WHERE order_id = {key}"))
                .await
                .unwrap();
            let by_postgres = reference
                .simple_query(&format!("{select} reference WHERE order_id = {key}"))
                .await
                .unwrap();
            assert_eq!(texts(&by_proxy), texts(&by_postgres), "{values}");
        }
    }
    assert_eq!(stored, 12);
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_password_and_unknown_database_are_refused() {
    let shards = PgShards::sqlite();
    let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), true)).await;
    let e = connect(&proxy.config("root", "wrong")).await.unwrap_err();
    assert_eq!(code(&e), Some(&SqlState::INVALID_PASSWORD), "{e}");
    let e = connect(&proxy.config("nobody", "root")).await.unwrap_err();
    assert_eq!(code(&e), Some(&SqlState::INVALID_PASSWORD), "{e}");
    let mut config = proxy.config("root", "root");
    config.dbname("elsewhere");
    let e = connect(&config).await.unwrap_err();
    assert_eq!(code(&e), Some(&SqlState::INVALID_CATALOG_NAME), "{e}");
    // Garbage instead of a startup packet closes that connection only.
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut raw = tokio::net::TcpStream::connect(proxy.address).await.unwrap();
        raw.write_all(&[0, 0, 0, 9, 1, 2, 3, 4, 5]).await.unwrap();
        let mut rest = Vec::new();
        let _ = raw.read_to_end(&mut rest).await;
    }
    let client = proxy.client().await;
    client.batch_execute(CREATE).await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_configured_as_an_md5_hash_is_checked_with_md5() {
    let shards = PgShards::sqlite();
    // PostgreSQL's stored form: "md5" + md5(password + user).
    let yaml = with_legacy_user(&yaml(&shards.url(0), &shards.url(1), false));
    assert!(yaml.contains("legacy"));
    let proxy = PgProxy::start(&yaml).await;
    let client = connect(&proxy.config("legacy", "secret")).await.unwrap();
    client
        .batch_execute("SET application_name = 'old'")
        .await
        .unwrap();
    let e = connect(&proxy.config("legacy", "wrong")).await.unwrap_err();
    assert_eq!(code(&e), Some(&SqlState::INVALID_PASSWORD), "{e}");
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frontend_that_cannot_reach_a_data_source_is_refused() {
    let sqlite = PgShards::sqlite();
    let yaml = yaml("mysql://root@127.0.0.1:1/a", &sqlite.url(1), false);
    let config = keyshard_config::from_yaml_str(&yaml, Path::new(".")).unwrap();
    let e = keyshard_proxy::Server::bind(config)
        .await
        .unwrap_err()
        .to_string();
    for part in ["server.postgres.listen", "'ds_0'", "MySQL", "PostgreSQL"] {
        assert!(e.contains(part), "{part} not in {e}");
    }
    sqlite.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL) and psql"]
async fn psql_command_line_client() {
    let shards = PgShards::postgres().await;
    let (proxy, _client) = start(&shards).await;
    let out = succeeded(Command::new("psql")
        .env("PGPASSWORD", "root")
        .args([
            "-X",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            "127.0.0.1",
            "-p",
        ])
        .arg(proxy.address.port().to_string())
        .args(["-U", "root", "-d", "sharding_db"])
        .args([
            "-c",
            "INSERT INTO t_order (user_id, status) VALUES (1, 'psql') RETURNING order_id",
            "-c",
            "INSERT INTO t_order (user_id, status) VALUES (2, 'a'), (3, 'b') RETURNING order_id",
        ]));
    let keys: Vec<i64> = out
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("INSERT"))
        .map(|l| l.trim().parse().unwrap_or_else(|_| panic!("{out}")))
        .collect();
    assert_eq!(keys.len(), 3, "{out}");
    for (user, key) in [1, 2, 3].into_iter().zip(&keys) {
        assert_stored(&shards, user, *key).await;
    }
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL), a JDK and pgjdbc"]
async fn pgjdbc_generated_keys() {
    let shards = PgShards::postgres().await;
    let (proxy, _client) = start(&shards).await;
    let url = format!("jdbc:postgresql://{}/sharding_db", proxy.address);
    let out = Programs::compile(&["PgGeneratedKeys.java"]).run(
        "PgGeneratedKeys",
        PGJDBC,
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
    let mut expected = [one, three].concat();
    expected.sort_unstable();
    assert_eq!(shards.all_ids().await, expected);
    proxy.stop().await;
    shards.cleanup().await;
}

/// The configuration with a user `legacy` whose password `secret` is configured as
/// PostgreSQL's stored MD5 form ("md5" + md5(password + user)).
fn with_legacy_user(yaml: &str) -> String {
    let hash = format!("md5{:x}", md5::compute("secretlegacy"));
    let yaml = yaml.replace(
        "    - user: root@%\n      password: root",
        &format!(
            "    - user: root@%\n      password: root\n    - user: legacy\n      password: {hash}"
        ),
    );
    assert!(yaml.contains("legacy"));
    yaml
}

/// A frontend message: type byte, length, body.
fn message(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![kind];
    m.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    m.extend_from_slice(body);
    m
}

/// Connects by hand with MD5 (user `legacy`, password `secret`) and returns the socket after
/// the first ReadyForQuery.
async fn raw_session(proxy: &PgProxy) -> tokio::net::TcpStream {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut raw = tokio::net::TcpStream::connect(proxy.address).await.unwrap();
    let mut startup = Vec::new();
    startup.extend_from_slice(&196608u32.to_be_bytes());
    startup.extend_from_slice(b"user\0legacy\0database\0sharding_db\0\0");
    let mut packet = ((startup.len() + 4) as u32).to_be_bytes().to_vec();
    packet.extend_from_slice(&startup);
    raw.write_all(&packet).await.unwrap();
    // AuthenticationMD5Password: 'R', length 12, code 5, salt.
    let mut challenge = [0u8; 13];
    raw.read_exact(&mut challenge).await.unwrap();
    assert_eq!((challenge[0], challenge[8]), (b'R', 5));
    let inner = format!("{:x}", md5::compute("secretlegacy"));
    let mut salted = inner.into_bytes();
    salted.extend_from_slice(&challenge[9..13]);
    let answer = format!("md5{:x}\0", md5::compute(salted));
    let mut message = vec![b'p'];
    message.extend_from_slice(&((answer.len() + 4) as u32).to_be_bytes());
    message.extend_from_slice(answer.as_bytes());
    raw.write_all(&message).await.unwrap();
    read_until_ready(&mut raw).await;
    raw
}

/// Everything up to and including the next ReadyForQuery ('Z', length 5, status).
async fn read_until_ready(raw: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut seen = Vec::new();
    loop {
        let mut byte = [0u8; 1];
        raw.read_exact(&mut byte).await.unwrap();
        seen.push(byte[0]);
        let n = seen.len();
        if n >= 6 && seen[n - 6..n - 1] == [b'Z', 0, 0, 0, 5] {
            return String::from_utf8_lossy(&seen).into_owned();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_messages_close_only_their_connection() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let shards = PgShards::sqlite();
    let yaml = with_legacy_user(&yaml(&shards.url(0), &shards.url(1), false));
    let proxy = PgProxy::start(&yaml).await;
    let cases: Vec<Vec<u8>> = vec![
        // An unknown message type.
        vec![b'!', 0, 0, 0, 4],
        // A length below the minimum, and one far beyond any limit.
        vec![b'Q', 0, 0, 0, 2],
        vec![b'Q', 0x7f, 0xff, 0xff, 0xff],
        // A Bind whose counts promise more than its body holds.
        vec![b'B', 0, 0, 0, 10, 0, 0, 0xff, 0xff, 0, 1],
        // A Parse whose parameter type count runs past the end.
        vec![b'P', 0, 0, 0, 9, 0, b'x', 0, 0xff, 0xff],
        // A Describe of an unknown kind, then Sync: an error, not a closed connection.
        vec![b'D', 0, 0, 0, 6, b'?', 0, b'S', 0, 0, 0, 4],
    ];
    for case in cases {
        let mut raw = raw_session(&proxy).await;
        raw.write_all(&case).await.unwrap();
        let mut reply = Vec::new();
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(2),
            raw.read_to_end(&mut reply),
        )
        .await;
        // Whatever came back, the server goes on serving others.
        let client = proxy.client().await;
        client.simple_query("SELECT 1").await.unwrap();
    }
    proxy.stop().await;
    shards.cleanup().await;
}

/// A shutdown that arrives mid-batch (after Execute, before Sync) waits for the Sync: the
/// client gets the answer to the INSERT that ran, and only then is the connection closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_mid_batch_answers_the_statement_first() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let shards = PgShards::sqlite();
    let yaml = with_legacy_user(&yaml(&shards.url(0), &shards.url(1), false));
    let proxy = PgProxy::start(&yaml).await;
    proxy.client().await.batch_execute(CREATE).await.unwrap();
    let mut raw = raw_session(&proxy).await;
    let mut batch = message(
        b'P',
        b"\0INSERT INTO t_order (user_id, status) VALUES (5, 'late')\0\0\0",
    );
    batch.extend(message(b'B', b"\0\0\0\0\0\0\0\0"));
    batch.extend(message(b'E', b"\0\0\0\0\0"));
    raw.write_all(&batch).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let stopping = tokio::spawn(proxy.stop());
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    raw.write_all(&message(b'S', b"")).await.unwrap();
    let mut answer = Vec::new();
    raw.read_to_end(&mut answer).await.unwrap();
    let text = String::from_utf8_lossy(&answer);
    assert!(text.contains("INSERT 0 1"), "{text:?}");
    assert!(
        answer.windows(6).any(|w| w == [b'Z', 0, 0, 0, 5, b'I']),
        "{text:?}"
    );
    stopping.await.unwrap();
    assert_eq!(shards.all_ids().await.len(), 1);
    shards.cleanup().await;
}

/// SQL that is not UTF-8 is refused as PostgreSQL refuses it (22021) instead of reaching the
/// shards with U+FFFD in place of the bad bytes; the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_that_is_not_utf8_is_refused_and_the_session_goes_on() {
    use tokio::io::AsyncWriteExt;
    let shards = PgShards::sqlite();
    let yaml = with_legacy_user(&yaml(&shards.url(0), &shards.url(1), false));
    let proxy = PgProxy::start(&yaml).await;
    proxy.client().await.batch_execute(CREATE).await.unwrap();
    let mut raw = raw_session(&proxy).await;
    // Simple query.
    raw.write_all(&message(
        b'Q',
        b"INSERT INTO t_order (user_id, status) VALUES (1, '\xff')\0",
    ))
    .await
    .unwrap();
    let answer = read_until_ready(&mut raw).await;
    assert!(answer.contains("22021"), "{answer:?}");
    // Extended protocol: the Parse fails, the rest of the batch is skipped up to the Sync.
    let mut batch = message(b'P', b"\0SELECT '\xc3('\0\0\0");
    batch.extend(message(b'B', b"\0\0\0\0\0\0\0\0"));
    batch.extend(message(b'E', b"\0\0\0\0\0"));
    batch.extend(message(b'S', b""));
    raw.write_all(&batch).await.unwrap();
    let answer = read_until_ready(&mut raw).await;
    assert!(answer.contains("22021"), "{answer:?}");
    // The session goes on, and nothing was stored.
    raw.write_all(&message(b'Q', b"SELECT 'caf\xc3\xa9'\0"))
        .await
        .unwrap();
    let answer = read_until_ready(&mut raw).await;
    assert!(answer.contains("café"), "{answer:?}");
    assert!(shards.all_ids().await.is_empty());
    proxy.stop().await;
    shards.cleanup().await;
}

/// Describe of a portal tells its columns without running it: an UPDATE … RETURNING whose
/// shard only its parameter picks is described by that shard, so a client that describes and
/// then closes the portal has changed nothing (PostgreSQL runs nothing before Execute).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_of_a_portal_runs_nothing() {
    use tokio::io::AsyncWriteExt;
    let shards = PgShards::sqlite();
    let yaml = with_legacy_user(&yaml(&shards.url(0), &shards.url(1), false));
    let proxy = PgProxy::start(&yaml).await;
    let client = proxy.client().await;
    client.batch_execute(CREATE).await.unwrap();
    client
        .batch_execute("INSERT INTO t_order (user_id, status) VALUES (5, 'before')")
        .await
        .unwrap();
    let mut raw = raw_session(&proxy).await;
    let mut batch = message(
        b'P',
        b"\0UPDATE t_order SET user_id = $1, status = 'after' WHERE user_id = $1 RETURNING order_id, upper(status) AS loud\0\0\0",
    );
    // Bind: unnamed portal and statement, no format codes, one text parameter "5", no
    // result format codes.
    batch.extend(message(b'B', b"\0\0\0\0\0\x01\0\0\0\x015\0\0"));
    batch.extend(message(b'D', b"P\0"));
    batch.extend(message(b'C', b"P\0"));
    batch.extend(message(b'S', b""));
    raw.write_all(&batch).await.unwrap();
    let text = read_until_ready(&mut raw).await;
    // RowDescription ('T') naming both columns, and no CommandComplete ('C' … "UPDATE").
    assert!(
        text.contains("order_id") && text.contains("loud"),
        "{text:?}"
    );
    assert!(!text.contains("UPDATE"), "{text:?}");
    let status: String = client
        .query_one("SELECT status FROM t_order WHERE user_id = 5", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(status, "before");
    proxy.stop().await;
    shards.cleanup().await;
}

/// Unnamed statements (`query_typed`, as psycopg and pgbench send them) re-sent with the same
/// text reuse their parse until the table changes: after an ALTER the same text describes the
/// new columns, for INSERTs and reads alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unnamed_statements_are_parsed_again_after_ddl() {
    unnamed_statements_after_ddl(PgShards::sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn unnamed_statements_are_parsed_again_after_ddl_on_postgres() {
    unnamed_statements_after_ddl(PgShards::postgres().await).await;
}

async fn unnamed_statements_after_ddl(shards: PgShards) {
    use tokio_postgres::types::Type;
    let (proxy, client) = start(&shards).await;
    let sql = "INSERT INTO t_order (user_id, status) VALUES ($1, 'x') RETURNING *";
    for user in [1i32, 2] {
        let rows = client
            .query_typed(sql, &[(&user, Type::INT4)])
            .await
            .unwrap();
        assert_eq!(rows[0].columns().len(), 3);
        assert_eq!(rows[0].get::<_, i32>("user_id"), user);
    }
    client
        .batch_execute("ALTER TABLE t_order ADD COLUMN note VARCHAR(8) DEFAULT 'n'")
        .await
        .unwrap();
    let rows = client
        .query_typed(sql, &[(&3i32, Type::INT4)])
        .await
        .unwrap();
    assert_eq!(rows[0].columns().len(), 4);
    assert_eq!(rows[0].get::<_, String>("note"), "n");
    assert_eq!(shards.all_ids().await.len(), 3);
    // A read of sharded tables too, its parse reused for each user's rows until the table
    // changes again.
    let read = "SELECT * FROM t_order WHERE user_id = $1 ORDER BY order_id";
    for user in [1i32, 2, 3] {
        let rows = client
            .query_typed(read, &[(&user, Type::INT4)])
            .await
            .unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].get::<_, i32>("user_id"), user);
        assert_eq!(rows[0].columns().len(), 4);
    }
    client
        .batch_execute("ALTER TABLE t_order DROP COLUMN note")
        .await
        .unwrap();
    let rows = client
        .query_typed(read, &[(&2i32, Type::INT4)])
        .await
        .unwrap();
    assert_eq!(rows[0].columns().len(), 3);
    proxy.stop().await;
    shards.cleanup().await;
}

/// A statement running on both shards is cancelled there by the client's own cancel request
/// (the key BackendKeyData gave it) and by `pg_cancel_backend` of its session id from another
/// session: the client gets PostgreSQL's 57014, no shard runs it any more, and the session
/// goes on. `pg_terminate_backend` ends the session with 57P01; ids and keys that name no
/// session change nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn cancels_stop_a_statement_on_every_shard() {
    use std::time::{Duration, Instant};
    let shards = PgShards::postgres().await;
    let (proxy, other) = start(&shards).await;
    other
        .batch_execute(
            "INSERT INTO t_order VALUES (10, 10, 'a'), (11, 10, 'b'), (20, 11, 'c'), (21, 11, 'd')",
        )
        .await
        .unwrap();
    let direct = connect(&shards.url(0).parse().unwrap()).await.unwrap();
    let sleeping = "SELECT pg_sleep(30) FROM t_order";
    let running_on_shards = || async {
        let row = direct
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(30) FROM %' \
                 AND state = 'active'",
                &[],
            )
            .await
            .unwrap();
        row.get::<_, i64>(0)
    };
    let single = |messages: Vec<SimpleQueryMessage>| texts(&messages)[0][0].clone();
    for how in [
        "cancel request",
        "pg_cancel_backend",
        "pg_terminate_backend",
    ] {
        let victim = proxy.client().await;
        let id = single(
            victim
                .simple_query("SELECT pg_backend_pid()")
                .await
                .unwrap(),
        );
        let id = id.unwrap();
        let started = Instant::now();
        let cancel = async {
            while running_on_shards().await < 2 {
                assert!(started.elapsed() < Duration::from_secs(10), "never ran");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // pg_stat_activity lists the proxy's sessions: the victim, running it.
            let listed = other
                .query(
                    "SELECT pid, state, usename, datname FROM pg_stat_activity \
                     WHERE query LIKE 'SELECT pg_sleep%' ORDER BY backend_start",
                    &[],
                )
                .await
                .unwrap();
            let listed: Vec<(i32, String, String, String)> = listed
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
                .collect();
            let victim_id: i32 = id.parse().unwrap();
            let active = (
                "active".to_owned(),
                "root".to_owned(),
                "sharding_db".to_owned(),
            );
            assert_eq!(listed, [(victim_id, active.0, active.1, active.2)]);
            match how {
                "cancel request" => victim
                    .cancel_token()
                    .cancel_query(tokio_postgres::NoTls)
                    .await
                    .unwrap(),
                function => {
                    let sql = format!("SELECT {function}({id})");
                    let answer = single(other.simple_query(&sql).await.unwrap());
                    assert_eq!(answer.as_deref(), Some("t"), "{sql}");
                }
            }
        };
        let (answer, ()) = tokio::join!(victim.simple_query(sleeping), cancel);
        let error = answer.unwrap_err();
        assert_eq!(
            code(&error),
            Some(&SqlState::QUERY_CANCELED),
            "{how}: {error}"
        );
        assert!(started.elapsed() < Duration::from_secs(20));
        for _ in 0..100 {
            if running_on_shards().await == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(running_on_shards().await, 0, "{how}");
        let after = victim.simple_query("SELECT count(*) FROM t_order").await;
        match how {
            "pg_terminate_backend" => {
                let error = after.unwrap_err();
                let code = error.as_db_error().map(|e| e.code().clone());
                assert!(
                    code == Some(SqlState::ADMIN_SHUTDOWN) || victim.is_closed(),
                    "{error}"
                );
            }
            _ => assert_eq!(single(after.unwrap()).as_deref(), Some("4"), "{how}"),
        }
    }
    // The functions over pg_stat_activity's rows would reach the shards' own processes.
    let refused = other
        .simple_query("SELECT pg_cancel_backend(pid) FROM pg_stat_activity")
        .await
        .unwrap_err();
    assert_eq!(code(&refused), Some(&SqlState::FEATURE_NOT_SUPPORTED));
    // No such session: false, as PostgreSQL answers for a pid that is not a backend's.
    let none = single(
        other
            .simple_query("SELECT pg_cancel_backend(999999)")
            .await
            .unwrap(),
    );
    assert_eq!(none.as_deref(), Some("f"));
    let row = other
        .query_one("SELECT pg_terminate_backend(999999)", &[])
        .await
        .unwrap();
    assert!(!row.get::<_, bool>(0));
    assert_eq!(row.columns()[0].name(), "pg_terminate_backend");
    // Other sessions' statements on the connections a cancel went to are not stopped.
    let counted = single(
        other
            .simple_query("SELECT count(*) FROM t_order")
            .await
            .unwrap(),
    );
    assert_eq!(counted.as_deref(), Some("4"));
    proxy.stop().await;
    shards.cleanup().await;
}

/// On shards whose databases order text linguistically (ICU: `_x, a, ab c, abb, B`, where
/// bytes give `B, _x, a, ab c, abb`), a merge orders text only where that order is the bytes'
/// (lower-case letters and digits); the rest is gathered and ordered by the database itself,
/// exactly as one database holding every row orders it. Grouping, which needs equality only,
/// is merged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL 15 with ICU (KEYSHARD_TEST_PG_URL)"]
async fn merged_text_on_linguistic_databases() {
    let shards =
        PgShards::postgres_with("LOCALE_PROVIDER icu ICU_LOCALE 'en-US' TEMPLATE template0").await;
    let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), false)).await;
    let client = proxy.client().await;
    client
        .batch_execute(
            "CREATE TABLE t_order (order_id int8 PRIMARY KEY, user_id int4 NOT NULL, status text); \
             INSERT INTO t_order VALUES (1, 1, 'abb'), (2, 2, 'ab1'), (3, 3, 'b'), (4, 4, 'a')",
        )
        .await
        .unwrap();
    let order = "SELECT status FROM t_order ORDER BY status";
    let ordered = first_column(client.simple_query(order).await.unwrap());
    assert_eq!(ordered, ["a", "ab1", "abb", "b"]);
    client
        .batch_execute("INSERT INTO t_order VALUES (5, 1, 'B'), (6, 2, '_x')")
        .await
        .unwrap();
    let gathered = first_column(client.simple_query(order).await.unwrap());
    let direct = connect(&shards.url(0).parse().unwrap()).await.unwrap();
    let values = "SELECT s FROM (VALUES ('abb'), ('ab1'), ('b'), ('a'), ('B'), ('_x')) v(s) \
                  ORDER BY s";
    let expected = first_column(direct.simple_query(values).await.unwrap());
    assert_eq!(gathered, expected);
    assert_ne!(
        expected,
        ["B", "_x", "a", "ab1", "abb", "b"],
        "not bytes' order"
    );
    let groups = "SELECT status, count(*) FROM t_order GROUP BY status";
    assert_eq!(
        first_column(client.simple_query(groups).await.unwrap()).len(),
        6
    );
    proxy.stop().await;
    shards.cleanup().await;
}

/// A column declared with a collation of its own (ICU's `en-x-icu` in a C database) is
/// compared by it, not by its database's: merged across shards where that agrees with bytes,
/// gathered and ordered by the database otherwise; a C column beside it orders by bytes, as
/// PostgreSQL does;
/// an ORDER BY with a COLLATE of its own is answered as PostgreSQL answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL 15 with ICU (KEYSHARD_TEST_PG_URL)"]
async fn merged_text_in_a_columns_own_collation() {
    let shards = PgShards::postgres().await;
    let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), false)).await;
    let client = proxy.client().await;
    client
        .batch_execute(
            "CREATE TABLE t_order (order_id int8 PRIMARY KEY, user_id int4 NOT NULL, \
             status text, name text COLLATE \"en-x-icu\"); \
             INSERT INTO t_order VALUES (1, 1, 'B', 'B'), (2, 2, 'a', 'a'), (3, 3, '_x', 'b')",
        )
        .await
        .unwrap();
    let by_status = "SELECT status FROM t_order ORDER BY status";
    let ordered = first_column(client.simple_query(by_status).await.unwrap());
    assert_eq!(ordered, ["B", "_x", "a"]);
    let by_name = "SELECT name FROM t_order ORDER BY name";
    let ordered = first_column(client.simple_query(by_name).await.unwrap());
    assert_eq!(ordered, ["a", "b", "B"]);
    // An ORDER BY with a COLLATE of its own is no merge's: a database answers it, exactly.
    let collated = "SELECT status FROM t_order ORDER BY status COLLATE \"en-x-icu\"";
    let ordered = first_column(client.simple_query(collated).await.unwrap());
    assert_eq!(ordered, ["_x", "a", "B"]);
    proxy.stop().await;
    shards.cleanup().await;
}

/// The first column of a simple query's rows.
fn first_column(messages: Vec<SimpleQueryMessage>) -> Vec<String> {
    texts(&messages)
        .into_iter()
        .filter_map(|row| row.into_iter().next().flatten())
        .collect()
}

/// More rows than one millisecond's 4,096 SNOWFLAKE keys in one INSERT: with RETURNING the
/// client is told every key, so the keys may span milliseconds and the INSERT runs; without
/// it the refusal stays (a client could take the keys for `first + i`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insert_returning_its_keys_may_take_more_than_one_millisecond_of_them() {
    let shards = PgShards::sqlite();
    let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), false)).await;
    let client = proxy.client().await;
    client.batch_execute(CREATE).await.unwrap();
    let values = (0..5_000)
        .map(|i| format!("({i}, 'bulk')"))
        .collect::<Vec<_>>()
        .join(", ");
    let insert = format!("INSERT INTO t_order (user_id, status) VALUES {values}");
    let refused = client.batch_execute(&insert).await.unwrap_err();
    assert!(format!("{refused:?}").contains("4096"), "{refused:?}");
    let rows = client
        .query(&format!("{insert} RETURNING order_id"), &[])
        .await
        .unwrap();
    let keys: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
    let distinct: std::collections::HashSet<i64> = keys.iter().copied().collect();
    assert_eq!(distinct.len(), 5_000);
    assert_eq!(shards.all_ids().await.len(), 5_000);
    proxy.stop().await;
    shards.cleanup().await;
}
