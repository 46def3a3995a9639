//! Seeds for the fuzz tests: one fixed seed in an ordinary test run, so a failure reproduces;
//! with `KEYSHARD_FUZZ_SECONDS=N` (as `.ci/run` sets it), new seeds one after the other for N
//! seconds, each printed when it fails.

use std::time::{Duration, Instant};

/// The variable that makes the fuzz tests run for a bounded time.
const SECONDS: &str = "KEYSHARD_FUZZ_SECONDS";

/// `base`, then — for `KEYSHARD_FUZZ_SECONDS` — `base + 1`, `base + 2`, … until the time is up.
pub(crate) fn seeds(base: u64) -> impl Iterator<Item = u64> {
    let seconds = std::env::var(SECONDS)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    (0u64..)
        .take_while(move |&n| n == 0 || Instant::now() < deadline)
        .map(move |n| {
            let seed = base.wrapping_add(n);
            // Printed by the test harness only when the test fails.
            println!("fuzz seed {seed}");
            seed
        })
}

/// xorshift64*: deterministic, so a failure reproduces from its seed.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        // Zero is xorshift's one fixed point.
        Self(seed | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub(crate) fn bytes(&mut self, max: usize) -> Vec<u8> {
        let len = self.below(max + 1);
        (0..len).map(|_| self.next() as u8).collect()
    }

    /// Mostly small values and the edges of each field width.
    pub(crate) fn interesting_byte(&mut self) -> u8 {
        const EDGES: [u8; 8] = [0, 1, 0x7f, 0x80, 0xfb, 0xfc, 0xfe, 0xff];
        if self.below(2) == 0 {
            EDGES[self.below(EDGES.len())]
        } else {
            self.next() as u8
        }
    }
}
