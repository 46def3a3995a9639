//! The ZooKeeper repository against a real server: `KEYSHARD_TEST_ZOOKEEPER=127.0.0.1:2181
//! cargo test -p keyshard-coordination --test zookeeper -- --ignored`. Each test works in a
//! namespace of its own, so they run in parallel on one server.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use keyshard_coordination::{
    Claim, CoordinationError, Instance, Repository, ZooKeeperRepository, ZooKeeperSettings,
};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use zookeeper_client as zk;

fn server() -> String {
    std::env::var("KEYSHARD_TEST_ZOOKEEPER")
        .expect("KEYSHARD_TEST_ZOOKEEPER names the ZooKeeper server, e.g. 127.0.0.1:2181")
}

fn fresh_namespace() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .subsec_nanos();
    format!(
        "keyshard_test_{}_{nanos}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn settings(namespace: &str) -> ZooKeeperSettings {
    ZooKeeperSettings {
        // The smallest the stock server grants (2 × tickTime), so expiry tests are quick.
        session_timeout: Duration::from_secs(4),
        ..ZooKeeperSettings::new(server(), namespace)
    }
}

async fn repository(namespace: &str) -> ZooKeeperRepository {
    ZooKeeperRepository::connect(settings(namespace))
        .await
        .expect("connect to ZooKeeper")
}

fn instance(name: &str) -> Instance {
    Instance {
        id: format!("{name}-instance"),
        address: "127.0.0.1:3307".to_owned(),
    }
}

async fn take(repository: &ZooKeeperRepository) -> Vec<(i64, i64)> {
    let mut segments = Vec::new();
    for _ in 0..25 {
        segments.push(
            repository
                .next_segment("load", 1, 10)
                .await
                .expect("segment"),
        );
    }
    segments
}

/// Claims `worker_id` until it is free, for at most `within`.
async fn claim_when_free(
    repository: &ZooKeeperRepository,
    who: &Instance,
    worker_id: u16,
    within: Duration,
) -> Claim {
    let deadline = Instant::now() + within;
    loop {
        match repository.claim(who, Some(worker_id)).await {
            Ok(claim) => return claim,
            Err(CoordinationError::WorkerIdHeld { .. }) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(err) => panic!("worker id {worker_id} did not come free: {err}"),
        }
    }
}

#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn two_sessions_claiming_concurrently_get_distinct_ids() {
    let ns = fresh_namespace();
    let (a, b) = (repository(&ns).await, repository(&ns).await);
    let instances: Vec<Instance> = (0..8).map(|i| instance(&format!("c{i}"))).collect();
    let (left, right) = instances.split_at(4);
    let claims_a = async {
        let mut claims = Vec::new();
        for who in left {
            claims.push(a.claim(who, None).await.expect("claim on a"));
        }
        claims
    };
    let claims_b = async {
        let mut claims = Vec::new();
        for who in right {
            claims.push(b.claim(who, None).await.expect("claim on b"));
        }
        claims
    };
    let (claims_a, claims_b) = tokio::join!(claims_a, claims_b);
    let ids: HashSet<u16> = claims_a
        .iter()
        .chain(&claims_b)
        .map(|c| c.worker_id)
        .collect();
    assert_eq!(ids.len(), 8, "{claims_a:?} {claims_b:?}");
    assert!(ids.iter().all(|id| *id < 8), "lowest free ids: {ids:?}");
}

#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn preferred_id_held_names_the_holder() {
    let ns = fresh_namespace();
    let (a, b) = (repository(&ns).await, repository(&ns).await);
    let (alice, bob) = (instance("alice"), instance("bob"));
    let claim = a.claim(&alice, Some(42)).await.expect("claim 42");
    assert_eq!(claim.worker_id, 42);
    match b.claim(&bob, Some(42)).await {
        Err(CoordinationError::WorkerIdHeld {
            worker_id, holder, ..
        }) => {
            assert_eq!((worker_id, holder), (42, alice.id.clone()));
        }
        other => panic!("expected WorkerIdHeld, got {other:?}"),
    }
    // Another id is still there for bob.
    assert_eq!(b.claim(&bob, None).await.expect("free id").worker_id, 0);
}

