use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::*;
use crate::props::props_of as props;

fn generator(pairs: &[(&str, &str)]) -> Arc<SegmentGenerator> {
    Arc::new(SegmentGenerator::from_props(&props(pairs)).unwrap())
}

/// The sequence table of a repository, in process: one row, its maximum handed out so far.
#[derive(Debug)]
struct FakeRepository {
    max: Mutex<i64>,
    step: i64,
}

impl FakeRepository {
    fn new(initial: i64, step: i64) -> Arc<Self> {
        Arc::new(Self {
            max: Mutex::new(initial - 1),
            step,
        })
    }

    fn next_segment(&self) -> (i64, i64) {
        let mut max = self.max.lock().unwrap();
        let first = *max + 1;
        *max += self.step;
        (first, *max)
    }
}

/// Supplies segments of `repository` synchronously from the fetcher.
fn connect(generator: &Arc<SegmentGenerator>, repository: &Arc<FakeRepository>) {
    // Weak: the generator owns the fetcher, which must not keep the generator alive.
    let weak = Arc::downgrade(generator);
    let repository = Arc::clone(repository);
    generator.set_fetcher(move || {
        if let Some(generator) = weak.upgrade() {
            let (first, last) = repository.next_segment();
            generator.supply(first, last);
        }
    });
}

/// A fetcher that only counts its calls.
fn counting_fetcher(generator: &SegmentGenerator) -> Arc<AtomicUsize> {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    generator.set_fetcher(move || {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    calls
}

fn int(key: Key) -> i64 {
    key.as_i64().unwrap()
}

fn block(generator: &SegmentGenerator, count: usize) -> Result<Vec<i64>, KeyGenError> {
    let mut out = Vec::new();
    generator.next_keys(count, &mut out)?;
    Ok(out.into_iter().map(int).collect())
}

fn orders(step: &str) -> Arc<SegmentGenerator> {
    generator(&[("leaf.key", "orders"), ("leaf.segment.step", step)])
}

#[test]
fn vector_initial_100001_step_5() {
    let generator = generator(&[
        ("leaf.key", "orders"),
        ("leaf.segment.id.initial.value", "100001"),
        ("leaf.segment.step", "5"),
    ]);
    let repository = FakeRepository::new(generator.initial_value(), generator.step());
    connect(&generator, &repository);
    let keys: Vec<i64> = (0..10)
        .map(|_| int(generator.next_key().unwrap()))
        .collect();
    assert_eq!(keys, (100_001..=100_010).collect::<Vec<_>>());
}

#[test]
fn default_properties() {
    let generator = generator(&[("leaf.key", "orders")]);
    assert_eq!(generator.type_name(), "LEAF_SEGMENT");
    assert_eq!(generator.leaf_key(), "orders");
    assert_eq!(generator.initial_value(), 1);
    assert_eq!(generator.step(), 10_000);
}

#[test]
fn bad_properties_are_refused_naming_the_property() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[], "'leaf.key'"),
        (&[("leaf.key", " ")], "'leaf.key'"),
        (
            &[("leaf.key", "k"), ("leaf.segment.id.initial.value", "0")],
            "'leaf.segment.id.initial.value' = '0'",
        ),
        (
            &[("leaf.key", "k"), ("leaf.segment.id.initial.value", "-5")],
            "'leaf.segment.id.initial.value'",
        ),
        (
            &[("leaf.key", "k"), ("leaf.segment.id.initial.value", "one")],
            "'leaf.segment.id.initial.value'",
        ),
        (
            &[("leaf.key", "k"), ("leaf.segment.step", "0")],
            "'leaf.segment.step' = '0'",
        ),
        (
            &[("leaf.key", "k"), ("leaf.segment.step", "1000000001")],
            "'leaf.segment.step'",
        ),
        (
            &[("leaf.key", "k"), ("leaf.step", "10")],
            "unknown property 'leaf.step' for LEAF_SEGMENT",
        ),
    ];
    for (pairs, expected) in cases {
        let err = SegmentGenerator::from_props(&props(pairs)).unwrap_err();
        assert!(err.to_string().contains(expected), "{pairs:?}: {err}");
    }
    // The edges of the ranges are accepted.
    let edge = generator(&[
        ("leaf.key", "k"),
        ("leaf.segment.id.initial.value", "1"),
        ("leaf.segment.step", "1000000000"),
    ]);
    assert_eq!((edge.initial_value(), edge.step()), (1, MAX_STEP));
    assert_eq!(orders("1").step(), 1);
}

