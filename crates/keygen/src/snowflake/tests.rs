//! The vectors of `shared/testdata/snowflake_vectors.md`, ShardingSphere's own expectations.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use crate::{Grant, WorkerLease};

use super::*;

/// ShardingSphere's `FixedTimeService`: starts at the epoch; a call returns the current time
/// while its counter (read, then incremented) is below `n`, otherwise resets the counter and
/// returns the next millisecond.
#[derive(Debug)]
struct FixedTimeService {
    n: u32,
    state: Mutex<(i64, u32)>,
}

impl FixedTimeService {
    fn new(n: u32) -> Self {
        Self {
            n,
            state: Mutex::new((EPOCH_MILLIS, 0)),
        }
    }
}

impl Clock for FixedTimeService {
    fn now_millis(&self) -> i64 {
        let mut state = self.state.lock().unwrap();
        let (current, calls) = &mut *state;
        let below = *calls < self.n;
        *calls += 1;
        if below {
            return *current;
        }
        *calls = 0;
        *current += 1;
        *current
    }
}

use crate::props::props_of as props;

fn generator(n: u32, pairs: &[(&str, &str)]) -> SnowflakeGenerator<FixedTimeService> {
    SnowflakeGenerator::with_clock(&props(pairs), FixedTimeService::new(n)).unwrap()
}

fn keys<C: Clock>(generator: &SnowflakeGenerator<C>, count: usize) -> Vec<i64> {
    (0..count)
        .map(|_| generator.next_block(1).unwrap())
        .collect()
}

#[test]
fn single_thread() {
    let generator = generator(1, &[]);
    assert_eq!(
        keys(&generator, 10),
        [
            0, 4194305, 4194306, 8388608, 8388609, 12582913, 12582914, 16777216, 16777217, 20971521
        ]
    );
}

#[test]
fn same_millisecond() {
    let generator = generator(5, &[("max-vibration-offset", "3")]);
    assert_eq!(keys(&generator, 5), [0, 1, 2, 3, 4]);
}

/// Sets `last_millis` to one clock read plus two, as ShardingSphere's test does by reflection.
fn clock_moved_back(pairs: &[(&str, &str)]) -> SnowflakeGenerator<FixedTimeService> {
    let generator = generator(1, pairs);
    let read = generator.clock.now_millis();
    generator.state.lock().unwrap().last_millis = read + 2;
    generator
}

/// ShardingSphere's vector here is 4194304, 8388609, …: it sleeps out the step, then takes the
/// clock's millisecond (E+1) although it had moved on to E+2, so its time goes back. Keyshard
/// rides the step out at E+2 without sleeping and carries on once the clock passes it: no key
/// lies below one handed out before.
#[test]
fn clock_moved_back_within_tolerance() {
    let generator = clock_moved_back(&[]);
    assert_eq!(
        keys(&generator, 10),
        [
            8388609, 8388610, 8388611, 8388612, 12582912, 12582913, 16777217, 16777218, 20971520,
            20971521
        ]
    );
}

#[test]
fn clock_moved_back_beyond_tolerance() {
    let generator = clock_moved_back(&[("max-tolerate-time-difference-milliseconds", "0")]);
    let err = generator.next_block(1).unwrap_err();
    assert_eq!(
        err,
        KeyGenError::ClockMovedBackwards {
            last: EPOCH_MILLIS + 2,
            now: EPOCH_MILLIS + 1
        }
    );
    assert!(err.to_string().starts_with("Clock is moving backwards"));
}

#[test]
fn sequence_overflow() {
    let generator = generator(2, &[]);
    let read = generator.clock.now_millis();
    {
        let mut state = generator.state.lock().unwrap();
        state.last_millis = read;
        state.sequence = MAX_SEQUENCE;
    }
    assert_eq!(
        keys(&generator, 10),
        [
            4194304, 4194305, 4194306, 8388608, 8388609, 8388610, 12582913, 12582914, 12582915,
            16777216
        ]
    );
}

