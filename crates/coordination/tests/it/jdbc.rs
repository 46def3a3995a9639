//! The JDBC repository against real databases: a SQLite file always, MariaDB and PostgreSQL
//! when `KEYSHARD_TEST_MYSQL_URL` / `KEYSHARD_TEST_PG_URL` are set (`--include-ignored`). Every
//! test gets a database of its own.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use keyshard_config::{DataSource, DatabaseKind, PoolSettings};
use std::sync::Arc;

use keyshard_coordination::{
    CoordinationError, FleetRecords, Instance, JdbcRepository, Keeper, KeeperSettings, Repository,
};
use keyshard_keygen::{Registry, Snowflake};
use sqlx::{Connection, Executor};

#[derive(Debug, Clone, Copy)]
enum Database {
    Sqlite,
    MariaDb,
    Postgres,
}

fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The databases among `names` that earlier test processes left behind (their pid is in the
/// name, and gone): the tests do not drop theirs, and the servers are shared.
fn left_behind(names: Vec<String>) -> impl Iterator<Item = String> {
    names.into_iter().filter(|name| {
        let pid = name.split('_').nth(2).unwrap_or_default();
        !pid.is_empty() && !std::path::Path::new(&format!("/proc/{pid}")).exists()
    })
}

/// Drops what [`left_behind`] finds among the databases `$list` names, on `$conn`.
macro_rules! sweep {
    ($conn:ident, $list:expr) => {{
        let names = sqlx::query_scalar($list)
            .fetch_all(&mut $conn)
            .await
            .unwrap_or_default();
        for old in left_behind(names) {
            let _ = $conn
                .execute(format!("DROP DATABASE IF EXISTS {old}").as_str())
                .await;
        }
    }};
}

/// A fresh, empty database of kind `db`.
async fn fresh(db: Database) -> DataSource {
    static SWEPT: std::sync::Mutex<[bool; 2]> = std::sync::Mutex::new([false; 2]);
    let first = |i: usize| !std::mem::replace(&mut SWEPT.lock().unwrap()[i], true);
    let name = unique("ks_coord");
    let (kind, url) = match db {
        Database::Sqlite => {
            let dir = std::env::temp_dir().join(&name);
            (
                DatabaseKind::Sqlite,
                format!("sqlite://{}", dir.join("repository.db").display()),
            )
        }
        Database::MariaDb => {
            let admin = std::env::var("KEYSHARD_TEST_MYSQL_URL").expect("KEYSHARD_TEST_MYSQL_URL");
            let mut conn = sqlx::MySqlConnection::connect(&admin).await.unwrap();
            if first(0) {
                sweep!(
                    conn,
                    "SELECT CAST(schema_name AS CHAR) FROM information_schema.schemata \
                     WHERE schema_name LIKE 'ks\\_coord\\_%'"
                );
            }
            conn.execute(format!("CREATE DATABASE {name}").as_str())
                .await
                .unwrap();
            let (server, _) = admin.rsplit_once('/').unwrap();
            (DatabaseKind::MySql, format!("{server}/{name}"))
        }
        Database::Postgres => {
            let admin = std::env::var("KEYSHARD_TEST_PG_URL").expect("KEYSHARD_TEST_PG_URL");
            let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
            if first(1) {
                sweep!(
                    conn,
                    "SELECT datname::text FROM pg_database WHERE datname LIKE 'ks\\_coord\\_%'"
                );
            }
            conn.execute(format!("CREATE DATABASE {name}").as_str())
                .await
                .unwrap();
            let (server, _) = admin.rsplit_once('/').unwrap();
            (DatabaseKind::Postgres, format!("{server}/{name}"))
        }
    };
    DataSource {
        name: "repository".into(),
        kind,
        url,
        pool: PoolSettings::default(),
    }
}

async fn repository(source: &DataSource, time_to_live: Duration) -> JdbcRepository {
    JdbcRepository::connect(source, time_to_live, Duration::from_secs(10))
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", source.redacted_url()))
}

fn instance(name: &str) -> Instance {
    Instance {
        id: format!("{name}-instance"),
        address: format!("{name}:3307"),
    }
}

const MINUTE: Duration = Duration::from_secs(60);

async fn concurrent_claims_get_distinct_lowest_ids(db: Database) {
    let source = fresh(db).await;
    let (a, b) = (
        repository(&source, MINUTE).await,
        repository(&source, MINUTE).await,
    );
    let instances: Vec<Instance> = (0..16).map(|i| instance(&format!("c{i}"))).collect();
    let (left, right) = instances.split_at(8);
    let (from_a, from_b) = tokio::join!(
        futures_util::future::try_join_all(left.iter().map(|w| a.claim(w, None))),
        futures_util::future::try_join_all(right.iter().map(|w| b.claim(w, None))),
    );
    let claims: Vec<_> = from_a.unwrap().into_iter().chain(from_b.unwrap()).collect();
    let ids: HashSet<u16> = claims.iter().map(|c| c.worker_id).collect();
    assert_eq!(ids, (0..16).collect(), "{claims:?}");
    assert!(
        claims
            .iter()
            .all(|c| c.epoch == 1 && c.high_water_millis == 0)
    );
}

async fn a_held_id_names_its_holder(db: Database) {
    let source = fresh(db).await;
    let repository = repository(&source, MINUTE).await;
    let holder = repository.claim(&instance("a"), Some(7)).await.unwrap();
    assert_eq!(holder.worker_id, 7);
    match repository.claim(&instance("b"), Some(7)).await {
        Err(e @ CoordinationError::WorkerIdHeld { worker_id: 7, .. }) => {
            assert!(e.to_string().contains("a-instance (a:3307)"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    // A claim without a preference skips it.
    assert_eq!(
        repository
            .claim(&instance("b"), None)
            .await
            .unwrap()
            .worker_id,
        0
    );
}

async fn expiry_is_on_the_database_clock_and_a_lost_lease_stays_lost(db: Database) {
    let source = fresh(db).await;
    let short = repository(&source, Duration::from_millis(1_000)).await;
    let a = instance("a");
    let claim = short.claim(&a, Some(3)).await.unwrap();
    short.renew(&a, &claim, 5_000).await.unwrap();
    // Not expired yet: held.
    assert!(matches!(
        short.claim(&instance("b"), Some(3)).await,
        Err(CoordinationError::WorkerIdHeld { .. })
    ));
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    let taken = short.claim(&instance("b"), Some(3)).await.unwrap();
    assert_eq!(taken.epoch, claim.epoch + 1);
    assert_eq!(taken.high_water_millis, 5_000);
    assert!(matches!(
        short.renew(&a, &claim, 6_000).await,
        Err(CoordinationError::LeaseLost {
            worker_id: 3,
            epoch: 1
        })
    ));
    assert!(matches!(
        short.release(&a, &claim, 6_000).await,
        Err(CoordinationError::LeaseLost { .. })
    ));
}

async fn release_frees_at_once_with_the_last_millisecond_used(db: Database) {
    let source = fresh(db).await;
    let repository = repository(&source, MINUTE).await;
    let a = instance("a");
    let first = repository.claim(&a, None).await.unwrap();
    // The reservation runs ahead of use; release records what was really used.
    repository.renew(&a, &first, 90_000).await.unwrap();
    repository.release(&a, &first, 40_000).await.unwrap();
    let second = repository.claim(&instance("b"), None).await.unwrap();
    assert_eq!(
        (second.worker_id, second.epoch, second.high_water_millis),
        (first.worker_id, 2, 40_000)
    );
    // Never below what an earlier holder left, even if this one used nothing.
    repository
        .release(&instance("b"), &second, 0)
        .await
        .unwrap();
    let third = repository.claim(&a, None).await.unwrap();
    assert_eq!(third.high_water_millis, 40_000);
    let nodes = repository.compute_nodes().await.unwrap();
    assert_eq!(nodes.len(), 1);
    assert_eq!(
        (nodes[0].instance_id.as_str(), nodes[0].worker_id),
        ("a-instance", 0)
    );
    assert!(nodes[0].expires_at_millis.is_some());
}

async fn segments_are_consecutive_ranges_disjoint_across_repositories(db: Database) {
    let source = fresh(db).await;
    let (a, b) = (
        repository(&source, MINUTE).await,
        repository(&source, MINUTE).await,
    );
    assert_eq!(
        a.next_segment("orders", 100_001, 5).await.unwrap(),
        (100_001, 100_005)
    );
    assert_eq!(
        b.next_segment("orders", 100_001, 5).await.unwrap(),
        (100_006, 100_010)
    );
    let (left, right) = tokio::join!(
        futures_util::future::try_join_all((0..20).map(|_| a.next_segment("load", 1, 10))),
        futures_util::future::try_join_all((0..20).map(|_| b.next_segment("load", 1, 10))),
    );
    let mut keys = HashSet::new();
    for (first, last) in left.unwrap().into_iter().chain(right.unwrap()) {
        assert_eq!(last - first, 9);
        for key in first..=last {
            assert!(keys.insert(key), "key {key} in two segments");
        }
    }
    assert_eq!(keys.len(), 400);
}

async fn service_time_never_goes_down(db: Database) {
    let source = fresh(db).await;
    let repository = repository(&source, MINUTE).await;
    assert_eq!(repository.service_time("orders").await.unwrap(), None);
    repository
        .record_service_time("orders", 2_000)
        .await
        .unwrap();
    repository
        .record_service_time("orders", 1_000)
        .await
        .unwrap();
    assert_eq!(
        repository.service_time("orders").await.unwrap(),
        Some(2_000)
    );
}

async fn the_first_decision_stands(db: Database) {
    let source = fresh(db).await;
    let (a, b) = (
        repository(&source, MINUTE).await,
        repository(&source, MINUTE).await,
    );
    // A coordinator committing and a recovery aborting, at once: exactly one wins.
    for n in 0..20 {
        let gtrid = format!("ks-1-1-{n}");
        let (commit, abort) = tokio::join!(a.decide(&gtrid, true), b.decide(&gtrid, false));
        let (commit, abort) = (commit.unwrap(), abort.unwrap());
        assert_eq!(commit, abort, "{gtrid}: both saw the same decision");
        assert_eq!(a.decide(&gtrid, !commit).await.unwrap(), commit);
    }
    a.forget(&["ks-1-1-0".to_owned(), "ks-1-1-1".to_owned()])
        .await
        .unwrap();
    assert!(!b.decide("ks-1-1-0", false).await.unwrap());
    assert!(b.decide("ks-1-1-1", true).await.unwrap());
}

/// Two keepers on two repositories over one shard: the second is refused while the first
/// runs, and once it has stopped starts above its keys. Exercises the fleet records' SQL on
/// each database.
async fn the_shards_tell_a_second_repository_from_the_first(db: Database) {
    let shard = fresh(db).await;
    let fleet = Arc::new(FleetRecords::connect(&[shard], Duration::from_secs(10)).unwrap());
    let settings = |name: &str| KeeperSettings {
        instance: instance(name),
        operation_timeout: Duration::from_secs(10),
        retry_interval: Duration::from_millis(50),
        claim_worker_id: false,
        fleet: Some(Arc::clone(&fleet)),
    };
    let snowflake = || {
        let mut registry = Registry::new();
        registry
            .build("snowflake", "SNOWFLAKE", Default::default())
            .unwrap();
        registry
    };
    let key = |registry: &Registry| {
        let key = registry.get("snowflake").unwrap().next_key().unwrap();
        Snowflake::decode(key.as_i64().unwrap()).unwrap()
    };
    let (first, second) = (fresh(db).await, fresh(db).await);
    let first = Arc::new(repository(&first, MINUTE).await);
    let second = Arc::new(repository(&second, MINUTE).await);

    let a = snowflake();
    let keeper = Keeper::start(first.clone(), &a, settings("a"))
        .await
        .unwrap();
    let from_a = key(&a);
    // Its renewal checks again and keeps going.
    let b = snowflake();
    let refused = Keeper::start(second.clone(), &b, settings("b"))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, CoordinationError::Fleet { .. }),
        "{refused}"
    );
    keeper.stop().await;
    let keeper = Keeper::start(second, &b, settings("b")).await.unwrap();
    let from_b = key(&b);
    assert_eq!(from_a.worker_id, from_b.worker_id);
    assert!(
        from_b.unix_millis > from_a.unix_millis,
        "{from_b:?} {from_a:?}"
    );
    keeper.stop().await;
    // Back to the first: the second has stopped, so the first starts above it in turn.
    let again = snowflake();
    let keeper = Keeper::start(first, &again, settings("a2")).await.unwrap();
    assert!(key(&again).unix_millis > from_b.unix_millis);
    keeper.stop().await;
}

/// Two fleets drawing one LEAF_SEGMENT sequence from two repositories into one shard: each
/// segment is used only once recorded clear of the other's, so their keys never meet.
async fn segments_of_two_repositories_over_one_shard_never_overlap(db: Database) {
    let shard = fresh(db).await;
    let fleet = Arc::new(FleetRecords::connect(&[shard], Duration::from_secs(10)).unwrap());
    let mut fleets = Vec::new();
    for name in ["a", "b"] {
        let repository = Arc::new(repository(&fresh(db).await, MINUTE).await);
        let mut registry = Registry::new();
        let props = [("leaf.key", "orders"), ("leaf.segment.step", "10")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        registry.build("segment", "LEAF_SEGMENT", props).unwrap();
        let settings = KeeperSettings {
            instance: instance(name),
            operation_timeout: Duration::from_secs(10),
            retry_interval: Duration::from_millis(50),
            claim_worker_id: false,
            fleet: Some(Arc::clone(&fleet)),
        };
        let keeper = Keeper::start(repository, &registry, settings)
            .await
            .unwrap();
        fleets.push((keeper, registry));
    }
    let mut keys = HashSet::new();
    for round in 0..300 {
        let (_, registry) = &fleets[round % 2];
        let generator = registry.get("segment").unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let key = loop {
            match generator.next_key() {
                Ok(key) => break key.as_i64().unwrap(),
                Err(e) => {
                    assert!(std::time::Instant::now() < deadline, "{e}");
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        };
        assert!(keys.insert(key), "key {key} handed out twice");
    }
    for (keeper, _) in fleets {
        keeper.stop().await;
    }
}

/// A sequence raised above another repository's keys continues above them; raising never
/// lowers it, and a sequence that does not exist yet starts above the raise.
async fn a_raised_sequence_continues_above_the_raise(db: Database) {
    let repository = repository(&fresh(db).await, MINUTE).await;
    repository.raise_segment("orders", 500).await.unwrap();
    assert_eq!(
        repository.next_segment("orders", 1, 10).await.unwrap(),
        (501, 510)
    );
    repository.raise_segment("orders", 100).await.unwrap();
    assert_eq!(
        repository.next_segment("orders", 1, 10).await.unwrap(),
        (511, 520)
    );
}

/// The database's clock, and one identity per repository database, kept across connections.
async fn the_database_s_clock_and_the_repository_s_identity(db: Database) {
    let source = fresh(db).await;
    let (a, b) = (
        repository(&source, MINUTE).await,
        repository(&source, MINUTE).await,
    );
    let now = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap();
    let clock = a.clock_millis().await.unwrap();
    assert!((clock - now).abs() < 5_000, "{clock} against {now}");
    assert_eq!(a.identity(), b.identity());
    let other = repository(&fresh(db).await, MINUTE).await;
    assert_ne!(a.identity(), other.identity());
}

macro_rules! on_every_database {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() { super::$name(super::Database::Sqlite).await }
            )*
        }
        mod mariadb {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            #[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
            async fn $name() { super::$name(super::Database::MariaDb).await }
            )*
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            #[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
            async fn $name() { super::$name(super::Database::Postgres).await }
            )*
        }
    };
}

on_every_database!(
    concurrent_claims_get_distinct_lowest_ids,
    a_held_id_names_its_holder,
    expiry_is_on_the_database_clock_and_a_lost_lease_stays_lost,
    release_frees_at_once_with_the_last_millisecond_used,
    segments_are_consecutive_ranges_disjoint_across_repositories,
    service_time_never_goes_down,
    the_first_decision_stands,
    the_shards_tell_a_second_repository_from_the_first,
    segments_of_two_repositories_over_one_shard_never_overlap,
    the_database_s_clock_and_the_repository_s_identity,
    a_raised_sequence_continues_above_the_raise,
);