#[test]
fn the_next_segment_is_requested_once_ten_percent_is_used() {
    let generator = orders("100");
    // At start-up a segment is wanted, so setting the fetcher calls it.
    let calls = counting_fetcher(&generator);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(generator.wants_segment());
    generator.supply(1, 100);
    assert!(!generator.wants_segment());

    let draw = |n: usize| {
        for _ in 0..n {
            generator.next_key().unwrap();
        }
    };
    draw(9);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(!generator.wants_segment());
    draw(1);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(generator.wants_segment());
    // Asked for: not asked again on every key, though it is still wanted (the background task
    // retries a failed fetch by itself).
    draw(80);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(generator.wants_segment());

    generator.supply(101, 200);
    assert!(!generator.wants_segment());
    draw(10);
    assert_eq!(int(generator.next_key().unwrap()), 101);
    draw(8);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    draw(1);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[test]
fn blocks_are_consecutive_and_skip_a_remainder_too_short() {
    let generator = orders("10");
    generator.supply(1, 10);
    generator.supply(11, 20);
    assert_eq!(block(&generator, 4).unwrap(), [1, 2, 3, 4]);
    assert_eq!(block(&generator, 4).unwrap(), [5, 6, 7, 8]);
    // 9 and 10 are left: skipped, the block starts the next segment.
    assert_eq!(block(&generator, 4).unwrap(), [11, 12, 13, 14]);
    assert_eq!(int(generator.next_key().unwrap()), 15);
    assert_eq!(block(&generator, 0).unwrap(), Vec::<i64>::new());
}

#[test]
fn a_block_larger_than_the_step_is_refused() {
    let generator = orders("10");
    generator.supply(1, 10);
    let mut out = Vec::new();
    let err = generator.next_keys(11, &mut out).unwrap_err();
    assert_eq!(
        err,
        KeyGenError::BlockLargerThanStep {
            key: "orders".into(),
            count: 11,
            step: 10,
        }
    );
    let message = err.to_string();
    assert!(message.contains("segments of 10 keys"), "{message}");
    assert!(message.contains("no repository"), "{message}");
    assert!(message.contains("raise leaf.segment.step"), "{message}");
    assert!(message.contains("at most 10 rows"), "{message}");
    assert!(out.is_empty());
    assert_eq!(block(&generator, 10).unwrap(), (1..=10).collect::<Vec<_>>());
}

#[test]
fn exhaustion_fails_at_once() {
    let generator = orders("10");
    let calls = counting_fetcher(&generator);
    let start = Instant::now();
    for _ in 0..1_000 {
        assert_eq!(
            generator.next_key(),
            Err(KeyGenError::SegmentExhausted {
                key: "orders".into()
            })
        );
    }
    // A thousand refusals take microseconds; any wait for the repository would show.
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        generator.next_key().unwrap_err().to_string(),
        "no segment is buffered yet for leaf.key 'orders' (the repository may be slow or \
         unreachable); the next segment has been requested"
    );

    // A remainder too short for a block, and nothing buffered after it: refused, and the
    // remainder counts as used up so the next segment is wanted.
    generator.supply(1, 10);
    assert_eq!(block(&generator, 8).unwrap(), (1..=8).collect::<Vec<_>>());
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(matches!(
        block(&generator, 5),
        Err(KeyGenError::SegmentExhausted { .. })
    ));
    assert!(generator.wants_segment());
    generator.supply(11, 20);
    assert_eq!(block(&generator, 5).unwrap(), (11..=15).collect::<Vec<_>>());
}