#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn closed_session_frees_the_id_and_its_claim_is_lost() {
    let ns = fresh_namespace();
    let b = repository(&ns).await;
    let (alice, bob) = (instance("alice"), instance("bob"));
    let old = {
        let a = repository(&ns).await;
        let old = a.claim(&alice, Some(7)).await.expect("claim 7");
        assert!(matches!(
            b.claim(&bob, Some(7)).await,
            Err(CoordinationError::WorkerIdHeld { .. })
        ));
        old
        // Dropping the repository closes its session, and ZooKeeper deletes its ephemerals.
    };
    let new = claim_when_free(&b, &bob, 7, Duration::from_secs(10)).await;
    assert!(new.epoch > old.epoch, "{new:?} after {old:?}");
    // The old claim, renewed through any session, is not the holder's any more.
    match b.renew(&alice, &old, 1).await {
        Err(CoordinationError::LeaseLost { worker_id, epoch }) => {
            assert_eq!((worker_id, epoch), (7, old.epoch));
        }
        other => panic!("expected LeaseLost, got {other:?}"),
    }
    b.renew(&bob, &new, 1).await.expect("the new claim renews");
}

#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn a_new_claim_by_the_same_session_loses_the_earlier_one() {
    let ns = fresh_namespace();
    let a = repository(&ns).await;
    let alice = instance("alice");
    let first = a.claim(&alice, Some(3)).await.expect("claim 3");
    a.release(&alice, &first, 10).await.expect("release");
    let second = a.claim(&alice, Some(3)).await.expect("claim 3 again");
    assert!(second.epoch > first.epoch);
    assert!(matches!(
        a.renew(&alice, &first, 20).await,
        Err(CoordinationError::LeaseLost { .. })
    ));
    // Claiming an id the instance holds already starts a new epoch too.
    let third = a.claim(&alice, Some(3)).await.expect("claim 3 once more");
    assert!(third.epoch > second.epoch);
    assert!(matches!(
        a.renew(&alice, &second, 20).await,
        Err(CoordinationError::LeaseLost { .. })
    ));
    a.renew(&alice, &third, 20).await.expect("renew the latest");
}

#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn release_frees_the_id_at_once_and_records_the_high_water_mark() {
    let ns = fresh_namespace();
    let (a, b) = (repository(&ns).await, repository(&ns).await);
    let (alice, bob) = (instance("alice"), instance("bob"));
    let claim = a.claim(&alice, Some(5)).await.expect("claim 5");
    assert_eq!(claim.high_water_millis, 0);
    a.renew(&alice, &claim, 5_000).await.expect("renew");
    // Released with the last millisecond used: the reservation ahead is given back.
    a.release(&alice, &claim, 1_234).await.expect("release");
    let next = b.claim(&bob, Some(5)).await.expect("free at once");
    assert_eq!(next.high_water_millis, 1_234);
    assert!(
        a.compute_nodes()
            .await
            .expect("compute nodes")
            .iter()
            .all(|node| node.instance_id != alice.id)
    );
    // A release never goes below the mark the claim started from.
    b.release(&bob, &next, 1_000).await.expect("release");
    let last = a.claim(&alice, Some(5)).await.expect("claim 5 again");
    assert_eq!(last.high_water_millis, 1_234);
}

#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn high_water_mark_survives_a_dead_holder() {
    let ns = fresh_namespace();
    let b = repository(&ns).await;
    let (alice, bob) = (instance("alice"), instance("bob"));
    {
        let a = repository(&ns).await;
        let claim = a.claim(&alice, Some(9)).await.expect("claim 9");
        a.renew(&alice, &claim, 1_000).await.expect("renew");
        a.renew(&alice, &claim, 500).await.expect("renew lower");
        // Dies without releasing.
    }
    let claim = claim_when_free(&b, &bob, 9, Duration::from_secs(10)).await;
    assert_eq!(claim.high_water_millis, 1_000);
}

#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn segments_are_disjoint_across_repositories() {
    let ns = fresh_namespace();
    let (a, b) = (repository(&ns).await, repository(&ns).await);
    assert_eq!(
        a.next_segment("order", 100_001, 5).await.expect("first"),
        (100_001, 100_005)
    );
    assert_eq!(
        b.next_segment("order", 100_001, 5).await.expect("second"),
        (100_006, 100_010)
    );
    let (from_a, from_b) = tokio::join!(take(&a), take(&b));
    let mut all: Vec<(i64, i64)> = from_a.into_iter().chain(from_b).collect();
    all.sort_unstable();
    assert_eq!(all.len(), 50);
    for (n, (first, last)) in all.iter().enumerate() {
        let start = 1 + 10 * i64::try_from(n).expect("small");
        assert_eq!((*first, *last), (start, start + 9), "segments {all:?}");
    }
}

