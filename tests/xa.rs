//! Transactions across data sources when something dies mid-commit: `keyshard serve` processes
//! crashed at each point of the XA commit protocol (`KEYSHARD_FAILPOINT`) with a second
//! instance recovering; a LOCAL commit that fails half-way; and a shard server killed with
//! SIGKILL under a load of two-row cross-shard INSERTs.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{TempDir, free_port, serve, serve_with};
use sqlx::{Connection, Executor, MySqlConnection, PgConnection, Row};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Db {
    MariaDb,
    Postgres,
}

const TABLE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

/// Two databases, one per data source; `servers[i]` is the server (URL without database) of
/// data source i.
struct Shards {
    db: Db,
    servers: [String; 2],
    names: [String; 2],
    /// A database of its own on server 0, for a repository apart from the shards.
    repository: String,
}

fn admin_url(db: Db) -> String {
    let variable = match db {
        Db::MariaDb => "KEYSHARD_TEST_MYSQL_URL",
        Db::Postgres => "KEYSHARD_TEST_PG_URL",
    };
    std::env::var(variable).unwrap_or_else(|_| panic!("{variable}"))
}

/// Runs `sql` on `url` and gives the first column of each row, as text.
async fn query(db: Db, url: &str, sql: &str) -> Vec<String> {
    match db {
        Db::MariaDb => {
            let mut conn = MySqlConnection::connect(url).await.unwrap();
            let rows = conn.fetch_all(sqlx::raw_sql(sql)).await.unwrap();
            rows.iter()
                .map(|r| {
                    r.try_get::<String, _>(0)
                        .or_else(|_| r.try_get::<i64, _>(0).map(|n| n.to_string()))
                        .or_else(|_| {
                            r.try_get::<Vec<u8>, _>(0)
                                .map(|b| String::from_utf8_lossy(&b).into_owned())
                        })
                        .unwrap()
                })
                .collect()
        }
        Db::Postgres => {
            let mut conn = PgConnection::connect(url).await.unwrap();
            let rows = conn.fetch_all(sqlx::raw_sql(sql)).await.unwrap();
            rows.iter()
                .map(|r| {
                    r.try_get::<String, _>(0)
                        .or_else(|_| r.try_get::<i64, _>(0).map(|n| n.to_string()))
                        .unwrap()
                })
                .collect()
        }
    }
}

impl Shards {
    async fn new(db: Db, tag: &str, servers: [String; 2]) -> Self {
        let base = format!("keyshard_xa_{tag}_{}", std::process::id());
        let shards = Self {
            db,
            servers,
            names: [format!("{base}_0"), format!("{base}_1")],
            repository: format!("{base}_repo"),
        };
        for (i, name) in shards.databases() {
            let admin = shards.admin(i);
            query(db, &admin, &format!("DROP DATABASE IF EXISTS {name}")).await;
            query(db, &admin, &format!("CREATE DATABASE {name}")).await;
        }
        shards
    }

    /// On the machine's shared server.
    async fn shared(db: Db, tag: &str) -> Self {
        let admin = admin_url(db);
        let (server, _) = admin.rsplit_once('/').unwrap();
        Self::new(db, tag, [server.to_owned(), server.to_owned()]).await
    }

    fn admin(&self, i: usize) -> String {
        match self.db {
            Db::MariaDb => format!("{}/mysql", self.servers[i]),
            Db::Postgres => format!("{}/postgres", self.servers[i]),
        }
    }

    fn url(&self, i: usize) -> String {
        format!("{}/{}", self.servers[i], self.names[i])
    }

    /// Rows whose status is `tag`, over every table of both data sources.
    async fn count(&self, tag: &str) -> usize {
        let mut total = 0;
        for i in 0..2 {
            for table in 0..2 {
                let sql = format!("SELECT COUNT(*) FROM t_order_{table} WHERE status = '{tag}'");
                total += query(self.db, &self.url(i), &sql).await[0]
                    .parse::<usize>()
                    .unwrap();
            }
        }
        total
    }

