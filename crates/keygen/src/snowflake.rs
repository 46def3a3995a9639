//! SNOWFLAKE keys, bit for bit as Apache ShardingSphere generates them.
//!
//! `key = (millis since 2016-11-01T00:00:00Z) << 22 | worker_id << 12 | sequence`.
//! The epoch is fixed to UTC (ShardingSphere takes it in the JVM's local zone). Another
//! [`Layout`] (fewer worker id or sequence bits, another epoch) is Keyshard's own.

mod layout;

use std::sync::{Arc, Mutex, PoisonError};

pub use layout::{
    EPOCH_MILLIS, Layout, PROP_EPOCH, PROP_GENE_BITS, PROP_SEQUENCE_BITS, PROP_WORKER_ID_BITS,
    Snowflake,
};

use crate::lease::{Grant, State, WorkerLease};
use crate::props::{check_known, int_in_range};
use crate::{Clock, Key, KeyGenError, KeyGenerator, Props, SystemClock};

/// Largest worker id of ShardingSphere's layout (10 bits).
pub const MAX_WORKER_ID: u16 = 1023;
/// Largest sequence number within one millisecond in ShardingSphere's layout (12 bits).
pub const MAX_SEQUENCE: i64 = 4095;
/// Largest block of keys handed out as consecutive integers in ShardingSphere's layout.
pub const MAX_BLOCK: usize = 4096;

/// ShardingSphere 5's SNOWFLAKE property names.
pub const PROP_WORKER_ID: &str = "worker-id";
/// Keyshard's own: what to do when the configured `worker-id` is held by another instance,
/// `wait` (the default) for it or take `any` free one.
pub const PROP_WORKER_ID_FALLBACK: &str = "worker-id-fallback";
const PROP_MAX_VIBRATION_OFFSET: &str = "max-vibration-offset";
const PROP_MAX_TOLERATE: &str = "max-tolerate-time-difference-milliseconds";

/// ShardingSphere 4's LEAF_SNOWFLAKE property names.
pub const PROP_SERVICE_ID: &str = "service.id";
const PROP_LEAF_MAX_VIBRATION_OFFSET: &str = "max.vibration.offset";
const PROP_LEAF_MAX_TOLERATE: &str = "max.tolerate.time.difference.milliseconds";

/// A SNOWFLAKE (or LEAF_SNOWFLAKE) generator over a clock (the system clock unless a test
/// drives time).
#[derive(Debug)]
pub struct SnowflakeGenerator<C: Clock = SystemClock> {
    type_name: &'static str,
    clock: C,
    worker: Worker,
    tuning: Tuning,
    /// A fixed worker id's own; leased generators use the lease's.
    state: Mutex<State>,
}

/// How a generator lays out and paces its keys.
#[derive(Debug, Clone, Copy)]
struct Tuning {
    layout: Layout,
    max_vibration_offset: i64,
    max_tolerate_millis: i64,
}

/// Where the worker id comes from.
#[derive(Debug)]
enum Worker {
    /// Configured and trusted as is: the command line, previews and tests.
    Fixed(Grant),
    /// Leased through the coordination layer; `preferred` is the configured `worker-id`,
    /// `any_when_held` whether another free id will do while it is held.
    Leased {
        lease: Arc<WorkerLease>,
        preferred: Option<u16>,
        any_when_held: bool,
    },
}

impl SnowflakeGenerator<SystemClock> {
    /// Builds a SNOWFLAKE generator with a fixed worker id from ShardingSphere's properties:
    /// `worker-id` (0..=1023, default 0), `max-vibration-offset` (0..=4095, default 1) and
    /// `max-tolerate-time-difference-milliseconds` (≥ 0, default 10).
    ///
    /// Only for tools whose keys are not stored (the command line, previews): two generators
    /// with one worker id can hand out the same key. The proxy uses [`SnowflakeGenerator::leased`].
    pub fn from_props(props: &Props) -> Result<Self, KeyGenError> {
        Self::with_clock(props, SystemClock)
    }