#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn bad_names_are_rejected() {
    let ns = fresh_namespace();
    let a = repository(&ns).await;
    for key in ["", "a/b"] {
        assert!(matches!(
            a.next_segment(key, 1, 1).await,
            Err(CoordinationError::Config(_))
        ));
        assert!(matches!(
            a.record_service_time(key, 1).await,
            Err(CoordinationError::Config(_))
        ));
    }
    assert!(matches!(
        a.next_segment("k", 1, 0).await,
        Err(CoordinationError::Config(_))
    ));
}

#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn service_time_never_lowers() {
    let ns = fresh_namespace();
    let a = repository(&ns).await;
    assert_eq!(a.service_time("leaf").await.expect("read"), None);
    a.record_service_time("leaf", 2_000).await.expect("record");
    a.record_service_time("leaf", 1_000)
        .await
        .expect("record lower");
    assert_eq!(a.service_time("leaf").await.expect("read"), Some(2_000));
    a.record_service_time("leaf", 3_000)
        .await
        .expect("record higher");
    assert_eq!(a.service_time("leaf").await.expect("read"), Some(3_000));
}

#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn compute_nodes_list_the_holders() {
    let ns = fresh_namespace();
    let (a, b) = (repository(&ns).await, repository(&ns).await);
    assert!(a.compute_nodes().await.expect("none yet").is_empty());
    let (alice, bob) = (instance("alice"), instance("bob"));
    let claim_a = a.claim(&alice, Some(11)).await.expect("claim");
    let claim_b = b.claim(&bob, None).await.expect("claim");
    let nodes = b.compute_nodes().await.expect("compute nodes");
    let listed: Vec<(String, u16, u64, Option<i64>)> = nodes
        .into_iter()
        .map(|n| (n.instance_id, n.worker_id, n.epoch, n.expires_at_millis))
        .collect();
    assert_eq!(
        listed,
        vec![
            (bob.id.clone(), 0, claim_b.epoch, None),
            (alice.id.clone(), 11, claim_a.epoch, None),
        ]
    );
}

#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn nodes_are_where_shardingsphere_puts_them() {
    let ns = fresh_namespace();
    let a = repository(&ns).await;
    assert_eq!(
        a.describe(),
        format!("ZooKeeper {} (namespace {ns})", server())
    );
    assert_eq!(a.time_to_live(), Duration::from_secs(4));
    let alice = instance("alice");
    let claim = a.claim(&alice, Some(17)).await.expect("claim");
    a.renew(&alice, &claim, 777).await.expect("renew");

    let raw = zk::Client::connect(&server()).await.expect("raw client");
    let (data, stat) = raw
        .get_data(&format!("/{ns}/reservation/worker_id/17"))
        .await
        .expect("reservation node");
    assert_eq!(data, alice.id.as_bytes());
    assert_ne!(stat.ephemeral_owner, 0, "ephemeral");
    assert_eq!(u64::try_from(stat.czxid).ok(), Some(claim.epoch));
    let (data, stat) = raw
        .get_data(&format!("/{ns}/nodes/compute_nodes/worker_id/{}", alice.id))
        .await
        .expect("compute node");
    assert_eq!(data, b"17");
    assert_ne!(stat.ephemeral_owner, 0, "ephemeral");
    let (data, stat) = raw
        .get_data(&format!("/{ns}/keyshard/worker_id_hwm/17"))
        .await
        .expect("high-water mark");
    assert_eq!(data, b"777");
    assert_eq!(stat.ephemeral_owner, 0, "persistent");
}

/// A TCP relay to the server that can be cut, so a session can really expire: ZooKeeper
/// expires it once it has not heard from the client for the session timeout.
struct Relay {
    address: String,
    open: watch::Sender<bool>,
}

impl Relay {
    async fn start(server: String) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind relay");
        let address = listener.local_addr().expect("relay address").to_string();
        let (open, _) = watch::channel(true);
        let state = open.clone();
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let mut cut = state.subscribe();
                if !*cut.borrow_and_update() {
                    continue; // dropped: the client sees the server gone
                }
                let server = server.clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(&server).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = cut.wait_for(|open| !*open) => {}
                    }
                });
            }
        });
        Relay { address, open }
    }

    fn cut(&self) {
        self.open.send_replace(false);
    }

    fn restore(&self) {
        self.open.send_replace(true);
    }
}

