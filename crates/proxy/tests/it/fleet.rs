//! Several Keyshard instances from one configuration on the same MariaDB shards: every key
//! handed out is unique, whichever coordination repository they share (JDBC, the default, on
//! the first data source; or ZooKeeper), and an instance cut off from its repository stops
//! generating before another instance can take its worker id.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::common::relay::Relay;
use crate::common::{Proxy, Shards, unique, yaml};
use keyshard_config::{DataSource, DatabaseKind, PoolSettings};
use keyshard_coordination::{
    CoordinationError, Instance, JdbcRepository, Repository, ZooKeeperRepository, ZooKeeperSettings,
};
use keyshard_keygen::Snowflake;
use sqlx::{Connection, Executor, MySqlConnection};

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

#[derive(Debug, Clone, Copy)]
enum Repo {
    Jdbc,
    ZooKeeper,
}

fn zookeeper() -> String {
    std::env::var("KEYSHARD_TEST_ZOOKEEPER").expect("KEYSHARD_TEST_ZOOKEEPER is not set")
}

/// The default configuration on `shards`, coordinating through `repo`; `repository_address`
/// replaces the repository's address (a relay), `ttl` its time to live.
fn config(shards: &Shards, repo: Repo, namespace: &str, via: Option<&str>, ttl: u64) -> String {
    let base = yaml(&shards.url(0), &shards.url(1));
    let mode = match repo {
        Repo::Jdbc => {
            let url = shards.url(0);
            let url = match via {
                Some(relay) => url.replacen("127.0.0.1:3306", relay, 1),
                None => url,
            };
            format!(
                "mode:\n  type: Cluster\n  repository:\n    type: JDBC\n    props:\n      \
                 jdbc_url: {url}\n      timeToLiveSeconds: {ttl}\n"
            )
        }
        Repo::ZooKeeper => format!(
            "mode:\n  type: Cluster\n  repository:\n    type: ZooKeeper\n    props:\n      \
             server-lists: {}\n      namespace: {namespace}\n      timeToLiveSeconds: {ttl}\n",
            via.map_or_else(zookeeper, str::to_owned)
        ),
    };
    format!("{mode}{base}")
}

/// Inserts `count` rows on one connection; returns the key each was acknowledged with.
async fn insert(url: String, count: usize) -> Vec<i64> {
    let mut conn = MySqlConnection::connect(&url).await.unwrap();
    let mut keys = Vec::with_capacity(count);
    for i in 0..count {
        let done = sqlx::query("INSERT INTO t_order (user_id, status) VALUES (?, 'new')")
            .bind(i as i64)
            .execute(&mut conn)
            .await
            .unwrap();
        keys.push(i64::try_from(done.last_insert_id()).unwrap());
    }
    conn.close().await.unwrap();
    keys
}

async fn stored(shards: &Shards) -> Vec<i64> {
    let mut all = Vec::new();
    for ds in 0..2 {
        for table in 0..2 {
            all.extend(shards.ids(ds, table).await);
        }
    }
    all
}

fn worker_ids(keys: &[i64]) -> HashSet<u16> {
    keys.iter()
        .map(|k| Snowflake::decode(*k).unwrap().worker_id)
        .collect()
}

