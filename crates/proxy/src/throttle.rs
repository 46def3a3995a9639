//! Login throttling: after repeated failed logins of one user from one address, or of any
//! users from one address, further attempts are refused for a while without checking the
//! password, so that a password cannot be guessed at thousands of tries a second.
//!
//! Both tables are bounded, since clients choose the user names; to make room they forget
//! what says least first, so a flood of invented names (one failure each) cannot clear the
//! entry that locks out the real user's guesses, and locks out its own address.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Failures of one user from one address before the first lockout.
const FREE_FAILURES: u32 = 5;
/// Failures of any users from one address before that address is locked out.
const ADDRESS_FREE_FAILURES: u32 = 20;
/// The first lockout; each further failure doubles it.
const FIRST_LOCKOUT: Duration = Duration::from_secs(1);
/// The longest lockout.
const MAX_LOCKOUT: Duration = Duration::from_secs(300);
/// Failures older than this, with no lockout running, are forgotten: an address's occasional
/// mistyped passwords do not add up over days.
const FORGET_AFTER: Duration = Duration::from_secs(600);
/// Entries remembered at most in each table.
const MAX_ENTRIES: usize = 10_000;

/// Failed logins by user and source address, and by source address.
#[derive(Debug, Default)]
pub(crate) struct LoginThrottle {
    tables: Mutex<Tables>,
}

#[derive(Debug, Default)]
struct Tables {
    pairs: HashMap<(String, String), Entry>,
    addresses: HashMap<String, Entry>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    last_failure: Instant,
    locked_until: Option<Instant>,
}

impl Entry {
    fn wait(&self, now: Instant) -> Option<Duration> {
        self.locked_until?.checked_duration_since(now)
    }

    /// Whether it still says anything: a lockout running, or failures recent enough to count.
    fn live(&self, now: Instant) -> bool {
        self.locked_until.is_some_and(|until| until > now)
            || now.duration_since(self.last_failure) < FORGET_AFTER
    }
}

impl LoginThrottle {
    /// How much longer `user` from `address` must wait before trying again; `None` when it
    /// may try now.
    pub(crate) fn wait(&self, user: &str, address: &str) -> Option<Duration> {
        let tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let pair = tables
            .pairs
            .get(&(user.to_owned(), address.to_owned()))
            .and_then(|e| e.wait(now));
        let whole = tables.addresses.get(address).and_then(|e| e.wait(now));
        pair.max(whole)
    }

    /// Records a login attempt's outcome: success forgets the user's failures from there (not
    /// its address's, which other users' guesses may have made).
    pub(crate) fn record(&self, user: &str, address: &str, succeeded: bool) {
        let mut tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (user.to_owned(), address.to_owned());
        if succeeded {
            tables.pairs.remove(&key);
            return;
        }
        let now = Instant::now();
        fail(&mut tables.pairs, key, FREE_FAILURES, now);
        fail(
            &mut tables.addresses,
            address.to_owned(),
            ADDRESS_FREE_FAILURES,
            now,
        );
    }
}

/// Counts a failure of `key`, locking it out once it has had `free` of them. A full table
/// first lets go of entries that say nothing any more, then of the one that says least: not
/// locked out and with the fewest failures (a flood's single failures go before a key near
/// its lockout), or, when every one is locked out, the one whose lockout ends first.
fn fail<K: Hash + Eq + Clone>(entries: &mut HashMap<K, Entry>, key: K, free: u32, now: Instant) {
    if entries.len() >= MAX_ENTRIES && !entries.contains_key(&key) {
        entries.retain(|_, e| e.live(now));
        if entries.len() >= MAX_ENTRIES {
            let least = entries
                .iter()
                .min_by_key(|(_, e)| match e.wait(now) {
                    None => (0, Duration::ZERO, e.failures),
                    Some(wait) => (1, wait, e.failures),
                })
                .map(|(k, _)| k.clone());
            if let Some(least) = least {
                entries.remove(&least);
            }
        }
    }
    let entry = entries.entry(key).or_insert(Entry {
        failures: 0,
        last_failure: now,
        locked_until: None,
    });
    if !entry.live(now) {
        entry.failures = 0;
    }
    entry.failures = entry.failures.saturating_add(1);
    entry.last_failure = now;
    if entry.failures >= free {
        let doublings = (entry.failures - free).min(16);
        let lockout = FIRST_LOCKOUT
            .saturating_mul(1 << doublings)
            .min(MAX_LOCKOUT);
        entry.locked_until = Some(now + lockout);
    }
}