    /// A SNOWFLAKE generator whose worker id is `lease`'s; a configured `worker-id` becomes the
    /// id the lease asks for.
    pub fn leased(props: &Props, lease: Arc<WorkerLease>) -> Result<Self, KeyGenError> {
        Self::leased_with_clock(props, lease, SystemClock)
    }

    /// A LEAF_SNOWFLAKE generator (ShardingSphere 4's names: `service.id`,
    /// `max.vibration.offset`, `max.tolerate.time.difference.milliseconds`): the SNOWFLAKE
    /// layout with the worker id leased, and a registry time check at start-up by the
    /// coordination layer.
    pub fn leaf(props: &Props, lease: Arc<WorkerLease>) -> Result<Self, KeyGenError> {
        check_known(
            "LEAF_SNOWFLAKE",
            props,
            &[
                PROP_SERVICE_ID,
                PROP_LEAF_MAX_VIBRATION_OFFSET,
                PROP_LEAF_MAX_TOLERATE,
            ],
        )?;
        if props
            .get(PROP_SERVICE_ID)
            .is_none_or(|s| s.trim().is_empty())
        {
            return Err(KeyGenError::InvalidProperty {
                name: PROP_SERVICE_ID.to_owned(),
                value: props.get(PROP_SERVICE_ID).cloned().unwrap_or_default(),
                expected: "a non-empty service name".to_owned(),
            });
        }
        Ok(Self::new(
            "LEAF_SNOWFLAKE",
            SystemClock,
            Worker::Leased {
                lease,
                preferred: None,
                any_when_held: false,
            },
            Tuning {
                layout: Layout::SHARDINGSPHERE,
                max_vibration_offset: int_in_range(
                    props,
                    PROP_LEAF_MAX_VIBRATION_OFFSET,
                    1,
                    0,
                    MAX_SEQUENCE,
                )?,
                max_tolerate_millis: int_in_range(props, PROP_LEAF_MAX_TOLERATE, 10, 0, i64::MAX)?,
            },
        ))
    }
}

impl<C: Clock> SnowflakeGenerator<C> {
    /// As [`SnowflakeGenerator::from_props`], reading time from `clock`.
    pub fn with_clock(props: &Props, clock: C) -> Result<Self, KeyGenError> {
        let (worker_id, tuning) = Self::snowflake_props(props, &clock)?;
        Ok(Self::new(
            "SNOWFLAKE",
            clock,
            Worker::Fixed(Grant::unchecked(worker_id.unwrap_or(0))),
            tuning,
        ))
    }

    /// As [`SnowflakeGenerator::leased`], reading time from `clock`.
    pub fn leased_with_clock(
        props: &Props,
        lease: Arc<WorkerLease>,
        clock: C,
    ) -> Result<Self, KeyGenError> {
        let (preferred, tuning) = Self::snowflake_props(props, &clock)?;
        let any_when_held = match props.get(PROP_WORKER_ID_FALLBACK).map(|v| v.trim()) {
            None => false,
            Some(v) if v.eq_ignore_ascii_case("wait") => false,
            Some(v) if v.eq_ignore_ascii_case("any") => true,
            Some(v) => {
                return Err(KeyGenError::InvalidProperty {
                    name: PROP_WORKER_ID_FALLBACK.to_owned(),
                    value: v.to_owned(),
                    expected: "wait or any".to_owned(),
                });
            }
        };
        Ok(Self::new(
            "SNOWFLAKE",
            clock,
            Worker::Leased {
                lease,
                preferred,
                any_when_held,
            },
            tuning,
        ))
    }

