//! The keeper driving real generators from a JDBC repository on a SQLite file: start-up
//! refusals, a lost lease, LEAF_SNOWFLAKE's registry time check, and segments fetched ahead of
//! need from a slow repository.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use keyshard_config::{DataSource, DatabaseKind, PoolSettings};
use keyshard_coordination::{
    Claim, ComputeNode, CoordinationError, Instance, JdbcRepository, Keeper, KeeperSettings,
    Repository, WORKER_IDS,
};
use keyshard_keygen::{Clock, Key, KeyGenError, Props, Registry, Snowflake, SystemClock};
use sqlx::Connection;

fn sqlite(name: &str) -> DataSource {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "ks_keeper_{name}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    DataSource {
        name: "repository".into(),
        kind: DatabaseKind::Sqlite,
        url: format!("sqlite://{}", dir.join("repository.db").display()),
        pool: PoolSettings::default(),
    }
}

async fn jdbc(source: &DataSource, ttl: Duration) -> Arc<JdbcRepository> {
    Arc::new(
        JdbcRepository::connect(source, ttl, Duration::from_secs(5))
            .await
            .unwrap(),
    )
}

fn settings(name: &str) -> KeeperSettings {
    KeeperSettings {
        instance: Instance::new(name),
        operation_timeout: Duration::from_secs(5),
        retry_interval: Duration::from_millis(50),
        claim_worker_id: false,
        fleet: None,
    }
}

/// A registry with one generator.
fn registry(name: &str, kind: &str, props: &[(&str, &str)]) -> Registry {
    let props: Props = props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut registry = Registry::new();
    registry.build(name, kind, props).unwrap();
    registry
}