    /// Every row's status, with how many rows have it.
    async fn statuses(&self) -> BTreeMap<String, usize> {
        let mut all = BTreeMap::new();
        for i in 0..2 {
            for table in 0..2 {
                let sql = format!("SELECT status FROM t_order_{table}");
                for status in query(self.db, &self.url(i), &sql).await {
                    *all.entry(status).or_insert(0) += 1;
                }
            }
        }
        all
    }

    /// Keyshard's prepared branches left in these databases.
    async fn prepared(&self) -> usize {
        let mut total = 0;
        for i in 0..2 {
            total += match self.db {
                Db::MariaDb => {
                    // Server-wide: only the branches qualified by these databases.
                    let mut conn = MySqlConnection::connect(&self.admin(i)).await.unwrap();
                    let rows = conn.fetch_all("XA RECOVER").await.unwrap();
                    rows.iter()
                        .filter(|r| {
                            let data: Vec<u8> = r.try_get(3).unwrap();
                            self.names.iter().any(|n| data.ends_with(n.as_bytes()))
                        })
                        .count()
                }
                Db::Postgres => {
                    let sql = format!(
                        "SELECT COUNT(*) FROM pg_prepared_xacts WHERE database IN ('{}', '{}')",
                        self.names[0], self.names[1]
                    );
                    query(self.db, &self.admin(i), &sql).await[0]
                        .parse::<usize>()
                        .unwrap()
                }
            };
            if self.servers[0] == self.servers[1] {
                break;
            }
        }
        total
    }

    async fn wait_until_no_prepared(&self) {
        let deadline = Instant::now() + Duration::from_secs(40);
        while self.prepared().await > 0 {
            assert!(Instant::now() < deadline, "prepared branches left behind");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn drop_all(self) {
        for (i, name) in self.databases() {
            let sql = format!("DROP DATABASE IF EXISTS {name}");
            query(self.db, &self.admin(i), &sql).await;
        }
    }

    /// Every database of the test, with the index of its server.
    fn databases(&self) -> [(usize, &String); 3] {
        [
            (0, &self.names[0]),
            (1, &self.names[1]),
            (0, &self.repository),
        ]
    }
}

/// Where the coordination repository lives.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Repository {
    /// In ds_0's database (the default): decisions are written in ds_0's commits.
    OnFirstShard,
    /// In a database of its own: decisions are written apart from every branch.
    Apart,
}

/// The default configuration on `shards`, listening on `port`; XA when `xa`, with a 3 s
/// lease so that a crashed instance's transactions are recovered quickly.
fn config(dir: &Path, shards: &Shards, port: u16, xa: bool, repository: Repository) -> PathBuf {
    let listener = match shards.db {
        Db::MariaDb => format!("  mysql:\n    listen: 127.0.0.1:{port}"),
        Db::Postgres => format!("  postgres:\n    listen: 127.0.0.1:{port}"),
    };
    let mut yaml = std::fs::read_to_string("config/keyshard.yaml")
        .unwrap()
        .replace("sqlite://../data/ds_0.db", &shards.url(0))
        .replace("sqlite://../data/ds_1.db", &shards.url(1))
        .replace("  mysql:\n    listen: 127.0.0.1:3307", &listener);
    if xa {
        yaml.push_str("- !TRANSACTION\n  defaultType: XA\n  providerType: Atomikos\n");
    }
    let mut mode = "mode:\n  type: Standalone\n  repository:\n    type: JDBC\n    props:\n      \
                    timeToLiveSeconds: 3\n"
        .to_owned();
    if repository == Repository::Apart {
        mode += &format!(
            "      jdbc_url: {}/{}\n",
            shards.servers[0], shards.repository
        );
    }
    let path = dir.join(format!("keyshard_{port}.yaml"));
    std::fs::write(&path, format!("{mode}{yaml}")).unwrap();
    path
}

/// A client of the proxy on `port`.
enum Client {
    MySql(MySqlConnection),
    Postgres(PgConnection),
}

impl Client {
    async fn connect(db: Db, port: u16) -> Result<Self, sqlx::Error> {
        Ok(match db {
            Db::MariaDb => Client::MySql(
                MySqlConnection::connect(&format!(
                    "mysql://root:root@127.0.0.1:{port}/sharding_db"
                ))
                .await?,
            ),
            Db::Postgres => Client::Postgres(
                PgConnection::connect(&format!(
                    "postgres://root:root@127.0.0.1:{port}/sharding_db?sslmode=disable"
                ))
                .await?,
            ),
        })
    }

