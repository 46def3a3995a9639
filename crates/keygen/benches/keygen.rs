//! Key generation throughput, side by side with `snowflaked` and the `uuid` crate.
//!
//! SNOWFLAKE's layout caps one worker at 4096 keys per millisecond (4.096 M keys/s), so the
//! SNOWFLAKE figures are measured against that ceiling, not against zero. Blocks of 100 keys are
//! consecutive integers within one millisecond, so at most 40 of them fit in one: their ceiling
//! is 4.000 M keys/s.
//!
//! LEAF_SEGMENT has no such ceiling: its segments are supplied synchronously from an in-memory
//! counter here, so its figures are the generator's own cost (a lock and a few integer ops).

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use keyshard_keygen::{
    Grant, KeyGenerator, Props, SegmentGenerator, SnowflakeGenerator, UuidGenerator, WorkerLease,
};

fn snowflake(c: &mut Criterion) {
    let mut group = c.benchmark_group("snowflake");
    group.throughput(Throughput::Elements(1));

    let ours = SnowflakeGenerator::from_props(&Props::new()).unwrap();
    group.bench_function("keyshard/one key per call", |b| {
        b.iter(|| black_box(ours.next_key().unwrap()))
    });

    // Gene keys with the time's 41 bits and a full sequence: 4 bits of gene from the worker id's.
    let genes: Props = [
        ("worker-id-bits", "6"),
        ("gene-bits", "4"),
        ("sequence-bits", "12"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let gene = SnowflakeGenerator::from_props(&genes).unwrap();
    group.bench_function("keyshard/gene layout, one key per call", |b| {
        b.iter(|| black_box(gene.next_key().unwrap()))
    });

    let lease = Arc::new(WorkerLease::new());
    lease.grant(Grant {
        worker_id: 1,
        epoch: 1,
        valid_until: Instant::now() + Duration::from_secs(3600),
        reserved_until_millis: i64::MAX,
        offset_millis: 0,
    });
    let leased = SnowflakeGenerator::leased(&Props::new(), lease).unwrap();
    group.bench_function("keyshard/leased, one key per call", |b| {
        b.iter(|| black_box(leased.next_key().unwrap()))
    });

    let theirs = snowflaked::sync::Generator::new(0);
    group.bench_function("snowflaked/one key per call", |b| {
        b.iter(|| black_box(theirs.generate::<u64>()))
    });

    let shared = Arc::new(SnowflakeGenerator::from_props(&Props::new()).unwrap());
    group.bench_function("keyshard/two threads sharing one generator", |b| {
        b.iter_custom(|iters| {
            two_threads(iters, &shared, |g| {
                black_box(g.next_key().unwrap());
            })
        })
    });

    let theirs = Arc::new(snowflaked::sync::Generator::new(0));
    group.bench_function("snowflaked/two threads sharing one generator", |b| {
        b.iter_custom(|iters| {
            two_threads(iters, &theirs, |g| {
                black_box(g.generate::<u64>());
            })
        })
    });

    group.throughput(Throughput::Elements(100));
    let mut keys = Vec::with_capacity(100);
    group.bench_function("keyshard/blocks of 100", |b| {
        b.iter(|| {
            keys.clear();
            ours.next_keys(100, &mut keys).unwrap();
            black_box(&keys);
        })
    });
    group.finish();
}

/// Runs `iters` calls split over two threads on one shared generator; returns the wall time.
fn two_threads<G: Send + Sync + 'static>(iters: u64, generator: &Arc<G>, call: fn(&G)) -> Duration {
    let start = Instant::now();
    let workers: Vec<_> = [iters / 2, iters - iters / 2]
        .into_iter()
        .map(|n| {
            let generator = Arc::clone(generator);
            std::thread::spawn(move || (0..n).for_each(|_| call(&generator)))
        })
        .collect();
    workers.into_iter().for_each(|w| w.join().unwrap());
    start.elapsed()
}

fn segment(c: &mut Criterion) {
    let mut group = c.benchmark_group("segment");
    let mut props = Props::new();
    props.insert("leaf.key".into(), "bench".into());
    let generator = Arc::new(SegmentGenerator::from_props(&props).unwrap());
    // The repository: a counter in memory, supplying from the fetcher (which the generator
    // calls without holding its lock). Weak: the generator owns the fetcher.
    let max = Arc::new(AtomicI64::new(generator.initial_value() - 1));
    let step = generator.step();
    let weak = Arc::downgrade(&generator);
    generator.set_fetcher(move || {
        if let Some(generator) = weak.upgrade() {
            let last = max.fetch_add(step, Ordering::Relaxed) + step;
            generator.supply(last - step + 1, last);
        }
    });

    group.throughput(Throughput::Elements(1));
    group.bench_function("keyshard/one key per call", |b| {
        b.iter(|| black_box(generator.next_key().unwrap()))
    });

    group.throughput(Throughput::Elements(100));
    let mut keys = Vec::with_capacity(100);
    group.bench_function("keyshard/blocks of 100", |b| {
        b.iter(|| {
            keys.clear();
            generator.next_keys(100, &mut keys).unwrap();
            black_box(&keys);
        })
    });
    group.finish();
}

fn uuid(c: &mut Criterion) {
    let mut group = c.benchmark_group("uuid");
    group.throughput(Throughput::Elements(1));
    let ours = UuidGenerator::from_props(&Props::new()).unwrap();
    group.bench_function("keyshard/v4 as 32-hex text", |b| {
        b.iter(|| black_box(ours.next_key().unwrap()))
    });
    group.bench_function("uuid crate/v4 as 32-hex text", |b| {
        b.iter(|| black_box(uuid::Uuid::new_v4().simple().to_string()))
    });
    let mut props = Props::new();
    props.insert("version".into(), "7".into());
    let ours_v7 = UuidGenerator::from_props(&props).unwrap();
    group.bench_function("keyshard/v7 as 32-hex text", |b| {
        b.iter(|| black_box(ours_v7.next_key().unwrap()))
    });
    group.finish();
}

criterion_group!(benches, snowflake, segment, uuid);
criterion_main!(benches);
