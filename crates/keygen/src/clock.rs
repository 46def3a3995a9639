use std::time::{SystemTime, UNIX_EPOCH};

/// Wall-clock time for time-based generators; a trait so tests can drive time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_millis(&self) -> i64;
}

/// The operating system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> i64 {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
            // A clock set before 1970 reads as the epoch; SNOWFLAKE then reports it moving back.
            Err(_) => 0,
        }
    }
}
