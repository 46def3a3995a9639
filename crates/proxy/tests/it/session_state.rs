//! No client changes what another client sees. An adversarial differential suite: client A
//! changes its session (settings, temporary tables, locks, set_config), A's later statements
//! see the change (on several pooled shard connections, inside and outside transactions),
//! clients B and C do not, and after A resets or leaves nothing remains. Every step runs
//! through Keyshard (pools of 1, 2 or 3 connections per data source, so that connections are
//! certainly shared) and on one plain database, with one connection per client; the answers
//! must be the same. `--include-ignored`, with `KEYSHARD_TEST_MYSQL_URL` /
//! `KEYSHARD_TEST_PG_URL`.

use crate::common;

use std::time::{Duration, Instant};

use crate::common::postgres::{PgProxy, PgShards, connect};
use crate::common::{Proxy, Shards};
use sqlx::{Connection as _, MySqlConnection, Row as _};
use tokio_postgres::SimpleQueryMessage;

/// What a statement answered: its rows' first column as text, or its error code.
type Answer = Result<Vec<String>, String>;

/// Clients by index: A, B, C.
const A: usize = 0;
const B: usize = 1;
const C: usize = 2;

/// The configuration over `urls` with pools of `size` connections per data source.
fn with_pool_size(yaml: String, urls: [&str; 2], size: u32) -> String {
    urls.iter().fold(yaml, |yaml, url| {
        yaml.replace(
            &format!("url: {url}\n"),
            &format!("url: {url}\n    maxPoolSize: {size}\n"),
        )
    })
}

// ---------------------------------------------------------------------------------------------
// MySQL / MariaDB

const MYSQL_SETUP: &str = "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT, \
     created_at TIMESTAMP NULL, price DECIMAL(10,2));
     CREATE TABLE t_plain (id INT PRIMARY KEY, note VARCHAR(20))";

const MYSQL_ROWS: &str = "SET time_zone = '+00:00';
     INSERT INTO t_order VALUES (1, 1, '2024-01-02 03:04:05', 9.99), (2, 2, '2024-06-30 23:00:00', 0.50),
       (3, 3, '2024-12-31 12:00:00', 100.00), (4, 4, NULL, NULL);
     INSERT INTO t_plain VALUES (1, 'one');
     SET time_zone = DEFAULT";

/// Both sides of a MariaDB comparison: a proxy over two fresh shards with pools of `size`, and
/// one plain database; three clients each.
struct MySqlSides {
    shards: Shards,
    proxy: Proxy,
    plain: Shards,
    through: Vec<MySqlConnection>,
    direct: Vec<MySqlConnection>,
}

impl MySqlSides {
    async fn start(size: u32) -> Self {
        let shards = Shards::mariadb().await;
        let (url_0, url_1) = (shards.url(0), shards.url(1));
        let yaml = with_pool_size(common::yaml(&url_0, &url_1), [&url_0, &url_1], size);
        let proxy = Proxy::start(&yaml).await;
        let plain = Shards::mariadb().await;
        let mut sides = Self {
            through: Vec::new(),
            direct: Vec::new(),
            shards,
            proxy,
            plain,
        };
        for _ in 0..3 {
            sides.through.push(sides.connect_through().await);
            sides.direct.push(sides.connect_direct().await);
        }
        for conn in [&mut sides.through[A], &mut sides.direct[A]] {
            sqlx::raw_sql(MYSQL_SETUP)
                .execute(&mut *conn)
                .await
                .unwrap();
            sqlx::raw_sql(MYSQL_ROWS).execute(&mut *conn).await.unwrap();
        }
        sides
    }

    async fn connect_through(&self) -> MySqlConnection {
        MySqlConnection::connect(&self.proxy.url("root", "root"))
            .await
            .unwrap()
    }

    async fn connect_direct(&self) -> MySqlConnection {
        MySqlConnection::connect(&self.plain.url(0)).await.unwrap()
    }

    /// Runs each (client, statement) on both sides; answers every difference at once.
    async fn compare(&mut self, script: &[(usize, &str)]) -> Vec<String> {
        let mut differences = Vec::new();
        for (who, sql) in script {
            // User locks are the server's, and both sides share one: each names its own.
            let expected =
                mysql_answer(&mut self.direct[*who], &sql.replace("'ks_", "'ksp_")).await;
            let got = mysql_answer(&mut self.through[*who], &sql.replace("'ks_", "'kst_")).await;
            if std::env::var_os("KEYSHARD_TEST_TRACE").is_some() {
                eprintln!("{who}: {sql}\n  Keyshard: {got:?}\n  database: {expected:?}");
            }
            if got != expected {
                differences.push(format!(
                    "client {who}: {sql}\n  Keyshard: {got:?}\n  database: {expected:?}"
                ));
            }
        }
        differences
    }

    async fn finish(self) {
        for conn in self.through.into_iter().chain(self.direct) {
            let _ = conn.close().await;
        }
        self.proxy.stop().await;
        self.shards.cleanup().await;
        self.plain.cleanup().await;
    }
}

