//! Read/write splitting against real replicas (`.ci/replicas.sh`: a MariaDB primary with a
//! GTID replica, a PostgreSQL primary with a streaming standby), through both frontends.
//!
//! Eight clients each insert a row with a generated key and read it back by key, outside any
//! transaction, for a bounded time. With the replica caught up, reads are served by it (the
//! share is printed). With the replica held a second behind (MariaDB's `MASTER_DELAY`,
//! PostgreSQL's `recovery_min_apply_delay`), no read misses its own write under `causal`
//! consistency, the default; under `eventual` the same loop does miss, so the test can fail.
//! Reads that must see the primary (in a transaction, locking, `writeRouteOnly`) find a
//! fresh row even then.
//!
//! `KEYSHARD_TEST_MYSQL_REPLICATION` and `KEYSHARD_TEST_PG_REPLICATION` hold the primary's and
//! the replica's server URLs, separated by a space. Each test changes its replica's delay, so
//! the two use different servers and nothing else here touches them.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::common::Proxy;
use crate::common::postgres::{PgProxy, connect};
use crate::common::throwaway::ThrowawayMariaDb;
use sqlx::{Connection, Executor, Row};

const CLIENTS: u64 = 8;
const LOOP: Duration = Duration::from_millis(2_500);

/// The primary's and the replica's server URLs (no database) from `var`.
fn servers(var: &str) -> (String, String) {
    let value = std::env::var(var).unwrap_or_else(|_| panic!("{var} is not set"));
    let mut urls = value
        .split_whitespace()
        .map(|u| u.trim_end_matches('/').to_owned());
    match (urls.next(), urls.next()) {
        (Some(primary), Some(replica)) => (primary, replica),
        _ => panic!("{var}: two server URLs, the primary's and the replica's"),
    }
}

/// A configuration over one read/write group `rw_ds` whose sharded table `t_rw` has two
/// actual tables, with the frontend of the data sources' kind on a free port.
fn yaml(primary: &str, replica: &str, consistency: &str) -> String {
    let frontend = match primary.starts_with("mysql") {
        true => "mysql",
        false => "postgres",
    };
    format!(
        "databaseName: sharding_db
mode:
  type: Standalone
  repository: {{type: JDBC, props: {{data-source: rw_ds}}}}
dataSources:
  write_ds: {{url: '{primary}', maxPoolSize: 2}}
  read_ds: {{url: '{replica}', maxPoolSize: 1}}
rules:
- !READWRITE_SPLITTING
  dataSourceGroups:
    rw_ds:
      writeDataSourceName: write_ds
      readDataSourceNames: [read_ds]
      loadBalancerName: rr
  loadBalancers:
    rr: {{type: ROUND_ROBIN}}
- !SHARDING
  tables:
    t_rw:
      actualDataNodes: rw_ds.t_rw_${{0..1}}
      tableStrategy:
        standard: {{shardingColumn: user_id, shardingAlgorithmName: by_user}}
      keyGenerateStrategy: {{column: id, keyGeneratorName: snowflake}}
  shardingAlgorithms:
    by_user: {{type: MOD, props: {{sharding-count: 2}}}}
  keyGenerators:
    snowflake: {{type: SNOWFLAKE}}
props:
  readwrite-consistency: {consistency}
  replica-check-interval-milliseconds: 100
server:
  {frontend}: {{listen: 127.0.0.1:0}}
authority:
  users:
    - user: root@%
      password: root
"
    )
}

/// What one phase of write-then-read loops saw.
#[derive(Debug, Default)]
struct Tally {
    reads: AtomicU64,
    misses: AtomicU64,
}