    fn snowflake_props(props: &Props, clock: &C) -> Result<(Option<u16>, Tuning), KeyGenError> {
        check_known(
            "SNOWFLAKE",
            props,
            &[
                PROP_WORKER_ID,
                PROP_WORKER_ID_FALLBACK,
                PROP_MAX_VIBRATION_OFFSET,
                PROP_MAX_TOLERATE,
                PROP_EPOCH,
                PROP_WORKER_ID_BITS,
                PROP_SEQUENCE_BITS,
                PROP_GENE_BITS,
            ],
        )?;
        let layout = Layout::from_props(props, || clock.now_millis())?;
        let worker_id = match props.get(PROP_WORKER_ID) {
            Some(_) => Some(int_in_range(
                props,
                PROP_WORKER_ID,
                0,
                0,
                layout.max_worker_id(),
            )?),
            None => None,
        };
        let tuning = Tuning {
            layout,
            max_vibration_offset: int_in_range(
                props,
                PROP_MAX_VIBRATION_OFFSET,
                1,
                0,
                layout.max_sequence(),
            )?,
            max_tolerate_millis: int_in_range(props, PROP_MAX_TOLERATE, 10, 0, i64::MAX)?,
        };
        Ok((worker_id, tuning))
    }

    fn new(type_name: &'static str, clock: C, worker: Worker, tuning: Tuning) -> Self {
        Self {
            type_name,
            clock,
            worker,
            tuning,
            state: Mutex::new(State::new()),
        }
    }

    /// The key layout.
    pub fn layout(&self) -> Layout {
        self.tuning.layout
    }

    /// The worker id keys carry now: the configured one, or the lease's (`None` while the
    /// lease is not granted).
    pub fn worker_id(&self) -> Option<u16> {
        match &self.worker {
            Worker::Fixed(grant) => Some(grant.worker_id),
            Worker::Leased { lease, .. } => lease.current().map(|g| g.worker_id),
        }
    }

    /// The worker id configured for a leased generator, which its lease should ask for.
    pub fn preferred_worker_id(&self) -> Option<u16> {
        match &self.worker {
            Worker::Fixed(_) => None,
            Worker::Leased { preferred, .. } => *preferred,
        }
    }

    /// Whether any free worker id will do while the configured one is held
    /// (`worker-id-fallback: any`).
    pub fn any_worker_id_when_held(&self) -> bool {
        matches!(
            self.worker,
            Worker::Leased {
                any_when_held: true,
                ..
            }
        )
    }

    /// The largest backward clock step ridden out instead of refused.
    pub fn max_tolerate_millis(&self) -> i64 {
        self.tuning.max_tolerate_millis
    }

    /// Reserves `count` (1..=4096) consecutive sequence numbers in one millisecond and returns
    /// the first key. With `count == 1` and a clock that does not go back this is
    /// ShardingSphere's algorithm step for step.
    pub fn next_block(&self, count: usize) -> Result<i64, KeyGenError> {
        let max = self.tuning.layout.max_block();
        if !(1..=max).contains(&count) {
            return Err(KeyGenError::TooManyKeys {
                generator: self.type_name,
                count,
                max,
            });
        }
        match &self.worker {
            Worker::Fixed(grant) => self.block_under(grant, count as i64).map(|(key, _)| key),
            Worker::Leased { lease, .. } => {
                lease.with_grant(|grant| self.block_under(grant, count as i64))
            }
        }
    }

