//! Login throttling: after repeated failed logins of one user from one address, further
//! attempts are refused for a while without checking the password, so that a password cannot
//! be guessed at thousands of tries a second.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Failures before the first lockout.
const FREE_FAILURES: u32 = 5;
/// The first lockout; each further failure doubles it.
const FIRST_LOCKOUT: Duration = Duration::from_secs(1);
/// The longest lockout.
const MAX_LOCKOUT: Duration = Duration::from_secs(300);
/// (user, address) pairs remembered at most: clients choose the user names, so the memory
/// they can make the proxy spend is bounded.
const MAX_ENTRIES: usize = 10_000;

/// Failed logins by user and source address.
#[derive(Debug, Default)]
pub(crate) struct LoginThrottle {
    entries: Mutex<HashMap<(String, String), Entry>>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    locked_until: Option<Instant>,
}

impl LoginThrottle {
    /// How much longer `user` from `address` must wait before trying again; `None` when it
    /// may try now.
    pub(crate) fn wait(&self, user: &str, address: &str) -> Option<Duration> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let until = entries
            .get(&(user.to_owned(), address.to_owned()))?
            .locked_until?;
        until.checked_duration_since(Instant::now())
    }

    /// Records a login attempt's outcome: success forgets the failures.
    pub(crate) fn record(&self, user: &str, address: &str, succeeded: bool) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (user.to_owned(), address.to_owned());
        if succeeded {
            entries.remove(&key);
            return;
        }
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(&key) {
            let now = Instant::now();
            entries.retain(|_, e| e.locked_until.is_some_and(|until| until > now));
            if entries.len() >= MAX_ENTRIES
                && let Some(any) = entries.keys().next().cloned()
            {
                entries.remove(&any);
            }
        }
        let entry = entries.entry(key).or_insert(Entry {
            failures: 0,
            locked_until: None,
        });
        entry.failures = entry.failures.saturating_add(1);
        if entry.failures >= FREE_FAILURES {
            let doublings = (entry.failures - FREE_FAILURES).min(16);
            let lockout = FIRST_LOCKOUT
                .saturating_mul(1 << doublings)
                .min(MAX_LOCKOUT);
            entry.locked_until = Some(Instant::now() + lockout);
        }
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
        assert_eq!(throttle.wait("root", "10.0.0.1"), None);
    }

    #[test]
    fn memory_is_bounded_whatever_names_clients_send() {
        let throttle = LoginThrottle::default();
        for i in 0..MAX_ENTRIES + 500 {
            throttle.record(&format!("user{i}"), "10.0.0.1", false);
        }
        let entries = throttle.entries.lock().unwrap().len();
        assert!(entries <= MAX_ENTRIES, "{entries}");
    }
}
