//! `COPY … FROM STDIN` through the PostgreSQL frontend: every row gets a key and lands on its
//! shard, in the text, CSV and binary formats, by the extended protocol (tokio-postgres) and the
//! simple one (psql); a load that fails leaves nothing behind, and the connection goes on. A
//! malformed binary stream gets the SQLSTATE plain PostgreSQL gives it. `COPY … TO STDOUT`
//! gives, byte for byte, what one plain database holding the same rows gives.

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::postgres::{PgProxy, PgShards, yaml};
use bytes::Bytes;
use futures_util::SinkExt;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};

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

/// The keys stored in the shards, sorted, each checked to be where the rule puts its row (of
/// `rows`): ds_{user_id % 2}.t_order_{key % 2}.
async fn placed(shards: &PgShards, rows: &[(i64, i32, Option<String>)]) -> Vec<i64> {
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
    placed.sort_unstable();
    placed
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
    assert_eq!(placed(&shards, &rows).await.len(), 5);

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
        .simple_query("COPY t_order FROM '/etc/passwd'")
        .await
        .unwrap_err();
    assert!(message(error).contains("STDIN"));
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

/// The SQLSTATE a COPY of `data` ends with (streamed in 3-byte pieces, so that no message
/// holds a whole field), or `None` when it loads.
async fn copy_code(client: &tokio_postgres::Client, sql: &str, data: &[u8]) -> Option<String> {
    let result = async {
        let sink = client.copy_in(sql).await?;
        let mut sink = Box::pin(sink);
        for piece in data.chunks(3) {
            sink.send(Bytes::copy_from_slice(piece)).await?;
        }
        sink.as_mut().finish().await
    }
    .await;
    result.err().map(|e| {
        e.as_db_error()
            .map_or_else(|| e.to_string(), |d| d.code().code().to_owned())
    })
}

/// A binary COPY stream of rows of (int4 user_id, varchar status) fields given as bytes.
fn binary_stream(rows: &[&[Option<&[u8]>]]) -> Vec<u8> {
    let mut out = b"PGCOPY\n\xff\r\n\0".to_vec();
    out.extend_from_slice(&[0; 8]);
    for row in rows {
        out.extend_from_slice(&(row.len() as i16).to_be_bytes());
        for field in *row {
            match field {
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(b) => {
                    out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    out.extend_from_slice(b);
                }
            }
        }
    }
    out.extend_from_slice(&(-1i16).to_be_bytes());
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn binary_copy_on_postgres_shards() {
    let (shards, proxy) = common::postgres::on_postgres().await;
    let client = proxy.client().await;
    client.batch_execute(CREATE).await.unwrap();

    // tokio-postgres' BinaryCopyInWriter, as asyncpg's copy_records_to_table: no key column.
    let sql = "COPY t_order (user_id, status) FROM STDIN (FORMAT binary)";
    let sink = client.copy_in(sql).await.unwrap();
    let writer = BinaryCopyInWriter::new(sink, &[Type::INT4, Type::VARCHAR]);
    let mut writer = Box::pin(writer);
    let mut expected = Vec::new();
    for user in 0..40i32 {
        let status = (user % 3 != 0).then(|| format!("s'{user}\\"));
        let fields: [&(dyn ToSql + Sync); 2] = [&user, &status];
        writer.as_mut().write(&fields).await.unwrap();
        expected.push((user, status));
    }
    assert_eq!(writer.as_mut().finish().await.unwrap(), 40);
    let rows = stored(&client).await;
    let mut seen: Vec<_> = rows.iter().map(|(_, u, s)| (*u, s.clone())).collect();
    seen.sort();
    assert_eq!(seen, expected);
    // Each generated key is stored once, where the rule puts it.
    assert_eq!(placed(&shards, &rows).await.len(), 40);

    // Malformed streams: the same SQLSTATE as one plain PostgreSQL database, nothing stored,
    // and the connection goes on.
    let plain = {
        let config: tokio_postgres::Config = shards.url(0).parse().unwrap();
        common::postgres::connect(&config).await.unwrap()
    };
    plain
        .batch_execute(
            "CREATE TABLE plain_order (order_id BIGSERIAL PRIMARY KEY, user_id INT NOT NULL, \
             status VARCHAR(32))",
        )
        .await
        .unwrap();
    let one: &[u8] = &1i32.to_be_bytes();
    let mut truncated = binary_stream(&[&[Some(one), Some(b"x")]]);
    truncated.truncate(truncated.len() - 4);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "signature",
            b"PGCOPY\n\xff\r\n\x01\0\0\0\0\0\0\0\0\xff\xff".to_vec(),
        ),
        ("text data", b"1\tone\n".to_vec()),
        ("truncated", truncated),
        ("field count", binary_stream(&[&[Some(one)]])),
        ("negative length", {
            let mut s = binary_stream(&[&[Some(one), Some(b"x")]]);
            s[21..25].copy_from_slice(&(-2i32).to_be_bytes());
            s
        }),
        ("huge length", {
            let mut s = binary_stream(&[&[Some(one), Some(b"x")]]);
            s[21..25].copy_from_slice(&i32::MAX.to_be_bytes());
            s
        }),
        ("short int4", binary_stream(&[&[Some(&[0, 1]), Some(b"x")]])),
        (
            "long int4",
            binary_stream(&[&[Some(&[0, 0, 0, 0, 1]), Some(b"x")]]),
        ),
        (
            "not UTF-8",
            binary_stream(&[&[Some(one), Some(&[0xff, 0xfe])]]),
        ),
        ("data after trailer", {
            let mut s = binary_stream(&[&[Some(one), Some(b"x")]]);
            s.extend_from_slice(&[0, 1]);
            s
        }),
    ];
    let columns = "(user_id, status) FROM STDIN (FORMAT binary)";
    for (what, data) in &cases {
        let theirs = copy_code(&plain, &format!("COPY plain_order {columns}"), data).await;
        let ours = copy_code(&client, &format!("COPY t_order {columns}"), data).await;
        assert!(theirs.is_some(), "{what}: PostgreSQL took it");
        assert_eq!(ours, theirs, "{what}");
        assert_eq!(stored(&client).await.len(), 40, "{what}: nothing stored");
    }
    // A column the table does not have, in text and binary: refused before any data is asked
    // for (the simple protocol shows it: the error comes instead of CopyInResponse).
    for format in ["", " (FORMAT binary)"] {
        let sql = |table: &str| format!("COPY {table} (user_id, nosuch) FROM STDIN{format}");
        for (client, table) in [(&plain, "plain_order"), (&client, "t_order")] {
            let code = client
                .batch_execute(&sql(table))
                .await
                .err()
                .and_then(|e| e.code().map(|c| c.code().to_owned()));
            assert_eq!(code.as_deref(), Some("42703"), "{table}{format}");
        }
    }
    // A good stream split at every third byte loads.
    let good = binary_stream(&[
        &[Some(one), None],
        &[Some(&2i32.to_be_bytes()), Some(b"two")],
    ]);
    assert_eq!(
        copy_code(&client, &format!("COPY t_order {columns}"), &good).await,
        None
    );
    assert_eq!(stored(&client).await.len(), 42);

    // Without a column list the fields are the table's columns, the key among them (old
    // spelling of the option).
    let sink = client
        .copy_in("COPY t_order FROM STDIN BINARY")
        .await
        .unwrap();
    let mut writer = Box::pin(BinaryCopyInWriter::new(
        sink,
        &[Type::INT8, Type::INT4, Type::VARCHAR],
    ));
    let fields: [&(dyn ToSql + Sync); 3] = [&77i64, &3i32, &"keyed"];
    writer.as_mut().write(&fields).await.unwrap();
    assert_eq!(writer.as_mut().finish().await.unwrap(), 1);
    assert!(shards.ids(1, 1).await.contains(&77));
    // A column the table does not have is refused before any data is asked for (as a simple
    // query: refused at Execute, tokio-postgres loses step, against PostgreSQL too).
    let error = client
        .simple_query("COPY t_order (user_id, nope) FROM STDIN (FORMAT binary)")
        .await
        .unwrap_err();
    assert!(message(error).contains("nope"));
    assert_eq!(stored(&client).await.len(), 43, "the connection goes on");

    // Dates, timestamps and UUIDs in binary (asyncpg sends datetimes and UUIDs so): stored as
    // one plain PostgreSQL database stores them.
    let added = "ADD COLUMN created DATE, ADD COLUMN at TIMESTAMP, ADD COLUMN at_tz TIMESTAMPTZ, \
                 ADD COLUMN uid UUID";
    client
        .batch_execute(&format!("ALTER TABLE t_order {added}"))
        .await
        .unwrap();
    plain
        .batch_execute(&format!("ALTER TABLE plain_order {added}"))
        .await
        .unwrap();
    let id: Vec<u8> = (1u8..=16).collect();
    let (user, day, before, at) = (
        5i32.to_be_bytes(),
        (-36_524i32).to_be_bytes(),
        (-1i64).to_be_bytes(),
        800_000_000_123_456i64.to_be_bytes(),
    );
    let stream = binary_stream(&[&[
        Some(&user),
        Some(b"dated"),
        Some(&day),
        Some(&before),
        Some(&at),
        Some(&id),
    ]]);
    let columns = "(user_id, status, created, at, at_tz, uid) FROM STDIN (FORMAT binary)";
    for (client, table) in [(&plain, "plain_order"), (&client, "t_order")] {
        let sql = format!("COPY {table} {columns}");
        assert_eq!(copy_code(client, &sql, &stream).await, None, "{table}");
    }
    let read = |table: &str| {
        format!(
            "SELECT created::text, at::text, extract(epoch FROM at_tz)::text, uid::text \
             FROM {table} WHERE status = 'dated'"
        )
    };
    let theirs = common::postgres::simple_rows(&plain, &read("plain_order")).await;
    assert_eq!(theirs[0][0].as_deref(), Some("1900-01-01"));
    assert_eq!(
        common::postgres::simple_rows(&client, &read("t_order")).await,
        theirs
    );
    proxy.stop().await;
    shards.cleanup().await;
}