async fn three_instances_never_share_a_key(repo: Repo) {
    let shards = Shards::mariadb().await;
    let yaml = config(&shards, repo, &unique("keyshard_fleet"), None, 10);
    let proxies = [
        Proxy::start(&yaml).await,
        Proxy::start(&yaml).await,
        Proxy::start(&yaml).await,
    ];
    let mut conn = MySqlConnection::connect(&proxies[0].url("root", "root"))
        .await
        .unwrap();
    conn.execute(CREATE).await.unwrap();
    conn.close().await.unwrap();

    // Four clients per instance, all at once.
    let clients: Vec<_> = proxies
        .iter()
        .flat_map(|p| (0..4).map(|_| tokio::spawn(insert(p.url("root", "root"), 150))))
        .collect();
    let mut per_instance: Vec<Vec<i64>> = vec![Vec::new(); 3];
    for (i, client) in clients.into_iter().enumerate() {
        per_instance[i / 4].extend(client.await.unwrap());
    }

    let acknowledged: Vec<i64> = per_instance.iter().flatten().copied().collect();
    let distinct: HashSet<i64> = acknowledged.iter().copied().collect();
    assert_eq!(distinct.len(), 3 * 4 * 150, "a key was acknowledged twice");
    let mut stored = stored(&shards).await;
    stored.sort_unstable();
    let mut expected = acknowledged.clone();
    expected.sort_unstable();
    assert_eq!(
        stored, expected,
        "stored keys differ from acknowledged ones"
    );
    // Each instance has its own worker id.
    let ids: Vec<HashSet<u16>> = per_instance.iter().map(|k| worker_ids(k)).collect();
    assert!(ids.iter().all(|s| s.len() == 1), "{ids:?}");
    let all: HashSet<u16> = ids.iter().flatten().copied().collect();
    assert_eq!(all.len(), 3, "{ids:?}");

    for proxy in proxies {
        proxy.stop().await;
    }
    shards.cleanup().await;
}

/// A repository straight to the server (no relay), to take a worker id as a newcomer would.
async fn direct_repository(shards: &Shards, repo: Repo, namespace: &str) -> Box<dyn Repository> {
    match repo {
        Repo::Jdbc => Box::new(
            JdbcRepository::connect(
                &DataSource {
                    name: "repository".into(),
                    kind: DatabaseKind::MySql,
                    url: shards.url(0),
                    pool: PoolSettings::default(),
                },
                Duration::from_secs(4),
                Duration::from_secs(5),
            )
            .await
            .unwrap(),
        ),
        Repo::ZooKeeper => Box::new(
            ZooKeeperRepository::connect(ZooKeeperSettings {
                session_timeout: Duration::from_secs(4),
                ..ZooKeeperSettings::new(zookeeper(), namespace)
            })
            .await
            .unwrap(),
        ),
    }
}

