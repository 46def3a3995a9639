/// Why a generator could not be built or could not hand out keys.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyGenError {
    /// The configured type is not one Keyshard knows.
    #[error("unknown key generator type '{name}' (supported: {supported})")]
    UnknownType {
        /// The type as configured.
        name: String,
        /// The supported type names, comma-separated.
        supported: String,
    },
    /// A property the generator type does not take.
    #[error("unknown property '{name}' for {generator} (allowed: {allowed})")]
    UnknownProperty {
        /// The generator type.
        generator: &'static str,
        /// The property as configured.
        name: String,
        /// The properties the type takes, comma-separated.
        allowed: String,
    },
    /// A property whose value does not parse or is out of range.
    #[error("property '{name}' = '{value}' is invalid: expected {expected}")]
    InvalidProperty {
        /// The property name.
        name: String,
        /// The value as configured.
        value: String,
        /// What the property accepts.
        expected: String,
    },
    /// The system clock went back further than the configured tolerance.
    #[error(
        "Clock is moving backwards, last time is {last} milliseconds, current time is {now} milliseconds"
    )]
    ClockMovedBackwards {
        /// Milliseconds since the Unix epoch of the last key handed out.
        last: i64,
        /// Milliseconds since the Unix epoch read now.
        now: i64,
    },
    /// A SNOWFLAKE statement wants more keys than fit consecutively in one millisecond.
    #[error(
        "{count} keys wanted in one statement, but {generator} gives at most {max} consecutive \
         keys, and clients compute row i's key as the first key + i: split the INSERT into \
         statements of at most {max} rows, or give the table a LEAF_SEGMENT key generator"
    )]
    TooManyKeys {
        /// The generator type.
        generator: &'static str,
        /// The keys wanted.
        count: usize,
        /// The most one statement may take.
        max: usize,
    },
    /// A generator type that only works with a coordination repository, built without one.
    #[error("{0} takes its worker id from a coordination repository and cannot be used here")]
    NeedsCoordination(&'static str),
    /// The instance holds no worker id yet (or lost it and has not claimed another).
    #[error(
        "no worker id is leased to this instance, so no keys are generated; the log says why \
         (is the coordination repository reachable?)"
    )]
    NoLease,
    /// The worker-id lease could not be renewed in time: another instance may take the id.
    #[error(
        "the lease of worker id {worker_id} ran out before it could be renewed (is the \
         coordination repository reachable?); no keys until it is renewed or another id is claimed"
    )]
    LeaseExpired {
        /// The worker id whose lease ran out.
        worker_id: u16,
    },
    /// Generator time reached the high-water mark persisted for the worker id: the repository
    /// has not recorded a later one (renewals fail or lag).
    #[error(
        "worker id {worker_id} has used all the time reserved for it in the coordination \
         repository (up to {reserved_until} ms since the Unix epoch), and the repository has \
         not confirmed more: it is unreachable or slow (the log says which). No keys until it \
         answers"
    )]
    ReservationExhausted {
        /// The worker id.
        worker_id: u16,
        /// The persisted mark, milliseconds since the Unix epoch.
        reserved_until: i64,
    },
    /// Generator time no longer fits the key layout's time bits.
    #[error(
        "generator time {now} ms is beyond what the key layout holds from its epoch \
         ({epoch_millis} ms): give it fewer worker-id-bits or sequence-bits, or a later epoch"
    )]
    LayoutExhausted {
        /// The layout's epoch.
        epoch_millis: i64,
        /// Generator time.
        now: i64,
    },
    /// The worker id does not fit the key layout's worker id bits.
    #[error("worker id {worker_id} does not fit in worker-id-bits {bits}")]
    WorkerIdBeyondLayout {
        /// The worker id.
        worker_id: u16,
        /// The layout's worker id bits.
        bits: u32,
    },
    /// A LEAF_SEGMENT statement wants more keys than one segment holds, and there is no
    /// repository to fetch a segment of its size from.
    #[error(
        "{count} keys wanted in one statement, but LEAF_SEGMENT '{key}' hands out segments of \
         {step} keys (leaf.segment.step) and has no repository to fetch a larger one from, and \
         clients compute row i's key as the first key + i: raise leaf.segment.step or split the \
         INSERT into statements of at most {step} rows"
    )]
    BlockLargerThanStep {
        /// The sequence (`leaf.key`).
        key: String,
        /// The keys wanted.
        count: usize,
        /// The configured segment size.
        step: i64,
    },
    /// No buffered segment can serve the call; generators never wait for the repository.
    #[error(
        "no segment is buffered yet for leaf.key '{key}' (the repository may be slow or \
         unreachable); the next segment has been requested"
    )]
    SegmentExhausted {
        /// The sequence (`leaf.key`).
        key: String,
    },
    /// A key that cannot be a SNOWFLAKE key (negative).
    #[error("{0} is not a SNOWFLAKE key: keys are positive 63-bit integers")]
    NotASnowflake(i64),
    /// Text to decode that is neither a SNOWFLAKE key nor a UUIDv7.
    #[error("'{0}' is neither a SNOWFLAKE key (a 64-bit integer) nor a version 7 UUID")]
    NotAKey(String),
}