#[test]
fn vibration_on_a_real_clock() {
    let generator =
        SnowflakeGenerator::from_props(&props(&[("max-vibration-offset", "3")])).unwrap();
    let mut low_bits = Vec::new();
    for _ in 0..5 {
        low_bits.push(generator.next_block(1).unwrap() & 7);
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert_eq!(low_bits, [0, 1, 2, 3, 0]);
}

#[test]
fn threads_never_share_a_key() {
    let generator = Arc::new(SnowflakeGenerator::from_props(&Props::new()).unwrap());
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let generator = Arc::clone(&generator);
            std::thread::spawn(move || {
                let mut out = Vec::new();
                for _ in 0..5_000 {
                    // Mix single keys and blocks: both draw from the same sequence space.
                    if i % 2 == 0 {
                        generator.next_keys(1, &mut out).unwrap();
                    } else {
                        generator.next_keys(7, &mut out).unwrap();
                    }
                }
                out
            })
        })
        .collect();
    let mut seen = HashSet::new();
    let mut total = 0;
    for handle in handles {
        for key in handle.join().unwrap() {
            total += 1;
            assert!(seen.insert(key.as_i64().unwrap()), "duplicate key {key}");
        }
    }
    assert_eq!(total, 4 * 5_000 + 4 * 5_000 * 7);
}

#[test]
fn bad_properties_are_rejected() {
    for (name, value) in [
        ("max-vibration-offset", "-1"),
        ("max-vibration-offset", "4096"),
        ("max-tolerate-time-difference-milliseconds", "-1"),
        ("worker-id", "-1"),
        ("worker-id", "1024"),
        ("worker-id", "one"),
    ] {
        let err = SnowflakeGenerator::from_props(&props(&[(name, value)])).unwrap_err();
        assert!(
            matches!(&err, KeyGenError::InvalidProperty { name: n, value: v, .. } if n == name && v == value),
            "{name}={value}: {err}"
        );
    }
    let err = SnowflakeGenerator::from_props(&props(&[("worker-id", "1024")])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "property 'worker-id' = '1024' is invalid: expected an integer from 0 to 1023"
    );
}

#[test]
fn properties_at_the_edges_of_their_ranges_are_accepted() {
    let generator = SnowflakeGenerator::from_props(&props(&[
        ("worker-id", "1023"),
        ("max-vibration-offset", "4095"),
        ("max-tolerate-time-difference-milliseconds", "0"),
    ]))
    .unwrap();
    assert_eq!(generator.worker_id(), Some(1023));
}

#[test]
fn worker_id_is_in_every_key() {
    let generator = generator(1, &[("worker-id", "3")]);
    assert_eq!(keys(&generator, 2), [3 << 12, (1 << 22) | (3 << 12) | 1]);
}

#[test]
fn a_block_is_consecutive_within_one_millisecond() {
    let generator = generator(100, &[]);
    let mut out = Vec::new();
    generator.next_keys(100, &mut out).unwrap();
    let ints: Vec<i64> = out.iter().map(|k| k.as_i64().unwrap()).collect();
    assert_eq!(ints, (0..100).collect::<Vec<_>>());
    // The next single key continues the same millisecond's sequence.
    assert_eq!(generator.next_block(1).unwrap(), 100);
}

/// With gene bits, a block's keys are 2^bits apart, their lowest bits zero for the gene, and
/// a millisecond holds fewer of them.
#[test]
fn gene_keys_leave_their_lowest_bits_zero() {
    let generator = generator(100, &[("gene-bits", "2")]);
    assert_eq!(generator.gene_bits(), 2);
    let mut out = Vec::new();
    generator.next_keys(3, &mut out).unwrap();
    let ints: Vec<i64> = out.iter().map(|k| k.as_i64().unwrap()).collect();
    assert_eq!(ints, [0, 4, 8]);
    assert_eq!(generator.max_block(), 1024);
    assert!(generator.next_keys(1025, &mut out).is_err());
}