#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn expired_session_loses_its_claim_and_the_next_claim_reconnects() {
    let ns = fresh_namespace();
    let relay = Relay::start(server()).await;
    let a = ZooKeeperRepository::connect(ZooKeeperSettings {
        server_lists: relay.address.clone(),
        ..settings(&ns)
    })
    .await
    .expect("connect through the relay");
    let b = repository(&ns).await;
    let (alice, bob) = (instance("alice"), instance("bob"));
    let old = a.claim(&alice, Some(1)).await.expect("claim 1");

    relay.cut();
    // The server expires alice's session, deleting its reservation: bob gets the id.
    let taken = claim_when_free(&b, &bob, 1, Duration::from_secs(20)).await;
    assert!(taken.epoch > old.epoch);
    assert!(
        a.renew(&alice, &old, 1).await.is_err(),
        "cannot renew while cut off"
    );

    relay.restore();
    // Back in touch, alice's client learns its session expired: the claim is lost for good.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match a.renew(&alice, &old, 1).await {
            Err(CoordinationError::LeaseLost {
                worker_id: 1,
                epoch,
            }) if epoch == old.epoch => {
                break;
            }
            Ok(()) => panic!("a claim of an expired session was renewed"),
            Err(err) if Instant::now() < deadline => {
                eprintln!("renew while reconnecting: {err}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(err) => panic!("expected LeaseLost, got {err}"),
        }
    }
    // The next claim opens a new session, whose ephemerals hold.
    let fresh = a
        .claim(&alice, None)
        .await
        .expect("claim with a new session");
    assert_eq!(fresh.worker_id, 0);
    a.renew(&alice, &fresh, 1)
        .await
        .expect("renew the new claim");
    assert!(matches!(
        a.renew(&alice, &old, 1).await,
        Err(CoordinationError::LeaseLost { .. })
    ));
    assert!(matches!(
        a.release(&alice, &old, 1).await,
        Err(CoordinationError::LeaseLost { .. })
    ));
}

#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn the_first_decision_stands() {
    let namespace = fresh_namespace();
    let (a, b) = (repository(&namespace).await, repository(&namespace).await);
    for n in 0..10 {
        let gtrid = format!("ks-1-1-{n}");
        let (commit, abort) = tokio::join!(a.decide(&gtrid, true), b.decide(&gtrid, false));
        let (commit, abort) = (commit.unwrap(), abort.unwrap());
        assert_eq!(commit, abort, "{gtrid}: both saw the same decision");
        assert_eq!(b.decide(&gtrid, !commit).await.unwrap(), commit);
    }
    let forgotten = ["ks-1-1-0".to_owned()];
    a.forget(&forgotten).await.unwrap();
    a.forget(&forgotten).await.unwrap();
    assert!(b.decide("ks-1-1-0", true).await.unwrap());
}

/// The servers' clock (a node's modification time, written now) and the repository's
/// identity, the same for every session of one namespace and another for another namespace.
#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn the_servers_clock_and_the_namespace_s_identity() {
    let ns = fresh_namespace();
    let (a, b) = (repository(&ns).await, repository(&ns).await);
    let now = i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap();
    for _ in 0..2 {
        let clock = a.clock_millis().await.unwrap();
        assert!((clock - now).abs() < 5_000, "{clock} against {now}");
    }
    assert_eq!(a.identity(), b.identity());
    let other = repository(&fresh_namespace()).await;
    assert_ne!(a.identity(), other.identity());
}

/// A sequence raised above keys another repository handed out takes its next segment above
/// them (how a LEAF_SEGMENT fleet continues above a second repository's keys); raising never
/// lowers it.
#[tokio::test]
#[ignore = "needs ZooKeeper (KEYSHARD_TEST_ZOOKEEPER)"]
async fn a_raised_sequence_continues_above_the_raise() {
    let repository = repository(&fresh_namespace()).await;
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
    repository.raise_segment("orders", 1_000).await.unwrap();
    assert_eq!(
        repository.next_segment("orders", 1, 10).await.unwrap(),
        (1_001, 1_010)
    );
}
