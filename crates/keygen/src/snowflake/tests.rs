//! The vectors of `shared/testdata/snowflake_vectors.md`, ShardingSphere's own expectations.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

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

    fn sleep_millis(&self, _millis: i64) {}
}

fn props(pairs: &[(&str, &str)]) -> Props {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

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

#[test]
fn clock_moved_back_within_tolerance() {
    let generator = clock_moved_back(&[]);
    assert_eq!(
        keys(&generator, 10),
        [
            4194304, 8388609, 8388610, 12582912, 12582913, 16777217, 16777218, 20971520, 20971521,
            25165825
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
    assert_eq!(generator.worker_id(), 1023);
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
fn blocks_larger_than_a_millisecond_are_split() {
    let generator = generator(100, &[]);
    let mut out = Vec::new();
    generator.next_keys(5000, &mut out).unwrap();
    let ints: Vec<i64> = out.iter().map(|k| k.as_i64().unwrap()).collect();
    assert_eq!(ints.len(), 5000);
    assert_eq!(ints[..4096], (0..4096).collect::<Vec<_>>());
    assert_eq!(ints[4096], 1 << 22);
    assert!(ints.windows(2).all(|w| w[0] < w[1]));
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
            sequence: 7
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
