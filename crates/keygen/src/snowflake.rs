//! SNOWFLAKE keys, bit for bit as Apache ShardingSphere generates them.
//!
//! `key = (millis since 2016-11-01T00:00:00Z) << 22 | worker_id << 12 | sequence`.
//! The epoch is fixed to UTC (ShardingSphere takes it in the JVM's local zone).

use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, UNIX_EPOCH};

use crate::props::{check_known, int_in_range};
use crate::{Clock, Key, KeyGenError, KeyGenerator, Props, SystemClock};

/// 2016-11-01T00:00:00Z in milliseconds since the Unix epoch.
pub const EPOCH_MILLIS: i64 = 1_477_958_400_000;
/// Largest worker id (10 bits).
pub const MAX_WORKER_ID: u16 = 1023;
/// Largest sequence number within one millisecond (12 bits).
pub const MAX_SEQUENCE: i64 = 4095;
/// Largest block of keys that is handed out as consecutive integers.
pub const MAX_BLOCK: usize = 4096;

const WORKER_ID_SHIFT: u32 = 12;
const TIMESTAMP_SHIFT: u32 = 22;

const PROP_WORKER_ID: &str = "worker-id";
const PROP_MAX_VIBRATION_OFFSET: &str = "max-vibration-offset";
const PROP_MAX_TOLERATE: &str = "max-tolerate-time-difference-milliseconds";

/// A SNOWFLAKE generator over a clock (the system clock unless a test drives time).
#[derive(Debug)]
pub struct SnowflakeGenerator<C: Clock = SystemClock> {
    clock: C,
    worker_id: i64,
    max_vibration_offset: i64,
    max_tolerate_millis: i64,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    last_millis: i64,
    sequence: i64,
    sequence_offset: i64,
}

impl SnowflakeGenerator<SystemClock> {
    /// Builds a generator from ShardingSphere's properties: `worker-id` (0..=1023, default 0),
    /// `max-vibration-offset` (0..=4095, default 1) and
    /// `max-tolerate-time-difference-milliseconds` (≥ 0, default 10).
    pub fn from_props(props: &Props) -> Result<Self, KeyGenError> {
        Self::with_clock(props, SystemClock)
    }
}

impl<C: Clock> SnowflakeGenerator<C> {
    /// As [`SnowflakeGenerator::from_props`], reading time from `clock`.
    pub fn with_clock(props: &Props, clock: C) -> Result<Self, KeyGenError> {
        check_known(
            "SNOWFLAKE",
            props,
            &[PROP_WORKER_ID, PROP_MAX_VIBRATION_OFFSET, PROP_MAX_TOLERATE],
        )?;
        Ok(Self {
            clock,
            worker_id: int_in_range(props, PROP_WORKER_ID, 0, 0, i64::from(MAX_WORKER_ID))?,
            max_vibration_offset: int_in_range(
                props,
                PROP_MAX_VIBRATION_OFFSET,
                1,
                0,
                MAX_SEQUENCE,
            )?,
            max_tolerate_millis: int_in_range(props, PROP_MAX_TOLERATE, 10, 0, i64::MAX)?,
            state: Mutex::new(State {
                last_millis: 0,
                sequence: 0,
                sequence_offset: -1,
            }),
        })
    }

    /// The configured worker id.
    pub fn worker_id(&self) -> u16 {
        // In 0..=1023 by construction.
        self.worker_id as u16
    }

    /// Reserves `count` (1..=4096) consecutive sequence numbers in one millisecond and returns
    /// the first key. With `count == 1` this is ShardingSphere's algorithm step for step.
    pub fn next_block(&self, count: usize) -> Result<i64, KeyGenError> {
        debug_assert!((1..=MAX_BLOCK).contains(&count));
        let count = count.clamp(1, MAX_BLOCK) as i64;
        // Keys stay unique only if reading the clock and taking the sequence is one step.
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut now = self.clock.now_millis();
        if state.last_millis > now {
            let behind = state.last_millis - now;
            if behind >= self.max_tolerate_millis {
                return Err(KeyGenError::ClockMovedBackwards {
                    last: state.last_millis,
                    now,
                });
            }
            self.clock.sleep_millis(behind);
            now = self.clock.now_millis();
        }
        let first = if state.last_millis == now {
            if state.sequence + count > MAX_SEQUENCE {
                // Too little room left in this millisecond: the block starts the next one at 0.
                now = self.wait_after(now);
                0
            } else {
                state.sequence + 1
            }
        } else {
            state.sequence_offset = if state.sequence_offset == self.max_vibration_offset {
                0
            } else {
                state.sequence_offset + 1
            };
            // The vibration offset only varies the parity of lone keys; a block that does not
            // fit above it starts at 0.
            if state.sequence_offset + count - 1 > MAX_SEQUENCE {
                0
            } else {
                state.sequence_offset
            }
        };
        state.sequence = first + count - 1;
        state.last_millis = now;
        Ok(((now - EPOCH_MILLIS) << TIMESTAMP_SHIFT) | (self.worker_id << WORKER_ID_SHIFT) | first)
    }

    fn wait_after(&self, millis: i64) -> i64 {
        loop {
            let now = self.clock.now_millis();
            if now > millis {
                return now;
            }
            std::hint::spin_loop();
        }
    }
}

impl<C: Clock> KeyGenerator for SnowflakeGenerator<C> {
    fn type_name(&self) -> &'static str {
        "SNOWFLAKE"
    }

    fn next_key(&self) -> Result<Key, KeyGenError> {
        self.next_block(1).map(Key::Int)
    }

    fn next_keys(&self, count: usize, out: &mut Vec<Key>) -> Result<(), KeyGenError> {
        out.reserve(count);
        let mut left = count;
        while left > 0 {
            let block = left.min(MAX_BLOCK);
            let first = self.next_block(block)?;
            out.extend((first..first + block as i64).map(Key::Int));
            left -= block;
        }
        Ok(())
    }
}

/// A SNOWFLAKE key taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snowflake {
    /// Milliseconds since the Unix epoch when the key was generated.
    pub unix_millis: i64,
    /// The generating worker.
    pub worker_id: u16,
    /// The sequence number within that millisecond.
    pub sequence: u16,
}

impl Snowflake {
    /// Takes `key` apart; negative integers are not SNOWFLAKE keys.
    pub fn decode(key: i64) -> Result<Self, KeyGenError> {
        if key < 0 {
            return Err(KeyGenError::NotASnowflake(key));
        }
        Ok(Self {
            unix_millis: (key >> TIMESTAMP_SHIFT) + EPOCH_MILLIS,
            worker_id: ((key >> WORKER_ID_SHIFT) & i64::from(MAX_WORKER_ID)) as u16,
            sequence: (key & MAX_SEQUENCE) as u16,
        })
    }

    /// The generation time, RFC 3339 in UTC with milliseconds.
    pub fn timestamp(&self) -> String {
        // unix_millis ≥ EPOCH_MILLIS > 0 for any decoded key.
        let time = UNIX_EPOCH + Duration::from_millis(self.unix_millis.unsigned_abs());
        humantime::format_rfc3339_millis(time).to_string()
    }
}

impl fmt::Display for Snowflake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "timestamp: {}\nworker-id: {}\nsequence: {}",
            self.timestamp(),
            self.worker_id,
            self.sequence
        )
    }
}

#[cfg(test)]
mod tests;