#[test]
fn a_block_that_does_not_fit_starts_the_next_millisecond_at_zero() {
    let generator = generator(100, &[]);
    assert_eq!(generator.next_block(4000).unwrap(), 0);
    // 96 numbers left in this millisecond: a block of 97 moves on.
    assert_eq!(generator.next_block(97).unwrap(), 1 << 22);
    assert_eq!(generator.next_block(1).unwrap(), (1 << 22) | 97);
}

#[test]
fn a_whole_millisecond_is_one_block() {
    let generator = generator(100, &[("max-vibration-offset", "3")]);
    generator.next_block(1).unwrap();
    assert_eq!(generator.next_block(MAX_BLOCK).unwrap(), 1 << 22);
}

#[test]
fn more_keys_than_one_millisecond_holds_are_refused_whole() {
    let generator = generator(100, &[]);
    let mut out = Vec::new();
    let err = generator.next_keys(MAX_BLOCK + 1, &mut out).unwrap_err();
    assert!(out.is_empty());
    assert_eq!(
        err,
        KeyGenError::TooManyKeys {
            generator: "SNOWFLAKE",
            count: 4097,
            max: 4096
        }
    );
    assert!(err.to_string().contains("split the INSERT"), "{err}");
    // Nothing was taken: the next key is the first of the clock's millisecond.
    assert_eq!(generator.next_block(1).unwrap(), 0);
}

#[test]
fn decodes_a_key() {
    let key = ((1_000_i64) << 22) | (5 << 12) | 7;
    let decoded = Snowflake::decode(key).unwrap();
    assert_eq!(
        decoded,
        Snowflake {
            unix_millis: EPOCH_MILLIS + 1_000,
            worker_id: 5,
            sequence: 7,
            gene: 0,
        }
    );
    assert_eq!(decoded.timestamp(), "2016-11-01T00:00:01.000Z");
    assert_eq!(
        decoded.to_string(),
        "timestamp: 2016-11-01T00:00:01.000Z\nworker-id: 5\nsequence: 7"
    );
    assert_eq!(
        Snowflake::decode(-1).unwrap_err().to_string(),
        "-1 is not a SNOWFLAKE key: keys are positive 63-bit integers"
    );
}

#[test]
fn decoding_round_trips_a_generated_key() {
    let generator = SnowflakeGenerator::from_props(&props(&[("worker-id", "42")])).unwrap();
    let before = SystemClock.now_millis();
    let decoded = Snowflake::decode(generator.next_block(1).unwrap()).unwrap();
    let after = SystemClock.now_millis();
    assert_eq!(decoded.worker_id, 42);
    assert!((before..=after).contains(&decoded.unix_millis));
}

/// A clock the test sets by hand.
#[derive(Debug, Default)]
struct DrivenClock(std::sync::atomic::AtomicI64);