    /// One block under `grant`: the first key, and the generator millisecond it carries when
    /// that is a new one.
    fn block_under(&self, grant: &Grant, count: i64) -> Result<(i64, Option<i64>), KeyGenError> {
        // Keys stay unique only if reading the clock and taking the sequence is one step.
        let state = match &self.worker {
            Worker::Fixed(_) => &self.state,
            Worker::Leased { lease, .. } => lease.sequence(),
        };
        let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut now = self.now(grant);
        if state.last_millis > now {
            let behind = state.last_millis - now;
            if behind >= self.tuning.max_tolerate_millis {
                return Err(KeyGenError::ClockMovedBackwards {
                    last: state.last_millis,
                    now,
                });
            }
            // Ridden out without waiting: generator time never goes back, so the keys carry
            // the last millisecond until the clock catches up. ShardingSphere sleeps here and
            // trusts the clock after the sleep, which duplicates keys if it steps again.
            now = state.last_millis;
        }
        let first = if state.last_millis == now {
            if state.sequence + count > self.tuning.layout.max_sequence() {
                // Too little room left in this millisecond: the block starts the next one at 0.
                now = self.wait_after(now, grant)?;
                0
            } else {
                state.sequence + 1
            }
        } else {
            state.sequence_offset = if state.sequence_offset == self.tuning.max_vibration_offset {
                0
            } else {
                state.sequence_offset + 1
            };
            // The vibration offset only varies the parity of lone keys; a block that does not
            // fit above it starts at 0.
            if state.sequence_offset + count - 1 > self.tuning.layout.max_sequence() {
                0
            } else {
                state.sequence_offset
            }
        };
        if now >= grant.reserved_until_millis {
            return Err(KeyGenError::ReservationExhausted {
                worker_id: grant.worker_id,
                reserved_until: grant.reserved_until_millis,
            });
        }
        // The lease is checked once per generator millisecond, not per key: reading the
        // monotonic clock costs as much as the rest of a key, and the lease's margin is seconds.
        // Within one millisecond at most 4,096 keys follow a check.
        let new_millis = now != state.last_millis;
        if new_millis {
            grant.check_valid()?;
        }
        state.sequence = first + count - 1;
        state.last_millis = now;
        let layout = &self.tuning.layout;
        if grant.worker_id > layout.max_worker_id() {
            return Err(KeyGenError::WorkerIdBeyondLayout {
                worker_id: grant.worker_id,
                bits: layout.worker_id_bits,
            });
        }
        let key =
            layout
                .compose(now, grant.worker_id, first)
                .ok_or(KeyGenError::LayoutExhausted {
                    epoch_millis: layout.epoch_millis,
                    now,
                })?;
        Ok((key, new_millis.then_some(now)))
    }

    /// Generator time: the wall clock, plus the offset that keeps a holder whose clock is
    /// behind the persisted high-water mark above it.
    fn now(&self, grant: &Grant) -> i64 {
        self.clock.now_millis().saturating_add(grant.offset_millis)
    }

    /// The millisecond after `millis`, once its 4,096 keys are used. While the clock is in
    /// `millis`, this spins out the rest of it, as ShardingSphere does. While the clock is
    /// behind (a backward step being ridden out) it takes the next millisecond at once instead:
    /// generator time only moves forward and stays below the persisted reservation, so the
    /// keys stay unique, and no thread spins for the length of the step holding the lock.
    fn wait_after(&self, millis: i64, grant: &Grant) -> Result<i64, KeyGenError> {
        loop {
            let now = self.now(grant);
            if now > millis {
                return Ok(now);
            }
            if millis - now >= self.tuning.max_tolerate_millis.max(1) {
                return Err(KeyGenError::ClockMovedBackwards { last: millis, now });
            }
            if now < millis {
                return Ok(millis + 1);
            }
            std::hint::spin_loop();
        }
    }

    /// Whether this generator takes its worker id from a lease.
    pub fn is_leased(&self) -> bool {
        matches!(self.worker, Worker::Leased { .. })
    }
}

impl<C: Clock> KeyGenerator for SnowflakeGenerator<C> {
    fn type_name(&self) -> &'static str {
        self.type_name
    }

    fn next_key(&self) -> Result<Key, KeyGenError> {
        self.next_block(1).map(Key::Int)
    }

    /// All `count` keys are consecutive (2^gene-bits apart with gene bits), or none is handed
    /// out: a statement of more than [`Layout::max_block`] keys is refused, since clients
    /// compute row `i`'s key as `first + i`.
    fn next_keys(&self, count: usize, out: &mut Vec<Key>) -> Result<(), KeyGenError> {
        if count == 0 {
            return Ok(());
        }
        let first = self.next_block(count)?;
        let step = self.tuning.layout.key_step();
        out.extend((0..count as i64).map(|i| Key::Int(first + i * step)));
        Ok(())
    }

    fn max_block(&self) -> usize {
        self.tuning.layout.max_block()
    }

    fn gene_bits(&self) -> u32 {
        self.tuning.layout.gene_bits
    }
}

#[cfg(test)]
mod tests;