async fn mysql_answer(conn: &mut MySqlConnection, sql: &str) -> Answer {
    // `PREPARE:` runs the statement through the binary protocol (COM_STMT_PREPARE/EXECUTE).
    let result = match sql.strip_prefix("PREPARE:") {
        Some(sql) => sqlx::query(sql).fetch_all(&mut *conn).await,
        None => sqlx::raw_sql(sql).fetch_all(&mut *conn).await,
    };
    match result {
        Ok(rows) => Ok(rows.iter().map(mysql_text).collect()),
        Err(e) => Err(e
            .as_database_error()
            .and_then(|d| d.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
            .map_or_else(|| e.to_string(), |d| d.number().to_string())),
    }
}

fn mysql_text(row: &sqlx::mysql::MySqlRow) -> String {
    if row.is_empty() {
        return String::new();
    }
    row.try_get::<Option<i64>, _>(0)
        .map(|v| format!("{v:?}"))
        .or_else(|_| {
            row.try_get::<Option<String>, _>(0)
                .map(|v| format!("{v:?}"))
        })
        .or_else(|_| {
            row.try_get::<Option<Vec<u8>>, _>(0)
                .map(|v| format!("{:?}", v.map(|b| String::from_utf8_lossy(&b).into_owned())))
        })
        .unwrap_or_else(|e| e.to_string())
}

/// Settings: made by A, seen by A's reads over several shards and pooled connections and in
/// transactions, never by B or C; back to the default with `= DEFAULT`.
const MYSQL_SETTINGS: &[(usize, &str)] = &[
    (A, "SET time_zone = '+09:00'"),
    (A, "SELECT @@session.time_zone"),
    (B, "SELECT @@session.time_zone"),
    (
        A,
        "SELECT CAST(created_at AS CHAR) FROM t_order WHERE order_id = 1",
    ),
    (
        B,
        "SELECT CAST(created_at AS CHAR) FROM t_order WHERE order_id = 1",
    ),
    (
        A,
        "SELECT CAST(created_at AS CHAR) FROM t_order ORDER BY order_id",
    ),
    (
        C,
        "SELECT CAST(created_at AS CHAR) FROM t_order ORDER BY order_id",
    ),
    (
        A,
        "PREPARE:SELECT CAST(created_at AS CHAR) FROM t_order WHERE order_id = 2",
    ),
    (
        B,
        "PREPARE:SELECT CAST(created_at AS CHAR) FROM t_order WHERE order_id = 2",
    ),
    (A, "SELECT CAST(FROM_UNIXTIME(0) AS CHAR)"),
    (B, "SELECT CAST(FROM_UNIXTIME(0) AS CHAR)"),
    (A, "SET SESSION sql_mode = 'PIPES_AS_CONCAT'"),
    (A, "SELECT @@sql_mode"),
    (A, "SELECT 'a' || 'b' FROM t_plain"),
    (B, "SELECT 'a' || 'b' FROM t_plain"),
    (B, "SELECT @@sql_mode"),
    // Inside a transaction: MySQL's SET is not undone by a rollback.
    (A, "BEGIN"),
    (
        A,
        "SELECT CAST(created_at AS CHAR) FROM t_order WHERE order_id = 3",
    ),
    (A, "SET time_zone = '+05:00'"),
    (
        A,
        "SELECT CAST(created_at AS CHAR) FROM t_order WHERE order_id = 3",
    ),
    (
        A,
        "SELECT CAST(created_at AS CHAR) FROM t_order WHERE order_id = 1",
    ),
    (A, "ROLLBACK"),
    (A, "SELECT @@time_zone"),
    (
        A,
        "SELECT CAST(created_at AS CHAR) FROM t_order ORDER BY order_id",
    ),
    (
        B,
        "SELECT CAST(created_at AS CHAR) FROM t_order ORDER BY order_id",
    ),
    // A value the database refuses is refused, and nothing changes.
    (A, "SET time_zone = 'Nowhere/Nothing'"),
    (A, "SELECT @@time_zone"),
    (A, "SET SESSION sql_mode = 'NO_SUCH_MODE'"),
    (A, "SELECT @@sql_mode"),
    (A, "SET time_zone = DEFAULT, sql_mode = DEFAULT"),
    (
        A,
        "SELECT CAST(created_at AS CHAR) FROM t_order ORDER BY order_id",
    ),
    (A, "SELECT 'a' || 'b' FROM t_plain"),
    // autocommit is the session's too.
    (A, "SET autocommit = 0"),
    (A, "INSERT INTO t_plain VALUES (2, 'two')"),
    (A, "SELECT COUNT(*) FROM t_plain"),
    (A, "ROLLBACK"),
    (B, "SELECT COUNT(*) FROM t_plain"),
    (A, "SET autocommit = 1"),
    (A, "SELECT COUNT(*) FROM t_plain"),
];

/// State that stays on a connection: A's temporary table and locks are A's alone.
const MYSQL_HELD: &[(usize, &str)] = &[
    (A, "CREATE TEMPORARY TABLE tmp_a (x INT)"),
    (A, "INSERT INTO tmp_a VALUES (1), (2)"),
    (A, "SELECT COUNT(*) FROM tmp_a"),
    (B, "SELECT COUNT(*) FROM tmp_a"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "SELECT SUM(x) FROM tmp_a"),
    (A, "INSERT INTO tmp_a VALUES (1), (2)"),
    (A, "BEGIN"),
    (A, "INSERT INTO tmp_a VALUES (3)"),
    (A, "SELECT COUNT(*) FROM tmp_a"),
    (A, "COMMIT"),
    (A, "SELECT COUNT(*) FROM tmp_a"),
    (A, "PREPARE:SELECT COUNT(*) FROM tmp_a"),
    (B, "SELECT COUNT(*) FROM t_plain"),
    (A, "SELECT GET_LOCK('ks_lock', 0)"),
    (A, "SELECT IS_USED_LOCK('ks_lock') IS NOT NULL"),
    (A, "SELECT RELEASE_LOCK('ks_lock')"),
    (A, "SELECT IS_FREE_LOCK('ks_lock')"),
    (A, "DROP TEMPORARY TABLE tmp_a"),
    (A, "SELECT COUNT(*) FROM tmp_a"),
    (B, "SELECT COUNT(*) FROM tmp_a"),
];

/// Two sessions holding locks at once (each pins a connection: pools of 3).
const MYSQL_CONTENDED: &[(usize, &str)] = &[
    (A, "SELECT GET_LOCK('ks_shared', 0)"),
    (B, "SELECT GET_LOCK('ks_shared', 0)"),
    (B, "SELECT IS_USED_LOCK('ks_shared') IS NOT NULL"),
    (A, "SELECT RELEASE_ALL_LOCKS()"),
    (B, "SELECT GET_LOCK('ks_shared', 0)"),
    (A, "SELECT GET_LOCK('ks_shared', 0)"),
    (B, "SELECT RELEASE_LOCK('ks_shared')"),
    (A, "SELECT GET_LOCK('ks_shared', 0)"),
];

/// MySQL's LOCK TABLES: A's locks keep B out (B gives up after a second) and keep A to the
/// tables it locked; a second LOCK TABLES, UNLOCK TABLES and BEGIN each let them go.
const MYSQL_TABLE_LOCKS: &[(usize, &str)] = &[
    (B, "SET SESSION lock_wait_timeout = 1"),
    (A, "LOCK TABLES t_order WRITE, t_plain READ"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "SELECT note FROM t_plain"),
    (A, "INSERT INTO t_order VALUES (5, 1, NULL, NULL)"),
    (A, "INSERT INTO t_plain VALUES (2, 'two')"),
    (B, "SELECT note FROM t_plain"),
    (B, "SELECT COUNT(*) FROM t_order"),
    (B, "SELECT COUNT(*) FROM t_order WHERE user_id = 1"),
    (A, "LOCK TABLES t_order READ"),
    (A, "SELECT note FROM t_plain"),
    (A, "PREPARE:SELECT COUNT(*) FROM t_order WHERE user_id = 1"),
    (B, "SELECT COUNT(*) FROM t_order"),
    (B, "INSERT INTO t_order VALUES (6, 0, NULL, NULL)"),
    (B, "INSERT INTO t_order VALUES (7, 1, NULL, NULL)"),
    (A, "UNLOCK TABLES"),
    (B, "INSERT INTO t_order VALUES (6, 0, NULL, NULL)"),
    (B, "INSERT INTO t_order VALUES (7, 1, NULL, NULL)"),
    (A, "LOCK TABLES t_plain WRITE"),
    (B, "SELECT note FROM t_plain"),
    // ds_1 holds no lock of A's: a table there is still one A did not lock.
    (A, "SELECT COUNT(*) FROM t_order WHERE user_id = 1"),
    (A, "INSERT INTO t_order VALUES (20, 1, NULL, NULL)"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "SELECT note FROM t_plain"),
    (A, "SELECT 1"),
    (A, "BEGIN"),
    (B, "SELECT note FROM t_plain"),
    (A, "COMMIT"),
];

const MYSQL_LOCKED_WRITES: &[(usize, &str)] = &[
    (A, "LOCK TABLES t_order WRITE"),
    (
        A,
        "INSERT INTO t_order VALUES (8, 0, NULL, NULL), (9, 1, NULL, NULL)",
    ),
    (
        A,
        "INSERT INTO t_order VALUES (11, 1, NULL, NULL), (8, 0, NULL, NULL)",
    ),
    (A, "SELECT order_id FROM t_order ORDER BY order_id"),
    (B, "SELECT COUNT(*) FROM t_order"),
    (A, "ALTER TABLE t_order DISABLE KEYS"),
    (A, "ALTER TABLE t_order ENABLE KEYS"),
    (A, "SET autocommit = 0"),
    (
        A,
        "INSERT INTO t_order VALUES (12, 0, NULL, NULL), (13, 1, NULL, NULL)",
    ),
    (A, "ROLLBACK"),
    (
        A,
        "INSERT INTO t_order VALUES (14, 0, NULL, NULL), (15, 1, NULL, NULL)",
    ),
    (A, "COMMIT"),
    (B, "SELECT COUNT(*) FROM t_order"),
    (A, "INSERT INTO t_order VALUES (16, 0, NULL, NULL)"),
    (A, "UNLOCK TABLES"),
    (A, "SET autocommit = 1"),
    (B, "SELECT order_id FROM t_order ORDER BY order_id"),
];

fn report(differences: Vec<String>) {
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_MYSQL_URL"]
async fn mysql_sessions_keep_their_settings_and_state_to_themselves() {
    let mut differences = Vec::new();
    for size in [1, 2] {
        let mut sides = MySqlSides::start(size).await;
        for difference in sides.compare(MYSQL_SETTINGS).await {
            differences.push(format!("pool of {size}: {difference}"));
        }
        sides.finish().await;
    }
    let mut sides = MySqlSides::start(2).await;
    differences.extend(sides.compare(MYSQL_HELD).await);
    // With the table dropped and the lock released, A holds nothing and keeps nothing.
    assert_eq!(
        held_or_pinned(&mut sides.through[A]).await,
        Vec::<String>::new()
    );
    sides.finish().await;
    let mut sides = MySqlSides::start(3).await;
    differences.extend(sides.compare(MYSQL_CONTENDED).await);
    // A leaves holding a lock: it is released with A's shard connection, not handed on.
    differences.extend(sides.compare(&[(A, "SELECT GET_LOCK('ks_gone', 0)")]).await);
    let a = sides.through.swap_remove(A);
    a.close().await.unwrap();
    let direct_a = sides.direct.swap_remove(A);
    direct_a.close().await.unwrap();
    // C is now at index A; B stays at B.
    let free = "SELECT IS_FREE_LOCK('ks_gone')";
    eventually(&mut sides.through[B], free, "1").await;
    eventually(&mut sides.direct[B], free, "1").await;
    sides.finish().await;
    report(differences);
}

#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_MYSQL_URL"]
async fn mysql_table_locks_are_the_sessions_on_every_shard() {
    let mut sides = MySqlSides::start(2).await;
    let mut differences = sides.compare(MYSQL_TABLE_LOCKS).await;
    assert_eq!(
        held_or_pinned(&mut sides.through[A]).await,
        Vec::<String>::new()
    );
    // Writes over both shards run with autocommit off there (a transaction begun would let
    // the locks go): all or none, the locks held throughout; so does a session with
    // autocommit off, its COMMIT and ROLLBACK keeping the locks (mysqldump's restore).
    differences.extend(sides.compare(MYSQL_LOCKED_WRITES).await);
    sides.finish().await;
    report(differences);
}

/// MariaDB's sequences. B's INSERT takes a value by a sequence default on a shared connection
/// (it does not pin); C, which took no value of that sequence itself, is then refused its
/// `PREVIOUS VALUE FOR` (the connection it keeps may be the one B's value is on), where one
/// database answers NULL. Everything else as on one database: A reads back its own values,
/// never B's, through NEXT VALUE FOR, NEXTVAL, a sequence default and LASTVAL.
const MYSQL_SEQUENCES: &[(usize, &str)] = &[
    (A, "CREATE SEQUENCE ks_seq"),
    (A, "CREATE SEQUENCE ks_other"),
    (
        A,
        "CREATE TABLE t_seq (id BIGINT NOT NULL DEFAULT NEXT VALUE FOR ks_seq PRIMARY KEY, \
         note VARCHAR(8))",
    ),
    (B, "INSERT INTO t_seq (note) VALUES ('b')"),
    (C, "SELECT NEXT VALUE FOR ks_other"),
    (C, "SELECT PREVIOUS VALUE FOR ks_other"),
    (A, "SELECT NEXT VALUE FOR ks_seq"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "SELECT PREVIOUS VALUE FOR ks_seq"),
    (B, "SELECT NEXTVAL(ks_seq)"),
    (A, "SELECT PREVIOUS VALUE FOR ks_seq"),
    (A, "SELECT LASTVAL(`ks_seq`)"),
    (A, "SELECT PREVIOUS /* spaced */ VALUE\n  FOR ks_seq"),
    (B, "SELECT LASTVAL(ks_seq)"),
    (A, "INSERT INTO t_seq (note) VALUES ('a')"),
    (A, "SELECT PREVIOUS VALUE FOR ks_seq"),
    (A, "PREPARE:SELECT PREVIOUS VALUE FOR ks_seq"),
    (A, "SELECT SETVAL(ks_seq, 100)"),
    (A, "SELECT PREVIOUS VALUE FOR ks_seq"),
    (B, "SELECT NEXT VALUE FOR ks_seq"),
    (A, "SELECT id FROM t_seq WHERE note = 'a'"),
];

#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_MYSQL_URL"]
async fn mysql_sequence_values_are_read_by_the_session_that_took_them() {
    // A, B and C each keep a connection of ds_0 once they take a sequence value.
    let mut sides = MySqlSides::start(4).await;
    let mut differences = sides.compare(&MYSQL_SEQUENCES[..6]).await;
    for read in [
        "SELECT PREVIOUS VALUE FOR ks_seq",
        "SELECT PREVIOUS  VALUE -- spaced\n FOR ks_seq",
        "SELECT LASTVAL(ks_seq)",
    ] {
        assert_eq!(
            mysql_answer(&mut sides.direct[C], read).await,
            Ok(vec!["None".to_owned()])
        );
        assert_eq!(
            mysql_answer(&mut sides.through[C], read).await,
            Err("1235".to_owned()),
            "{read}"
        );
    }
    differences.extend(sides.compare(&MYSQL_SEQUENCES[6..]).await);
    sides.finish().await;
    report(differences);
}

/// The `held` and `pinned` rows of `SHOW SESSION STATE`.
async fn held_or_pinned(conn: &mut MySqlConnection) -> Vec<String> {
    let rows = sqlx::raw_sql("SHOW SESSION STATE")
        .fetch_all(conn)
        .await
        .unwrap();
    rows.iter()
        .map(|r| (r.get::<String, _>(0), r.get::<String, _>(1)))
        .filter(|(kind, _)| kind != "setting")
        .map(|(kind, name)| format!("{kind} {name}"))
        .collect()
}

/// Polls `sql` until it answers `expected` (a closed connection's locks go with it a moment
/// later, on the database's time).
async fn eventually(conn: &mut MySqlConnection, sql: &str, expected: &str) {
    let started = Instant::now();
    loop {
        let answer = mysql_answer(conn, sql).await;
        if answer == Ok(vec![format!("Some({expected})")]) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{sql}: {answer:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_MYSQL_URL"]
async fn mysql_pinning_never_takes_a_pools_last_connection() {
    let mut sides = MySqlSides::start(1).await;
    let a = &mut sides.through[A];
    let refused = mysql_answer(a, "CREATE TEMPORARY TABLE tmp_x (x INT)").await;
    assert_eq!(refused, Err("1040".to_owned()));
    // The connection is usable, and nothing is held.
    assert_eq!(
        mysql_answer(a, "SELECT COUNT(*) FROM t_plain").await,
        Ok(vec!["Some(1)".to_owned()])
    );
    assert_eq!(held_or_pinned(a).await, Vec::<String>::new());
    let b = &mut sides.through[B];
    assert_eq!(
        mysql_answer(b, "SELECT COUNT(*) FROM t_plain").await,
        Ok(vec!["Some(1)".to_owned()])
    );
    sides.finish().await;
}

#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_MYSQL_URL"]
async fn a_strict_data_source_refuses_what_would_pin_and_keeps_settings() {
    let shards = Shards::mariadb().await;
    let (url_0, url_1) = (shards.url(0), shards.url(1));
    let yaml = common::yaml(&url_0, &url_1).replace(
        &format!("url: {url_0}\n"),
        &format!("url: {url_0}\n    sessionState: strict\n"),
    );
    let proxy = Proxy::start(&yaml).await;
    let mut a = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    sqlx::raw_sql(MYSQL_SETUP).execute(&mut a).await.unwrap();
    sqlx::raw_sql(MYSQL_ROWS).execute(&mut a).await.unwrap();
    // t_plain lives on ds_0, the strict one.
    assert_eq!(
        mysql_answer(&mut a, "SELECT GET_LOCK('ks_strict', 0) FROM t_plain").await,
        Err("1235".to_owned())
    );
    assert_eq!(
        mysql_answer(&mut a, "CREATE TEMPORARY TABLE tmp_strict (x INT)").await,
        Err("1235".to_owned())
    );
    assert_eq!(held_or_pinned(&mut a).await, Vec::<String>::new());
    mysql_answer(&mut a, "SET time_zone = '+03:00'")
        .await
        .unwrap();
    assert_eq!(
        mysql_answer(&mut a, "SELECT CAST(FROM_UNIXTIME(0) AS CHAR) FROM t_plain").await,
        Ok(vec!["Some(\"1970-01-01 03:00:00\")".to_owned()])
    );
    assert_eq!(
        mysql_answer(&mut a, "SELECT @@time_zone").await,
        Ok(vec!["Some(\"+03:00\")".to_owned()])
    );
    a.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_MYSQL_URL"]
async fn mysql_session_state_shows_settings_and_pins() {
    let mut sides = MySqlSides::start(2).await;
    let a = &mut sides.through[A];
    for sql in [
        "SET time_zone = '+01:00'",
        "CREATE TEMPORARY TABLE tmp_s (x INT)",
    ] {
        mysql_answer(a, sql).await.unwrap();
    }
    let rows = sqlx::raw_sql("SHOW SESSION STATE")
        .fetch_all(&mut *a)
        .await
        .unwrap();
    let rows: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let expected = [
        ("setting", "time_zone", "+01:00"),
        ("held", "temporary table", "tmp_s"),
        ("pinned", "ds_0", "kept"),
    ];
    for (kind, name, value) in expected {
        assert!(
            rows.iter()
                .any(|r| r == &(kind.into(), name.into(), value.into())),
            "{kind} {name} {value} in {rows:?}"
        );
    }
    sides.finish().await;
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL. A session's TimeZone before it sets one is UTC through Keyshard (the shard
// connections') and the server's default on a direct connection: `SHOW TimeZone` is compared
// only once set.

const PG_SETUP: &str = "CREATE TABLE t_order (order_id int8 PRIMARY KEY, user_id int4, \
     created_at timestamptz, price numeric(10,2));
     CREATE TABLE t_plain (id int4 PRIMARY KEY, note varchar(20));
     INSERT INTO t_order VALUES (1, 1, '2024-01-02 03:04:05+00', 9.99),
       (2, 2, '2024-06-30 23:00:00+00', 0.50), (3, 3, '2024-12-31 12:00:00+00', 100.00),
       (4, 4, NULL, NULL);
     INSERT INTO t_plain VALUES (1, 'one')";

struct PgSides {
    shards: PgShards,
    proxy: PgProxy,
    plain: PgShards,
    through: Vec<tokio_postgres::Client>,
    direct: Vec<tokio_postgres::Client>,
}

impl PgSides {
    async fn start(size: u32) -> Self {
        Self::start_with(size, None).await
    }

    /// Both sides, with `on_databases` run on each shard database and the plain one before the
    /// proxy starts (what an application's migrations create beside the proxy).
    async fn start_with(size: u32, on_databases: Option<&str>) -> Self {
        let shards = PgShards::postgres().await;
        let plain = PgShards::postgres().await;
        if let Some(sql) = on_databases {
            for url in [shards.url(0), shards.url(1), plain.url(0)] {
                let client = connect(&url.parse().unwrap()).await.unwrap();
                client.batch_execute(sql).await.unwrap();
            }
        }
        let (url_0, url_1) = (shards.url(0), shards.url(1));
        let yaml = common::postgres::yaml(&url_0, &url_1, false);
        let proxy = PgProxy::start(&with_pool_size(yaml, [&url_0, &url_1], size)).await;
        let mut through = Vec::new();
        let mut direct = Vec::new();
        for _ in 0..3 {
            through.push(proxy.client().await);
            direct.push(connect(&plain.url(0).parse().unwrap()).await.unwrap());
        }
        for client in [&through[A], &direct[A]] {
            client.batch_execute(PG_SETUP).await.unwrap();
        }
        Self {
            shards,
            proxy,
            plain,
            through,
            direct,
        }
    }

    async fn compare(&self, script: &[(usize, &str)]) -> Vec<String> {
        let mut differences = Vec::new();
        for (who, sql) in script {
            let expected = pg_answer(&self.direct[*who], sql).await;
            let got = pg_answer(&self.through[*who], sql).await;
            if got != expected {
                differences.push(format!(
                    "client {who}: {sql}\n  Keyshard: {got:?}\n  database: {expected:?}"
                ));
            }
        }
        differences
    }

    async fn finish(self) {
        drop(self.through);
        drop(self.direct);
        self.proxy.stop().await;
        self.shards.cleanup().await;
        self.plain.cleanup().await;
    }
}

async fn pg_answer(client: &tokio_postgres::Client, sql: &str) -> Answer {
    let code = |e: tokio_postgres::Error| match e.code() {
        Some(code) => code.code().to_owned(),
        None => e.to_string(),
    };
    // `EXTENDED:` runs the statement through Parse/Bind/Execute, its first column read as text.
    if let Some(sql) = sql.strip_prefix("EXTENDED:") {
        let rows = client.query(sql, &[]).await.map_err(code)?;
        return Ok(rows
            .iter()
            .map(|r| format!("{:?}", r.get::<_, Option<String>>(0)))
            .collect());
    }
    let messages = client.simple_query(sql).await.map_err(code)?;
    Ok(messages
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(row) => Some(format!("{:?}", row.get(0))),
            _ => None,
        })
        .collect())
}

const PG_SETTINGS: &[(usize, &str)] = &[
    (A, "SET TIME ZONE 'Asia/Tokyo'"),
    (A, "SHOW TimeZone"),
    (A, "SELECT created_at::text FROM t_order WHERE order_id = 1"),
    (B, "SELECT created_at::text FROM t_order WHERE order_id = 1"),
    (A, "SELECT created_at::text FROM t_order ORDER BY order_id"),
    (C, "SELECT created_at::text FROM t_order ORDER BY order_id"),
    (
        A,
        "EXTENDED:SELECT created_at::text FROM t_order WHERE order_id = 2",
    ),
    (
        B,
        "EXTENDED:SELECT created_at::text FROM t_order WHERE order_id = 2",
    ),
    (A, "SET search_path TO nosuchschema"),
    (A, "SELECT current_setting('search_path')"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "SELECT note FROM t_plain"),
    (B, "SELECT COUNT(*) FROM t_order"),
    (B, "SELECT note FROM t_plain"),
    (A, "RESET search_path"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "SET statement_timeout = '20ms'"),
    (A, "SHOW statement_timeout"),
    (A, "SELECT pg_sleep(0.3)::text FROM t_plain"),
    (B, "SELECT pg_sleep(0.05)::text FROM t_plain"),
    (A, "SET statement_timeout TO DEFAULT"),
    (A, "SELECT pg_sleep(0.05)::text FROM t_plain"),
    (A, "SET DateStyle = 'SQL, DMY'"),
    (A, "SELECT created_at::text FROM t_order WHERE order_id = 3"),
    (B, "SELECT created_at::text FROM t_order WHERE order_id = 3"),
    (A, "SELECT to_char(1234.5, '9G999D9')"),
    // A rollback undoes a SET made in the transaction; a commit keeps it.
    (A, "BEGIN"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "SET search_path TO nosuchschema"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "ROLLBACK"),
    (A, "SHOW search_path"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "BEGIN"),
    (A, "SELECT COUNT(*) FROM t_order WHERE order_id = 1"),
    (A, "SET TIME ZONE 'America/New_York'"),
    (A, "SELECT created_at::text FROM t_order ORDER BY order_id"),
    (A, "COMMIT"),
    (A, "SHOW TimeZone"),
    (A, "SELECT created_at::text FROM t_order ORDER BY order_id"),
    (B, "SELECT created_at::text FROM t_order ORDER BY order_id"),
    // SET LOCAL lasts the transaction only, on the shards it touched before and after.
    (A, "BEGIN"),
    (A, "SELECT COUNT(*) FROM t_order WHERE order_id = 2"),
    (A, "SET LOCAL statement_timeout = '20ms'"),
    (A, "SELECT pg_sleep(0.3)::text FROM t_plain"),
    (A, "ROLLBACK"),
    (A, "SELECT pg_sleep(0.05)::text FROM t_plain"),
    // A rollback to a savepoint undoes the SETs made after it, also on a shard the
    // transaction reached after the SET; a release keeps them.
    (A, "BEGIN"),
    (A, "SELECT note FROM t_plain"),
    (A, "SAVEPOINT s1"),
    (A, "SET TIME ZONE 'Asia/Tokyo'"),
    (A, "SELECT created_at::text FROM t_order ORDER BY order_id"),
    (A, "ROLLBACK TO SAVEPOINT s1"),
    (A, "SHOW TimeZone"),
    (A, "SELECT created_at::text FROM t_order ORDER BY order_id"),
    (A, "SAVEPOINT s2"),
    (A, "SET TIME ZONE 'Asia/Tokyo'"),
    (A, "RELEASE SAVEPOINT s2"),
    (A, "SELECT created_at::text FROM t_order ORDER BY order_id"),
    (A, "COMMIT"),
    (A, "SHOW TimeZone"),
    (A, "SELECT created_at::text FROM t_order ORDER BY order_id"),
    // The same for SET LOCAL: undone by a rollback to a savepoint before it, it is not made on
    // the shard the transaction reaches next (ds_1, user 1's); kept by a release, it is. A
    // branch that begins late takes the savepoints and settings in the order they were made.
    (A, "BEGIN"),
    (A, "SELECT note FROM t_plain"),
    (A, "SAVEPOINT s3"),
    (A, "SET LOCAL statement_timeout = '20ms'"),
    (A, "ROLLBACK TO SAVEPOINT s3"),
    (
        A,
        "SELECT pg_sleep(0.1)::text FROM t_order WHERE user_id = 1",
    ),
    (A, "ROLLBACK"),
    (A, "BEGIN"),
    (A, "SELECT note FROM t_plain"),
    (A, "SAVEPOINT s4"),
    (A, "SET LOCAL statement_timeout = '20ms'"),
    (A, "RELEASE SAVEPOINT s4"),
    (
        A,
        "SELECT pg_sleep(0.3)::text FROM t_order WHERE user_id = 1",
    ),
    (A, "ROLLBACK"),
    (A, "BEGIN"),
    (A, "SELECT note FROM t_plain"),
    (A, "SAVEPOINT s5"),
    (A, "SET LOCAL statement_timeout = '20ms'"),
    (A, "SELECT COUNT(*) FROM t_order WHERE user_id = 1"),
    (A, "ROLLBACK TO SAVEPOINT s5"),
    (
        A,
        "SELECT pg_sleep(0.1)::text FROM t_order WHERE user_id = 1",
    ),
    (A, "COMMIT"),
    // A role is the session's: its privileges, not B's.
    (A, "SET ROLE keyshard_test_role"),
    (A, "SELECT current_user FROM t_plain"),
    (A, "SHOW role"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (B, "SELECT current_user FROM t_plain"),
    (B, "SELECT COUNT(*) FROM t_order"),
    (A, "RESET ROLE"),
    (A, "SELECT current_user FROM t_plain"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "SET SESSION AUTHORIZATION keyshard_test_role"),
    (A, "SELECT session_user, current_user FROM t_plain"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (B, "SELECT session_user FROM t_plain"),
    (A, "RESET SESSION AUTHORIZATION"),
    (A, "SELECT session_user FROM t_plain"),
    // A value the database refuses is refused.
    (A, "SET statement_timeout = 'soon'"),
    (A, "SET no_such_setting = 1"),
    (A, "SHOW statement_timeout"),
    (A, "RESET ALL"),
    (A, "SELECT created_at::text FROM t_order ORDER BY order_id"),
    // A custom setting stays defined, as '', once A named it (RESET, RESET ALL, DISCARD ALL);
    // B, on a connection A used, has none.
    (A, "SET app.tenant = 'a'"),
    (A, "SHOW app.tenant"),
    (
        A,
        "SELECT current_setting('app.tenant') FROM t_order WHERE user_id = 1",
    ),
    (B, "SELECT current_setting('app.tenant', true) FROM t_plain"),
    (A, "RESET app.tenant"),
    (A, "SHOW app.tenant"),
    (
        A,
        "SELECT current_setting('app.tenant') FROM t_order WHERE user_id = 1",
    ),
    (
        B,
        "SELECT current_setting('app.tenant', true) FROM t_order WHERE user_id = 1",
    ),
    (A, "RESET app.other"),
    (A, "SHOW app.other"),
    (A, "SET app.third TO 'x'"),
    (A, "RESET ALL"),
    (A, "SHOW app.third"),
    (
        A,
        "SELECT current_setting('app.third') FROM t_order WHERE user_id = 1",
    ),
    (A, "SET app.fourth TO 'y'"),
    (A, "DISCARD ALL"),
    (A, "SHOW app.fourth"),
    (A, "SHOW app.tenant"),
    (
        A,
        "SELECT current_setting('app.fourth') FROM t_order WHERE user_id = 2",
    ),
    (B, "SELECT current_setting('app.fourth', true) FROM t_plain"),
    (C, "SHOW app.tenant"),
];

/// An application's function that changes the session it runs in.
const PG_FUNCTION: &str = "CREATE FUNCTION set_tenant(t text) RETURNS text LANGUAGE sql AS \
     $$ SELECT set_config('app.tenant', t, false) $$";

/// pg_dump's `set_config`, the application's own function, temporary tables and advisory
/// locks stay with A.
const PG_HELD: &[(usize, &str)] = &[
    (A, "SELECT set_tenant('a')"),
    (A, "SELECT current_setting('app.tenant')"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "SELECT current_setting('app.tenant')"),
    (
        B,
        "SELECT coalesce(nullif(current_setting('app.tenant', true), ''), 'none')",
    ),
    (
        C,
        "SELECT coalesce(nullif(current_setting('app.tenant', true), ''), 'none')",
    ),
    (A, "DISCARD ALL"),
    (
        A,
        "SELECT coalesce(nullif(current_setting('app.tenant', true), ''), 'none')",
    ),
    // Pinned inside a transaction: the connection it already held is kept too.
    (A, "BEGIN"),
    (A, "SELECT note FROM t_plain"),
    (A, "SELECT set_config('search_path', '', false)"),
    (A, "COMMIT"),
    (B, "SELECT note FROM t_plain"),
    (C, "SELECT note FROM t_plain"),
    (A, "SELECT note FROM t_plain"),
    (B, "SELECT note FROM t_plain"),
    (A, "DISCARD ALL"),
    (A, "SELECT pg_catalog.set_config('search_path', '', false)"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "SELECT COUNT(*) FROM public.t_plain"),
    (B, "SELECT COUNT(*) FROM t_order"),
    (C, "SELECT note FROM t_plain"),
    (A, "DISCARD ALL"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "CREATE TEMP TABLE tmp_a (x int4)"),
    (A, "INSERT INTO tmp_a VALUES (1), (2)"),
    (A, "SELECT COUNT(*) FROM tmp_a"),
    (B, "SELECT COUNT(*) FROM tmp_a"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "EXTENDED:SELECT COUNT(*)::text FROM tmp_a"),
    (A, "BEGIN"),
    (A, "INSERT INTO tmp_a VALUES (3)"),
    (A, "SELECT COUNT(*) FROM tmp_a"),
    (A, "INSERT INTO tmp_a VALUES ('x')"),
    (A, "ROLLBACK"),
    (A, "SELECT COUNT(*) FROM tmp_a"),
    (A, "SELECT pg_try_advisory_lock(7)"),
    (
        A,
        "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()",
    ),
    (A, "DROP TABLE tmp_a"),
    (A, "SELECT COUNT(*) FROM tmp_a"),
    (A, "SELECT pg_advisory_unlock_all()"),
    (B, "SELECT COUNT(*) FROM tmp_a"),
    // A cursor held past its transaction is A's, on the connection A keeps.
    (A, "BEGIN"),
    (
        A,
        "DECLARE c_hold CURSOR WITH HOLD FOR SELECT id FROM t_plain",
    ),
    (A, "COMMIT"),
    (B, "FETCH 1 FROM c_hold"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "FETCH 1 FROM c_hold"),
    (A, "FETCH 1 FROM c_hold"),
    (A, "CLOSE ALL"),
    (A, "FETCH 1 FROM c_hold"),
    (B, "DECLARE c_b CURSOR FOR SELECT 1"),
];

const PG_CONTENDED: &[(usize, &str)] = &[
    (A, "SELECT pg_try_advisory_lock(42)"),
    (B, "SELECT pg_try_advisory_lock(42)"),
    (A, "SELECT pg_advisory_unlock(42)"),
    (B, "SELECT pg_try_advisory_lock(42)"),
    (A, "SELECT pg_try_advisory_lock(42)"),
    (B, "SELECT pg_advisory_unlock_all()"),
    (A, "SELECT pg_try_advisory_lock(42)"),
    // LOCK is the transaction's: on every shard of the table, until it ends.
    (B, "SET lock_timeout = '500ms'"),
    (A, "LOCK TABLE t_order"),
    (A, "BEGIN"),
    (A, "LOCK TABLE t_order, t_plain IN SHARE MODE"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (B, "SELECT COUNT(*) FROM t_order"),
    (B, "UPDATE t_order SET price = 1 WHERE order_id = 1"),
    (B, "DELETE FROM t_plain"),
    (A, "COMMIT"),
    (B, "UPDATE t_order SET price = 1 WHERE order_id = 1"),
    (A, "BEGIN"),
    (A, "LOCK t_order IN ACCESS EXCLUSIVE MODE NOWAIT"),
    (B, "SELECT COUNT(*) FROM t_order"),
    (A, "ROLLBACK"),
    (B, "SELECT COUNT(*) FROM t_order"),
    // A sequence's values are the session's that took them.
    (A, "CREATE SEQUENCE ks_seq"),
    (A, "SELECT nextval('ks_seq')"),
    (A, "SELECT COUNT(*) FROM t_order"),
    (A, "SELECT currval('ks_seq')"),
    (B, "SELECT nextval('ks_seq')"),
    (A, "SELECT lastval()"),
    (B, "SELECT currval('ks_seq')"),
    (C, "SELECT lastval()"),
    (C, "SELECT currval('ks_seq')"),
    (A, "DISCARD SEQUENCES"),
    (A, "SELECT lastval()"),
    (B, "SELECT setval('ks_seq', 10)"),
    (B, "SELECT lastval()"),
    (A, "CREATE TEMP TABLE tmp_s (x int4)"),
    (A, "INSERT INTO tmp_s VALUES (1)"),
    (A, "DISCARD TEMP"),
    (A, "SELECT COUNT(*) FROM tmp_s"),
    (C, "DISCARD SEQUENCES"),
    // Values a statement took without pinning (a serial default, on a shared connection)
    // are not read back by the session that keeps that connection next.
    (A, "DISCARD ALL"),
    (
        C,
        "CREATE TABLE t_serial (id serial PRIMARY KEY, note text)",
    ),
    (C, "INSERT INTO t_serial (note) VALUES ('c')"),
    (B, "INSERT INTO t_serial (note) VALUES ('b')"),
    (A, "SELECT nextval('ks_seq')"),
    (A, "SELECT currval('t_serial_id_seq')"),
    (A, "DISCARD ALL"),
];

/// A role without privileges, the server's (both sides see it).
const PG_ROLE: &str = "DO $$ BEGIN CREATE ROLE keyshard_test_role NOLOGIN; \
     EXCEPTION WHEN duplicate_object THEN NULL; END $$";

#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_PG_URL"]
async fn postgres_sessions_keep_their_settings_and_state_to_themselves() {
    let admin_url = std::env::var("KEYSHARD_TEST_PG_URL").expect("KEYSHARD_TEST_PG_URL");
    let admin = connect(&admin_url.parse().unwrap()).await.unwrap();
    admin.batch_execute(PG_ROLE).await.unwrap();
    let mut differences = Vec::new();
    for size in [1, 2] {
        let sides = PgSides::start(size).await;
        for difference in sides.compare(PG_SETTINGS).await {
            differences.push(format!("pool of {size}: {difference}"));
        }
        sides.finish().await;
    }
    let sides = PgSides::start_with(2, Some(PG_FUNCTION)).await;
    differences.extend(sides.compare(PG_HELD).await);
    sides.finish().await;
    let mut sides = PgSides::start(3).await;
    differences.extend(sides.compare(PG_CONTENDED).await);
    // A leaves holding a lock: B gets it once A's shard connection is gone.
    differences.extend(
        sides
            .compare(&[(A, "SELECT pg_try_advisory_lock(9)")])
            .await,
    );
    drop(sides.through.swap_remove(A));
    drop(sides.direct.swap_remove(A));
    for client in [&sides.through[B], &sides.direct[B]] {
        let started = Instant::now();
        loop {
            let got = pg_answer(client, "SELECT pg_try_advisory_lock(9)").await;
            if got == Ok(vec!["Some(\"t\")".to_owned()]) {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "{got:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    sides.finish().await;
    report(differences);
}

/// A function an application's migration creates beside the proxy while it runs, called at
/// once through it: its `set_config` stays with A, as on one database, instead of waiting for
/// the proxy's next read of the routines (30 s) on a connection B then takes.
const PG_FRESH_FUNCTION: &[(usize, &str)] = &[
    (A, "SELECT set_region('eu')"),
    (A, "SELECT current_setting('app.region')"),
    (A, "SELECT current_setting('app.region') FROM t_plain"),
    (B, "SELECT current_setting('app.region', true) FROM t_plain"),
    (C, "SELECT current_setting('app.region', true)"),
    (A, "DISCARD ALL"),
    (B, "SELECT current_setting('app.region', true) FROM t_plain"),
];

#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_PG_URL"]
async fn postgres_a_function_created_beside_the_proxy_pins_at_its_first_call() {
    let sides = PgSides::start(2).await;
    // Read once, so that the proxy knows the functions from before (none).
    let warm = pg_answer(&sides.through[A], "SELECT COUNT(*) FROM t_plain").await;
    assert_eq!(warm, Ok(vec!["Some(\"1\")".to_owned()]));
    let function = "CREATE FUNCTION set_region(r text) RETURNS text LANGUAGE sql AS \
                    $$ SELECT set_config('app.region', r, false) $$";
    for url in [sides.shards.url(0), sides.plain.url(0)] {
        let client = connect(&url.parse().unwrap()).await.unwrap();
        client.batch_execute(function).await.unwrap();
    }
    let differences = sides.compare(PG_FRESH_FUNCTION).await;
    sides.finish().await;
    report(differences);
}

/// A read whose call named no routine, run until the proxy skips that check for its shape
/// (see `shapes::CallsChecked`); then a migration creates a routine of that name, the last
/// step through the proxy, and the same read must pin A again: its `set_config` stays with A.
const PG_SHAPE_BEFORE_FUNCTION: &[(usize, &str)] = &[
    (
        A,
        "SELECT note, note_region(note) FROM t_plain WHERE id = 1",
    ),
    (
        A,
        "SELECT note, note_region(note) FROM t_plain WHERE id = 2",
    ),
    (
        A,
        "SELECT note, note_region(note) FROM t_plain WHERE id = 3",
    ),
    (
        A,
        "SELECT note, note_region(note) FROM t_plain WHERE id = 4",
    ),
];

const PG_SHAPE_AFTER_FUNCTION: &[(usize, &str)] = &[
    (
        A,
        "SELECT note, note_region(note) FROM t_plain WHERE id = 1",
    ),
    (A, "SELECT current_setting('app.region')"),
    (B, "SELECT current_setting('app.region', true) FROM t_plain"),
    (C, "SELECT current_setting('app.region', true)"),
    (A, "SELECT current_setting('app.region') FROM t_plain"),
    (A, "DISCARD ALL"),
    (B, "SELECT current_setting('app.region', true) FROM t_plain"),
];

#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_PG_URL"]
async fn postgres_a_function_created_through_the_proxy_pins_reads_of_a_shape_checked_before() {
    let sides = PgSides::start(2).await;
    let mut differences = sides.compare(PG_SHAPE_BEFORE_FUNCTION).await;
    let function = "CREATE OR REPLACE FUNCTION note_region(r text) RETURNS text \
                    LANGUAGE sql AS $$ SELECT set_config('app.region', r, false) $$";
    // A DDL statement through the proxy runs on one data source: the function is created on
    // each database, then once more through the proxy, which reads the routines again.
    for url in [sides.shards.url(0), sides.shards.url(1)] {
        let shard = connect(&url.parse().unwrap()).await.unwrap();
        shard.batch_execute(function).await.unwrap();
    }
    sides.direct[A].batch_execute(function).await.unwrap();
    sides.through[A].batch_execute(function).await.unwrap();
    differences.extend(sides.compare(PG_SHAPE_AFTER_FUNCTION).await);
    sides.finish().await;
    report(differences);
}

#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_PG_URL"]
async fn postgres_startup_parameters_reach_the_shards() {
    let (shards, proxy) = common::postgres::on_postgres().await;
    let setup = proxy.client().await;
    setup.batch_execute(PG_SETUP).await.unwrap();
    // libpq's PGOPTIONS: settings in the startup message's `options`.
    let mut config = proxy.config("root", "root");
    config.options("-c TimeZone=Asia/Tokyo --statement-timeout=20ms");
    let tokyo = connect(&config).await.unwrap();
    let utc = proxy.client().await;
    utc.batch_execute("SET TIME ZONE 'UTC'").await.unwrap();
    let read = "SELECT created_at::text FROM t_order WHERE order_id = 1";
    for _ in 0..3 {
        assert_eq!(
            pg_answer(&tokyo, read).await,
            Ok(vec!["Some(\"2024-01-02 12:04:05+09\")".to_owned()])
        );
        assert_eq!(
            pg_answer(&utc, read).await,
            Ok(vec!["Some(\"2024-01-02 03:04:05+00\")".to_owned()])
        );
    }
    assert_eq!(
        pg_answer(&tokyo, "SHOW statement_timeout").await,
        Ok(vec!["Some(\"20ms\")".to_owned()])
    );
    assert_eq!(
        pg_answer(&tokyo, "SELECT pg_sleep(0.3)::text FROM t_plain").await,
        Err("57014".to_owned())
    );
    // RESET goes back to the startup value, as on the database.
    tokyo
        .batch_execute("SET TIME ZONE 'UTC'; RESET TimeZone")
        .await
        .unwrap();
    assert_eq!(
        pg_answer(&tokyo, read).await,
        Ok(vec!["Some(\"2024-01-02 12:04:05+09\")".to_owned()])
    );
    drop((tokyo, utc, setup));
    proxy.stop().await;
    shards.cleanup().await;
}

/// The first statements of a `pg_dump --column-inserts` file, then its rows.
const PG_DUMP: &str = "SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;
INSERT INTO public.t_plain (id, note) VALUES (7, 'restored');
INSERT INTO public.t_plain (id, note) VALUES (8, 'restored');
";

/// A dump restored through Keyshard (its `set_config('search_path', '', false)` included)
/// leaves every other client's reads as they were, while the restoring session is open and
/// after psql restored the same file and left.
#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_PG_URL"]
async fn a_restored_dump_leaves_other_clients_reads_alone() {
    // The restoring session and psql's each keep a connection; the others share the third.
    let sides = PgSides::start(3).await;
    let (restoring, other) = (&sides.through[A], &sides.through[B]);
    let count = "SELECT COUNT(*) FROM t_plain";
    restoring.batch_execute(PG_DUMP).await.unwrap();
    for _ in 0..4 {
        assert_eq!(
            pg_answer(other, count).await,
            Ok(vec!["Some(\"3\")".to_owned()])
        );
        // The restoring session itself reads with its empty search_path, as on PostgreSQL.
        assert_eq!(pg_answer(restoring, count).await, Err("42P01".to_owned()));
    }
    let file = std::env::temp_dir().join(common::unique("keyshard_dump"));
    std::fs::write(&file, PG_DUMP.replace("(7,", "(17,").replace("(8,", "(18,")).unwrap();
    let mut psql = std::process::Command::new("psql");
    psql.env("PGPASSWORD", "root")
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p"])
        .arg(sides.proxy.address.port().to_string())
        .args(["-U", "root", "-d", "sharding_db", "-f"])
        .arg(&file);
    // The proxy runs on this test's runtime: psql is waited for off it.
    let out = tokio::task::spawn_blocking(move || psql.output().expect("psql"))
        .await
        .unwrap();
    let _ = std::fs::remove_file(&file);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for client in [other, &sides.through[C]] {
        for _ in 0..4 {
            assert_eq!(
                pg_answer(client, count).await,
                Ok(vec!["Some(\"5\")".to_owned()])
            );
        }
    }
    sides.finish().await;
}

/// Runs a client program to its end off the runtime the proxy runs on, `input` on its stdin;
/// its stdout, or its stderr when it failed.
async fn run_client(
    mut command: std::process::Command,
    input: Option<String>,
) -> Result<String, String> {
    use std::io::Write as _;
    use std::process::Stdio;
    let out = tokio::task::spawn_blocking(move || {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("a client program");
        let mut stdin = child.stdin.take().expect("stdin");
        if let Some(input) = input {
            stdin.write_all(input.as_bytes()).expect("input");
        }
        drop(stdin);
        child.wait_with_output().expect("output")
    })
    .await
    .unwrap();
    match out.status.success() {
        true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
    }
}

/// A MySQL command-line client program (`mariadb-dump`, `mariadb`) for `database` on the
/// server at `port`, as `user` with `password`.
fn mysql_program(program: &str, port: u16, user: &str, password: &str) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    command
        .args(["-h", "127.0.0.1", "-P"])
        .arg(port.to_string())
        .arg(format!("-u{user}"));
    if !password.is_empty() {
        command.arg(format!("-p{password}"));
    }
    command
}

/// `program` for the MariaDB server of `url` (`mysql://user[:password]@host:port/db`), as
/// its user.
fn program_on_server(program: &str, url: &str) -> std::process::Command {
    let server = url.trim_start_matches("mysql://");
    let (user, server) = server.split_once('@').expect("a user in the URL");
    let (user, password) = user.split_once(':').unwrap_or((user, ""));
    let port = server
        .split(['/', ':'])
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(3306);
    mysql_program(program, port, user, password)
}

/// Each row of `t_order` and `t_plain` as one text, by key.
async fn mysql_rows(conn: &mut MySqlConnection) -> Vec<Option<String>> {
    let mut rows = Vec::new();
    for sql in [
        "SELECT CONCAT_WS('|', order_id, user_id, status, created_at, price, doc) FROM t_order \
         ORDER BY order_id",
        "SELECT CONCAT_WS('|', id, note) FROM t_plain ORDER BY id",
    ] {
        let fetched = sqlx::raw_sql(sql).fetch_all(&mut *conn).await.unwrap();
        // As text or bytes: the concatenation's type is the server's choice.
        rows.extend(fetched.iter().map(|r| {
            r.try_get::<Option<String>, _>(0).unwrap_or_else(|_| {
                r.get::<Option<Vec<u8>>, _>(0)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
            })
        }));
    }
    rows
}

/// mariadb-dump of logic tables through Keyshard (versioned comments, `SET @OLD…=@@…, …`,
/// `LOCK TABLES … WRITE` around a multi-row INSERT over both shards, `DISABLE KEYS`), restored
/// with the mariadb client into one plain database and through Keyshard onto fresh shards:
/// the same rows everywhere, and a dump of the restored shards says the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs KEYSHARD_TEST_MYSQL_URL"]
async fn mariadb_dump_through_keyshard_restores_anywhere() {
    let create = "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
                  status VARCHAR(32), created_at DATETIME(3), price DECIMAL(10,2), doc JSON); \
                  CREATE TABLE t_plain (id INT PRIMARY KEY, note TEXT)";
    let (shards, proxy) = common::on_mariadb(create).await;
    let mut conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    sqlx::raw_sql(
        "INSERT INTO t_order VALUES \
         (1, 1, 'it''s', '2026-01-01 10:00:00.125', 1.50, '{\"a\": [1, \"x,y\"]}'), \
         (2, 2, 'back\\\\slash', NULL, 0.00, NULL), \
         (3, 3, 'line\\nbreak ✓', '1999-12-31 23:59:59.999', -2.25, '[]'), \
         (4, 4, NULL, '2026-06-01 00:00:00', NULL, 'null'); \
         INSERT INTO t_plain VALUES (1, 'plain'), (2, NULL)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let expected = mysql_rows(&mut conn).await;
    assert_eq!(expected.len(), 6);

    let port = proxy.address.port();
    let mut dump = mysql_program("mariadb-dump", port, "root", "root");
    dump.args(["sharding_db", "t_order", "t_plain"]);
    let dumped = run_client(dump, None).await.unwrap();
    assert!(dumped.contains("LOCK TABLES `t_order` WRITE"), "{dumped}");

    // Into one plain database.
    let admin_url = std::env::var("KEYSHARD_TEST_MYSQL_URL").unwrap();
    let mut admin = MySqlConnection::connect(&admin_url).await.unwrap();
    let plain = common::unique("keyshard_restored");
    sqlx::raw_sql(&format!("CREATE DATABASE {plain}"))
        .execute(&mut admin)
        .await
        .unwrap();
    // Runs `sql` on the plain database, then restores `dump` into it with the mariadb client.
    let restore_plain = async |sql: &str, dump: String| {
        let mut admin = MySqlConnection::connect(&admin_url).await.unwrap();
        sqlx::raw_sql(&format!("USE {plain}; {sql}"))
            .execute(&mut admin)
            .await
            .unwrap();
        admin.close().await.unwrap();
        let mut restore = program_on_server("mariadb", &admin_url);
        restore.arg(&plain);
        run_client(restore, Some(dump)).await.unwrap();
    };
    restore_plain("DO 0", dumped.clone()).await;
    let (base, _) = admin_url.rsplit_once('/').unwrap();
    let mut plain_conn = MySqlConnection::connect(&format!("{base}/{plain}"))
        .await
        .unwrap();
    assert_eq!(mysql_rows(&mut plain_conn).await, expected);

    // The whole logical database in one consistent read (a configured table never created,
    // t_order_inline, is not in it, as a database has no such table), restored the same.
    let mut whole = mysql_program("mariadb-dump", port, "root", "root");
    whole.args(["--single-transaction", "sharding_db"]);
    let whole = run_client(whole, None).await.unwrap();
    assert!(!whole.contains("t_order_inline"), "{whole}");
    restore_plain("DROP TABLE t_order, t_plain", whole).await;
    assert_eq!(mysql_rows(&mut plain_conn).await, expected);
    // Rows only, some of them, then all of them again.
    let mut some = mysql_program("mariadb-dump", port, "root", "root");
    some.args([
        "--no-create-info",
        "--where=user_id > 2",
        "sharding_db",
        "t_order",
    ]);
    let some = run_client(some, None).await.unwrap();
    assert!(!some.contains("CREATE TABLE"), "{some}");
    restore_plain("DELETE FROM t_order", some).await;
    let kept: Vec<i64> = sqlx::raw_sql("SELECT order_id FROM t_order ORDER BY order_id")
        .fetch_all(&mut plain_conn)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(kept, [3, 4]);
    restore_plain("DELETE FROM t_order", dumped.clone()).await;
    assert_eq!(mysql_rows(&mut plain_conn).await, expected);

    // Through Keyshard onto fresh shards, then dumped again.
    let (fresh, again) = common::on_mariadb("SELECT 1").await;
    let mut restore = mysql_program("mariadb", again.address.port(), "root", "root");
    restore.arg("sharding_db");
    run_client(restore, Some(dumped.clone())).await.unwrap();
    let mut restored = MySqlConnection::connect(&again.url("root", "root"))
        .await
        .unwrap();
    assert_eq!(mysql_rows(&mut restored).await, expected);
    let mut dump = mysql_program("mariadb-dump", again.address.port(), "root", "root");
    dump.args(["--skip-dump-date", "sharding_db", "t_order", "t_plain"]);
    let mut first = mysql_program("mariadb-dump", port, "root", "root");
    first.args(["--skip-dump-date", "sharding_db", "t_order", "t_plain"]);
    assert_eq!(
        run_client(dump, None).await.unwrap(),
        run_client(first, None).await.unwrap()
    );

    for c in [conn, plain_conn, restored] {
        c.close().await.unwrap();
    }
    sqlx::raw_sql(&format!("DROP DATABASE {plain}"))
        .execute(&mut admin)
        .await
        .unwrap();
    proxy.stop().await;
    again.stop().await;
    shards.cleanup().await;
    fresh.cleanup().await;
}

/// A dump of one plain MariaDB database (mariadb-dump straight from it), restored with the
/// mariadb client through Keyshard onto fresh shards: every key kept, every row on the shard
/// its sharding values choose, the same rows read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs KEYSHARD_TEST_MYSQL_URL"]
async fn a_plain_databases_dump_restores_through_keyshard_onto_its_shards() {
    let admin_url = std::env::var("KEYSHARD_TEST_MYSQL_URL").unwrap();
    let mut admin = MySqlConnection::connect(&admin_url).await.unwrap();
    let plain = common::unique("keyshard_dumped");
    sqlx::raw_sql(&format!("CREATE DATABASE {plain}"))
        .execute(&mut admin)
        .await
        .unwrap();
    let (base, _) = admin_url.rsplit_once('/').unwrap();
    let mut plain_conn = MySqlConnection::connect(&format!("{base}/{plain}"))
        .await
        .unwrap();
    sqlx::raw_sql(
        "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
         status VARCHAR(32), created_at DATETIME(3), price DECIMAL(10,2), doc JSON); \
         CREATE TABLE t_plain (id INT PRIMARY KEY, note TEXT); \
         INSERT INTO t_plain VALUES (1, 'a\\tb')",
    )
    .execute(&mut plain_conn)
    .await
    .unwrap();
    for key in 1..=12i64 {
        sqlx::query("INSERT INTO t_order VALUES (?, ?, ?, '2026-01-02 03:04:05.678', 9.99, '[1]')")
            .bind(key)
            .bind(key * 7 % 5)
            .bind(format!("s'{key}"))
            .execute(&mut plain_conn)
            .await
            .unwrap();
    }
    let mut dump = program_on_server("mariadb-dump", &admin_url);
    dump.arg(&plain);
    let dumped = run_client(dump, None).await.unwrap();

    let (shards, proxy) = common::on_mariadb("SELECT 1").await;
    let mut restore = mysql_program("mariadb", proxy.address.port(), "root", "root");
    restore.arg("sharding_db");
    run_client(restore, Some(dumped)).await.unwrap();
    let mut through = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    assert_eq!(
        mysql_rows(&mut through).await,
        mysql_rows(&mut plain_conn).await
    );
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
    assert_eq!(placed, (1..=12).collect::<Vec<i64>>());
    for c in [through, plain_conn] {
        c.close().await.unwrap();
    }
    sqlx::raw_sql(&format!("DROP DATABASE {plain}"))
        .execute(&mut admin)
        .await
        .unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

/// A client whose notifications arrive on the returned channel as (channel, payload).
async fn listening(
    config: &tokio_postgres::Config,
) -> (
    tokio_postgres::Client,
    tokio::sync::mpsc::UnboundedReceiver<(String, String)>,
) {
    let (client, mut connection) = config.connect(tokio_postgres::NoTls).await.unwrap();
    let (send, received) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(Ok(message)) =
            futures_util::future::poll_fn(|cx| connection.poll_message(cx)).await
        {
            if let tokio_postgres::AsyncMessage::Notification(n) = message {
                let _ = send.send((n.channel().to_owned(), n.payload().to_owned()));
            }
        }
    });
    (client, received)
}

/// What arrives within `wait`, sorted.
async fn notifications(
    received: &mut tokio::sync::mpsc::UnboundedReceiver<(String, String)>,
    wait: Duration,
) -> Vec<(String, String)> {
    let mut got = Vec::new();
    let deadline = tokio::time::Instant::now() + wait;
    while let Ok(Some(n)) = tokio::time::timeout_at(deadline, received.recv()).await {
        got.push(n);
    }
    got.sort();
    got
}

/// LISTEN through Keyshard as on one database: A hears what B (and A itself) notifies on its
/// channels, nothing after UNLISTEN, a rolled-back LISTEN or DISCARD ALL; the pooled
/// connections other clients use never listen.
#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_PG_URL"]
async fn postgres_notifications_reach_their_listener_only() {
    let sides = PgSides::start(2).await;
    let plain: tokio_postgres::Config = sides.plain.url(0).parse().unwrap();
    let through = sides.proxy.config("root", "root");
    let mut heard = Vec::new();
    for (config, others) in [(&through, &sides.through), (&plain, &sides.direct)] {
        let (a, mut a_hears) = listening(config).await;
        let b = &others[B];
        a.batch_execute("LISTEN orders; LISTEN \"Mixed\"")
            .await
            .unwrap();
        b.batch_execute(
            "NOTIFY orders, 'first'; SELECT pg_notify('Mixed', 'second'); NOTIFY other, 'nobody'",
        )
        .await
        .unwrap();
        a.batch_execute("NOTIFY orders, 'self'").await.unwrap();
        let first = notifications(&mut a_hears, Duration::from_millis(1500)).await;
        let listening_elsewhere =
            pg_answer(&others[C], "SELECT count(*) FROM pg_listening_channels()").await;
        a.batch_execute("UNLISTEN orders").await.unwrap();
        b.batch_execute("NOTIFY orders, 'after'; NOTIFY \"Mixed\", 'still'")
            .await
            .unwrap();
        let second = notifications(&mut a_hears, Duration::from_millis(800)).await;
        // In a transaction: a rollback undoes LISTEN (to a savepoint too), a commit keeps it.
        a.batch_execute(
            "BEGIN; LISTEN rolled; ROLLBACK; BEGIN; LISTEN kept; SAVEPOINT s; LISTEN undone; \
             ROLLBACK TO SAVEPOINT s; COMMIT",
        )
        .await
        .unwrap();
        b.batch_execute("NOTIFY rolled, 'no'; NOTIFY kept, 'yes'; NOTIFY undone, 'no'")
            .await
            .unwrap();
        let fourth = notifications(&mut a_hears, Duration::from_millis(800)).await;
        // The listening session's own channels, simple and extended protocol.
        let own_simple = common::postgres::simple_rows(&a, "SELECT pg_listening_channels()").await;
        let own_extended: Vec<String> = a
            .query("SELECT * FROM pg_listening_channels()", &[])
            .await
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect();
        let own = (own_simple, own_extended);
        a.batch_execute("DISCARD ALL").await.unwrap();
        b.batch_execute("NOTIFY \"Mixed\", 'discarded'; NOTIFY kept, 'gone'")
            .await
            .unwrap();
        let third = notifications(&mut a_hears, Duration::from_millis(800)).await;
        heard.push((first, listening_elsewhere, second, fourth, third, own));
    }
    assert_eq!(heard[0], heard[1], "Keyshard, then the database");
    assert_eq!(heard[0].5.1, ["Mixed", "kept"], "{:?}", heard[0]);
    assert_eq!(heard[0].0.len(), 3, "{:?}", heard[0]);
    assert_eq!(heard[0].3.len(), 1, "{:?}", heard[0]);
    sides.finish().await;
}

/// A listening session sends long statements (8 MiB, a parameter in the extended protocol and a
/// literal in the simple one) while another session keeps notifying it: the proxy reads a long
/// message in parts, between which it passes notifications on, and every message still
/// arrives whole.
#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_PG_URL"]
async fn long_messages_arrive_whole_while_notifications_go_out() {
    let sides = PgSides::start(2).await;
    let (a, mut a_hears) = listening(&sides.proxy.config("root", "root")).await;
    a.batch_execute("CREATE TABLE long_values (id INT PRIMARY KEY, v TEXT); LISTEN busy")
        .await
        .unwrap();
    let b = &sides.through[B];
    let notifier = async {
        for i in 0..300 {
            b.batch_execute(&format!("NOTIFY busy, '{i}'"))
                .await
                .unwrap();
        }
    };
    let long = "x".repeat(8 << 20);
    let writer = async {
        for id in 0..6 {
            if id % 2 == 0 {
                let sql = "INSERT INTO long_values (id, v) VALUES ($1, $2)";
                a.execute(sql, &[&id, &long]).await.unwrap();
            } else {
                let sql = format!("INSERT INTO long_values (id, v) VALUES ({id}, '{long}')");
                a.batch_execute(&sql).await.unwrap();
            }
        }
    };
    tokio::join!(notifier, writer);
    let lengths = common::postgres::simple_rows(&a, "SELECT length(v) FROM long_values").await;
    assert_eq!(lengths, vec![vec![Some((8 << 20).to_string())]; 6]);
    let heard = notifications(&mut a_hears, Duration::from_millis(1500)).await;
    assert_eq!(heard.len(), 300);
    sides.finish().await;
}
