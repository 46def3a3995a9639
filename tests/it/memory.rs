//! A statement too big for the proxy's memory is refused before it is parsed, on both
//! frontends, and the process stays small: `keyshard serve` runs as its own process here so
//! that its peak resident memory (VmHWM) is its alone.

use std::time::{Duration, Instant};

use crate::common::{Serving, TempDir, default_without_mode, free_port, serve};
use sqlx::Connection;
use sqlx::mysql::MySqlConnection;
use sqlx::postgres::PgConnection;

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

/// The shipped configuration on SQLite files in `dir`, with both frontends.
fn start(dir: &TempDir) -> (Serving, u16, u16) {
    start_with(dir, "")
}

/// [`start`], with `props` (YAML lines) added to the configuration's. The coordination
/// repository gets a SQLite file of its own: in ds_0's, a load's long transaction would hold
/// the write lock the lease renewals need.
fn start_with(dir: &TempDir, props: &str) -> (Serving, u16, u16) {
    let (mysql, postgres) = (free_port(), free_port());
    let mode = format!(
        "mode:\n  type: Standalone\n  repository:\n    type: JDBC\n    props:\n      \
         jdbc_url: sqlite://{}/coordination.db\n",
        dir.0.display()
    );
    let yaml = mode
        + &default_without_mode()
        .replacen("props:\n", &format!("props:\n{props}"), 1)
        // A user without a password, for the hand-written client.
        .replacen(
            "      password: root\n",
            "      password: root\n    - user: open@%\n      password: ''\n",
            1,
        )
        .replace("sqlite://../data/", &format!("sqlite://{}/", dir.0.display()))
        .replace(
            "  mysql:\n    listen: 127.0.0.1:3307",
            &format!(
                "  mysql:\n    listen: 127.0.0.1:{mysql}\n  postgres:\n    listen: 127.0.0.1:{postgres}"
            ),
        );
    let path = dir.0.join("keyshard.yaml");
    std::fs::write(&path, yaml).unwrap();
    (serve(&path), mysql, postgres)
}