async fn a_partitioned_holder_stops_before_its_id_is_taken_over(repo: Repo) {
    let shards = Shards::mariadb().await;
    let namespace = unique("keyshard_partition");
    let upstream = match repo {
        Repo::Jdbc => "127.0.0.1:3306".to_owned(),
        Repo::ZooKeeper => zookeeper(),
    };
    let relay = Relay::start(upstream).await;
    let yaml = config(&shards, repo, &namespace, Some(&relay.address), 4);
    let proxy = Proxy::start(&yaml).await;
    let mut conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    conn.execute(CREATE).await.unwrap();
    let first = insert(proxy.url("root", "root"), 1).await;
    let worker_id = Snowflake::decode(first[0]).unwrap().worker_id;

    relay.cut();
    let cut_at = Instant::now();
    // A newcomer asks for the same worker id until the repository hands it over.
    let newcomer = tokio::spawn(async move {
        let repository = direct_repository(&shards, repo, &namespace).await;
        let who = Instance::new("newcomer");
        loop {
            match repository.claim(&who, Some(worker_id)).await {
                Ok(_) => return (Instant::now(), shards),
                Err(CoordinationError::WorkerIdHeld { .. }) => {
                    assert!(cut_at.elapsed() < Duration::from_secs(60), "never freed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => panic!("{e}"),
            }
        }
    });
    // Meanwhile the cut-off instance keeps inserting until it refuses.
    let mut last_success = cut_at;
    let refusal = loop {
        let result = sqlx::query("INSERT INTO t_order (user_id, status) VALUES (1, 'cut')")
            .execute(&mut conn)
            .await;
        match result {
            Ok(_) => last_success = Instant::now(),
            Err(e) => break e.to_string(),
        }
        assert!(cut_at.elapsed() < Duration::from_secs(60), "never stopped");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(refusal.contains("lease"), "{refusal}");
    let (taken_at, shards) = newcomer.await.unwrap();
    eprintln!(
        "{repo:?}: last key {:?} after the cut, id taken over {:?} after it; refusal: {refusal}",
        last_success - cut_at,
        taken_at - cut_at
    );
    assert!(
        last_success < taken_at,
        "the cut-off instance generated {:?} after its id was taken over",
        last_success - taken_at
    );
    // It stays refused while cut off.
    let again = sqlx::query("INSERT INTO t_order (user_id, status) VALUES (1, 'cut')")
        .execute(&mut conn)
        .await;
    assert!(again.is_err());

    drop(conn);
    relay.restore();
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn three_instances_on_the_jdbc_repository_never_share_a_key() {
    three_instances_never_share_a_key(Repo::Jdbc).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and ZooKeeper (KEYSHARD_TEST_MYSQL_URL, KEYSHARD_TEST_ZOOKEEPER)"]
async fn three_instances_on_zookeeper_never_share_a_key() {
    three_instances_never_share_a_key(Repo::ZooKeeper).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn a_holder_cut_off_from_the_jdbc_repository_stops_in_time() {
    a_partitioned_holder_stops_before_its_id_is_taken_over(Repo::Jdbc).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and ZooKeeper (KEYSHARD_TEST_MYSQL_URL, KEYSHARD_TEST_ZOOKEEPER)"]
async fn a_holder_cut_off_from_zookeeper_stops_in_time() {
    a_partitioned_holder_stops_before_its_id_is_taken_over(Repo::ZooKeeper).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leaf_segment_table_gets_consecutive_keys_from_the_repository() {
    let shards = Shards::sqlite();
    let yaml = yaml(&shards.url(0), &shards.url(1))
        .replace(
            "  keyGenerators:\n",
            "  keyGenerators:\n    segment:\n      type: LEAF_SEGMENT\n      props:\n        \
             leaf.key: t_order\n        leaf.segment.id.initial.value: 100001\n        \
             leaf.segment.step: 5\n",
        )
        .replace("keyGeneratorName: snowflake", "keyGeneratorName: segment");
    let proxy = Proxy::start(&yaml).await;
    let mut conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    conn.execute(CREATE).await.unwrap();
    let mut firsts = Vec::new();
    for rows in [1, 3, 4, 5] {
        let values = vec!["(1, 'new')"; rows].join(", ");
        let done = conn
            .execute(format!("INSERT INTO t_order (user_id, status) VALUES {values}").as_str())
            .await
            .unwrap();
        firsts.push(done.last_insert_id());
    }
    // Segments of 5: 100001…100005, 100006…100010, … A statement's keys never straddle two.
    assert_eq!(firsts, [100_001, 100_002, 100_006, 100_011]);
    // Larger than a segment: a segment of its own size, its keys consecutive as a client
    // computes them (LAST_INSERT_ID() + i), none handed out before or after.
    let big = conn
        .execute("INSERT INTO t_order (user_id) VALUES (1), (1), (1), (1), (1), (1)")
        .await
        .unwrap()
        .last_insert_id();
    let big = i64::try_from(big).unwrap();
    assert!(big > 100_015, "{big}");
    let after = conn
        .execute("INSERT INTO t_order (user_id) VALUES (1)")
        .await
        .unwrap()
        .last_insert_id();
    let mut stored = stored(&shards).await;
    stored.sort_unstable();
    let mut expected: Vec<i64> = [100_001]
        .into_iter()
        .chain(100_002..=100_004)
        .chain(100_006..=100_009)
        .chain(100_011..=100_015)
        .chain(big..big + 6)
        .chain([i64::try_from(after).unwrap()])
        .collect();
    expected.sort_unstable();
    expected.dedup();
    assert_eq!(stored, expected);
    proxy.stop().await;
    shards.cleanup().await;
}

/// `mode:` with a JDBC repository on shard `i`'s database, then the default configuration.
fn jdbc_on(shards: &Shards, i: usize, ttl: u64) -> String {
    format!(
        "mode:\n  type: Cluster\n  repository:\n    type: JDBC\n    props:\n      \
         jdbc_url: {}\n      timeToLiveSeconds: {ttl}\n{}",
        shards.url(i),
        yaml(&shards.url(0), &shards.url(1))
    )
}

async fn on_repository(shards: &Shards, sql: &str) {
    let mut conn = MySqlConnection::connect(&shards.url(0)).await.unwrap();
    conn.execute(sql).await.unwrap();
    conn.close().await.unwrap();
}

async fn worker_epoch(shards: &Shards, worker_id: u16) -> i64 {
    let mut conn = MySqlConnection::connect(&shards.url(0)).await.unwrap();
    let epoch = sqlx::query_scalar("SELECT epoch FROM keyshard_worker_id WHERE worker_id = ?")
        .bind(worker_id)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    epoch
}

/// A proxy on `yaml` with `t_order` created through it, and the keys of `count` rows.
async fn start_and_insert(yaml: &str, count: usize) -> (Proxy, Vec<i64>) {
    let proxy = Proxy::start(yaml).await;
    let mut conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    conn.execute(CREATE).await.unwrap();
    conn.close().await.unwrap();
    let keys = insert(proxy.url("root", "root"), count).await;
    (proxy, keys)
}

fn assert_all_distinct_and_stored(acknowledged: &[i64], mut stored: Vec<i64>) {
    let distinct: HashSet<i64> = acknowledged.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        acknowledged.len(),
        "a key was handed out twice"
    );
    let mut expected = acknowledged.to_vec();
    expected.sort_unstable();
    stored.sort_unstable();
    assert_eq!(
        stored, expected,
        "stored keys differ from acknowledged ones"
    );
}

/// Two fleets over the same shards with different repositories (two JDBC databases: what a
/// data source added whose name sorts first does to the default; or two ZooKeeper
/// namespaces). While the first is live the second refuses to start; once it has stopped the
/// second takes over above every key the first handed out, with the same worker id.
async fn a_second_repository_waits_for_the_first_then_starts_above_it(first: &str, second: &str) {
    let shards = Shards::mariadb().await;
    let (first, second) = (
        if first == "jdbc-0" {
            jdbc_on(&shards, 0, 10)
        } else {
            config(&shards, Repo::ZooKeeper, first, None, 10)
        },
        if second == "jdbc-1" {
            jdbc_on(&shards, 1, 10)
        } else {
            config(&shards, Repo::ZooKeeper, second, None, 10)
        },
    );
    let (a, mut from_a) = start_and_insert(&first, 40).await;

    let refusal = match Proxy::try_start(&second).await {
        Ok(_) => panic!("a second repository started beside a live fleet"),
        Err(e) => e,
    };
    assert!(refusal.contains("another repository too"), "{refusal}");
    // The first fleet goes on as if nothing happened.
    from_a.extend(insert(a.url("root", "root"), 40).await);
    a.stop().await;

    let b = Proxy::start(&second).await;
    let from_b = insert(b.url("root", "root"), 40).await;
    b.stop().await;
    assert_eq!(
        worker_ids(&from_a),
        worker_ids(&from_b),
        "both took the lowest id"
    );
    let last_a = from_a.iter().max().unwrap();
    assert!(
        from_b.iter().all(|k| k > last_a),
        "the second repository's keys do not start above the first's"
    );
    let acknowledged: Vec<i64> = from_a.iter().chain(&from_b).copied().collect();
    assert_all_distinct_and_stored(&acknowledged, stored(&shards).await);
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn a_second_jdbc_repository_over_the_same_shards_waits_for_the_first() {
    a_second_repository_waits_for_the_first_then_starts_above_it("jdbc-0", "jdbc-1").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB and ZooKeeper (KEYSHARD_TEST_MYSQL_URL, KEYSHARD_TEST_ZOOKEEPER)"]
async fn a_second_zookeeper_namespace_over_the_same_shards_waits_for_the_first() {
    a_second_repository_waits_for_the_first_then_starts_above_it(
        &unique("keyshard_fleet_a"),
        &unique("keyshard_fleet_b"),
    )
    .await;
}

/// The JDBC repository restored from a backup taken before the running instance claimed its
/// worker id: the repository hands that id out again, and the shards, which saw the instance
/// renew it, refuse the newcomer. The running instance loses the id at its next renewal,
/// claims again, and both then generate side by side with no key twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn a_repository_restored_under_a_running_fleet_hands_out_no_key_twice() {
    let shards = Shards::mariadb().await;
    let yaml = config(&shards, Repo::Jdbc, "", None, 9);
    let (a, mut acknowledged) = start_and_insert(&yaml, 20).await;
    let held = *worker_ids(&acknowledged).iter().next().unwrap();

    // The backup: the id free, one claim fewer, no mark.
    on_repository(
        &shards,
        &format!(
            "UPDATE keyshard_worker_id SET instance_id = '', address = '', epoch = epoch - 1, \
             expires_at = 0, high_water = 0 WHERE worker_id = {held}"
        ),
    )
    .await;
    let refusal = match Proxy::try_start(&yaml).await {
        Ok(_) => panic!("the restored repository's claim was not refused"),
        Err(e) => e,
    };
    assert!(refusal.contains("has lost claims"), "{refusal}");

    // The running instance recovers by itself (a new claim within a renewal or two).
    let since = Instant::now();
    let mut conn = MySqlConnection::connect(&a.url("root", "root"))
        .await
        .unwrap();
    loop {
        match sqlx::query("INSERT INTO t_order (user_id, status) VALUES (7, 'after')")
            .execute(&mut conn)
            .await
        {
            Ok(done) => {
                acknowledged.push(i64::try_from(done.last_insert_id()).unwrap());
                if since.elapsed() > Duration::from_secs(8) {
                    break;
                }
            }
            Err(e) => assert!(since.elapsed() < Duration::from_secs(30), "{e}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    conn.close().await.unwrap();
    let b = Proxy::start(&yaml).await;
    let clients = [
        tokio::spawn(insert(a.url("root", "root"), 100)),
        tokio::spawn(insert(b.url("root", "root"), 100)),
    ];
    for client in clients {
        acknowledged.extend(client.await.unwrap());
    }
    a.stop().await;
    b.stop().await;
    assert_all_distinct_and_stored(&acknowledged, stored(&shards).await);
    shards.cleanup().await;
}

/// The repository restored from an older backup while the fleet was stopped: its epochs are
/// behind what the shards saw. A new instance gives the claim back and takes it again until
/// its epoch passes the remembered one, so transaction names never repeat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn an_epoch_behind_the_shards_is_caught_up_before_generating() {
    let shards = Shards::mariadb().await;
    let yaml = config(&shards, Repo::Jdbc, "", None, 9);
    let (a, mut acknowledged) = start_and_insert(&yaml, 20).await;
    let held = *worker_ids(&acknowledged).iter().next().unwrap();
    a.stop().await;
    let used = worker_epoch(&shards, held).await;
    on_repository(
        &shards,
        &format!(
            "UPDATE keyshard_worker_id SET epoch = 0, high_water = 0 WHERE worker_id = \
             {held}"
        ),
    )
    .await;

    let b = Proxy::start(&yaml).await;
    acknowledged.extend(insert(b.url("root", "root"), 20).await);
    b.stop().await;
    let caught_up = worker_epoch(&shards, held).await;
    assert!(
        caught_up > used,
        "the epoch {caught_up} is not above {used}"
    );
    assert_all_distinct_and_stored(&acknowledged, stored(&shards).await);
    shards.cleanup().await;
}