impl DrivenClock {
    fn at(millis: i64) -> Self {
        Self(std::sync::atomic::AtomicI64::new(millis))
    }
    fn set(&self, millis: i64) {
        self.0.store(millis, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Clock for &'static DrivenClock {
    fn now_millis(&self) -> i64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

fn leased(
    clock: &'static DrivenClock,
    grant: Grant,
) -> (SnowflakeGenerator<&'static DrivenClock>, Arc<WorkerLease>) {
    let lease = Arc::new(WorkerLease::new());
    lease.grant(grant);
    let generator =
        SnowflakeGenerator::leased_with_clock(&Props::new(), Arc::clone(&lease), clock).unwrap();
    (generator, lease)
}

fn grant(offset_millis: i64, reserved_until_millis: i64) -> Grant {
    Grant {
        worker_id: 9,
        epoch: 1,
        valid_until: std::time::Instant::now() + std::time::Duration::from_secs(600),
        reserved_until_millis,
        offset_millis,
    }
}

fn millis_of(key: i64) -> i64 {
    Snowflake::decode(key).unwrap().unix_millis
}

#[test]
fn steps_back_within_tolerance_never_repeat_a_key_and_never_wait() {
    let clock: &'static DrivenClock = Box::leak(Box::new(DrivenClock::at(EPOCH_MILLIS + 1_000)));
    let (generator, _lease) = leased(clock, grant(0, i64::MAX));
    let mut seen = HashSet::new();
    let mut last = 0;
    // Two steps back, the second while the first is being ridden out, then forward again.
    for now in [1_000, 1_001, 995, 993, 994, 1_000, 1_002, 996, 1_003] {
        clock.set(EPOCH_MILLIS + now);
        for _ in 0..3 {
            let key = generator.next_block(1).unwrap();
            assert!(seen.insert(key), "key {key} twice");
            assert!(key > last, "key {key} not above {last}");
            last = key;
        }
    }
    // Beyond the tolerance (10 ms): ShardingSphere's error, and no key.
    clock.set(EPOCH_MILLIS + 990);
    assert_eq!(
        generator.next_block(1),
        Err(KeyGenError::ClockMovedBackwards {
            last: EPOCH_MILLIS + 1_003,
            now: EPOCH_MILLIS + 990
        })
    );
}

/// Riding out a backward step once its millisecond's 4,096 keys are used moves on to the next
/// millisecond at once: the clock stays behind (it never moves here), so any wait for it would
/// never end, and would hold the generator's lock on a runtime thread for the whole step.
#[test]
fn a_full_millisecond_during_a_backward_step_moves_on_without_waiting() {
    let clock: &'static DrivenClock = Box::leak(Box::new(DrivenClock::at(EPOCH_MILLIS + 5_000)));
    let props = props(&[("max-tolerate-time-difference-milliseconds", "10000")]);
    let lease = Arc::new(WorkerLease::new());
    lease.grant(grant(0, i64::MAX));
    let generator = SnowflakeGenerator::leased_with_clock(&props, lease, clock).unwrap();
    let before = generator.next_block(1).unwrap();
    clock.set(EPOCH_MILLIS + 1);
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let blocks: Vec<i64> = (0..4)
            .map(|_| generator.next_block(4_000).unwrap())
            .collect();
        let _ = done.send(blocks);
    });
    let blocks = finished
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the generator waited for a clock that is 5 s behind");
    let millis: Vec<i64> = blocks.iter().map(|k| millis_of(*k)).collect();
    assert_eq!(
        millis,
        (0..4).map(|i| millis_of(before) + i).collect::<Vec<_>>(),
        "the first block fits beside the first key, each next one takes the next millisecond"
    );
}

#[test]
fn a_holder_whose_clock_is_behind_the_high_water_mark_starts_above_it() {
    // The id's last holder used generator time up to `high`; this clock is 3.4 s behind it.
    let high = EPOCH_MILLIS + 50_000;
    let clock: &'static DrivenClock = Box::leak(Box::new(DrivenClock::at(high - 3_400)));
    let (generator, _lease) = leased(clock, grant(3_401, i64::MAX));
    let first = generator.next_block(1).unwrap();
    assert_eq!(millis_of(first), high + 1);
    assert_eq!(Snowflake::decode(first).unwrap().worker_id, 9);
    // Generator time moves on with the clock, still ahead by the offset.
    clock.set(high - 3_000);
    assert_eq!(millis_of(generator.next_block(1).unwrap()), high + 401);
}

#[test]
fn nothing_is_generated_at_or_beyond_the_persisted_high_water_mark() {
    let clock: &'static DrivenClock = Box::leak(Box::new(DrivenClock::at(EPOCH_MILLIS + 10)));
    let (generator, lease) = leased(clock, grant(0, EPOCH_MILLIS + 20));
    assert!(generator.next_block(1).is_ok());
    clock.set(EPOCH_MILLIS + 20);
    assert_eq!(
        generator.next_block(1),
        Err(KeyGenError::ReservationExhausted {
            worker_id: 9,
            reserved_until: EPOCH_MILLIS + 20
        })
    );
    lease.extend(1, std::time::Instant::now(), EPOCH_MILLIS + 30);
    assert!(generator.next_block(1).is_ok());
    // The revoked lease reports the last millisecond used; no key after it.
    let (_, issued) = lease.revoke().unwrap();
    assert_eq!(issued, Some(EPOCH_MILLIS + 20));
    assert_eq!(generator.next_block(1), Err(KeyGenError::NoLease));
}

#[test]
fn an_expired_lease_stops_generation() {
    let clock: &'static DrivenClock = Box::leak(Box::new(DrivenClock::at(EPOCH_MILLIS + 10)));
    let mut expired = grant(0, i64::MAX);
    expired.valid_until = std::time::Instant::now();
    let (generator, _lease) = leased(clock, expired);
    assert_eq!(
        generator.next_block(1),
        Err(KeyGenError::LeaseExpired { worker_id: 9 })
    );
}

/// Two generators of one instance (two tables' SNOWFLAKE keys) share the lease's sequence:
/// interleaved, they never hand out one key twice.
#[test]
fn generators_on_one_lease_share_one_sequence() {
    let clock: &'static DrivenClock = Box::leak(Box::new(DrivenClock::at(EPOCH_MILLIS + 7)));
    let lease = Arc::new(WorkerLease::new());
    lease.grant(grant(0, i64::MAX));
    let orders =
        SnowflakeGenerator::leased_with_clock(&Props::new(), Arc::clone(&lease), clock).unwrap();
    let items = SnowflakeGenerator::leased_with_clock(
        &props(&[("max-vibration-offset", "3")]),
        Arc::clone(&lease),
        clock,
    )
    .unwrap();
    let mut seen = HashSet::new();
    for round in 0..3_000 {
        if round % 1_000 == 0 {
            clock.set(EPOCH_MILLIS + 7 + round / 1_000);
        }
        let block = items.next_block(2).unwrap();
        for key in [orders.next_block(1).unwrap(), block, block + 1] {
            assert!(seen.insert(key), "key {key} twice");
        }
    }
}

/// A JavaScript-safe layout: 5 worker id bits and 7 sequence bits keep the keys below 2^53;
/// a statement takes at most 128 consecutive keys, and every key decodes in its layout.
#[test]
fn a_js_safe_layout_hands_out_keys_below_2_pow_53() {
    let clock: &'static DrivenClock = Box::leak(Box::new(DrivenClock::at(1_800_000_000_000)));
    let lease = Arc::new(WorkerLease::new());
    lease.grant(Grant {
        worker_id: 31,
        ..grant(0, i64::MAX)
    });
    let props = props(&[
        ("epoch", "2024-01-01T00:00:00Z"),
        ("worker-id-bits", "5"),
        ("sequence-bits", "7"),
    ]);
    let generator =
        SnowflakeGenerator::leased_with_clock(&props, Arc::clone(&lease), clock).unwrap();
    assert_eq!(generator.max_block(), 128);
    let first = generator.next_block(128).unwrap();
    assert!(first + 127 < 1 << 53);
    let decoded = generator.layout().decode(first + 127).unwrap();
    assert_eq!(
        (decoded.unix_millis, decoded.worker_id),
        (1_800_000_000_000, 31)
    );
    assert!(matches!(
        generator.next_block(129),
        Err(KeyGenError::TooManyKeys { max: 128, .. })
    ));
    // A worker id the layout cannot carry is refused, never truncated into another's.
    clock.set(1_800_000_000_001);
    lease.grant(Grant {
        worker_id: 32,
        ..grant(0, i64::MAX)
    });
    assert!(matches!(
        generator.next_block(1),
        Err(KeyGenError::WorkerIdBeyondLayout {
            worker_id: 32,
            bits: 5
        })
    ));
}

#[test]
fn one_instance_s_generators_share_one_layout() {
    let mut registry = crate::Registry::new();
    registry.build("orders", "SNOWFLAKE", Props::new()).unwrap();
    let err = registry
        .build(
            "items",
            "SNOWFLAKE",
            props(&[("worker-id-bits", "5"), ("sequence-bits", "7")]),
        )
        .unwrap_err();
    assert!(err.to_string().contains("share one worker id"), "{err}");
}