    /// Connects, waiting up to 30 s for the proxy to come up.
    async fn wait(db: Db, port: u16) -> Self {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match Self::connect(db, port).await {
                Ok(client) => return client,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("proxy on {port}: {e}"),
            }
        }
    }

    async fn execute(&mut self, sql: &str) -> Result<(), sqlx::Error> {
        match self {
            Client::MySql(c) => c.execute(sql).await.map(|_| ()),
            Client::Postgres(c) => c.execute(sql).await.map(|_| ()),
        }
    }

    /// The session's transaction type, as `SHOW DIST VARIABLE` reports it.
    async fn transaction_type(&mut self) -> String {
        let sql = "SHOW DIST VARIABLE WHERE NAME = transaction_type";
        match self {
            Client::MySql(c) => c.fetch_one(sqlx::raw_sql(sql)).await.unwrap().get(1),
            Client::Postgres(c) => c.fetch_one(sqlx::raw_sql(sql)).await.unwrap().get(1),
        }
    }

    /// A two-row INSERT whose rows go to ds_1 and ds_0.
    async fn insert_pair(&mut self, tag: &str) -> Result<(), sqlx::Error> {
        self.execute(&format!(
            "INSERT INTO t_order (user_id, status) VALUES (1, '{tag}'), (2, '{tag}')"
        ))
        .await
    }
}