impl Tally {
    fn read(&self, found: bool) {
        self.reads.fetch_add(1, Ordering::Relaxed);
        if !found {
            self.misses.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn counts(&self) -> (u64, u64) {
        (
            self.reads.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }
}

/// A proxy serving one of its frontends.
enum Front {
    MySql(Proxy),
    Postgres(PgProxy),
}

impl Front {
    async fn start(yaml: &str) -> Self {
        match yaml.contains("  mysql: {listen") {
            true => Front::MySql(Proxy::start(yaml).await),
            false => Front::Postgres(PgProxy::start(yaml).await),
        }
    }

    /// The reads the replica answered so far, and its status, from `SHOW STATUS FROM
    /// READWRITE_SPLITTING RULES`.
    async fn replica_reads(&self) -> (u64, String) {
        let (reads, status) = match self {
            Front::MySql(proxy) => {
                let mut conn = sqlx::MySqlConnection::connect(&proxy.url("root", "root"))
                    .await
                    .unwrap();
                let row = sqlx::raw_sql("SHOW STATUS FROM READWRITE_SPLITTING RULES")
                    .fetch_one(&mut conn)
                    .await
                    .unwrap();
                (row.get::<String, _>("reads"), row.get("status"))
            }
            Front::Postgres(proxy) => {
                let client = proxy.client().await;
                let row = client
                    .query_one("SHOW STATUS FROM READWRITE_SPLITTING RULES", &[])
                    .await
                    .unwrap();
                (row.get::<_, String>("reads"), row.get("status"))
            }
        };
        (reads.parse().unwrap(), status)
    }

    /// Waits until the replica is in rotation.
    async fn in_rotation(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if self.replica_reads().await.1 == "ENABLED" {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the replica never came into rotation"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Runs one phase of write-then-read loops and prints what it saw: (reads, misses,
    /// share served by the replica).
    async fn phase(&self, name: &str) -> (u64, u64, f64) {
        let (before, _) = self.replica_reads().await;
        let (reads, misses) = match self {
            Front::MySql(proxy) => mysql_loops(proxy).await,
            Front::Postgres(proxy) => pg_loops(proxy).await,
        };
        let (after, _) = self.replica_reads().await;
        let share = (after - before) as f64 / reads.max(1) as f64;
        println!(
            "{name}: {reads} write-then-read pairs, {misses} reads missed their write, {:.0} % \
             of reads served by the replica",
            share * 100.0
        );
        (reads, misses, share)
    }

    async fn stop(self) {
        match self {
            Front::MySql(proxy) => proxy.stop().await,
            Front::Postgres(proxy) => proxy.stop().await,
        }
    }
}

/// Eight MySQL clients inserting and reading back their rows for [`LOOP`]: (reads, misses).
async fn mysql_loops(proxy: &Proxy) -> (u64, u64) {
    let url = proxy.url("root", "root");
    let tally = Arc::new(Tally::default());
    let clients = (0..CLIENTS).map(|user| {
        let (url, tally) = (url.clone(), Arc::clone(&tally));
        tokio::spawn(async move {
            let mut conn = sqlx::MySqlConnection::connect(&url).await.unwrap();
            let end = Instant::now() + LOOP;
            while Instant::now() < end {
                let id = sqlx::query("INSERT INTO t_rw (user_id, note) VALUES (?, 'mine')")
                    .bind(user as i64)
                    .execute(&mut conn)
                    .await
                    .unwrap()
                    .last_insert_id();
                let found: Option<String> =
                    sqlx::query_scalar("SELECT note FROM t_rw WHERE user_id = ? AND id = ?")
                        .bind(user as i64)
                        .bind(id as i64)
                        .fetch_optional(&mut conn)
                        .await
                        .unwrap();
                tally.read(found.is_some());
            }
        })
    });
    for client in futures_util::future::join_all(clients).await {
        client.unwrap();
    }
    tally.counts()
}

/// The same loops over the PostgreSQL frontend, `RETURNING` the key.
async fn pg_loops(proxy: &PgProxy) -> (u64, u64) {
    let tally = Arc::new(Tally::default());
    let clients = (0..CLIENTS).map(|user| {
        let (config, tally) = (proxy.config("root", "root"), Arc::clone(&tally));
        tokio::spawn(async move {
            let client = connect(&config).await.unwrap();
            let end = Instant::now() + LOOP;
            let user = user as i32;
            while Instant::now() < end {
                let row = client
                    .query_one(
                        "INSERT INTO t_rw (user_id, note) VALUES ($1, 'mine') RETURNING id",
                        &[&user],
                    )
                    .await
                    .unwrap();
                let id: i64 = row.get(0);
                let found = client
                    .query_opt(
                        "SELECT note FROM t_rw WHERE user_id = $1 AND id = $2",
                        &[&user, &id],
                    )
                    .await
                    .unwrap();
                tally.read(found.is_some());
            }
        })
    });
    for client in futures_util::future::join_all(clients).await {
        client.unwrap();
    }
    tally.counts()
}

/// What the `mariadb` client prints (tab-separated, no headers) for `sql` on `address`
/// (host:port), as `user` (password `root` when a user is named) in `database`. Run off the
/// runtime, whose thread also serves the proxy the client talks to.
async fn mariadb_client(address: &str, user: &str, database: &str, sql: &str) -> String {
    let args = [address, user, database, sql].map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let [address, user, database, sql] = args;
        run_mariadb_client(&address, &user, &database, &sql)
    })
    .await
    .unwrap()
}

fn run_mariadb_client(address: &str, user: &str, database: &str, sql: &str) -> String {
    let (host, port) = address.split_once(':').expect("host:port");
    let mut command = std::process::Command::new("mariadb");
    command.args([
        "--protocol=tcp",
        "-h",
        host,
        "-P",
        port,
        "-N",
        "-B",
        "-D",
        database,
    ]);
    if user.is_empty() {
        command.arg("-uroot");
    } else {
        command.args([format!("-u{user}"), "-proot".to_owned()]);
    }
    let out = command
        .args(["-e", sql])
        .output()
        .expect("the mariadb client");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Inserts a row for user 1 and reads it back with `read` (its key the one parameter).
async fn fresh_read(conn: &mut sqlx::MySqlConnection, read: &str) -> Option<String> {
    let id = sqlx::query("INSERT INTO t_rw (user_id, note) VALUES (1, 'fresh')")
        .execute(&mut *conn)
        .await
        .unwrap()
        .last_insert_id();
    sqlx::query_scalar(read)
        .bind(id as i64)
        .fetch_optional(conn)
        .await
        .unwrap()
}

#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_MYSQL_REPLICATION (a MariaDB primary and replica, .ci/replicas.sh)"]
async fn mariadb_reads_see_their_own_writes_on_a_lagging_replica() {
    let (primary, replica) = servers("KEYSHARD_TEST_MYSQL_REPLICATION");
    let database = common::unique("ks_rw");
    let mut admin = sqlx::MySqlConnection::connect(&format!("{primary}/mysql"))
        .await
        .unwrap();
    let mut follower = sqlx::MySqlConnection::connect(&format!("{replica}/mysql"))
        .await
        .unwrap();
    let delay = async |follower: &mut sqlx::MySqlConnection, seconds: u32| {
        follower
            .execute(
                format!("STOP SLAVE; CHANGE MASTER TO MASTER_DELAY = {seconds}; START SLAVE")
                    .as_str(),
            )
            .await
            .unwrap();
    };
    delay(&mut follower, 0).await;
    admin
        .execute(format!("CREATE DATABASE {database}").as_str())
        .await
        .unwrap();
    let urls = (
        format!("{primary}/{database}"),
        format!("{replica}/{database}"),
    );
    let causal = Front::start(&yaml(&urls.0, &urls.1, "causal")).await;
    let Front::MySql(proxy) = &causal else {
        unreachable!()
    };
    let url = proxy.url("root", "root");
    let mut conn = sqlx::MySqlConnection::connect(&url).await.unwrap();
    conn.execute(
        "CREATE TABLE t_rw (id BIGINT PRIMARY KEY, user_id INT, note VARCHAR(20), \
         created_at TIMESTAMP(3) NULL, price DECIMAL(12, 2), doc JSON, uid UUID)",
    )
    .await
    .unwrap();
    causal.in_rotation().await;

    let (reads, misses, share) = causal.phase("MariaDB, caught up, causal").await;
    assert!(reads > 0 && misses == 0, "{misses} of {reads}");
    assert!(share > 0.5, "replicas served {share} of the reads");

    // Typed values read on the replica, in a session with its own time zone, as the mariadb
    // client shows them: the same as the primary's table shows them directly.
    let (before, _) = causal.replica_reads().await;
    let write = "INSERT INTO t_rw (user_id, note, created_at, price, doc, uid) VALUES \
        (3, 'typed', '2026-12-06 10:11:12.345', 1234.50, '{\"a\": [1, 2.5, null]}', \
         'c56a4180-65aa-42ec-a945-5fd21dec0538'), (3, NULL, NULL, -0.01, NULL, NULL)";
    let read = "SET time_zone = '+09:00'; SELECT id IS NOT NULL, note, created_at, price, doc, \
        uid FROM {table} WHERE user_id = 3 ORDER BY price";
    let through = mariadb_client(
        &proxy.address.to_string(),
        "root",
        "sharding_db",
        &format!("{write}; {}", read.replace("{table}", "t_rw")),
    )
    .await;
    let (host_port, _) = primary
        .trim_start_matches("mysql://root@")
        .split_once('/')
        .unwrap_or((primary.trim_start_matches("mysql://root@"), ""));
    let direct = mariadb_client(host_port, "", &database, &read.replace("{table}", "t_rw_1")).await;
    assert_eq!(through, direct);
    assert!(
        through.contains("1234.50") && through.contains("19:11:12.345"),
        "{through}"
    );
    assert!(
        causal.replica_reads().await.0 > before,
        "the typed read was not the replica's"
    );

    delay(&mut follower, 1).await;
    causal.in_rotation().await;
    let (reads, misses, _) = causal.phase("MariaDB, a second behind, causal").await;
    assert!(reads > 0 && misses == 0, "{misses} of {reads}");

    let eventual = Front::start(&yaml(&urls.0, &urls.1, "eventual")).await;
    eventual.in_rotation().await;
    let (reads, misses, _) = eventual.phase("MariaDB, a second behind, eventual").await;
    assert!(
        misses > 0,
        "eventual consistency missed none of {reads} reads"
    );

    // What must see the primary does, even under eventual consistency.
    let Front::MySql(proxy) = &eventual else {
        unreachable!()
    };
    let mut conn = sqlx::MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    for read in [
        "SELECT note FROM t_rw WHERE user_id = 1 AND id = ? FOR UPDATE",
        "/* SHARDINGSPHERE_HINT: writeRouteOnly=true */ SELECT note FROM t_rw WHERE user_id = 1 AND id = ?",
    ] {
        assert_eq!(
            fresh_read(&mut conn, read).await.as_deref(),
            Some("fresh"),
            "{read}"
        );
    }
    let read = "SELECT note FROM t_rw WHERE user_id = 1 AND id = ?";
    // The session's hint (ShardingSphere's DistSQL) sends its reads to the primary.
    conn.execute("SET READWRITE_SPLITTING HINT SOURCE = write")
        .await
        .unwrap();
    assert_eq!(
        fresh_read(&mut conn, read).await.as_deref(),
        Some("fresh"),
        "hint"
    );
    conn.execute("CLEAR READWRITE_SPLITTING HINT")
        .await
        .unwrap();
    let mut transaction = conn.begin().await.unwrap();
    let found = fresh_read(&mut transaction, read).await;
    assert_eq!(found.as_deref(), Some("fresh"), "inside a transaction");
    transaction.commit().await.unwrap();

    // `primary`: once a session wrote, its reads stay on the primary.
    let primary_reads = Front::start(&yaml(&urls.0, &urls.1, "primary")).await;
    primary_reads.in_rotation().await;
    let (reads, misses, share) = primary_reads
        .phase("MariaDB, a second behind, primary")
        .await;
    assert!(
        reads > 0 && misses == 0 && share == 0.0,
        "{misses} of {reads}, {share}"
    );

    delay(&mut follower, 0).await;
    causal.stop().await;
    eventual.stop().await;
    primary_reads.stop().await;
    admin
        .execute(format!("DROP DATABASE {database}").as_str())
        .await
        .unwrap();
}

#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_PG_REPLICATION (a PostgreSQL primary and standby, .ci/replicas.sh)"]
async fn postgres_reads_see_their_own_writes_on_a_lagging_standby() {
    let (primary, replica) = servers("KEYSHARD_TEST_PG_REPLICATION");
    let database = common::unique("ks_rw");
    let admin = connect(&primary.parse().unwrap()).await.unwrap();
    let standby = connect(&replica.parse().unwrap()).await.unwrap();
    let delay = async |standby: &tokio_postgres::Client, delay: &str| {
        standby
            .batch_execute(&format!(
                "ALTER SYSTEM SET recovery_min_apply_delay = '{delay}'"
            ))
            .await
            .unwrap();
        standby
            .batch_execute("SELECT pg_reload_conf()")
            .await
            .unwrap();
    };
    delay(&standby, "0").await;
    admin
        .batch_execute(&format!("CREATE DATABASE {database}"))
        .await
        .unwrap();
    let urls = (
        format!("{primary}/{database}"),
        format!("{replica}/{database}"),
    );
    let causal = Front::start(&yaml(&urls.0, &urls.1, "causal")).await;
    let Front::Postgres(proxy) = &causal else {
        unreachable!()
    };
    let client = proxy.client().await;
    client
        .batch_execute(
            "CREATE TABLE t_rw (id BIGINT PRIMARY KEY, user_id INT, note TEXT, \
             created_at TIMESTAMPTZ, price NUMERIC(12, 2), doc JSONB, uid UUID)",
        )
        .await
        .unwrap();
    causal.in_rotation().await;

    let (reads, misses, share) = causal.phase("PostgreSQL, caught up, causal").await;
    assert!(reads > 0 && misses == 0, "{misses} of {reads}");
    assert!(share > 0.5, "replicas served {share} of the reads");

    // Typed values read on the standby, in a session with its own time zone: the same text as
    // the primary's table gives directly.
    let (before, _) = causal.replica_reads().await;
    client
        .batch_execute(
            "INSERT INTO t_rw (user_id, note, created_at, price, doc, uid) VALUES \
             (3, 'typed', '2026-12-06 10:11:12.345+00', 1234.50, '{\"a\": [1, 2.5, null]}', \
              'c56a4180-65aa-42ec-a945-5fd21dec0538'), (3, NULL, NULL, -0.01, NULL, NULL)",
        )
        .await
        .unwrap();
    let read = "SELECT note, created_at, price, doc, uid FROM {table} WHERE user_id = 3 \
                ORDER BY price";
    let texts = async |client: &tokio_postgres::Client, table: &str| {
        client
            .batch_execute("SET TIME ZONE 'Asia/Tokyo'")
            .await
            .unwrap();
        let messages = client
            .simple_query(&read.replace("{table}", table))
            .await
            .unwrap();
        common::postgres::texts(&messages)
    };
    let through = texts(&client, "t_rw").await;
    let direct = connect(&urls.0.parse().unwrap()).await.unwrap();
    assert_eq!(through, texts(&direct, "t_rw_1").await);
    assert_eq!(through[1][1].as_deref(), Some("2026-12-06 19:11:12.345+09"));
    assert!(
        causal.replica_reads().await.0 > before,
        "the typed read was not the standby's"
    );

    delay(&standby, "1s").await;
    let (reads, misses, _) = causal.phase("PostgreSQL, a second behind, causal").await;
    assert!(reads > 0 && misses == 0, "{misses} of {reads}");

    let eventual = Front::start(&yaml(&urls.0, &urls.1, "eventual")).await;
    eventual.in_rotation().await;
    let (reads, misses, _) = eventual
        .phase("PostgreSQL, a second behind, eventual")
        .await;
    assert!(
        misses > 0,
        "eventual consistency missed none of {reads} reads"
    );

    let Front::Postgres(proxy) = &eventual else {
        unreachable!()
    };
    let client = proxy.client().await;
    for read in [
        "SELECT note FROM t_rw WHERE user_id = 1 AND id = $1 FOR UPDATE",
        "SELECT note, nextval('t_rw_seq') FROM t_rw WHERE user_id = 1 AND id = $1",
    ] {
        client
            .batch_execute("CREATE SEQUENCE IF NOT EXISTS t_rw_seq")
            .await
            .unwrap();
        let id: i64 = client
            .query_one(
                "INSERT INTO t_rw (user_id, note) VALUES (1, 'fresh') RETURNING id",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        let found = client.query_opt(read, &[&id]).await.unwrap();
        assert_eq!(
            found.map(|r| r.get::<_, String>(0)).as_deref(),
            Some("fresh"),
            "{read}"
        );
    }

    // transactionalReadQueryStrategy: DYNAMIC, the standby still behind: a transaction's read
    // goes to the standby only while the transaction has not written there, and a session's
    // read still waits for its own committed write.
    let dynamic = Front::start(&yaml(&urls.0, &urls.1, "causal").replace(
        "loadBalancerName: rr",
        "loadBalancerName: rr\n      transactionalReadQueryStrategy: DYNAMIC",
    ))
    .await;
    dynamic.in_rotation().await;
    let Front::Postgres(proxy) = &dynamic else {
        unreachable!()
    };
    let (other, mine) = (proxy.client().await, proxy.client().await);
    let insert = "INSERT INTO t_rw (user_id, note) VALUES (2, 'fresh') RETURNING id";
    let read = "SELECT note FROM t_rw WHERE user_id = 2 AND id = $1";
    let theirs: i64 = other.query_one(insert, &[]).await.unwrap().get(0);
    mine.batch_execute("BEGIN").await.unwrap();
    let (before, _) = dynamic.replica_reads().await;
    assert!(
        mine.query_opt(read, &[&theirs]).await.unwrap().is_none(),
        "read on the standby"
    );
    assert_eq!(dynamic.replica_reads().await.0, before + 1);
    mine.execute(
        "UPDATE t_rw SET note = 'seen' WHERE user_id = 2 AND id = $1",
        &[&theirs],
    )
    .await
    .unwrap();
    let found = mine.query_opt(read, &[&theirs]).await.unwrap();
    assert_eq!(
        found.map(|r| r.get::<_, String>(0)).as_deref(),
        Some("seen")
    );
    mine.batch_execute("COMMIT").await.unwrap();
    let own: i64 = mine.query_one(insert, &[]).await.unwrap().get(0);
    mine.batch_execute("BEGIN").await.unwrap();
    let found = mine.query_opt(read, &[&own]).await.unwrap();
    assert_eq!(
        found.map(|r| r.get::<_, String>(0)).as_deref(),
        Some("fresh"),
        "own write"
    );
    mine.batch_execute("COMMIT").await.unwrap();

    delay(&standby, "0").await;
    drop((client, other, mine));
    causal.stop().await;
    eventual.stop().await;
    dynamic.stop().await;
    admin
        .batch_execute(&format!("DROP DATABASE {database} WITH (FORCE)"))
        .await
        .unwrap();
}

/// A MariaDB replica of its own for a test to kill: a throwaway server following the primary
/// by GTID from its position now, and only `database` (what other tests write meanwhile is in
/// databases it does not have).
struct ThrowawayReplica(ThrowawayMariaDb);

impl ThrowawayReplica {
    async fn start(primary: &str, database: &str) -> Self {
        // Any id but the primary's.
        let server = ThrowawayMariaDb::start(&[
            format!("--server-id={}", 100 + std::process::id() % 100_000),
            format!("--replicate-wild-do-table={database}.%"),
        ])
        .await;
        let mut conn = sqlx::MySqlConnection::connect(&server.url("mysql"))
            .await
            .unwrap();
        let (host, primary_port) = primary
            .trim_start_matches("mysql://")
            .rsplit_once('@')
            .map(|(_, address)| address)
            .and_then(|a| a.split_once(':'))
            .expect("a primary URL with host and port");
        // From the primary's position now: what the test creates after, not the primary's
        // whole history (whose oldest binlogs may be gone).
        let mut admin = sqlx::MySqlConnection::connect(&format!("{primary}/mysql"))
            .await
            .unwrap();
        let position: String = sqlx::query_scalar("SELECT CAST(@@GLOBAL.gtid_binlog_pos AS CHAR)")
            .fetch_one(&mut admin)
            .await
            .unwrap();
        conn.execute(
            format!(
                "SET GLOBAL gtid_slave_pos = '{position}'; CHANGE MASTER TO MASTER_HOST = \
                 '{host}', MASTER_PORT = {primary_port}, MASTER_USER = 'root', \
                 MASTER_USE_GTID = slave_pos; START SLAVE"
            )
            .as_str(),
        )
        .await
        .unwrap();
        Self(server)
    }
}

impl std::ops::Deref for ThrowawayReplica {
    type Target = ThrowawayMariaDb;
    fn deref(&self) -> &ThrowawayMariaDb {
        &self.0
    }
}

impl std::ops::DerefMut for ThrowawayReplica {
    fn deref_mut(&mut self) -> &mut ThrowawayMariaDb {
        &mut self.0
    }
}

#[tokio::test]
#[ignore = "needs KEYSHARD_TEST_MYSQL_REPLICATION (a MariaDB primary and replica, .ci/replicas.sh)"]
async fn a_replica_killed_under_read_load_costs_no_read_and_comes_back() {
    let (primary, replica) = servers("KEYSHARD_TEST_MYSQL_REPLICATION");
    let database = common::unique("ks_rw_kill");
    let mut doomed = ThrowawayReplica::start(&primary, &database).await;
    let mut admin = sqlx::MySqlConnection::connect(&format!("{primary}/mysql"))
        .await
        .unwrap();
    admin
        .execute(format!("CREATE DATABASE {database}").as_str())
        .await
        .unwrap();
    // Two replicas, the shared one and the doomed one, in turn.
    let yaml = yaml(
        &format!("{primary}/{database}"),
        &format!("{replica}/{database}"),
        "eventual",
    )
    .replace(
        "  read_ds: {url:",
        &format!(
            "  doomed_ds: {{url: '{}'}}\n  read_ds: {{url:",
            doomed.url(&database)
        ),
    )
    .replace("[read_ds]", "[read_ds, doomed_ds]");
    let proxy = Proxy::start(&yaml).await;
    let url = proxy.url("root", "root");
    let mut conn = sqlx::MySqlConnection::connect(&url).await.unwrap();
    conn.execute("CREATE TABLE t_rw (id BIGINT PRIMARY KEY, user_id INT, note VARCHAR(20))")
        .await
        .unwrap();
    for user in 0..CLIENTS {
        // Not id 0, which MySQL's rule (and Keyshard's) takes as "generate one".
        let id = user + 1;
        conn.execute(
            format!("INSERT INTO t_rw (id, user_id, note) VALUES ({id}, {user}, 'seed')").as_str(),
        )
        .await
        .unwrap();
    }
    let status = async || {
        let rows = sqlx::raw_sql("SHOW STATUS FROM READWRITE_SPLITTING RULES")
            .fetch_all(&mut sqlx::MySqlConnection::connect(&url).await.unwrap())
            .await
            .unwrap();
        rows.iter()
            .map(|r| {
                (
                    r.get::<String, _>("storage_unit"),
                    r.get::<String, _>("status"),
                    r.get::<String, _>("reads"),
                )
            })
            .collect::<Vec<_>>()
    };
    let doomed_state = async || {
        let all = status().await;
        let (_, state, reads) = all
            .into_iter()
            .find(|(name, _, _)| name == "doomed_ds")
            .unwrap();
        (state, reads.parse::<u64>().unwrap())
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while status()
        .await
        .iter()
        .any(|(_, state, _)| state != "ENABLED")
    {
        assert!(Instant::now() < deadline, "{:?}", status().await);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Both replicas have the rows before the reads start.
    for server in [
        replica.clone(),
        doomed.url("").trim_end_matches('/').to_owned(),
    ] {
        let mut direct = sqlx::MySqlConnection::connect(&format!("{server}/mysql"))
            .await
            .unwrap();
        let count = format!(
            "SELECT (SELECT COUNT(*) FROM {database}.t_rw_0) + (SELECT COUNT(*) FROM {database}.t_rw_1)"
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while sqlx::query_scalar::<_, i64>(&count)
            .fetch_one(&mut direct)
            .await
            .unwrap_or(0)
            < CLIENTS as i64
        {
            assert!(Instant::now() < deadline, "{server} did not catch up");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    let errors = Arc::new(std::sync::Mutex::new(Vec::new()));
    let reads = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let clients = (0..CLIENTS).map(|user| {
        let (url, errors, reads) = (url.clone(), Arc::clone(&errors), Arc::clone(&reads));
        tokio::spawn(async move {
            let mut conn = sqlx::MySqlConnection::connect(&url).await.unwrap();
            while started.elapsed() < Duration::from_secs(4) {
                let read: Result<Option<String>, _> =
                    sqlx::query_scalar("SELECT note FROM t_rw WHERE user_id = ? AND id = ?")
                        .bind(user as i64)
                        .bind(user as i64 + 1)
                        .fetch_optional(&mut conn)
                        .await;
                match read {
                    Ok(note) => {
                        assert_eq!(
                            note.as_deref(),
                            Some("seed"),
                            "user {user} at {:?}",
                            started.elapsed()
                        );
                        reads.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => errors
                        .lock()
                        .unwrap()
                        .push((started.elapsed(), e.to_string())),
                }
            }
        })
    });
    let clients = futures_util::future::join_all(clients);
    let kill = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let served_before = doomed_state().await.1;
        doomed.kill();
        let killed = started.elapsed();
        // Out of rotation within a second.
        loop {
            let (state, _) = doomed_state().await;
            if state == "DISABLED" {
                break;
            }
            assert!(
                started.elapsed() - killed < Duration::from_secs(1),
                "still {state}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        (served_before, killed)
    };
    let (results, (served_before, killed)) = tokio::join!(clients, kill);
    for result in results {
        result.unwrap();
    }
    let errors = errors.lock().unwrap().clone();
    println!(
        "{} reads in 4 s, the doomed replica served {served_before} before its kill at {killed:?}; \
         errors: {errors:?}",
        reads.load(Ordering::Relaxed)
    );
    assert!(
        served_before > 0,
        "the doomed replica served no read before its kill"
    );
    // At most the statements in flight on it when it died (here: none reach the client, since
    // a read whose replica fails before any row went out runs again on the primary).
    assert!(errors.len() as u64 <= CLIENTS, "{errors:?}");

    // Back in rotation once it runs again, and serving reads.
    doomed.run().await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (state, _) = doomed_state().await;
        if state == "ENABLED" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the restarted replica stayed {state}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (_, before) = doomed_state().await;
    for user in 0..CLIENTS {
        let note: String = sqlx::query_scalar("SELECT note FROM t_rw WHERE user_id = ? AND id = ?")
            .bind(user as i64)
            .bind(user as i64 + 1)
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(note, "seed");
    }
    assert!(
        doomed_state().await.1 > before,
        "the restarted replica serves no read"
    );

    proxy.stop().await;
    drop(doomed);
    admin
        .execute(format!("DROP DATABASE {database}").as_str())
        .await
        .unwrap();
}