/// The message a throttled client gets.
pub(crate) fn refusal(user: &str, address: &str, wait: Duration) -> String {
    format!(
        "too many failed logins for user '{user}' from {address}: try again in {} s",
        wait.as_secs() + 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_lock_out_after_a_few_and_success_forgets_them() {
        let throttle = LoginThrottle::default();
        for _ in 0..FREE_FAILURES - 1 {
            throttle.record("root", "10.0.0.1", false);
            assert_eq!(throttle.wait("root", "10.0.0.1"), None);
        }
        throttle.record("root", "10.0.0.1", false);
        let wait = throttle.wait("root", "10.0.0.1").unwrap();
        assert!(wait <= FIRST_LOCKOUT);
        // Other users and other addresses are not affected.
        assert_eq!(throttle.wait("root", "10.0.0.2"), None);
        assert_eq!(throttle.wait("app", "10.0.0.1"), None);
        // Each further failure doubles the lockout, up to the maximum.
        throttle.record("root", "10.0.0.1", false);
        assert!(throttle.wait("root", "10.0.0.1").unwrap() > FIRST_LOCKOUT);
        for _ in 0..40 {
            throttle.record("root", "10.0.0.1", false);
        }
        assert!(throttle.wait("root", "10.0.0.1").unwrap() <= MAX_LOCKOUT);
        throttle.record("root", "10.0.0.1", true);
        // The user's own failures are forgotten; its address's many failures still count.
        let tables = throttle.tables.lock().unwrap();
        assert!(
            !tables
                .pairs
                .contains_key(&("root".into(), "10.0.0.1".into()))
        );
        assert!(tables.addresses["10.0.0.1"].locked_until.is_some());
    }

    #[test]
    fn invented_names_lock_out_their_address_and_evict_no_lockout() {
        let throttle = LoginThrottle::default();
        // The real user is locked out from an address, for minutes (longer than the flood
        // below takes, whatever the machine).
        for _ in 0..FREE_FAILURES + 8 {
            throttle.record("root", "10.0.0.9", false);
        }
        assert!(throttle.wait("root", "10.0.0.9").unwrap() > Duration::from_secs(60));
        assert!(throttle.wait("root", "10.0.0.9").is_some());
        // A flood of invented names from many addresses fills the table.
        for i in 0..MAX_ENTRIES + 500 {
            throttle.record(
                &format!("user{i}"),
                &format!("10.1.{}.{}", i / 256, i % 256),
                false,
            );
        }
        {
            let tables = throttle.tables.lock().unwrap();
            assert!(tables.pairs.len() <= MAX_ENTRIES, "{}", tables.pairs.len());
            assert!(
                tables.addresses.len() <= MAX_ENTRIES,
                "{}",
                tables.addresses.len()
            );
        }
        assert!(
            throttle.wait("root", "10.0.0.9").is_some(),
            "the lockout was evicted"
        );
        // From one address, invented names lock out that address for every user.
        for i in 0..ADDRESS_FREE_FAILURES {
            assert_eq!(throttle.wait("root", "10.2.0.1"), None);
            throttle.record(&format!("guess{i}"), "10.2.0.1", false);
        }
        assert!(throttle.wait("root", "10.2.0.1").is_some());
        assert!(throttle.wait("anyone", "10.2.0.1").is_some());
    }
}
