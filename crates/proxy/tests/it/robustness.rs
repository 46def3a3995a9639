//! Bad clients hurt only themselves: malformed or oversized packets close that connection,
//! and a client that leaves mid-statement gives back its shard connections.

use crate::common;

use std::time::{Duration, Instant};

use crate::common::{Proxy, Shards, mysql_code};
use sqlx::mysql::MySqlConnection;
use sqlx::{Connection, Executor};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One test at a time: several measure this process's memory, which a neighbour's work would
/// disturb.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

async fn insert_works(proxy: &Proxy) {
    let mut conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    let done = sqlx::raw_sql("INSERT INTO t_order (user_id) VALUES (1)")
        .execute(&mut conn)
        .await
        .unwrap();
    assert_eq!(done.rows_affected(), 1);
    conn.close().await.unwrap();
}

/// Reads until the server closes the connection; errors count as closed too.
async fn closed(stream: &mut TcpStream) -> bool {
    let mut buf = vec![0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
            Err(_) => return false,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_and_oversized_packets_close_only_their_connection() {
    let _serial = SERIAL.lock().await;
    let shards = Shards::sqlite();
    let proxy = Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let mut conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    conn.execute(CREATE).await.unwrap();

    // Garbage instead of a handshake response.
    let mut garbage = TcpStream::connect(proxy.address).await.unwrap();
    garbage
        .write_all(&[5, 0, 0, 1, 0xff, 0xfe, 0xfd, 0xfc, 0xfb])
        .await
        .unwrap();
    assert!(closed(&mut garbage).await);

    // A payload over the 64 MiB limit, in maximal continuation packets.
    let mut huge = TcpStream::connect(proxy.address).await.unwrap();
    let chunk = vec![b'x'; 0xFF_FFFF];
    let mut refused = false;
    for sequence in 1..=5u8 {
        let header = [0xff, 0xff, 0xff, sequence];
        if huge.write_all(&header).await.is_err() || huge.write_all(&chunk).await.is_err() {
            refused = true;
            break;
        }
    }
    assert!(refused || closed(&mut huge).await);

    // The established connection and new ones still work.
    conn.execute("INSERT INTO t_order (user_id) VALUES (2)")
        .await
        .unwrap();
    insert_works(&proxy).await;
    conn.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaving_mid_statement_gives_its_shard_connections_back() {
    let _serial = SERIAL.lock().await;
    let shards = Shards::sqlite();
    // One connection per shard: a leaked one would starve every later statement.
    let yaml = common::yaml(&shards.url(0), &shards.url(1)).replace(
        "url: sqlite",
        "maxPoolSize: 1\n    connectionTimeoutMilliseconds: 3000\n    url: sqlite",
    );
    let proxy = Proxy::start(&yaml).await;
    let mut conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    conn.execute(CREATE).await.unwrap();
    conn.close().await.unwrap();
    for _ in 0..5 {
        let mut leaving = MySqlConnection::connect(&proxy.url("root", "root"))
            .await
            .unwrap();
        // Send a statement touching both shards and hang up before its answer.
        let statement = leaving.execute("INSERT INTO t_order (user_id) VALUES (1), (2), (3), (4)");
        let _ = tokio::time::timeout(Duration::from_micros(50), statement).await;
        drop(leaving);
    }
    for _ in 0..3 {
        insert_works(&proxy).await;
    }
    proxy.stop().await;
    shards.cleanup().await;
}

/// `WHERE order_id = 0 OR order_id = 1 OR …` with `terms` terms.
fn or_chain(terms: usize) -> String {
    let terms: Vec<String> = (0..terms).map(|i| format!("order_id = {i}")).collect();
    format!("SELECT order_id FROM t_order WHERE {}", terms.join(" OR "))
}

fn plus_chain(terms: usize) -> String {
    format!("SELECT 1{}", " + 1".repeat(terms))
}

/// Long operator chains used to overflow the serving thread's stack and abort the process:
/// now they get a syntax error, through every path, and the connection and process go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_chains_get_an_error_not_a_crash() {
    let _serial = SERIAL.lock().await;
    let shards = Shards::sqlite();
    let proxy = Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let mut conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    conn.execute(CREATE).await.unwrap();
    for sql in [or_chain(10_000), plus_chain(100_000)] {
        // Text protocol, and prepared (COM_STMT_PREPARE).
        let text = sqlx::raw_sql(&sql).fetch_all(&mut conn).await.unwrap_err();
        let prepared = sqlx::query(&sql).fetch_all(&mut conn).await.unwrap_err();
        for error in [text, prepared] {
            let code = error
                .as_database_error()
                .and_then(|d| d.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
                .map(|d| d.number());
            assert_eq!(code, Some(1064), "{error}");
            assert!(error.to_string().contains("too complex"), "{error}");
        }
    }
    // Chains at the edge of the budget (each term an OR and a comparison) still run, routed
    // by their alternatives: equalities, and ranges (read apart from the rest of a condition,
    // whose every level they would otherwise widen).
    let ranges = or_chain(keyshard_router::MAX_OPERATOR_CHAIN / 2 - 1).replace(" = ", " > ");
    for sql in [
        or_chain(keyshard_router::MAX_OPERATOR_CHAIN / 2 - 1),
        ranges,
    ] {
        let rows = sqlx::raw_sql(&sql).fetch_all(&mut conn).await.unwrap();
        assert!(rows.is_empty());
    }
    conn.close().await.unwrap();
    insert_works(&proxy).await;
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_chains_get_an_error_not_a_crash_on_postgresql() {
    let _serial = SERIAL.lock().await;
    let (shards, proxy) = common::postgres::on_sqlite(false).await;
    let client = proxy.client().await;
    client.batch_execute(CREATE).await.unwrap();
    for sql in [or_chain(10_000), plus_chain(100_000)] {
        // Simple query, and Parse (the extended protocol).
        let simple = client.simple_query(&sql).await.unwrap_err();
        let parsed = client.prepare(&sql).await.unwrap_err();
        for error in [simple, parsed] {
            assert_eq!(
                error.code(),
                Some(&tokio_postgres::error::SqlState::SYNTAX_ERROR),
                "{error:?}"
            );
        }
    }
    assert!(client.query(&or_chain(200), &[]).await.unwrap().is_empty());
    proxy.stop().await;
    shards.cleanup().await;
}

/// Fails when this process's resident memory grew by `limit_mib` or more since `before`.
fn assert_grew_less_than(before: u64, limit_mib: u64) {
    let now = rss_kib();
    assert!(
        now < before + limit_mib * 1024,
        "resident memory {before} KiB → {now} KiB"
    );
}

/// This process's resident memory in KiB (the proxy runs in-process).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// A 30-byte Parse naming parameter $99999999999 used to grow a parameter list without bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_parameter_number_is_refused_without_allocating_for_it() {
    let _serial = SERIAL.lock().await;
    let (shards, proxy) = common::postgres::on_sqlite(false).await;
    let client = proxy.client().await;
    client.batch_execute(CREATE).await.unwrap();
    let before = rss_kib();
    for sql in [
        "SELECT $99999999999",
        "SELECT $65536",
        "SELECT * FROM t_order WHERE order_id = $4294967296",
    ] {
        let error = client.prepare(sql).await.unwrap_err();
        assert_eq!(
            error.code(),
            Some(&tokio_postgres::error::SqlState::UNDEFINED_PARAMETER),
            "{sql}: {error:?}"
        );
        // As text the shard decides (SQLite binds a missing parameter as NULL); only the
        // memory matters here.
        let _ = client.simple_query(sql).await;
    }
    assert_grew_less_than(before, 100);
    // The session goes on; the largest allowed number is fine to name.
    assert!(client.prepare("SELECT $65535::int").await.is_ok());
    assert!(
        client
            .query("SELECT order_id FROM t_order", &[])
            .await
            .unwrap()
            .is_empty()
    );
    proxy.stop().await;
    shards.cleanup().await;
}

/// Before login a client that announces a 16 MiB packet is closed at once, and one that
/// announces a packet it never sends costs only what it sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_cannot_make_the_proxy_allocate_before_login() {
    let _serial = SERIAL.lock().await;
    let shards = Shards::sqlite();
    let proxy = Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let mut conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    conn.execute(CREATE).await.unwrap();
    let before = rss_kib();
    let mut announced_huge = Vec::new();
    let mut announced_small = Vec::new();
    for i in 0..60 {
        let mut stream = TcpStream::connect(proxy.address).await.unwrap();
        let mut greeting = vec![0u8; 1024];
        let _ = stream.read(&mut greeting).await.unwrap();
        if i % 2 == 0 {
            stream.write_all(&[0xff, 0xff, 0xff, 0x01]).await.unwrap();
            announced_huge.push(stream);
        } else {
            // 60 KiB announced, 10 bytes sent, then silence.
            stream.write_all(&[0x00, 0xf0, 0x00, 0x01]).await.unwrap();
            stream.write_all(&[0u8; 10]).await.unwrap();
            announced_small.push(stream);
        }
    }
    for mut stream in announced_huge {
        assert!(
            closed(&mut stream).await,
            "a 16 MiB header before login was accepted"
        );
    }
    assert_grew_less_than(before, 50);
    drop(announced_small);
    // Everyone else is served as before.
    insert_works(&proxy).await;
    conn.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

/// Before login a PostgreSQL client may send only small messages; one announcing 60 MiB is
/// refused at once, and nothing is allocated for bytes that never come.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgresql_strangers_cannot_make_the_proxy_allocate_before_login() {
    let _serial = SERIAL.lock().await;
    let (shards, proxy) = common::postgres::on_sqlite(false).await;
    let before = rss_kib();
    let mut huge = Vec::new();
    for _ in 0..60 {
        let mut stream = TcpStream::connect(proxy.address).await.unwrap();
        // StartupMessage: protocol 3.0, user root.
        let body = b"\x00\x03\x00\x00user\x00root\x00\x00";
        let mut startup = ((body.len() + 4) as u32).to_be_bytes().to_vec();
        startup.extend_from_slice(body);
        stream.write_all(&startup).await.unwrap();
        let mut answer = vec![0u8; 1024];
        let _ = stream.read(&mut answer).await.unwrap(); // AuthenticationSASL
        // A password message announcing 60 MiB, with 10 bytes of it.
        stream.write_all(b"p\x03\xc0\x00\x00").await.unwrap();
        stream.write_all(&[0u8; 10]).await.unwrap();
        huge.push(stream);
    }
    for mut stream in huge {
        assert!(
            closed(&mut stream).await,
            "a 60 MiB message before login was accepted"
        );
    }
    assert_grew_less_than(before, 50);
    let client = proxy.client().await;
    client.batch_execute(CREATE).await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

fn idle_limited(yaml: &str) -> String {
    yaml.replace(
        "props:\n  sql-show: false",
        "props:\n  sql-show: false\n  idle-in-transaction-timeout-milliseconds: 300",
    )
}

/// A client idle inside a transaction past the limit is disconnected and rolled back; one idle
/// outside a transaction is left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_in_transaction_clients_are_disconnected_and_rolled_back() {
    let _serial = SERIAL.lock().await;
    let shards = Shards::sqlite();
    let yaml = idle_limited(&common::yaml(&shards.url(0), &shards.url(1)));
    assert!(yaml.contains("idle-in-transaction"));
    let proxy = Proxy::start(&yaml).await;
    let mut idle = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    idle.execute(CREATE).await.unwrap();
    let mut holder = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    holder.execute("BEGIN").await.unwrap();
    holder
        .execute("INSERT INTO t_order (order_id, user_id) VALUES (1, 1)")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(holder.execute("COMMIT").await.is_err(), "still connected");
    // Outside a transaction, idleness is fine; the rolled-back row is not there.
    let rows = sqlx::raw_sql("SELECT order_id FROM t_order")
        .fetch_all(&mut idle)
        .await
        .unwrap();
    assert!(rows.is_empty());
    idle.close().await.unwrap();
    proxy.stop().await;

    let pg_shards = common::postgres::PgShards::sqlite();
    let pg = common::postgres::PgProxy::start(&idle_limited(&common::postgres::yaml(
        &pg_shards.url(0),
        &pg_shards.url(1),
        false,
    )))
    .await;
    let client = pg.client().await;
    client.batch_execute(CREATE).await.unwrap();
    let holder = pg.client().await;
    holder
        .batch_execute("BEGIN; INSERT INTO t_order (order_id, user_id) VALUES (1, 1)")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(
        holder.batch_execute("COMMIT").await.is_err(),
        "still connected"
    );
    assert!(
        client
            .query("SELECT order_id FROM t_order", &[])
            .await
            .unwrap()
            .is_empty()
    );
    pg.stop().await;
    shards.cleanup().await;
    pg_shards.cleanup().await;
}

/// Sockets that never log in do not hold a shutdown back: it completes long before the
/// 30-second drain that running statements get.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_still_logging_in_do_not_delay_shutdown() {
    let _serial = SERIAL.lock().await;
    let (shards, proxy) = common::postgres::on_sqlite(true).await;
    let mut mysql = TcpStream::connect(proxy.mysql_address.expect("a MySQL listener"))
        .await
        .unwrap();
    let mut greeting = vec![0u8; 1024];
    let _ = mysql.read(&mut greeting).await.unwrap();
    let postgres = TcpStream::connect(proxy.address).await.unwrap();
    let stopped = tokio::time::timeout(Duration::from_secs(10), proxy.stop()).await;
    assert!(
        stopped.is_ok(),
        "shutdown waited for clients that never logged in"
    );
    assert!(closed(&mut mysql).await);
    drop(postgres);
    shards.cleanup().await;
}

/// A bulk load whose rows fold into one shape is reserved for what binding it by its shape
/// takes, not for parsing every value: with an 8 MiB limit per statement, a 4,000-row INSERT
/// (12 MiB if parsed) runs, as a new shape and again as a known one, while the same rows
/// unlike one another (so parsed whole) are refused with MySQL's out-of-memory error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_load_is_reserved_for_its_shape_not_for_a_parse() {
    let _serial = SERIAL.lock().await;
    let shards = Shards::sqlite();
    let yaml = common::yaml(&shards.url(0), &shards.url(1)).replace(
        "props:\n  sql-show: false",
        "props:\n  sql-show: false\n  statement-memory-bytes: 8388608",
    );
    assert!(yaml.contains("statement-memory-bytes"));
    let proxy = Proxy::start(&yaml).await;
    let mut conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    conn.execute(CREATE).await.unwrap();
    const ROWS: usize = 4_000;
    let alike: Vec<String> = (1..=ROWS).map(|i| format!("({i}, 'status1')")).collect();
    let bulk = format!(
        "INSERT INTO t_order (user_id, status) VALUES {}",
        alike.join(", ")
    );
    for _ in 0..2 {
        let done = sqlx::raw_sql(&bulk).execute(&mut conn).await.unwrap();
        assert_eq!(done.rows_affected(), ROWS as u64);
    }
    // Every other row spaced differently: the rows do not fold, and the statement is parsed.
    let unlike: Vec<String> = (1..=ROWS)
        .map(|i| match i % 2 {
            0 => format!("({i}, 'status1')"),
            _ => format!("({i},'status1')"),
        })
        .collect();
    let parsed = format!(
        "INSERT INTO t_order (user_id, status) VALUES {}",
        unlike.join(", ")
    );
    let error = sqlx::raw_sql(&parsed).execute(&mut conn).await.unwrap_err();
    assert_eq!(mysql_code(&error), Some(1037), "{error}");
    // Nothing of it was stored, and the session goes on.
    let mut stored = 0;
    for ds in 0..2 {
        for table in 0..2 {
            stored += shards.ids(ds, table).await.len();
        }
    }
    assert_eq!(stored, 2 * ROWS);
    assert_eq!(
        sqlx::raw_sql("INSERT INTO t_order (user_id) VALUES (1)")
            .execute(&mut conn)
            .await
            .unwrap()
            .rows_affected(),
        1
    );
    conn.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

/// Logged-in sessions are closed at shutdown too, without waiting out the drain: an idle one
/// on each frontend, and one on each that sends statements without a pause.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_idle_and_busy_sessions_without_the_drain() {
    let _serial = SERIAL.lock().await;
    let (shards, proxy) = common::postgres::on_sqlite(true).await;
    let mysql_url = format!(
        "mysql://root:root@{}/sharding_db",
        proxy.mysql_address.expect("a MySQL listener")
    );
    let idle_mysql = MySqlConnection::connect(&mysql_url).await.unwrap();
    let idle_pg = proxy.client().await;
    let mut busy_mysql = MySqlConnection::connect(&mysql_url).await.unwrap();
    let busy_mysql = tokio::spawn(async move {
        let mut answered = 0u64;
        while busy_mysql.execute("SELECT 1").await.is_ok() {
            answered += 1;
        }
        answered
    });
    let busy_pg = proxy.client().await;
    let busy_pg = tokio::spawn(async move {
        let mut answered = 0u64;
        while busy_pg.simple_query("SELECT 1").await.is_ok() {
            answered += 1;
        }
        answered
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stopped = tokio::time::timeout(Duration::from_secs(10), proxy.stop()).await;
    assert!(
        stopped.is_ok(),
        "shutdown waited out the drain for logged-in sessions"
    );
    for busy in [busy_mysql, busy_pg] {
        let answered = tokio::time::timeout(Duration::from_secs(10), busy)
            .await
            .expect("a busy session outlived the shutdown")
            .unwrap();
        assert!(answered > 0, "the busy session was never answered");
    }
    assert!(idle_pg.is_closed() || idle_pg.simple_query("SELECT 1").await.is_err());
    let mut idle_mysql = idle_mysql;
    assert!(idle_mysql.execute("SELECT 1").await.is_err());
    shards.cleanup().await;
}

/// Five wrong passwords lock the user out from that address for a second, doubling with each
/// further failure: even the right password is refused meanwhile, with a clear error, and
/// gets in once the lockout has run out. A loaded machine may take longer than the first
/// second between two attempts, so the test fails on until it is locked out (each failure
/// after a lockout doubles the next) and waits for the end of the lockout by trying again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_failed_logins_are_throttled_on_both_ports() {
    let _serial = SERIAL.lock().await;
    let (shards, proxy) = common::postgres::on_sqlite(true).await;
    let mysql = |password: &str| {
        format!(
            "mysql://root:{password}@{}/sharding_db",
            proxy.mysql_address.expect("a MySQL listener")
        )
    };
    let mysql_refusal = |error: &sqlx::Error| match mysql_code(error) {
        Some(1045) => false,
        Some(1129) if error.to_string().contains("too many failed logins") => true,
        _ => panic!("neither a wrong password nor a lockout: {error}"),
    };
    for _ in 0..5 {
        let error = MySqlConnection::connect(&mysql("wrong")).await.unwrap_err();
        assert!(!mysql_refusal(&error), "locked out within five failures");
    }
    let mut locked = false;
    for _ in 0..4 {
        let error = MySqlConnection::connect(&mysql("wrong")).await.unwrap_err();
        if mysql_refusal(&error) {
            locked = true;
            break;
        }
    }
    assert!(locked, "four more wrong passwords were never locked out");
    let error = MySqlConnection::connect(&mysql("root")).await.unwrap_err();
    assert!(mysql_refusal(&error), "{error}");
    // Refused attempts do not extend the lockout: the right password gets in once it ran out.
    let started = Instant::now();
    loop {
        match MySqlConnection::connect(&mysql("root")).await {
            Ok(conn) => break conn.close().await.unwrap(),
            Err(error) => assert!(mysql_refusal(&error), "{error}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "locked out for good"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let pg_refusal = |error: &tokio_postgres::Error| match error.code() {
        Some(&tokio_postgres::error::SqlState::INVALID_PASSWORD) => false,
        Some(&tokio_postgres::error::SqlState::INVALID_AUTHORIZATION_SPECIFICATION) => true,
        _ => panic!("neither a wrong password nor a lockout: {error}"),
    };
    for _ in 0..5 {
        let error = common::postgres::connect(&proxy.config("root", "wrong"))
            .await
            .unwrap_err();
        assert!(!pg_refusal(&error), "locked out within five failures");
    }
    let mut locked = false;
    for _ in 0..4 {
        let error = common::postgres::connect(&proxy.config("root", "wrong"))
            .await
            .unwrap_err();
        if pg_refusal(&error) {
            locked = true;
            break;
        }
    }
    assert!(locked, "four more wrong passwords were never locked out");
    let error = common::postgres::connect(&proxy.config("root", "root"))
        .await
        .unwrap_err();
    assert!(pg_refusal(&error), "{error}");
    let started = Instant::now();
    loop {
        match common::postgres::connect(&proxy.config("root", "root")).await {
            Ok(_) => break,
            Err(error) => assert!(pg_refusal(&error), "{error}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "locked out for good"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    proxy.stop().await;
    shards.cleanup().await;
}

/// Sockets that never log in cannot keep real clients out: beyond
/// `max-unauthenticated-connections-per-address` from one address a new connection is told
/// "too many connections" at once (MySQL's 1040 in place of the greeting, PostgreSQL's
/// 53300), clients from another address still get in, and once the silent sockets go, so do
/// clients from theirs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_that_never_log_in_cannot_keep_real_clients_out() {
    let _serial = SERIAL.lock().await;
    let shards = common::postgres::PgShards::sqlite();
    let yaml = common::postgres::yaml(&shards.url(0), &shards.url(1), true).replace(
        "props:\n  sql-show: false\n",
        "props:\n  sql-show: false\n  max-unauthenticated-connections-per-address: 8\n  max-unauthenticated-connections: 12\n",
    );
    let proxy = common::postgres::PgProxy::start(&yaml).await;
    let mysql_address = proxy.mysql_address.expect("a MySQL listener");
    let mut silent = Vec::new();
    for _ in 0..8 {
        let mut stream = TcpStream::connect(mysql_address).await.unwrap();
        // The greeting arrived: the connection is the proxy's, waiting for a login.
        let mut greeting = [0u8; 5];
        stream.read_exact(&mut greeting).await.unwrap();
        assert_eq!(greeting[4], 10, "protocol version 10");
        silent.push(stream);
    }
    // The ninth from the same address: an ERR packet, 1040, then the end.
    let error = MySqlConnection::connect(&format!("mysql://root:root@{mysql_address}/sharding_db"))
        .await
        .unwrap_err();
    assert_eq!(mysql_code(&error), Some(1040), "{error}");
    let error = common::postgres::connect(&proxy.config("root", "root"))
        .await
        .unwrap_err();
    assert_eq!(
        error.code(),
        Some(&tokio_postgres::error::SqlState::TOO_MANY_CONNECTIONS),
        "{error}"
    );
    // Another address is let in.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
    let mut other = socket.connect(mysql_address).await.unwrap();
    let mut greeting = [0u8; 5];
    other.read_exact(&mut greeting).await.unwrap();
    assert_eq!(greeting[4], 10, "another address gets the greeting");
    drop(other);
    // The silent sockets gone, their address logs in again.
    drop(silent);
    let mut connected = None;
    for _ in 0..50 {
        match MySqlConnection::connect(&format!("mysql://root:root@{mysql_address}/sharding_db"))
            .await
        {
            Ok(conn) => {
                connected = Some(conn);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    connected
        .expect("a login after the silent sockets closed")
        .close()
        .await
        .unwrap();
    assert!(
        common::postgres::connect(&proxy.config("root", "root"))
            .await
            .is_ok()
    );
    proxy.stop().await;
    shards.cleanup().await;
}