async fn retry<C, F: Future<Output = Result<C, sqlx::Error>>>(connect: impl Fn() -> F) -> C {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match connect().await {
            Ok(conn) => return conn,
            Err(e) if Instant::now() > deadline => panic!("{e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// The peak resident memory of process `pid`, in MiB.
fn peak_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib / 1024
}

const INSERT: &str = "INSERT INTO t_order (user_id, status) VALUES ";

/// A multi-row INSERT of about `mib` MiB.
fn insert_of(mib: usize) -> String {
    let mut sql = String::from(INSERT);
    let mut i = 0;
    while sql.len() < mib << 20 {
        if i > 0 {
            sql.push(',');
        }
        sql.push_str(&format!("({},'s{}')", i % 1000, i % 7));
        i += 1;
    }
    sql
}

/// A connection to either frontend.
enum Client {
    MySql(MySqlConnection),
    Postgres(PgConnection),
}

impl Client {
    async fn connect(frontend: &str, mysql_port: u16, pg_port: u16) -> Self {
        if frontend == "mysql" {
            let url = format!("mysql://root:root@127.0.0.1:{mysql_port}/sharding_db");
            Client::MySql(retry(|| MySqlConnection::connect(&url)).await)
        } else {
            let url = format!("postgres://root:root@127.0.0.1:{pg_port}/sharding_db");
            Client::Postgres(retry(|| PgConnection::connect(&url)).await)
        }
    }

    /// Runs `sql` as text; the rows it changed.
    async fn run(&mut self, sql: &str) -> Result<u64, sqlx::Error> {
        Ok(match self {
            Client::MySql(c) => sqlx::raw_sql(sql).execute(c).await?.rows_affected(),
            Client::Postgres(c) => sqlx::raw_sql(sql).execute(c).await?.rows_affected(),
        })
    }

    /// The length of each column's name in `sql`'s answer: characters on MySQL, bytes on
    /// PostgreSQL, as each database counts its limit.
    async fn name_lengths(&mut self, sql: &str) -> Vec<usize> {
        use sqlx::{Column, Row};
        match self {
            Client::MySql(c) => {
                let row = sqlx::raw_sql(sql).fetch_one(c).await.unwrap();
                row.columns()
                    .iter()
                    .map(|c| c.name().chars().count())
                    .collect()
            }
            Client::Postgres(c) => {
                let row = sqlx::raw_sql(sql).fetch_one(c).await.unwrap();
                row.columns().iter().map(|c| c.name().len()).collect()
            }
        }
    }

    /// INSERTs row `id` with a status of `mib` MiB, bound as a parameter.
    async fn insert_long(&mut self, id: i64, mib: usize) -> Result<(), sqlx::Error> {
        let value = "x".repeat(mib << 20);
        let sql = "INSERT INTO t_order (order_id, user_id, status) VALUES ";
        match self {
            Client::MySql(c) => sqlx::query(&format!("{sql}(?, 1, ?)"))
                .bind(id)
                .bind(value)
                .execute(c)
                .await
                .map(|_| ()),
            Client::Postgres(c) => sqlx::query(&format!("{sql}($1, 1, $2)"))
                .bind(id)
                .bind(value)
                .execute(c)
                .await
                .map(|_| ()),
        }
    }

    async fn count(&mut self) -> i64 {
        let sql = "SELECT COUNT(*) FROM t_order";
        match self {
            Client::MySql(c) => sqlx::query_scalar(sql).fetch_one(c).await.unwrap(),
            Client::Postgres(c) => sqlx::query_scalar(sql).fetch_one(c).await.unwrap(),
        }
    }
}

/// Sends a 63 MiB INSERT to a fresh proxy on `frontend`, which must refuse it with `code`
/// and stay under 200 MiB, then a 4,000-row INSERT on the same connection, which works.
async fn refused_in_little_memory(frontend: &str, code: &str) {
    let dir = TempDir::new(&format!("memory_{frontend}"));
    let (server, mysql_port, pg_port) = start(&dir);
    let pid = server.id();
    let mut client = Client::connect(frontend, mysql_port, pg_port).await;
    client.run(CREATE).await.unwrap();

    // Just under the 64 MiB packet limit.
    let error = client.run(&insert_of(63)).await.unwrap_err();
    let error = error.as_database_error().unwrap();
    let got = match error.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>() {
        Some(mysql) => mysql.number().to_string(),
        None => error.code().unwrap_or_default().into_owned(),
    };
    assert_eq!(got, code, "{error}");
    assert!(
        error.message().contains("statement-memory-bytes"),
        "{error}"
    );
    assert!(
        peak_mib(pid) < 200,
        "peak resident memory {} MiB",
        peak_mib(pid)
    );

    // The connection goes on, and a bulk INSERT within the limit works.
    let bulk = format!("{INSERT}{}", vec!["(1,'a')"; 4000].join(","));
    assert_eq!(client.run(&bulk).await.unwrap(), 4000);
    assert_eq!(client.count().await, 4000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_too_big_for_memory_is_refused_on_the_mysql_frontend() {
    refused_in_little_memory("mysql", "1037").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_too_big_for_memory_is_refused_on_the_postgresql_frontend() {
    refused_in_little_memory("postgres", "53200").await;
}

/// The first column of the one row `sql` answers, as text.
async fn mysql_answer(conn: &mut MySqlConnection, sql: &str) -> String {
    use sqlx::Row;
    let row = sqlx::raw_sql(sql).fetch_one(conn).await.unwrap();
    row.try_get::<i64, _>(0)
        .map(|n| n.to_string())
        .or_else(|_| row.try_get::<String, _>(0))
        .unwrap()
}

/// The code of a refusal, as either frontend gives it.
fn code_of(error: &sqlx::Error) -> String {
    let error = error.as_database_error().unwrap();
    match error.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>() {
        Some(mysql) => mysql.number().to_string(),
        None => error.code().unwrap_or_default().into_owned(),
    }
}

/// User variables of 2 MB each (MySQL): the session keeps at most 64 MiB of them, the
/// one that does not fit is refused with 1037, and the session goes on with what it kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_variables_are_kept_within_the_session_limit() {
    let dir = TempDir::new("memory_variables");
    let (server, mysql_port, pg_port) = start(&dir);
    let Client::MySql(mut conn) = Client::connect("mysql", mysql_port, pg_port).await else {
        unreachable!()
    };
    let idle = peak_mib(server.id());
    let value = "x".repeat(2 << 20);
    let mut refused = None;
    for i in 0..100 {
        let sql = format!("SET @v{i} = '{value}'");
        if let Err(e) = sqlx::raw_sql(&sql).execute(&mut conn).await {
            refused = Some((i, e));
            break;
        }
    }
    let (refused_at, error) = refused.expect("refused");
    assert_eq!(code_of(&error), "1037", "{error}");
    assert!(
        error.to_string().contains("session-memory-bytes"),
        "{error}"
    );
    assert!((25..=32).contains(&refused_at), "refused at {refused_at}");
    let kept = mysql_answer(&mut conn, "SELECT LENGTH(@v0)").await;
    assert_eq!(kept, (2 << 20).to_string());
    let peak = peak_mib(server.id());
    assert!(peak - idle < 200, "idle {idle} MiB, peak {peak} MiB");
}

/// Named prepared statements of 6 MB each (PostgreSQL's Parse, as sqlx prepares every
/// statement): refused with 53200 once the session keeps its limit, and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_are_kept_within_the_session_limit() {
    let dir = TempDir::new("memory_prepared");
    let (server, mysql_port, pg_port) = start(&dir);
    let Client::Postgres(mut conn) = Client::connect("postgres", mysql_port, pg_port).await else {
        unreachable!()
    };
    let idle = peak_mib(server.id());
    let value = "x".repeat(6 << 20);
    let mut refused = None;
    for i in 0..30 {
        let sql = format!("SELECT {i} AS n, '{value}' AS v");
        if let Err(e) = sqlx::query(&sql).fetch_one(&mut conn).await {
            refused = Some((i, e));
            break;
        }
    }
    let (refused_at, error) = refused.expect("refused");
    assert_eq!(code_of(&error), "53200", "{error}");
    assert!(
        error.to_string().contains("session-memory-bytes"),
        "{error}"
    );
    assert!((2..=4).contains(&refused_at), "refused at {refused_at}");
    let one: i32 = sqlx::query_scalar("SELECT 1")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(one, 1);
    let peak = peak_mib(server.id());
    assert!(peak - idle < 200, "idle {idle} MiB, peak {peak} MiB");
}

/// Six statements of one 8 MB quoted name at once, on both frontends under a 128 MiB
/// budget: each is answered with its column name cut as the database cuts it, the estimate
/// makes them take turns, and the proxy stays within 200 MiB above idle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_names_take_turns_within_the_budget() {
    let dir = TempDir::new("memory_names");
    let (server, mysql_port, pg_port) = start_with(&dir, "  memory-budget-bytes: 134217728\n");
    let mut first = Client::connect("mysql", mysql_port, pg_port).await;
    assert_eq!(first.name_lengths("SELECT 1 AS n").await, [1]);
    let idle = peak_mib(server.id());
    let long = "x".repeat(8 << 20);
    let statements = [
        ("mysql", format!("SELECT 1 AS `{long}`"), 255),
        ("postgres", format!("SELECT 1 AS \"{long}\""), 63),
    ];
    // On this thread: sqlx's connections' futures are not `Send` for `tokio::spawn`.
    let local = tokio::task::LocalSet::new();
    for (frontend, sql, name) in statements.iter().flat_map(|s| [s, s, s]).cloned() {
        local.spawn_local(async move {
            let mut client = Client::connect(frontend, mysql_port, pg_port).await;
            assert_eq!(client.name_lengths(&sql).await, [name], "{frontend}");
        });
    }
    local.await;
    let peak = peak_mib(server.id());
    assert!(peak - idle < 200, "idle {idle} MiB, peak {peak} MiB");
}

/// A 12 MiB COPY (about a million rows) goes in as it arrives, a batch at a time: all of it is
/// stored and the proxy stays within 200 MiB above idle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_copy_is_loaded_in_little_memory() {
    let dir = TempDir::new("memory_copy");
    let (server, mysql_port, pg_port) = start(&dir);
    let Client::Postgres(mut conn) = Client::connect("postgres", mysql_port, pg_port).await else {
        unreachable!()
    };
    sqlx::raw_sql(CREATE).execute(&mut conn).await.unwrap();
    let idle = peak_mib(server.id());
    let mut copy = conn
        .copy_in_raw("COPY t_order (user_id, status) FROM STDIN")
        .await
        .unwrap();
    let (mut sent, mut rows) = (0, 0);
    while sent < 12 << 20 {
        let chunk: String = (0..10_000)
            .map(|i| format!("{}\tstatus{}\n", (rows + i) % 1000, i % 7))
            .collect();
        sent += chunk.len();
        rows += 10_000;
        copy.send(chunk.as_bytes()).await.unwrap();
    }
    assert_eq!(copy.finish().await.unwrap(), rows);
    let mut client = Client::Postgres(conn);
    assert_eq!(client.count().await, rows as i64);
    let peak = peak_mib(server.id());
    assert!(peak - idle < 200, "idle {idle} MiB, peak {peak} MiB");
}

/// Rows of one node's actual table, straight into its SQLite file: `per_table` rows of a
/// 1,000-character status, with keys and user ids that route where they lie.
async fn fill_shards(dir: &TempDir, per_table: u32) {
    use sqlx::sqlite::SqliteConnection;
    for (k, data_source) in ["ds_0", "ds_1"].iter().enumerate() {
        let url = format!("sqlite://{}/{data_source}.db", dir.0.display());
        let mut conn = SqliteConnection::connect(&url).await.unwrap();
        for j in 0..2 {
            let sql = format!(
                "INSERT INTO t_order_{j} (order_id, user_id, status) \
                 WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last}) \
                 SELECT i * 4 + {k} * 2 + {j}, {k}, printf('%01000d', i) FROM n",
                last = per_table - 1
            );
            sqlx::raw_sql(&sql).execute(&mut conn).await.unwrap();
        }
    }
}

/// Reads every row as it comes, pausing a second after the first (a slow client); how many
/// there were.
async fn read_slowly<R>(
    mut rows: futures_util::stream::BoxStream<'_, Result<R, sqlx::Error>>,
) -> u64 {
    use futures_util::TryStreamExt;
    let mut count = 0;
    while rows.try_next().await.unwrap().is_some() {
        count += 1;
        if count == 1 {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
    count
}

/// A 200 MB read (200,000 rows over four nodes) goes to the client as the shards send it, in
/// both protocols of both frontends: the proxy holds a few batches of it, not the result, and
/// a client that stops reading for a while stops the shards' reads with it. A read whose rows
/// are merged keeps them within `result-memory-bytes` (16 MiB here) and is refused past it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_read_goes_out_as_it_arrives() {
    let dir = TempDir::new("memory_read");
    let (server, mysql_port, pg_port) = start_with(&dir, "  result-memory-bytes: 16777216\n");
    let Client::MySql(mut mysql) = Client::connect("mysql", mysql_port, pg_port).await else {
        unreachable!()
    };
    let create =
        "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status TEXT)";
    sqlx::raw_sql(create).execute(&mut mysql).await.unwrap();
    fill_shards(&dir, 50_000).await;
    let Client::Postgres(mut pg) = Client::connect("postgres", mysql_port, pg_port).await else {
        unreachable!()
    };
    let idle = peak_mib(server.id());
    let sql = "SELECT order_id, user_id, status FROM t_order";
    // Text and binary protocol, simple and extended.
    let all = 200_000;
    assert_eq!(read_slowly(sqlx::raw_sql(sql).fetch(&mut mysql)).await, all);
    assert_eq!(read_slowly(sqlx::query(sql).fetch(&mut mysql)).await, all);
    assert_eq!(read_slowly(sqlx::raw_sql(sql).fetch(&mut pg)).await, all);
    assert_eq!(read_slowly(sqlx::query(sql).fetch(&mut pg)).await, all);
    // One node's rows, and the connections still serve.
    let one = "SELECT order_id, status FROM t_order WHERE user_id = 1 AND order_id % 2 = 0";
    assert_eq!(
        read_slowly(sqlx::raw_sql(one).fetch(&mut mysql)).await,
        50_000
    );
    assert_eq!(read_slowly(sqlx::query(one).fetch(&mut pg)).await, 50_000);
    // Ordered across nodes: merged, so kept, and refused past the limit; the session goes on.
    let ordered = "SELECT order_id, status FROM t_order ORDER BY order_id";
    let refused = sqlx::raw_sql(ordered)
        .fetch_all(&mut mysql)
        .await
        .unwrap_err();
    assert_eq!(code_of(&refused), "1037");
    let refused = sqlx::query(ordered).fetch_all(&mut pg).await.unwrap_err();
    assert_eq!(code_of(&refused), "53200");
    let mut mysql = Client::MySql(mysql);
    let mut pg = Client::Postgres(pg);
    assert_eq!(mysql.count().await, 200_000);
    assert_eq!(pg.count().await, 200_000);
    let peak = peak_mib(server.id());
    eprintln!("a 200 MB read: idle {idle} MiB, peak {peak} MiB");
    assert!(peak - idle < 64, "idle {idle} MiB, peak {peak} MiB");
}

/// Two fresh databases on the MariaDB or PostgreSQL server of `admin_url`, dropped by
/// [`ServerShards::drop_all`].
struct ServerShards {
    admin: String,
    names: [String; 2],
}

impl ServerShards {
    async fn new(admin: String, tag: &str) -> Self {
        let base = format!("keyshard_{tag}_{}", std::process::id());
        let shards = Self {
            names: [format!("{base}_0"), format!("{base}_1")],
            admin,
        };
        for name in &shards.names {
            shards
                .admin_run(&format!("DROP DATABASE IF EXISTS {name}"))
                .await;
            shards.admin_run(&format!("CREATE DATABASE {name}")).await;
        }
        shards
    }

    async fn admin_run(&self, sql: &str) {
        run_on(&self.admin, sql).await;
    }

    fn url(&self, i: usize) -> String {
        let (server, _) = self.admin.rsplit_once('/').unwrap();
        format!("{server}/{}", self.names[i])
    }

    /// Runs `sql` on shard `i`.
    async fn run(&self, i: usize, sql: &str) {
        run_on(&self.url(i), sql).await;
    }

    async fn drop_all(self) {
        for name in &self.names {
            self.admin_run(&format!("DROP DATABASE IF EXISTS {name}"))
                .await;
        }
    }
}

/// Runs `sql` on the database of `url`, MariaDB or PostgreSQL.
async fn run_on(url: &str, sql: &str) {
    if url.starts_with("mysql:") {
        let mut conn = MySqlConnection::connect(url).await.unwrap();
        sqlx::raw_sql(sql).execute(&mut conn).await.unwrap();
    } else {
        let mut conn = PgConnection::connect(url).await.unwrap();
        sqlx::raw_sql(sql).execute(&mut conn).await.unwrap();
    }
}

/// The shipped configuration over `shards` in `dir`, its frontend (`mysql` or `postgres`)
/// listening on `port`; `props`: YAML lines added to the configuration's.
fn serve_over(
    dir: &TempDir,
    shards: &ServerShards,
    frontend: &str,
    port: u16,
    props: &str,
) -> Serving {
    let yaml = default_without_mode()
        .replacen("props:\n", &format!("props:\n{props}"), 1)
        .replace("sqlite://../data/ds_0.db", &shards.url(0))
        .replace("sqlite://../data/ds_1.db", &shards.url(1))
        .replace(
            "  mysql:\n    listen: 127.0.0.1:3307",
            &format!("  {frontend}:\n    listen: 127.0.0.1:{port}"),
        );
    let path = dir.0.join(format!("keyshard_{frontend}.yaml"));
    std::fs::write(&path, yaml).unwrap();
    serve(&path)
}

/// The 100 MB read of [`a_long_read_goes_out_as_it_arrives`] from MariaDB shards through the
/// MySQL frontend and PostgreSQL shards through the PostgreSQL one, where a data source's two
/// nodes are read with one multi-statement text: the proxy holds a few batches of it. One
/// value of 200 MB from PostgreSQL, or 12 MB from MariaDB, is refused at `max-row-bytes`
/// (8 MiB here) before it is read, and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and PostgreSQL (KEYSHARD_TEST_MYSQL_URL, KEYSHARD_TEST_PG_URL)"]
async fn a_long_read_from_database_servers_goes_out_as_it_arrives() {
    let dir = TempDir::new("memory_servers");
    let create =
        "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status TEXT)";
    let sql = "SELECT order_id, user_id, status FROM t_order";
    let per_table = 25_000;
    for frontend in ["mysql", "postgres"] {
        let admin = match frontend {
            "mysql" => std::env::var("KEYSHARD_TEST_MYSQL_URL"),
            _ => std::env::var("KEYSHARD_TEST_PG_URL"),
        };
        let shards = ServerShards::new(admin.unwrap(), "stream").await;
        let port = free_port();
        let server = serve_over(&dir, &shards, frontend, port, "  max-row-bytes: 8388608\n");
        let mut client = Client::connect(frontend, port, port).await;
        client.run(create).await.unwrap();
        for (k, j) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let rows = match frontend {
                "mysql" => format!("FROM seq_0_to_{}", per_table - 1),
                _ => format!("FROM generate_series(0, {}) AS s(seq)", per_table - 1),
            };
            let fill = format!(
                "INSERT INTO t_order_{j} (order_id, user_id, status) \
                 SELECT seq * 4 + {k} * 2 + {j}, {k}, REPEAT('x', 1000) {rows}"
            );
            shards.run(k, &fill).await;
        }
        let idle = peak_mib(server.id());
        let all = 4 * per_table;
        match &mut client {
            Client::MySql(conn) => {
                assert_eq!(read_slowly(sqlx::raw_sql(sql).fetch(&mut *conn)).await, all);
                assert_eq!(read_slowly(sqlx::query(sql).fetch(&mut *conn)).await, all);
            }
            Client::Postgres(conn) => {
                assert_eq!(read_slowly(sqlx::raw_sql(sql).fetch(&mut *conn)).await, all);
                assert_eq!(read_slowly(sqlx::query(sql).fetch(&mut *conn)).await, all);
            }
        }
        assert_eq!(client.count().await, all as i64);
        // Over `max-row-bytes` (8 MiB here): refused as its length arrives. PostgreSQL sends
        // it whole in one message; MariaDB in packets of 16 MiB, as long as its
        // `max_allowed_packet` (16 MiB by default) lets the value be.
        let huge = match &mut client {
            Client::Postgres(conn) => sqlx::raw_sql("SELECT repeat('x', 200000000)")
                .fetch_all(&mut *conn)
                .await
                .unwrap_err(),
            Client::MySql(conn) => sqlx::raw_sql("SELECT REPEAT('x', 12000000)")
                .fetch_all(&mut *conn)
                .await
                .unwrap_err(),
        };
        let code = if frontend == "mysql" { "1037" } else { "53200" };
        assert_eq!(code_of(&huge), code, "{huge}");
        assert!(huge.to_string().contains("max-row-bytes"), "{huge}");
        assert_eq!(client.count().await, all as i64);
        let peak = peak_mib(server.id());
        eprintln!("{frontend}: a 100 MB read: idle {idle} MiB, peak {peak} MiB");
        assert!(
            peak - idle < 64,
            "{frontend}: idle {idle} MiB, peak {peak} MiB"
        );
        drop(client);
        drop(server);
        shards.drop_all().await;
    }
}

/// PostgreSQL portals of 20 MB parameters, bound and never executed (tokio-postgres' `bind`):
/// the session keeps at most `session-memory-bytes` (64 MiB) of them, the portal that does not
/// fit is refused with 53200, and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn portals_are_kept_within_the_session_limit() {
    let dir = TempDir::new("memory_portals");
    let (server, mysql_port, pg_port) = start(&dir);
    let Client::Postgres(mut setup) = Client::connect("postgres", mysql_port, pg_port).await else {
        unreachable!()
    };
    sqlx::raw_sql(CREATE).execute(&mut setup).await.unwrap();
    let config =
        format!("host=127.0.0.1 port={pg_port} user=root password=root dbname=sharding_db");
    let (mut client, connection) = tokio_postgres::connect(&config, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let idle = peak_mib(server.id());
    let transaction = client.transaction().await.unwrap();
    let statement = transaction
        .prepare("SELECT status FROM t_order WHERE status = $1")
        .await
        .unwrap();
    let big = "x".repeat(20 << 20);
    let mut portals = Vec::new();
    let refused = loop {
        match transaction.bind(&statement, &[&big]).await {
            Ok(portal) => portals.push(portal),
            Err(e) => break e,
        }
        assert!(portals.len() < 40, "40 portals of 20 MB kept");
    };
    let code = refused.as_db_error().map(|e| e.code().code().to_owned());
    assert_eq!(code.as_deref(), Some("53200"), "{refused}");
    assert!(portals.len() < 4, "{} portals kept", portals.len());
    transaction.rollback().await.unwrap();
    let rows = client
        .query("SELECT COUNT(*) FROM t_order", &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let peak = peak_mib(server.id());
    eprintln!("portals: idle {idle} MiB, peak {peak} MiB");
    assert!(peak - idle < 200, "idle {idle} MiB, peak {peak} MiB");
}

/// A 12 MiB `LOAD DATA LOCAL INFILE` (about a million rows, from the mariadb client) goes in
/// as it arrives, a batch at a time, as COPY does: all of it is stored and the proxy stays
/// within 200 MiB above idle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_load_data_is_loaded_in_little_memory() {
    let dir = TempDir::new("memory_load");
    let (server, mysql_port, pg_port) = start(&dir);
    let mut client = Client::connect("mysql", mysql_port, pg_port).await;
    client.run(CREATE).await.unwrap();
    let file = dir.0.join("rows.tsv");
    let mut data = String::new();
    let mut rows = 0;
    while data.len() < 12 << 20 {
        data.push_str(&format!("{}\tstatus{}\n", rows % 1000, rows % 7));
        rows += 1;
    }
    std::fs::write(&file, data).unwrap();
    let idle = peak_mib(server.id());
    let load = format!(
        "LOAD DATA LOCAL INFILE '{}' INTO TABLE t_order (user_id, status)",
        file.display()
    );
    let port = mysql_port.to_string();
    let loaded = tokio::task::spawn_blocking(move || {
        std::process::Command::new("mariadb")
            .args(["--protocol=tcp", "-h", "127.0.0.1", "-P", &port])
            .args([
                "-uroot",
                "-proot",
                "--local-infile=1",
                "sharding_db",
                "-e",
                &load,
            ])
            .output()
            .expect("the mariadb client")
    })
    .await
    .unwrap();
    assert!(
        loaded.status.success(),
        "{}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    assert_eq!(client.count().await, rows);
    let peak = peak_mib(server.id());
    eprintln!("LOAD DATA of 12 MiB: idle {idle} MiB, peak {peak} MiB");
    assert!(peak - idle < 200, "idle {idle} MiB, peak {peak} MiB");
}

/// A MySQL client speaking the protocol by hand, for what no client library sends at will
/// (COM_STMT_SEND_LONG_DATA): logged in as a user without a password.
struct RawMySql(tokio::net::TcpStream);

impl RawMySql {
    async fn connect(port: u16, user: &str) -> Self {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let mut raw = RawMySql(stream);
        let _greeting = raw.read().await;
        // PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH, CONNECT_WITH_DB, LONG_PASSWORD.
        let caps: u32 = 0x200 | 0x8000 | 0x80000 | 0x8 | 0x1;
        let mut login = Vec::new();
        login.extend_from_slice(&caps.to_le_bytes());
        login.extend_from_slice(&(16u32 << 20).to_le_bytes());
        login.push(45);
        login.extend_from_slice(&[0; 23]);
        login.extend_from_slice(user.as_bytes());
        login.push(0);
        login.push(0); // an empty password's empty scramble
        login.extend_from_slice(b"sharding_db\0mysql_native_password\0");
        raw.write(1, &login).await;
        let answer = raw.read().await;
        assert_eq!(answer[0], 0, "login: {answer:?}");
        raw
    }

    async fn write(&mut self, sequence: u8, payload: &[u8]) {
        use tokio::io::AsyncWriteExt;
        let len = payload.len() as u32;
        let mut packet = len.to_le_bytes()[..3].to_vec();
        packet.push(sequence);
        packet.extend_from_slice(payload);
        self.0.write_all(&packet).await.unwrap();
    }

    async fn read(&mut self) -> Vec<u8> {
        use tokio::io::AsyncReadExt;
        let mut header = [0; 4];
        self.0.read_exact(&mut header).await.unwrap();
        let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
        let mut payload = vec![0; len];
        self.0.read_exact(&mut payload).await.unwrap();
        payload
    }

    /// COM_STMT_PREPARE of `sql` (one parameter, one column); the statement id.
    async fn prepare(&mut self, sql: &str) -> u32 {
        let mut command = vec![0x16];
        command.extend_from_slice(sql.as_bytes());
        self.write(0, &command).await;
        let ok = self.read().await;
        assert_eq!(ok[0], 0, "prepare: {:?}", String::from_utf8_lossy(&ok));
        let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
        let columns = u16::from_le_bytes([ok[5], ok[6]]);
        let params = u16::from_le_bytes([ok[7], ok[8]]);
        // Each list of definitions ends with an EOF.
        for count in [params, columns] {
            if count > 0 {
                for _ in 0..=count {
                    self.read().await;
                }
            }
        }
        id
    }

    /// COM_STMT_SEND_LONG_DATA: `data` for parameter 0 of statement `id` (no answer).
    async fn long_data(&mut self, id: u32, data: &[u8]) {
        let mut command = vec![0x18];
        command.extend_from_slice(&id.to_le_bytes());
        command.extend_from_slice(&0u16.to_le_bytes());
        command.extend_from_slice(data);
        self.write(0, &command).await;
    }

    /// COM_STMT_EXECUTE of statement `id` with its one parameter sent as long data: the first
    /// byte of the answer (0xff: an error) and the error's number.
    async fn execute_long(&mut self, id: u32) -> (u8, u16) {
        let mut command = vec![0x17];
        command.extend_from_slice(&id.to_le_bytes());
        command.push(0); // no cursor
        command.extend_from_slice(&1u32.to_le_bytes());
        command.push(0); // null bitmap
        command.push(1); // types follow
        command.extend_from_slice(&[0xfc, 0]); // BLOB
        self.write(0, &command).await;
        let answer = self.read().await;
        let errno = match answer[0] {
            0xff => u16::from_le_bytes([answer[1], answer[2]]),
            _ => 0,
        };
        (answer[0], errno)
    }
}

/// MySQL long data (COM_STMT_SEND_LONG_DATA) of 12 MiB for each of 40 statements, 480 MiB
/// sent: the session keeps at most `session-memory-bytes` (64 MiB) of it, so executing most
/// statements is refused with 1037, the proxy stays within 200 MiB above idle (the statements
/// that run hold their 12 MiB parameter a few times over while they run), and the session
/// goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_data_is_kept_within_the_session_limit() {
    let dir = TempDir::new("memory_long_data");
    let (server, mysql_port, pg_port) = start_with(&dir, "");
    // Once it serves.
    let mut client = Client::connect("mysql", mysql_port, pg_port).await;
    let mut raw = RawMySql::connect(mysql_port, "open").await;
    let idle = peak_mib(server.id());
    let chunk = vec![b'x'; 4 << 20];
    let mut ids = Vec::new();
    for _ in 0..40 {
        let id = raw.prepare("SELECT LENGTH(?)").await;
        for _ in 0..3 {
            raw.long_data(id, &chunk).await;
        }
        ids.push(id);
    }
    let mut refused = 0;
    for id in ids {
        let (first, errno) = raw.execute_long(id).await;
        if first == 0xff {
            assert_eq!(errno, 1037);
            refused += 1;
        } else {
            // A result set: its column count, definition, EOF, row, EOF.
            for _ in 0..4 {
                raw.read().await;
            }
        }
    }
    assert!(refused >= 30, "{refused} of 40 refused");
    let peak = peak_mib(server.id());
    eprintln!("long data: idle {idle} MiB, peak {peak} MiB");
    assert!(peak - idle < 200, "idle {idle} MiB, peak {peak} MiB");
    // The session goes on.
    assert_eq!(raw.prepare("SELECT LENGTH(?)").await, 41);
    client.run(CREATE).await.unwrap();
}

/// One long parameter bound by a client (MySQL's binary protocol, PostgreSQL's Bind) over
/// MariaDB and PostgreSQL shards: the statement holds it four times over while it runs (the
/// decoded value, the routed statement's, the driver's arguments and its write buffer) and
/// counts it so, so one of 10 MiB runs under a 64 MiB `statement-memory-bytes` and one of
/// 20 MiB is refused with 1037 / 53200 naming the limit; the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and PostgreSQL (KEYSHARD_TEST_MYSQL_URL, KEYSHARD_TEST_PG_URL)"]
async fn a_long_parameter_is_counted_as_it_is_held() {
    let dir = TempDir::new("memory_parameter");
    for frontend in ["mysql", "postgres"] {
        let admin = match frontend {
            "mysql" => std::env::var("KEYSHARD_TEST_MYSQL_URL"),
            _ => std::env::var("KEYSHARD_TEST_PG_URL"),
        };
        let shards = ServerShards::new(admin.unwrap(), "parameter").await;
        let port = free_port();
        let props = "  statement-memory-bytes: 67108864\n";
        let server = serve_over(&dir, &shards, frontend, port, props);
        let mut client = Client::connect(frontend, port, port).await;
        let text = if frontend == "mysql" {
            "LONGTEXT"
        } else {
            "TEXT"
        };
        let create = format!(
            "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status {text})"
        );
        client.run(&create).await.unwrap();
        let idle = peak_mib(server.id());
        client.insert_long(1, 10).await.unwrap();
        let peak = peak_mib(server.id());
        let refused = client.insert_long(2, 20).await.unwrap_err();
        let code = if frontend == "mysql" { "1037" } else { "53200" };
        assert_eq!(code_of(&refused), code, "{refused}");
        assert!(
            refused.to_string().contains("statement-memory-bytes"),
            "{refused}"
        );
        assert_eq!(client.count().await, 1);
        eprintln!("{frontend}: one 10 MiB parameter: idle {idle} MiB, peak {peak} MiB");
        assert!(
            peak - idle < 4 * 10 + 24,
            "{frontend}: idle {idle} MiB, peak {peak} MiB"
        );
        drop(client);
        drop(server);
        shards.drop_all().await;
    }
}