/// Runs `statement` on an instance armed with a failpoint until the instance dies of it.
/// An error that is not the crash (this loaded machine let the instance's 3 s lease lapse, so
/// XA refused before writing anything) is retried a few times.
async fn crash(doomed: &mut Child, mut statement: impl AsyncFnMut() -> Result<(), sqlx::Error>) {
    for _ in 0..5 {
        let error = statement()
            .await
            .expect_err("the client was told it worked");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Some(status) = doomed.try_wait().unwrap() {
                assert!(!status.success(), "the instance exited cleanly");
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        eprintln!("the instance is still running after: {error}");
    }
    panic!("the instance never reached its failpoint");
}

/// Crashes an instance at each point of the commit protocol, lets a second one recover, and
/// checks the statement is stored whole or not at all.
async fn a_crash_at_any_point_of_the_commit_keeps_all_or_nothing(db: Db, repository: Repository) {
    let tag = match (db, repository) {
        (Db::MariaDb, Repository::OnFirstShard) => "crash_my",
        (Db::MariaDb, Repository::Apart) => "crash_my_apart",
        (Db::Postgres, Repository::OnFirstShard) => "crash_pg",
        (Db::Postgres, Repository::Apart) => "crash_pg_apart",
    };
    let dir = TempDir::new(&format!("xa_{tag}"));
    let shards = Shards::shared(db, tag).await;
    let survivor_port = free_port();
    let survivor = serve(&config(&dir.0, &shards, survivor_port, true, repository));
    let mut client = Client::wait(db, survivor_port).await;
    client.execute(TABLE).await.unwrap();
    client.insert_pair("plain").await.unwrap();
    assert_eq!(shards.count("plain").await, 2);

    // Crash point, and whether the statement must end up committed.
    let cases = [
        ("xa-after-prepare", false),
        ("xa-after-decision", true),
        ("xa-after-first-commit", true),
    ];
    for (failpoint, committed) in cases {
        let port = free_port();
        let mut doomed = serve_with(
            &config(&dir.0, &shards, port, true, repository),
            &[("KEYSHARD_FAILPOINT", failpoint)],
        );
        let mut client = Client::wait(db, port).await;
        let tag = failpoint.replace('-', "_");
        crash(&mut doomed, async || client.insert_pair(&tag).await).await;
        // With the decisions on ds_0, its commit is the decision, and after the first
        // commit of the rest nothing of two data sources is left.
        let left = shards.prepared().await;
        let all_committed =
            failpoint == "xa-after-first-commit" && repository == Repository::OnFirstShard;
        assert!(
            left > 0 || all_committed,
            "{failpoint}: nothing was left prepared"
        );
        // The survivor finishes the branches once the crashed instance's lease expires.
        shards.wait_until_no_prepared().await;
        let expected = if committed { 2 } else { 0 };
        assert_eq!(shards.count(&tag).await, expected, "{failpoint}");
    }
    drop(survivor);
    shards.drop_all().await;
}

/// LOCAL: a commit that fails after another data source committed is reported as such.
async fn a_local_partial_commit_gets_its_own_error(db: Db) {
    let tag = match db {
        Db::MariaDb => "partial_my",
        Db::Postgres => "partial_pg",
    };
    let dir = TempDir::new(&format!("xa_{tag}"));
    let shards = Shards::shared(db, tag).await;
    let port = free_port();
    // Every statement with two data sources to commit fails half-way: CREATE TABLE too.
    for i in 0..2 {
        for table in 0..2 {
            let sql = TABLE.replace("t_order", &format!("t_order_{table}"));
            query(db, &shards.url(i), &sql).await;
        }
    }
    let proxy = serve_with(
        &config(&dir.0, &shards, port, false, Repository::OnFirstShard),
        &[("KEYSHARD_FAILPOINT", "local-commit-fails-after-first")],
    );
    let mut client = Client::wait(db, port).await;
    let error = client.insert_pair("half").await.unwrap_err();
    let database = error.as_database_error().expect("a database error");
    match db {
        Db::MariaDb => {
            let mysql = database.downcast_ref::<sqlx::mysql::MySqlDatabaseError>();
            assert_eq!((mysql.number(), mysql.code()), (20_101, Some("XAKS1")));
        }
        Db::Postgres => assert_eq!(database.code().as_deref(), Some("XAKS1")),
    }
    let message = database.message();
    assert!(
        message.contains("partially committed: committed on ds_"),
        "{message}"
    );
    assert_eq!(shards.count("half").await, 1);
    // The connection goes on; XA is not there to choose.
    assert_eq!(client.transaction_type().await, "LOCAL");
    let refused = client
        .execute("SET DIST VARIABLE transaction_type = 'XA'")
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("XA is not enabled"),
        "{refused}"
    );
    client.execute("SELECT 1").await.unwrap();
    drop(proxy);
    shards.drop_all().await;
}

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_crash_at_any_point_of_the_commit_keeps_all_or_nothing() {
    a_crash_at_any_point_of_the_commit_keeps_all_or_nothing(Db::MariaDb, Repository::OnFirstShard)
        .await;
}

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_crash_with_the_repository_apart_keeps_all_or_nothing() {
    a_crash_at_any_point_of_the_commit_keeps_all_or_nothing(Db::MariaDb, Repository::Apart).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL with max_prepared_transactions > 0 (KEYSHARD_TEST_PG_URL)"]
async fn postgres_crash_at_any_point_of_the_commit_keeps_all_or_nothing() {
    a_crash_at_any_point_of_the_commit_keeps_all_or_nothing(Db::Postgres, Repository::OnFirstShard)
        .await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL with max_prepared_transactions > 0 (KEYSHARD_TEST_PG_URL)"]
async fn postgres_crash_with_the_repository_apart_keeps_all_or_nothing() {
    a_crash_at_any_point_of_the_commit_keeps_all_or_nothing(Db::Postgres, Repository::Apart).await;
}

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_local_partial_commit_gets_its_own_error() {
    a_local_partial_commit_gets_its_own_error(Db::MariaDb).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgres_local_partial_commit_gets_its_own_error() {
    a_local_partial_commit_gets_its_own_error(Db::Postgres).await;
}

/// A database server of the test's own, to kill: MariaDB, or PostgreSQL run as user postgres
/// (it refuses root).
struct Throwaway {
    db: Db,
    dir: PathBuf,
    port: u16,
    server: Option<Child>,
}

fn run(command: &mut Command) {
    let status = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(status.success(), "{command:?} failed");
}

/// `program args…`, as user postgres when the test runs as root.
fn as_postgres(program: &str) -> Command {
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if is_root {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--", program]);
        command
    } else {
        Command::new(program)
    }
}

fn postgres_binary(name: &str) -> String {
    let versions = std::fs::read_dir("/usr/lib/postgresql").expect("PostgreSQL server binaries");
    let mut bins: Vec<_> = versions
        .flatten()
        .map(|v| v.path().join("bin").join(name))
        .filter(|p| p.exists())
        .collect();
    bins.sort();
    bins.pop().expect("initdb").display().to_string()
}

impl Throwaway {
    fn install(db: Db, dir: &Path) -> Self {
        let dir = dir.join("server");
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("data");
        match db {
            Db::MariaDb => run(Command::new("mariadb-install-db").args([
                "--no-defaults",
                &format!("--datadir={}", data.display()),
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--user=root",
            ])),
            Db::Postgres => {
                run(Command::new("chown").args(["-R", "postgres"]).arg(&dir));
                run(as_postgres(&postgres_binary("initdb"))
                    .args(["-A", "trust", "-U", "postgres", "-D"])
                    .arg(&data));
            }
        }
        Self {
            db,
            dir,
            port: free_port(),
            server: None,
        }
    }

    fn server_url(&self) -> String {
        match self.db {
            Db::MariaDb => format!("mysql://root@127.0.0.1:{}", self.port),
            Db::Postgres => format!("postgres://postgres@127.0.0.1:{}", self.port),
        }
    }

    async fn start(&mut self) {
        let data = self.dir.join("data");
        let mut command = match self.db {
            Db::MariaDb => {
                let mut command = Command::new("mariadbd");
                command.args([
                    "--no-defaults".to_owned(),
                    format!("--datadir={}", data.display()),
                    format!("--socket={}", self.dir.join("sock").display()),
                    format!("--pid-file={}", self.dir.join("pid").display()),
                    format!("--port={}", self.port),
                    "--bind-address=127.0.0.1".to_owned(),
                    "--user=root".to_owned(),
                    "--innodb-buffer-pool-size=32M".to_owned(),
                ]);
                command
            }
            Db::Postgres => {
                let mut command = as_postgres(&postgres_binary("postgres"));
                command.arg("-D").arg(&data).args([
                    "-p".to_owned(),
                    self.port.to_string(),
                    "-k".to_owned(),
                    self.dir.display().to_string(),
                    "-c".to_owned(),
                    "listen_addresses=127.0.0.1".to_owned(),
                    "-c".to_owned(),
                    "max_prepared_transactions=32".to_owned(),
                ]);
                command
            }
        };
        let log = std::fs::File::create(self.dir.join("server.log")).unwrap();
        let server = command
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("database server");
        self.server = Some(server);
        let admin = match self.db {
            Db::MariaDb => format!("{}/mysql", self.server_url()),
            Db::Postgres => format!("{}/postgres", self.server_url()),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let up = match self.db {
                Db::MariaDb => MySqlConnection::connect(&admin).await.is_ok(),
                Db::Postgres => PgConnection::connect(&admin).await.is_ok(),
            };
            if up {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the throwaway server did not come up: {}",
                std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGKILL: no shutdown, no flush. PostgreSQL's postmaster (a child of `runuser`) and its
    /// backends die together, as in a crash of the machine.
    fn kill(&mut self) {
        let Some(mut server) = self.server.take() else {
            return;
        };
        if self.db == Db::Postgres
            && let Ok(pid) = std::fs::read_to_string(self.dir.join("data/postmaster.pid"))
            && let Some(pid) = pid.lines().next()
        {
            let _ = Command::new("pkill").args(["-KILL", "-P", pid]).status();
            let _ = Command::new("kill").args(["-KILL", pid]).status();
            // runuser reaps the postmaster and exits: were runuser killed first, the
            // postmaster would linger as a zombie that the restart takes for a live server.
            let _ = server.wait();
            return;
        }
        let _ = server.kill();
        let _ = server.wait();
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Two-row INSERTs from `clients` connections until `done`; the tags acknowledged and the
/// number of statements that failed.
async fn pairs(db: Db, port: u16, client: usize, done: Arc<AtomicBool>) -> (Vec<String>, usize) {
    let mut acknowledged = Vec::new();
    let mut failed = 0;
    let mut conn = Client::wait(db, port).await;
    for n in 0.. {
        if done.load(Ordering::Relaxed) {
            break;
        }
        let tag = format!("c{client}_{n}");
        match conn.insert_pair(&tag).await {
            Ok(()) => acknowledged.push(tag),
            Err(_) => {
                failed += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    (acknowledged, failed)
}

/// Kills one shard server with SIGKILL three times under a load of two-row cross-shard
/// INSERTs, restarting it each time; recovery must leave every statement whole or absent.
async fn a_shard_killed_under_load_never_leaves_half_a_statement(db: Db) {
    let tag = match db {
        Db::MariaDb => "kill_my",
        Db::Postgres => "kill_pg",
    };
    let dir = TempDir::new(&format!("xa_{tag}"));
    let mut killed = Throwaway::install(db, &dir.0);
    killed.start().await;
    let admin = admin_url(db);
    let (shared, _) = admin.rsplit_once('/').unwrap();
    // ds_0 (the coordination repository) on the machine's server, ds_1 on the one killed.
    let shards = Shards::new(db, tag, [shared.to_owned(), killed.server_url()]).await;
    let port = free_port();
    let proxy = serve(&config(
        &dir.0,
        &shards,
        port,
        true,
        Repository::OnFirstShard,
    ));
    Client::wait(db, port).await.execute(TABLE).await.unwrap();

    let done = Arc::new(AtomicBool::new(false));
    let load: Vec<_> = (0..4)
        .map(|client| tokio::spawn(pairs(db, port, client, Arc::clone(&done))))
        .collect();
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        killed.kill();
        tokio::time::sleep(Duration::from_millis(500)).await;
        killed.start().await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    done.store(true, Ordering::Relaxed);
    let mut acknowledged = HashSet::new();
    let mut failed = 0;
    for client in load {
        let (acked, failures) = client.await.unwrap();
        acknowledged.extend(acked);
        failed += failures;
    }
    shards.wait_until_no_prepared().await;

    let stored = shards.statuses().await;
    let halves: Vec<_> = stored.iter().filter(|(_, n)| **n != 2).collect();
    let missing: Vec<_> = acknowledged
        .iter()
        .filter(|tag| !stored.contains_key(*tag))
        .collect();
    let failed_but_stored = stored
        .keys()
        .filter(|tag| !acknowledged.contains(*tag))
        .count();
    eprintln!(
        "{} statements acknowledged, {failed} failed ({failed_but_stored} of them stored whole)",
        acknowledged.len()
    );
    assert!(halves.is_empty(), "statements stored in part: {halves:?}");
    assert!(
        missing.is_empty(),
        "acknowledged but not stored: {missing:?}"
    );
    assert!(failed > 0, "the kills did not fail a single statement");
    assert!(acknowledged.len() > 20, "too little load got through");
    drop(proxy);
    shards.drop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL) and mariadbd to start one of its own"]
async fn a_mariadb_shard_killed_under_load_never_leaves_half_a_statement() {
    a_shard_killed_under_load_never_leaves_half_a_statement(Db::MariaDb).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL) and its server binaries to start one of its own"]
async fn a_postgres_shard_killed_under_load_never_leaves_half_a_statement() {
    a_shard_killed_under_load_never_leaves_half_a_statement(Db::Postgres).await;
}

/// An explicit transaction over both data sources: COMMIT stores both rows, ROLLBACK none, and
/// a crash between prepare and decision leaves none once recovered.
async fn explicit_transactions_are_all_or_nothing(db: Db) {
    let tag = match db {
        Db::MariaDb => "explicit_my",
        Db::Postgres => "explicit_pg",
    };
    let dir = TempDir::new(&format!("xa_{tag}"));
    let shards = Shards::shared(db, tag).await;
    let port = free_port();
    let survivor = serve(&config(
        &dir.0,
        &shards,
        port,
        true,
        Repository::OnFirstShard,
    ));
    let mut client = Client::wait(db, port).await;
    client.execute(TABLE).await.unwrap();
    async fn transaction(client: &mut Client, tag: &str, end: &str) -> Result<(), sqlx::Error> {
        client.execute("BEGIN").await?;
        for user in [1, 2] {
            let sql = format!("INSERT INTO t_order (user_id, status) VALUES ({user}, '{tag}')");
            client.execute(&sql).await?;
        }
        client.execute(end).await
    }
    transaction(&mut client, "committed", "COMMIT")
        .await
        .unwrap();
    transaction(&mut client, "rolled_back", "ROLLBACK")
        .await
        .unwrap();
    assert_eq!(shards.count("committed").await, 2);
    assert_eq!(shards.count("rolled_back").await, 0);

    let doomed_port = free_port();
    let mut doomed = serve_with(
        &config(&dir.0, &shards, doomed_port, true, Repository::OnFirstShard),
        &[("KEYSHARD_FAILPOINT", "xa-after-prepare")],
    );
    let mut doomed_client = Client::wait(db, doomed_port).await;
    // A session that chose LOCAL never reaches the failpoint; back on XA it does.
    assert_eq!(doomed_client.transaction_type().await, "XA");
    doomed_client
        .execute("SET DIST VARIABLE transaction_type = 'LOCAL'")
        .await
        .unwrap();
    assert_eq!(doomed_client.transaction_type().await, "LOCAL");
    transaction(&mut doomed_client, "local", "COMMIT")
        .await
        .unwrap();
    doomed_client.insert_pair("local").await.unwrap();
    assert_eq!(shards.count("local").await, 4);
    doomed_client
        .execute("SET VARIABLE transaction_type = XA")
        .await
        .unwrap();
    crash(&mut doomed, async || {
        transaction(&mut doomed_client, "crashed", "COMMIT").await
    })
    .await;
    assert!(shards.prepared().await > 0);
    shards.wait_until_no_prepared().await;
    assert_eq!(shards.count("crashed").await, 0);
    drop(survivor);
    shards.drop_all().await;
}

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_explicit_transactions_are_all_or_nothing() {
    explicit_transactions_are_all_or_nothing(Db::MariaDb).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL with max_prepared_transactions > 0 (KEYSHARD_TEST_PG_URL)"]
async fn postgres_explicit_transactions_are_all_or_nothing() {
    explicit_transactions_are_all_or_nothing(Db::Postgres).await;
}