fn worker_of(registry: &Registry, name: &str) -> u16 {
    let key = registry.get(name).unwrap().next_key().unwrap();
    Snowflake::decode(key.as_i64().unwrap()).unwrap().worker_id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_worker_id_held_by_a_live_instance_stops_start_up() {
    let source = sqlite("held");
    let repository = jdbc(&source, Duration::from_secs(60)).await;
    let first = registry("snowflake", "SNOWFLAKE", &[("worker-id", "5")]);
    let keeper = Keeper::start(repository.clone(), &first, settings("first"))
        .await
        .unwrap();
    assert_eq!(worker_of(&first, "snowflake"), 5);
    let second = registry("snowflake", "SNOWFLAKE", &[("worker-id", "5")]);
    let refused = Keeper::start(repository.clone(), &second, settings("second"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            CoordinationError::WorkerIdHeld { worker_id: 5, .. }
        ),
        "{refused}"
    );
    assert!(refused.to_string().contains("(first)"), "{refused}");
    // Released on stop: the id is free at once.
    keeper.stop().await;
    let keeper = Keeper::start(repository, &second, settings("second"))
        .await
        .unwrap();
    assert_eq!(worker_of(&second, "snowflake"), 5);
    keeper.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_worker_id_held_start_up_fails_clearly() {
    let source = sqlite("full");
    let repository = jdbc(&source, Duration::from_secs(60)).await;
    for i in 0..WORKER_IDS {
        repository
            .claim(&Instance::new(format!("holder {i}")), None)
            .await
            .unwrap();
    }
    let refused = Keeper::start(
        repository,
        &registry("snowflake", "SNOWFLAKE", &[]),
        settings("late"),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(refused, CoordinationError::NoFreeWorkerId),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_lease_stops_generation_and_another_id_is_claimed() {
    let source = sqlite("lost");
    let repository = jdbc(&source, Duration::from_secs(2)).await;
    let generators = registry("snowflake", "SNOWFLAKE", &[]);
    let keeper = Keeper::start(repository.clone(), &generators, settings("victim"))
        .await
        .unwrap();
    let held = keeper.worker_id().await.unwrap();
    // Another instance takes the id over as if the lease had expired (a long pause of the
    // victim, say): expire it on the repository, then claim it.
    let thief = Instance::new("thief");
    let mut conn = sqlx::SqliteConnection::connect(&source.url).await.unwrap();
    sqlx::query("UPDATE keyshard_worker_id SET expires_at = 0 WHERE worker_id = $1")
        .bind(i64::from(held.worker_id))
        .execute(&mut conn)
        .await
        .unwrap();
    let stolen = repository
        .claim(&thief, Some(held.worker_id))
        .await
        .unwrap();
    assert_eq!(stolen.worker_id, held.worker_id);
    // The victim notices at its next renewal, stops, and claims a different id.
    let generator = generators.get("snowflake").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = keeper.worker_id().await;
        if now.as_ref().is_some_and(|s| s.worker_id != held.worker_id) {
            break;
        }
        assert!(Instant::now() < deadline, "never re-claimed: {now:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let key = generator.next_key().unwrap();
    assert_ne!(
        Snowflake::decode(key.as_i64().unwrap()).unwrap().worker_id,
        held.worker_id
    );
    keeper.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaf_snowflake_refuses_a_clock_behind_the_registry() {
    let source = sqlite("leaf");
    let repository = jdbc(&source, Duration::from_secs(60)).await;
    let leaf = &[
        ("service.id", "orders"),
        ("max.tolerate.time.difference.milliseconds", "100"),
    ][..];
    // A clock that agrees with the registry starts, and records its time.
    let generators = registry("leaf", "LEAF_SNOWFLAKE", leaf);
    let keeper = Keeper::start(repository.clone(), &generators, settings("a"))
        .await
        .unwrap();
    assert!(generators.get("leaf").unwrap().next_key().is_ok());
    keeper.stop().await;
    let recorded = repository.service_time("orders").await.unwrap().unwrap();
    assert!((SystemClock.now_millis() - recorded).abs() < 10_000);
    // Another instance of the service recorded a time 5 s ahead of this clock, and the
    // repository's clock agrees with that instance (this clock is 5 s behind both): refused.
    repository
        .record_service_time("orders", SystemClock.now_millis() + 5_000)
        .await
        .unwrap();
    let ahead = Arc::new(Slow {
        inner: repository.clone(),
        delay: Duration::ZERO,
        clock_ahead: 5_000,
    });
    let refused = Keeper::start(
        ahead,
        &registry("leaf", "LEAF_SNOWFLAKE", leaf),
        settings("b"),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(refused, CoordinationError::ClockBehindRegistry { ref service, tolerance: 100, .. } if service == "orders"),
        "{refused}"
    );
}

/// A repository whose segment fetches take `delay`, as a distant database would, and whose
/// clock is `clock_ahead` milliseconds ahead of this one's.
#[derive(Debug)]
struct Slow {
    inner: Arc<JdbcRepository>,
    delay: Duration,
    clock_ahead: i64,
}

impl Repository for Slow {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn identity(&self) -> &str {
        self.inner.identity()
    }
    fn time_to_live(&self) -> Duration {
        self.inner.time_to_live()
    }
    fn claim<'a>(
        &'a self,
        instance: &'a Instance,
        preferred: Option<u16>,
    ) -> BoxFuture<'a, Result<Claim, CoordinationError>> {
        self.inner.claim(instance, preferred)
    }
    fn renew<'a>(
        &'a self,
        instance: &'a Instance,
        claim: &'a Claim,
        reserve_millis: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>> {
        self.inner.renew(instance, claim, reserve_millis)
    }
    fn release<'a>(
        &'a self,
        instance: &'a Instance,
        claim: &'a Claim,
        high_water_millis: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>> {
        self.inner.release(instance, claim, high_water_millis)
    }
    fn compute_nodes(&self) -> BoxFuture<'_, Result<Vec<ComputeNode>, CoordinationError>> {
        self.inner.compute_nodes()
    }
    fn next_segment<'a>(
        &'a self,
        key: &'a str,
        initial: i64,
        step: i64,
    ) -> BoxFuture<'a, Result<(i64, i64), CoordinationError>> {
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            self.inner.next_segment(key, initial, step).await
        })
    }
    fn raise_segment<'a>(
        &'a self,
        key: &'a str,
        at_least: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>> {
        self.inner.raise_segment(key, at_least)
    }
    fn clock_millis(&self) -> BoxFuture<'_, Result<i64, CoordinationError>> {
        Box::pin(async move { Ok(self.inner.clock_millis().await? + self.clock_ahead) })
    }
    fn service_time<'a>(
        &'a self,
        service: &'a str,
    ) -> BoxFuture<'a, Result<Option<i64>, CoordinationError>> {
        self.inner.service_time(service)
    }
    fn record_service_time<'a>(
        &'a self,
        service: &'a str,
        millis: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>> {
        self.inner.record_service_time(service, millis)
    }
    fn decide<'a>(
        &'a self,
        gtrid: &'a str,
        commit: bool,
    ) -> BoxFuture<'a, Result<bool, CoordinationError>> {
        self.inner.decide(gtrid, commit)
    }
    fn forget<'a>(&'a self, gtrids: &'a [String]) -> BoxFuture<'a, Result<(), CoordinationError>> {
        self.inner.forget(gtrids)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segments_are_fetched_ahead_so_statements_never_wait_for_a_slow_repository() {
    let source = sqlite("segments");
    let slow = Arc::new(Slow {
        inner: jdbc(&source, Duration::from_secs(60)).await,
        delay: Duration::from_millis(50),
        clock_ahead: 0,
    });
    let generators = registry(
        "segment",
        "LEAF_SEGMENT",
        &[("leaf.key", "orders"), ("leaf.segment.step", "1000")],
    );
    let keeper = Keeper::start(slow, &generators, settings("segments"))
        .await
        .unwrap();
    let generator = generators.get("segment").unwrap();
    // Statements of 10 keys every 3 ms: a segment lasts 300 ms, and each fetch takes 50 ms.
    // The fetch starts when 10 % of a segment is used, 270 ms ahead: room for a loaded
    // machine (CI's, with 90 ms, once was not), where a fetch only on exhaustion would fail
    // at every segment's end.
    let mut keys: Vec<Key> = Vec::new();
    for _ in 0..1_000 {
        match generator.next_keys(10, &mut keys) {
            Ok(()) => {}
            Err(e @ KeyGenError::SegmentExhausted { .. }) => panic!("a statement waited: {e}"),
            Err(e) => panic!("{e}"),
        }
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let ints: Vec<i64> = keys.iter().map(|k| k.as_i64().unwrap()).collect();
    assert_eq!(ints, (1..=10_000).collect::<Vec<_>>());
    keeper.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_whose_clock_is_behind_the_high_water_mark_starts_above_it() {
    let source = sqlite("behind");
    let repository = jdbc(&source, Duration::from_secs(60)).await;
    // An earlier holder of id 0 used generator time up to an hour ahead of this clock (its
    // clock was ahead, or this one was set back), then stopped.
    let ahead = SystemClock.now_millis() + 3_600_000;
    let earlier = Instance::new("earlier");
    let claim = repository.claim(&earlier, Some(0)).await.unwrap();
    repository.release(&earlier, &claim, ahead).await.unwrap();

    let generators = registry("snowflake", "SNOWFLAKE", &[("worker-id", "0")]);
    let keeper = Keeper::start(repository.clone(), &generators, settings("behind"))
        .await
        .unwrap();
    let key = generators.get("snowflake").unwrap().next_key().unwrap();
    let decoded = Snowflake::decode(key.as_i64().unwrap()).unwrap();
    assert_eq!(decoded.worker_id, 0);
    assert!(
        decoded.unix_millis > ahead,
        "{} ≤ {ahead}",
        decoded.unix_millis
    );
    // Released with the last millisecond used: the next holder starts above it again.
    keeper.stop().await;
    let next = repository.claim(&earlier, Some(0)).await.unwrap();
    assert!(next.high_water_millis >= decoded.unix_millis);
}

/// An instance running ahead of its clock (an earlier holder's mark) that loses its id and
/// claims a free one goes on from its own time, not from the clock: its generators' time never
/// goes back, so starting the new id at the clock would refuse every key for as long as the
/// clock is behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_claim_goes_on_from_the_instance_s_own_time() {
    let source = sqlite("own_time");
    let repository = jdbc(&source, Duration::from_secs(2)).await;
    let ahead = SystemClock.now_millis() + 60_000;
    let earlier = Instance::new("earlier");
    let claim = repository.claim(&earlier, Some(0)).await.unwrap();
    repository.release(&earlier, &claim, ahead).await.unwrap();
    let generators = registry("snowflake", "SNOWFLAKE", &[]);
    let keeper = Keeper::start(repository.clone(), &generators, settings("ahead"))
        .await
        .unwrap();
    let generator = generators.get("snowflake").unwrap();
    let before = Snowflake::decode(generator.next_key().unwrap().as_i64().unwrap()).unwrap();
    assert_eq!(before.worker_id, 0);
    assert!(before.unix_millis > ahead);

    // Id 0 is taken over; the next free one (1) has no mark.
    let mut conn = sqlx::SqliteConnection::connect(&source.url).await.unwrap();
    sqlx::query("UPDATE keyshard_worker_id SET expires_at = 0 WHERE worker_id = 0")
        .execute(&mut conn)
        .await
        .unwrap();
    repository
        .claim(&Instance::new("thief"), Some(0))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while keeper.worker_id().await.is_none_or(|s| s.worker_id == 0) {
        assert!(Instant::now() < deadline, "never re-claimed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let after = generator.next_key().unwrap();
    let after = Snowflake::decode(after.as_i64().unwrap()).unwrap();
    assert_eq!(after.worker_id, 1);
    assert!(after.unix_millis > before.unix_millis);
    keeper.stop().await;
}

/// With `worker-id-bits: 1` the layout carries worker ids 0 and 1: a third instance is told
/// that every id the layout carries is held, instead of claiming id 2 and truncating it into
/// another instance's keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_stay_within_the_key_layout() {
    let source = sqlite("layout");
    let repository = jdbc(&source, Duration::from_secs(60)).await;
    let narrow = || registry("snowflake", "SNOWFLAKE", &[("worker-id-bits", "1")]);
    let (first, second, third) = (narrow(), narrow(), narrow());
    let a = Keeper::start(repository.clone(), &first, settings("a"))
        .await
        .unwrap();
    let b = Keeper::start(repository.clone(), &second, settings("b"))
        .await
        .unwrap();
    let refused = Keeper::start(repository.clone(), &third, settings("c"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            CoordinationError::NoFreeWorkerIdInLayout { max: 1 }
        ),
        "{refused}"
    );
    // The id it took beyond the layout was given back.
    assert_eq!(repository.compute_nodes().await.unwrap().len(), 2);
    a.stop().await;
    b.stop().await;
}

/// `worker-id-fallback: any`: with the configured worker id held by a live instance, the
/// instance starts with a free one, and takes another free one when its own is taken over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_worker_id_held_elsewhere_falls_back_to_a_free_one_when_asked() {
    let source = sqlite("fallback");
    let repository = jdbc(&source, Duration::from_secs(2)).await;
    let fixed = || registry("snowflake", "SNOWFLAKE", &[("worker-id", "5")]);
    let any = || {
        registry(
            "snowflake",
            "SNOWFLAKE",
            &[("worker-id", "5"), ("worker-id-fallback", "any")],
        )
    };
    let (holder, second) = (fixed(), any());
    let first = Keeper::start(repository.clone(), &holder, settings("holder"))
        .await
        .unwrap();
    let keeper = Keeper::start(repository.clone(), &second, settings("second"))
        .await
        .unwrap();
    assert_eq!(worker_of(&holder, "snowflake"), 5);
    assert_eq!(worker_of(&second, "snowflake"), 0);
    first.stop().await;
    keeper.stop().await;
    // The default waits: start-up fails naming the holder.
    let first = Keeper::start(repository.clone(), &fixed(), settings("holder"))
        .await
        .unwrap();
    let refused = Keeper::start(repository.clone(), &fixed(), settings("third"))
        .await
        .unwrap_err();
    assert!(matches!(
        refused,
        CoordinationError::WorkerIdHeld { worker_id: 5, .. }
    ));
    first.stop().await;
}

/// LEAF_SNOWFLAKE: one instance with its clock a minute ahead recorded its time; correctly
/// clocked instances, whose clocks agree with the repository's, still start (and the time
/// they record never runs ahead of the repository's clock).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_clock_ahead_does_not_lock_the_service_out() {
    let source = sqlite("leaf_ahead");
    let repository = jdbc(&source, Duration::from_secs(60)).await;
    let leaf = &[
        ("service.id", "orders"),
        ("max.tolerate.time.difference.milliseconds", "100"),
    ][..];
    repository
        .record_service_time("orders", SystemClock.now_millis() + 60_000)
        .await
        .unwrap();
    let generators = registry("leaf", "LEAF_SNOWFLAKE", leaf);
    let keeper = Keeper::start(repository.clone(), &generators, settings("good"))
        .await
        .unwrap();
    assert!(generators.get("leaf").unwrap().next_key().is_ok());
    keeper.stop().await;

    // A fresh registry: an instance with its clock a minute ahead records no more than the
    // repository's clock (plus the tolerance).
    let source = sqlite("leaf_capped");
    let repository = jdbc(&source, Duration::from_secs(60)).await;
    let behind = Arc::new(Slow {
        inner: repository.clone(),
        delay: Duration::ZERO,
        clock_ahead: -60_000,
    });
    let keeper = Keeper::start(
        behind,
        &registry("leaf", "LEAF_SNOWFLAKE", leaf),
        settings("bad"),
    )
    .await
    .unwrap();
    keeper.stop().await;
    let recorded = repository.service_time("orders").await.unwrap().unwrap();
    assert!(recorded <= SystemClock.now_millis() - 59_000, "{recorded}");
}