/// A table with what applications store: timestamps, decimals, JSON, text that needs escaping.
const WIDE: &str = "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
     status VARCHAR(32), price NUMERIC(10,2), created_at TIMESTAMPTZ, doc JSONB, note TEXT)";

/// The rows of `WIDE`, order ids 1 to 14.
fn wide_rows() -> Vec<String> {
    let notes = [
        "'plain'",
        r"E'tab\there'",
        r#"E'line\nbreak, "quoted"'"#,
        r"E'back\\slash'",
        "NULL",
        "''",
        "'ünï ✓'",
    ];
    (1..=14i64)
        .map(|id| {
            format!(
                "({id}, {}, 's{}', {}.{:02}, TIMESTAMPTZ '2026-01-{:02} 10:{:02}:00+02', \
                 '{{\"k\": {id}, \"a\": [1, \"x,y\"]}}', {})",
                id * 7 % 5,
                id % 3,
                id * 13,
                id * 7 % 100,
                id,
                id * 3,
                notes[id as usize % notes.len()]
            )
        })
        .collect()
}

/// All of a COPY … TO STDOUT's data, or the error's SQLSTATE.
async fn copied(client: &tokio_postgres::Client, sql: &str) -> Result<Vec<u8>, String> {
    use futures_util::TryStreamExt;
    let code = |e: tokio_postgres::Error| e.code().map_or(e.to_string(), |c| c.code().to_owned());
    let stream = client.copy_out(sql).await.map_err(code)?;
    let mut stream = Box::pin(stream);
    let mut data = Vec::new();
    while let Some(chunk) = stream.try_next().await.map_err(code)? {
        data.extend_from_slice(&chunk);
    }
    Ok(data)
}