#[test]
fn segments_are_used_in_the_order_supplied_and_surplus_ones_dropped() {
    let generator = orders("10");
    generator.supply(5, 4); // empty: ignored
    assert!(generator.wants_segment());
    generator.supply(1, 10);
    generator.supply(11, 20);
    generator.supply(21, 30); // both buffers full: dropped
    assert_eq!(block(&generator, 10).unwrap(), (1..=10).collect::<Vec<_>>());
    // The current segment is used up and the next one buffered: a new one is queued behind it.
    generator.supply(31, 40);
    assert_eq!(
        block(&generator, 10).unwrap(),
        (11..=20).collect::<Vec<_>>()
    );
    assert_eq!(
        block(&generator, 10).unwrap(),
        (31..=40).collect::<Vec<_>>()
    );
}

#[test]
fn a_segment_ending_at_the_largest_key_is_used_to_its_end() {
    let generator = orders("3");
    generator.supply(i64::MAX - 2, i64::MAX);
    assert_eq!(
        block(&generator, 3).unwrap(),
        [i64::MAX - 2, i64::MAX - 1, i64::MAX]
    );
    assert!(generator.next_key().is_err());
}

/// Takes keys, retrying while a segment is on its way (a synchronous fetcher on another thread
/// is about to supply it).
fn block_retrying(generator: &SegmentGenerator, count: usize) -> Vec<i64> {
    loop {
        match block(generator, count) {
            Ok(keys) => return keys,
            Err(KeyGenError::SegmentExhausted { .. }) => thread::yield_now(),
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn threads_never_share_a_key() {
    let generator = orders("10");
    let repository = FakeRepository::new(1, 10);
    connect(&generator, &repository);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let generator = Arc::clone(&generator);
            thread::spawn(move || {
                let mut keys = Vec::new();
                for i in 0..5_000 {
                    let count = 1 + (i + t) % 4;
                    let block = block_retrying(&generator, count);
                    assert!(block.windows(2).all(|w| w[1] == w[0] + 1), "{block:?}");
                    keys.extend(block);
                }
                keys
            })
        })
        .collect();
    let mut seen = HashSet::new();
    let mut total = 0;
    for t in threads {
        for key in t.join().unwrap() {
            total += 1;
            assert!(seen.insert(key), "key {key} handed out twice");
        }
    }
    assert_eq!(total, 4 * (1_250 * (1 + 2 + 3 + 4)));
}

#[test]
fn generators_on_one_repository_get_disjoint_keys() {
    let repository = FakeRepository::new(1, 10);
    let a = orders("10");
    let b = orders("10");
    connect(&a, &repository);
    connect(&b, &repository);
    let mut seen = HashSet::new();
    for i in 0..1_000 {
        for generator in [&a, &b] {
            for key in block(generator, 1 + i % 7).unwrap() {
                assert!(seen.insert(key), "key {key} handed out twice");
            }
        }
    }
}

#[test]
fn the_prefetch_keeps_a_segment_ready_for_a_slow_repository() {
    const STEP: i64 = 1_000;
    const DELAY: Duration = Duration::from_millis(2);
    let generator = orders("1000");
    let repository = FakeRepository::new(1, STEP);
    // The background task: woken by the fetcher, supplies after a round trip of DELAY.
    let (wake, woken) = mpsc::channel::<()>();
    let weak = Arc::downgrade(&generator);
    let fetches = Arc::new(AtomicUsize::new(0));
    let fetched = Arc::clone(&fetches);
    let task = thread::spawn(move || {
        while woken.recv().is_ok() {
            thread::sleep(DELAY);
            let Some(generator) = weak.upgrade() else {
                break;
            };
            let (first, last) = repository.next_segment();
            generator.supply(first, last);
            fetched.fetch_add(1, Ordering::SeqCst);
        }
    });
    generator.set_fetcher(move || {
        let _ = wake.send(());
    });

    // Start-up: the first segment is on its way.
    let deadline = Instant::now() + Duration::from_secs(10);
    while generator.wants_segment() {
        assert!(Instant::now() < deadline, "the first segment never arrived");
        thread::sleep(Duration::from_millis(1));
    }

    // Steady state: at most 5 keys per 200 µs (25 per ms), so the 900 keys left when the
    // prefetch starts last 36 ms, far longer than the fetch. No call may fail.
    let mut keys = Vec::new();
    for i in 0..1_200 {
        if i % 2 == 0 {
            keys.extend(block(&generator, 5).unwrap());
        } else {
            for _ in 0..5 {
                keys.push(int(generator.next_key().unwrap()));
            }
        }
        thread::sleep(Duration::from_micros(200));
    }
    // Blocks of 5 divide the step, so nothing was skipped either.
    assert_eq!(keys, (1..=6_000).collect::<Vec<_>>());
    assert!(fetches.load(Ordering::SeqCst) >= 6);

    // Dropping the generator drops the fetcher, which ends the task.
    drop(generator);
    task.join().unwrap();
}

/// With gene bits, each key is the segment's number shifted past them: the lowest bits stay
/// zero for the row's gene, and a block's keys are 2^bits apart.
#[test]
fn gene_bits_shift_the_segment_s_numbers() {
    let genes = generator(&[
        ("leaf.key", "order"),
        ("leaf.segment.step", "100"),
        ("gene-bits", "3"),
    ]);
    assert_eq!(genes.gene_bits(), 3);
    let repository = FakeRepository::new(5, 100);
    connect(&genes, &repository);
    assert_eq!(int(genes.next_key().unwrap()), 5 << 3);
    let mut keys = Vec::new();
    genes.next_keys(3, &mut keys).unwrap();
    assert_eq!(
        keys.into_iter().map(int).collect::<Vec<_>>(),
        [6 << 3, 7 << 3, 8 << 3]
    );
    // A number that would not fit below bit 63 once shifted is not handed out.
    let edge = generator(&[("leaf.key", "edge"), ("gene-bits", "3")]);
    let last = i64::MAX >> 3;
    edge.supply(last, last + 1);
    assert_eq!(int(edge.next_key().unwrap()), last << 3);
    assert!(edge.next_key().is_err());
}

/// A statement larger than the step asks for a segment of its size and waits
/// (`SegmentExhausted`, which the proxy waits out); once it is supplied, the statement's keys
/// are consecutive from it, and ordinary statements go on from the ordinary segments.
#[test]
fn a_block_larger_than_the_step_gets_a_segment_of_its_size() {
    let generator = orders("10");
    let repository = FakeRepository::new(1, 10);
    connect(&generator, &repository);
    assert_eq!(int(generator.next_key().unwrap()), 1);
    let mut out = Vec::new();
    let err = generator.next_keys(25, &mut out).unwrap_err();
    assert!(matches!(err, KeyGenError::SegmentExhausted { .. }), "{err}");
    assert_eq!(generator.wants_sized(), Some(25));
    // What the background task does: a segment of 25 from the repository's sequence.
    let first = *repository.max.lock().unwrap() + 1;
    *repository.max.lock().unwrap() += 25;
    generator.supply_sized(first, first + 24);
    assert_eq!(generator.wants_sized(), None);
    generator.next_keys(25, &mut out).unwrap();
    let keys: Vec<i64> = out.drain(..).map(int).collect();
    assert_eq!(keys, (first..first + 25).collect::<Vec<_>>());
    // Ordinary statements go on from ordinary segments, and no key comes twice.
    let next = int(generator.next_key().unwrap());
    assert!(next == 2, "{next}");
    generator.next_keys(10, &mut out).unwrap();
    assert!(
        out.iter()
            .map(|k| int(k.clone()))
            .all(|k| !keys.contains(&k))
    );
}
