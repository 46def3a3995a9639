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