/// psql's output for `sql`.
fn psql(port: u16, database: &str, sql: &str) -> String {
    let out = Command::new("psql")
        .env("PGPASSWORD", "root")
        .args(["-X", "-h", "127.0.0.1", "-p"])
        .arg(port.to_string())
        .args(["-U", "root", "-d", database, "-c", sql])
        .output()
        .expect("psql");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

fn sorted_lines(data: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(data)
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn copy_to_stdout_is_what_one_database_writes() {
    let (shards, proxy) = common::postgres::on_postgres().await;
    let client = proxy.client().await;
    let plain = common::postgres::Reference::create("keyshard_copy_out").await;
    client.batch_execute(WIDE).await.unwrap();
    plain.client.batch_execute(WIDE).await.unwrap();
    let rows = wide_rows();
    for row in &rows {
        let insert = format!(
            "INSERT INTO t_order (order_id, user_id, status, price, created_at, doc, note) \
             VALUES {row}"
        );
        client.batch_execute(&insert).await.unwrap();
    }
    // The plain table gets the rows in the order the proxy reads its nodes (ds_{user_id % 2}
    // .t_order_{order_id % 2}, each in insertion order), so that both write the same bytes.
    let mut ordered: Vec<(i64, &String)> = (1..)
        .zip(&rows)
        .map(|(id, row)| ((id * 7 % 5 % 2) * 2 + id % 2, row))
        .collect();
    ordered.sort_by_key(|(node, _)| *node);
    let values: Vec<&str> = ordered.iter().map(|(_, row)| row.as_str()).collect();
    plain
        .client
        .batch_execute(&format!("INSERT INTO t_order VALUES {}", values.join(", ")))
        .await
        .unwrap();
    // Both sessions write timestamps in one zone.
    for c in [&client, &plain.client] {
        c.batch_execute("SET TimeZone = 'Asia/Tokyo'")
            .await
            .unwrap();
    }

    for options in [
        "",
        "WITH (FORMAT csv)",
        "WITH (FORMAT csv, HEADER, DELIMITER ';', FORCE_QUOTE (note))",
        r"CSV HEADER QUOTE '''' ESCAPE '\'",
        "(FORMAT binary)",
        "WITH (NULL 'nil', DELIMITER '|')",
    ] {
        for columns in ["", " (order_id, note, doc)", " (note)"] {
            let sql = format!("COPY public.t_order{columns} TO STDOUT {options}");
            let theirs = copied(&plain.client, &sql).await;
            assert!(theirs.as_ref().is_ok_and(|d| !d.is_empty()), "{sql}");
            assert_eq!(copied(&client, &sql).await, theirs, "{sql}");
        }
    }
    // psql's simple protocol.
    let sql = r"\copy t_order (order_id, price, created_at) TO STDOUT WITH (FORMAT csv, HEADER)";
    let ours = psql(proxy.address.port(), "sharding_db", sql);
    assert_eq!(ours.lines().count(), 15, "{ours}");
    let database = common::postgres::simple_rows(&plain.client, "SELECT current_database()").await;
    let database = database[0][0].clone().unwrap_or_default();
    assert_eq!(ours, psql(5432, &database, sql));

    // Inside a transaction: the session's own rows, and those only until it rolls back.
    for c in [&client, &plain.client] {
        c.batch_execute(
            "BEGIN; INSERT INTO t_order (order_id, user_id, status) VALUES (100, 1, 'mine')",
        )
        .await
        .unwrap();
    }
    let sql = "COPY t_order (order_id, status) TO STDOUT";
    let mine = copied(&client, sql).await.unwrap();
    assert!(String::from_utf8_lossy(&mine).contains("100\tmine\n"));
    let theirs = copied(&plain.client, sql).await.unwrap();
    assert_eq!(sorted_lines(&mine), sorted_lines(&theirs));
    for c in [&client, &plain.client] {
        c.batch_execute("ROLLBACK").await.unwrap();
    }
    let theirs = copied(&plain.client, sql).await.unwrap();
    assert_eq!(copied(&client, sql).await.unwrap(), theirs);

    // Errors as the database gives them, and the connection goes on.
    for sql in [
        "COPY t_order (nosuch) TO STDOUT",
        "COPY nosuch TO STDOUT",
        "COPY t_order TO STDOUT (FORMAT binary, HEADER)",
    ] {
        let theirs = copied(&plain.client, sql).await;
        assert!(theirs.is_err(), "{sql}");
        assert_eq!(copied(&client, sql).await, theirs, "{sql}");
    }
    let count = "SELECT COUNT(*) FROM t_order";
    assert_eq!(
        common::postgres::simple_rows(&client, count).await,
        common::postgres::simple_rows(&plain.client, count).await
    );
    // Refused inside a transaction, the copy leaves its shard connection in a state sqlx cannot
    // bring back (it leaves the refusal's ReadyForQuery unread), so that connection is closed:
    // the transaction can then only be rolled back (PostgreSQL would take ROLLBACK TO
    // SAVEPOINT too; Keyshard refuses it rather than answer from a connection out of step).
    client
        .batch_execute(
            "BEGIN; SAVEPOINT a; INSERT INTO t_order (order_id, user_id, status) \
             VALUES (101, 0, 'gone')",
        )
        .await
        .unwrap();
    assert_eq!(
        copied(&client, "COPY nosuch TO STDOUT").await,
        Err("42P01".into())
    );
    assert!(
        client
            .batch_execute("ROLLBACK TO SAVEPOINT a")
            .await
            .is_err()
    );
    client.batch_execute("ROLLBACK").await.unwrap();
    for _ in 0..4 {
        assert_eq!(
            common::postgres::simple_rows(&client, count).await,
            common::postgres::simple_rows(&plain.client, count).await
        );
    }
    drop(client);
    proxy.stop().await;
    plain.drop_database().await;
    shards.cleanup().await;
}

/// Runs a client program to its end off the runtime the proxy runs on; its stdout, or its
/// stderr when it failed.
async fn run(mut command: Command) -> Result<String, String> {
    let out = tokio::task::spawn_blocking(move || command.output().expect("a client program"))
        .await
        .unwrap();
    match out.status.success() {
        true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
    }
}

fn psql_file(port: u16, user: &str, database: &str, file: &std::path::Path) -> Command {
    let mut psql = Command::new("psql");
    psql.env("PGPASSWORD", "root")
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p"])
        .arg(port.to_string())
        .args(["-U", user, "-d", database, "-f"])
        .arg(file);
    psql
}

/// pg_dump of the logical database through Keyshard (catalog and data), restored with psql
/// into one plain database and through Keyshard onto fresh shards: the same rows everywhere,
/// and the dumping session's settings never reach other clients.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn pg_dump_through_keyshard_restores_anywhere() {
    let (shards, proxy) = common::postgres::on_postgres().await;
    let client = proxy.client().await;
    client.batch_execute(WIDE).await.unwrap();
    let values = wide_rows().join(", ");
    client
        .batch_execute(&format!("INSERT INTO t_order VALUES {values}"))
        .await
        .unwrap();
    client
        .batch_execute(
            "CREATE TABLE t_plain (id INT PRIMARY KEY, note TEXT); \
             INSERT INTO t_plain VALUES (1, E'a\\tb'), (2, NULL)",
        )
        .await
        .unwrap();

    let mut pg_dump = Command::new("pg_dump");
    pg_dump
        .env("PGPASSWORD", "root")
        .args(["-h", "127.0.0.1", "-p"])
        .arg(proxy.address.port().to_string())
        .args(["-U", "root", "--no-owner", "sharding_db"]);
    let dump = run(pg_dump).await.unwrap();
    assert!(dump.contains("COPY public.t_order "), "{dump}");
    let file = std::env::temp_dir().join(common::unique("keyshard_dump"));
    std::fs::write(&file, &dump).unwrap();

    let read = [
        "SELECT order_id, user_id, status, price, created_at, doc, note FROM t_order \
         ORDER BY order_id",
        "SELECT id, note FROM t_plain ORDER BY id",
    ];
    let mut expected = Vec::new();
    for sql in read {
        let rows = common::postgres::simple_rows(&client, sql).await;
        assert!(!rows.is_empty());
        expected.push(rows);
    }
    // The dumping session's empty search_path stayed with it.
    assert_eq!(
        common::postgres::simple_rows(&client, read[1]).await,
        expected[1]
    );

    let plain = common::postgres::Reference::create("keyshard_restored").await;
    let database = common::postgres::simple_rows(&plain.client, "SELECT current_database()").await;
    let database = database[0][0].clone().unwrap_or_default();
    let admin_port = std::env::var("KEYSHARD_TEST_PG_URL")
        .unwrap()
        .parse::<tokio_postgres::Config>()
        .unwrap()
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432);
    run(psql_file(admin_port, "postgres", &database, &file))
        .await
        .unwrap();
    let (fresh, again) = common::postgres::on_postgres().await;
    run(psql_file(
        again.address.port(),
        "root",
        "sharding_db",
        &file,
    ))
    .await
    .unwrap();
    let restored = again.client().await;
    for (sql, expected) in read.iter().zip(&expected) {
        assert_eq!(
            &common::postgres::simple_rows(&plain.client, sql).await,
            expected
        );
        assert_eq!(
            &common::postgres::simple_rows(&restored, sql).await,
            expected
        );
    }
    let _ = std::fs::remove_file(&file);

    // The custom format of chosen tables (pg_dump looks them up with OPERATOR(pg_catalog.~)
    // after RESET search_path, inside its transaction), restored with pg_restore.
    let archive = std::env::temp_dir().join(common::unique("keyshard_dump_fc"));
    let mut pg_dump = Command::new("pg_dump");
    pg_dump
        .env("PGPASSWORD", "root")
        .args([
            "-Fc",
            "--no-owner",
            "-t",
            "t_order",
            "-t",
            "t_plain",
            "-h",
            "127.0.0.1",
        ])
        .args(["-p", &proxy.address.port().to_string(), "-U", "root", "-f"])
        .arg(&archive)
        .arg("sharding_db");
    run(pg_dump).await.unwrap();
    let custom = common::postgres::Reference::create("keyshard_restored_fc").await;
    let name = common::postgres::simple_rows(&custom.client, "SELECT current_database()").await;
    let mut pg_restore = Command::new("pg_restore");
    pg_restore
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &admin_port.to_string(),
            "-U",
            "postgres",
            "-d",
        ])
        .arg(name[0][0].clone().unwrap_or_default())
        .arg(&archive);
    run(pg_restore).await.unwrap();
    let _ = std::fs::remove_file(&archive);
    for (sql, expected) in read.iter().zip(&expected) {
        assert_eq!(
            &common::postgres::simple_rows(&custom.client, sql).await,
            expected
        );
    }
    custom.drop_database().await;
    // psql's \d reads the catalog with the same syntax.
    let mut describe = Command::new("psql");
    describe
        .env("PGPASSWORD", "root")
        .args([
            "-X",
            "-h",
            "127.0.0.1",
            "-p",
            &proxy.address.port().to_string(),
        ])
        .args(["-U", "root", "-d", "sharding_db", "-c", "\\d t_order"]);
    let described = run(describe).await.unwrap();
    assert!(
        described.contains("Table \"public.t_order\""),
        "{described}"
    );
    drop((client, restored));
    proxy.stop().await;
    again.stop().await;
    plain.drop_database().await;
    shards.cleanup().await;
    fresh.cleanup().await;
}

