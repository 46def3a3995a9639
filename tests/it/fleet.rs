//! Keyshard processes sharing one configuration, as a fleet runs them: `keyshard keygen
//! --config` drawing from configured generators in parallel, and `keyshard serve` instances of
//! which one is killed with SIGKILL and restarted under load.

use crate::common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::{TempDir, default_without_mode, free_port, serve};

use keyshard_keygen::Snowflake;
use sqlx::{Connection, Executor, MySqlConnection};

/// The default configuration with its SQLite shards in `dir` and a LEAF_SEGMENT generator.
fn sqlite_config(dir: &Path) -> PathBuf {
    let yaml = std::fs::read_to_string("config/keyshard.yaml")
        .unwrap()
        .replace("../data/", "data/")
        .replace(
            "  keyGenerators:\n",
            "  keyGenerators:\n    segment:\n      type: LEAF_SEGMENT\n      props:\n        \
             leaf.key: orders\n        leaf.segment.id.initial.value: 100001\n        \
             leaf.segment.step: 100\n",
        );
    let path = dir.join("keyshard.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

fn keygen(config: &Path, generator: &str, count: usize) -> std::thread::JoinHandle<Output> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_keyshard"));
    command.args([
        "keygen",
        "--config",
        config.to_str().unwrap(),
        "--generator",
        generator,
        "--count",
        &count.to_string(),
    ]);
    std::thread::spawn(move || command.output().unwrap())
}

fn keys_of(output: &Output) -> Vec<i64> {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

#[test]
fn processes_drawing_from_one_leaf_key_get_disjoint_keys() {
    let dir = TempDir::new("fleet_segments");
    let config = sqlite_config(&dir.0);
    let runs: Vec<_> = (0..3).map(|_| keygen(&config, "segment", 1_000)).collect();
    let keys: Vec<Vec<i64>> = runs
        .into_iter()
        .map(|r| keys_of(&r.join().unwrap()))
        .collect();
    let all: HashSet<i64> = keys.iter().flatten().copied().collect();
    assert_eq!(all.len(), 3_000, "a key was drawn twice");
    assert!(all.iter().all(|k| *k >= 100_001));
    for run in &keys {
        assert_eq!(run.len(), 1_000);
        // Each process's keys are whole segments of 100 consecutive keys.
        for segment in run.chunks(100) {
            assert_eq!(segment[99] - segment[0], 99, "{segment:?}");
            assert_eq!((segment[0] - 100_001) % 100, 0);
        }
    }
}

#[test]
fn processes_drawing_snowflake_keys_lease_distinct_worker_ids() {
    let dir = TempDir::new("snowflake");
    let config = sqlite_config(&dir.0);
    let runs: Vec<_> = (0..3)
        .map(|_| keygen(&config, "snowflake", 20_000))
        .collect();
    let keys: Vec<Vec<i64>> = runs
        .into_iter()
        .map(|r| keys_of(&r.join().unwrap()))
        .collect();
    let all: HashSet<i64> = keys.iter().flatten().copied().collect();
    assert_eq!(all.len(), 60_000, "a key was drawn twice");
    // Runs that overlapped in time held distinct worker ids; a run that started after another
    // released its id may reuse it, above every key drawn with it before.
    // A released id goes to the next process with its last millisecond: a later run of the
    // same id starts above every key drawn with it.
    let later = keys_of(&keygen(&config, "snowflake", 1).join().unwrap());
    let id = Snowflake::decode(later[0]).unwrap().worker_id;
    let earlier = keys
        .iter()
        .flatten()
        .filter(|k| Snowflake::decode(**k).unwrap().worker_id == id)
        .max()
        .unwrap();
    assert!(later[0] > *earlier, "{} ≤ {earlier}", later[0]);
}

struct Shards {
    admin: String,
    names: [String; 2],
}

impl Shards {
    async fn new(tag: &str) -> Self {
        let admin = std::env::var("KEYSHARD_TEST_MYSQL_URL").expect("KEYSHARD_TEST_MYSQL_URL");
        let base = format!("keyshard_kill_{tag}_{}", std::process::id());
        let names = [format!("{base}_0"), format!("{base}_1")];
        let mut conn = MySqlConnection::connect(&admin).await.unwrap();
        for name in &names {
            conn.execute(format!("DROP DATABASE IF EXISTS {name}").as_str())
                .await
                .unwrap();
            conn.execute(format!("CREATE DATABASE {name}").as_str())
                .await
                .unwrap();
        }
        Self { admin, names }
    }

    fn url(&self, i: usize) -> String {
        let (server, _) = self.admin.rsplit_once('/').unwrap();
        format!("{server}/{}", self.names[i])
    }

    async fn stored(&self) -> Vec<i64> {
        let mut all = Vec::new();
        for i in 0..2 {
            let mut conn = MySqlConnection::connect(&self.url(i)).await.unwrap();
            for table in 0..2 {
                let ids: Vec<i64> =
                    sqlx::query_scalar(&format!("SELECT order_id FROM t_order_{table}"))
                        .fetch_all(&mut conn)
                        .await
                        .unwrap();
                all.extend(ids);
            }
        }
        all
    }

    async fn drop_all(self) {
        let mut conn = MySqlConnection::connect(&self.admin).await.unwrap();
        for name in &self.names {
            conn.execute(format!("DROP DATABASE IF EXISTS {name}").as_str())
                .await
                .unwrap();
        }
    }
}

/// The default configuration on MariaDB shards, listening on `port`, coordinating through
/// `mode` (empty: the first data source).
fn serve_config(dir: &Path, shards: &Shards, port: u16, mode: &str) -> PathBuf {
    let yaml = default_without_mode()
        .replace("sqlite://../data/ds_0.db", &shards.url(0))
        .replace("sqlite://../data/ds_1.db", &shards.url(1))
        .replace("127.0.0.1:3307", &format!("127.0.0.1:{port}"));
    let path = dir.join(format!("keyshard_{port}.yaml"));
    std::fs::write(&path, format!("{mode}{yaml}")).unwrap();
    path
}

async fn connect(port: u16) -> MySqlConnection {
    let url = format!("mysql://root:root@127.0.0.1:{port}/sharding_db");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match MySqlConnection::connect(&url).await {
            Ok(conn) => return conn,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("{url}: {e}"),
        }
    }
}

/// Inserts on `port` for `duration`, reconnecting after failures (the instance may be dead);
/// the keys acknowledged.
async fn load(port: u16, duration: Duration) -> Vec<i64> {
    let url = format!("mysql://root:root@127.0.0.1:{port}/sharding_db");
    let until = Instant::now() + duration;
    let mut keys = Vec::new();
    let mut conn = Some(connect(port).await);
    while Instant::now() < until {
        let Some(open) = conn.as_mut() else {
            conn = MySqlConnection::connect(&url).await.ok();
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        let done = sqlx::query("INSERT INTO t_order (user_id, status) VALUES (7, 'load')")
            .execute(open)
            .await;
        match done {
            Ok(done) => keys.push(i64::try_from(done.last_insert_id()).unwrap()),
            Err(_) => conn = None,
        }
    }
    keys
}

async fn a_killed_instance_restarts_without_duplicates(tag: &str, mode: &str) {
    let dir = TempDir::new(&format!("fleet_{tag}"));
    let shards = Shards::new(tag).await;
    let (port_a, port_b) = (free_port(), free_port());
    let config_a = serve_config(&dir.0, &shards, port_a, mode);
    let config_b = serve_config(&dir.0, &shards, port_b, mode);
    let mut a = serve(&config_a);
    let mut b = serve(&config_b);
    connect(port_a)
        .await
        .execute("CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))")
        .await
        .unwrap();

    let on_b = tokio::spawn(load(port_b, Duration::from_secs(6)));
    let on_a = tokio::spawn(load(port_a, Duration::from_secs(6)));
    tokio::time::sleep(Duration::from_secs(2)).await;
    a.kill().unwrap(); // SIGKILL: no release, no drain
    a.wait().unwrap();
    let before = on_a.await.unwrap();
    a = serve(&config_a);
    let after = load(port_a, Duration::from_secs(3)).await;
    let on_b = on_b.await.unwrap();

    let acknowledged: Vec<i64> = before.iter().chain(&after).chain(&on_b).copied().collect();
    let distinct: HashSet<i64> = acknowledged.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        acknowledged.len(),
        "a key was acknowledged twice"
    );
    let stored = shards.stored().await;
    let stored_set: HashSet<i64> = stored.iter().copied().collect();
    assert_eq!(stored_set.len(), stored.len(), "a key is stored twice");
    assert!(
        distinct.is_subset(&stored_set),
        "an acknowledged key is missing"
    );
    assert!(!before.is_empty() && !after.is_empty() && !on_b.is_empty());
    // The dead instance's id stays leased until it expires: the restart took another one.
    let worker = |k: &i64| Snowflake::decode(*k).unwrap().worker_id;
    assert_ne!(worker(&before[0]), worker(&after[0]));

    a.kill().unwrap();
    b.kill().unwrap();
    let _ = (a.wait(), b.wait());
    shards.drop_all().await;
}

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn a_killed_instance_restarts_without_duplicates_on_the_jdbc_repository() {
    a_killed_instance_restarts_without_duplicates("jdbc", "").await;
}

#[tokio::test]
#[ignore = "needs MariaDB and ZooKeeper (KEYSHARD_TEST_MYSQL_URL, KEYSHARD_TEST_ZOOKEEPER)"]
async fn a_killed_instance_restarts_without_duplicates_on_zookeeper() {
    let zookeeper = std::env::var("KEYSHARD_TEST_ZOOKEEPER").expect("KEYSHARD_TEST_ZOOKEEPER");
    let mode = format!(
        "mode:\n  type: Cluster\n  repository:\n    type: ZooKeeper\n    props:\n      \
         server-lists: {zookeeper}\n      namespace: keyshard_kill_{}\n",
        std::process::id()
    );
    a_killed_instance_restarts_without_duplicates("zookeeper", &mode).await;
}

/// With a configured worker id, a killed instance's restart finds the id still held by its own
/// previous run: it waits for that lease to run out (at most the time to live, 4 s here), then
/// serves with the same id, its keys above every key the previous run acknowledged.
#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn a_killed_instance_with_a_fixed_worker_id_restarts_once_its_lease_runs_out() {
    let dir = TempDir::new("fleet_fixed");
    let shards = Shards::new("fixed").await;
    let port = free_port();
    let mode = "mode:\n  type: Cluster\n  repository:\n    type: JDBC\n    props:\n      \
                timeToLiveSeconds: 4\n";
    let config = serve_config(&dir.0, &shards, port, mode);
    let yaml = std::fs::read_to_string(&config).unwrap().replace(
        "        max-vibration-offset: 3",
        "        max-vibration-offset: 3\n        worker-id: 7",
    );
    std::fs::write(&config, yaml).unwrap();
    let mut first = serve(&config);
    connect(port)
        .await
        .execute("CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))")
        .await
        .unwrap();
    let before = load(port, Duration::from_secs(1)).await;
    first.kill().unwrap(); // SIGKILL: the id is not given back
    first.wait().unwrap();
    let restarted = Instant::now();
    let mut second = serve(&config);
    connect(port).await;
    let waited = restarted.elapsed();
    let after = load(port, Duration::from_secs(1)).await;
    assert!(second.try_wait().unwrap().is_none(), "the restart stopped");
    assert!(waited < Duration::from_secs(15), "served after {waited:?}");
    let worker = |k: &i64| Snowflake::decode(*k).unwrap().worker_id;
    assert!(before.iter().chain(&after).all(|k| worker(k) == 7));
    let last_before = before.iter().max().unwrap();
    assert!(after.iter().all(|k| k > last_before));
    let stored: HashSet<i64> = shards.stored().await.into_iter().collect();
    assert_eq!(stored.len(), before.len() + after.len());
    second.kill().unwrap();
    let _ = second.wait();
    shards.drop_all().await;
}