/// A dump of one plain PostgreSQL database (pg_dump straight from it), restored with psql
/// through Keyshard onto fresh shards: every key kept, every row on the shard its sharding
/// values choose, the same rows read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn a_plain_databases_dump_restores_through_keyshard_onto_its_shards() {
    let plain = common::postgres::Reference::create("keyshard_dumped").await;
    plain.client.batch_execute(WIDE).await.unwrap();
    let values = wide_rows().join(", ");
    plain
        .client
        .batch_execute(&format!("INSERT INTO t_order VALUES {values}"))
        .await
        .unwrap();
    let database = common::postgres::simple_rows(&plain.client, "SELECT current_database()").await;
    let admin: tokio_postgres::Config = std::env::var("KEYSHARD_TEST_PG_URL")
        .unwrap()
        .parse()
        .unwrap();
    let port = admin.get_ports().first().copied().unwrap_or(5432);
    let mut pg_dump = Command::new("pg_dump");
    pg_dump
        .args([
            "--no-owner",
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            "postgres",
        ])
        .arg(database[0][0].clone().unwrap_or_default());
    let dump = run(pg_dump).await.unwrap();
    let file = std::env::temp_dir().join(common::unique("keyshard_plain_dump"));
    std::fs::write(&file, &dump).unwrap();

    let (shards, proxy) = common::postgres::on_postgres().await;
    run(psql_file(
        proxy.address.port(),
        "root",
        "sharding_db",
        &file,
    ))
    .await
    .unwrap();
    let _ = std::fs::remove_file(&file);
    let client = proxy.client().await;
    let read = "SELECT order_id, user_id, status, price, created_at, doc, note FROM t_order \
                ORDER BY order_id";
    assert_eq!(
        common::postgres::simple_rows(&client, read).await,
        common::postgres::simple_rows(&plain.client, read).await
    );
    // ds_{user_id % 2}.t_order_{order_id % 2}, with the keys the dump had.
    let mut placed = Vec::new();
    for ds in 0..2 {
        for table in 0..2 {
            for key in shards.ids(ds, table).await {
                let user = key * 7 % 5;
                assert_eq!(
                    ((user % 2) as usize, (key % 2) as usize),
                    (ds, table),
                    "{key}"
                );
                placed.push(key);
            }
        }
    }
    placed.sort_unstable();
    assert_eq!(placed, (1..=14).collect::<Vec<i64>>());
    drop(client);
    proxy.stop().await;
    plain.drop_database().await;
    shards.cleanup().await;
}

/// A load many batches long (text, and CSV whose quoted fields hold newlines) is stored whole,
/// each row with its key where the rule puts it, and one whose last row is bad stores nothing;
/// in the client's own transaction a bad load fails that transaction. Run on one plain
/// PostgreSQL too, which must answer alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn a_load_of_many_batches_is_all_or_nothing() {
    let (shards, proxy) = common::postgres::on_postgres().await;
    let through = proxy.client().await;
    let plain_db = PgShards::postgres().await;
    let plain = common::postgres::connect(&plain_db.url(0).parse().unwrap())
        .await
        .unwrap();
    let text: String = (0..12_500)
        .map(|i| format!("{}\ts{}\n", i % 1000, i % 7))
        .collect();
    let bad = format!("{text}1\ts\textra\n");
    let csv: String = (0..2_500)
        .map(|i| format!("{i},\"two\nlines {i}\"\n"))
        .collect();
    let csv = format!("user_id,status\n{csv}");
    let text_sql = "COPY t_order (user_id, status) FROM STDIN";
    let csv_sql = "COPY t_order (user_id, status) FROM STDIN (FORMAT csv, HEADER true)";
    let mut answers = Vec::new();
    // On the plain database the key is the table's own.
    let plain_create = CREATE.replace("BIGINT", "BIGINT GENERATED BY DEFAULT AS IDENTITY");
    for (client, create) in [(&through, CREATE), (&plain, plain_create.as_str())] {
        client.batch_execute(create).await.unwrap();
        let count = async || -> i64 {
            let row = client.query_one("SELECT COUNT(*) FROM t_order", &[]);
            row.await.unwrap().get(0)
        };
        let mut answer = vec![
            format!("{:?}", copy(client, text_sql, &text).await),
            format!("{:?}", copy(client, csv_sql, &csv).await),
            count().await.to_string(),
            format!("{:?}", copy(client, text_sql, &bad).await.is_err()),
            count().await.to_string(),
        ];
        client.batch_execute("BEGIN").await.unwrap();
        answer.push(format!("{:?}", copy(client, text_sql, &text).await));
        answer.push(format!("{:?}", copy(client, text_sql, &bad).await.is_err()));
        let failed = client.query_one("SELECT 1", &[]).await.unwrap_err();
        answer.push(format!("{:?}", failed.code()));
        client.batch_execute("ROLLBACK").await.unwrap();
        answer.push(count().await.to_string());
        answers.push(answer);
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(answers[0][2], "15000");
    let rows = stored(&through).await;
    assert_eq!(placed(&shards, &rows).await.len(), 15_000);
    proxy.stop().await;
    shards.cleanup().await;
    plain_db.cleanup().await;
}