/// Where Debian's `faketime` package puts libfaketime.
const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/// The environment that runs a process on the clock `file` gives (libfaketime: an offset
/// such as `-3s`, the realtime clock only).
fn faked_clock(file: &Path) -> [(&'static str, String); 4] {
    [
        ("LD_PRELOAD", LIBFAKETIME.to_owned()),
        ("FAKETIME_TIMESTAMP_FILE", file.to_str().unwrap().to_owned()),
        ("FAKETIME_CACHE_DURATION", "1".to_owned()),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_owned()),
    ]
}

/// One instance's clock steps back 3 s (libfaketime, realtime clock only) while two clients
/// insert as fast as they can and a third reads: within the generator's 10 s tolerance every
/// statement is answered and no key comes twice or goes backwards on a connection, though the
/// clock did. (How long statements took is `bench/clockstep.sh`'s business.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL) and libfaketime (Debian's faketime)"]
async fn a_backward_clock_step_under_load_fails_no_statement() {
    assert!(Path::new(LIBFAKETIME).exists(), "{LIBFAKETIME} is missing");
    let dir = TempDir::new("fleet_clock");
    let shards = Shards::new("clock").await;
    let port = free_port();
    let config = serve_config(&dir.0, &shards, port, "");
    let yaml = std::fs::read_to_string(&config).unwrap().replace(
        "max-vibration-offset: 3",
        "max-vibration-offset: 3\n        max-tolerate-time-difference-milliseconds: 10000",
    );
    assert!(yaml.contains("10000"), "the generator's props changed");
    std::fs::write(&config, yaml).unwrap();
    let clock = dir.0.join("clock");
    // The faked clock reaches this binary's keys: 30 minutes back, one is 30 minutes old.
    std::fs::write(&clock, "-30m\n").unwrap();
    let key = Command::new(env!("CARGO_BIN_EXE_keyshard"))
        .args(["keygen", "--type", "SNOWFLAKE", "--prop", "worker-id=1"])
        .envs(faked_clock(&clock))
        .output()
        .unwrap();
    let age = unix_millis() - Snowflake::decode(keys_of(&key)[0]).unwrap().unix_millis;
    assert!(
        (29 * 60_000..31 * 60_000).contains(&age),
        "a key {age} ms old"
    );
    std::fs::write(&clock, "+0\n").unwrap();
    let env = faked_clock(&clock);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut proxy = common::serve_with(&config, &env);
    connect(port)
        .await
        .execute("CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))")
        .await
        .unwrap();
    let until = Instant::now() + Duration::from_secs(6);
    // The key of each INSERT, in order.
    let writers = (0..2).map(|_| {
        tokio::spawn(async move {
            let mut conn = connect(port).await;
            let mut keys = Vec::new();
            while Instant::now() < until {
                let done = sqlx::query("INSERT INTO t_order (user_id, status) VALUES (7, 'step')")
                    .execute(&mut conn)
                    .await
                    .unwrap();
                keys.push(i64::try_from(done.last_insert_id()).unwrap());
            }
            keys
        })
    });
    let writers: Vec<_> = writers.collect();
    let reader = tokio::spawn(async move {
        let mut conn = connect(port).await;
        let mut reads = 0;
        while Instant::now() < until {
            sqlx::query("SELECT status FROM t_order WHERE user_id = 7 AND order_id = 1")
                .fetch_all(&mut conn)
                .await
                .unwrap();
            reads += 1;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        reads
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    std::fs::write(&clock, "-3s\n").unwrap();

    let mut all = Vec::new();
    for writer in writers {
        let keys = writer.await.unwrap();
        assert!(
            keys.windows(2).all(|w| w[1] > w[0]),
            "a key went backwards on one connection"
        );
        all.extend(keys);
    }
    assert!(reader.await.unwrap() > 0);
    let distinct: HashSet<i64> = all.iter().copied().collect();
    assert_eq!(distinct.len(), all.len(), "a key was handed out twice");
    proxy.kill().unwrap();
    let _ = proxy.wait();
    shards.drop_all().await;
}

fn unix_millis() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    i64::try_from(since.as_millis()).unwrap()
}
