/// Why the coordination layer could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum CoordinationError {
    /// The configured worker id is held by a live instance.
    #[error(
        "worker id {worker_id} is held by instance {holder}; remove `worker-id` to take a free \
         one, or stop that instance"
    )]
    WorkerIdHeld {
        /// The worker id asked for.
        worker_id: u16,
        /// The instance holding it.
        holder: String,
        /// Where the holder serves, when the repository records it.
        address: Option<String>,
        /// How long its lease lasts unless renewed, when the repository knows.
        expires_in: Option<std::time::Duration>,
    },
    /// All 1,024 worker ids are held by live instances.
    #[error("all 1024 worker ids are held by live instances; no worker id is free")]
    NoFreeWorkerId,
    /// Every worker id the key layout carries (`worker-id-bits`) is held by a live instance.
    #[error(
        "every worker id the key layout carries (0 to {max}) is held by a live instance; give \
         the generators more worker-id-bits, or stop an instance"
    )]
    NoFreeWorkerIdInLayout {
        /// The largest worker id of the layout.
        max: u16,
    },
    /// The claim is no longer this instance's: it expired and was claimed by another.
    #[error("the lease of worker id {worker_id} (epoch {epoch}) is lost")]
    LeaseLost {
        /// The worker id.
        worker_id: u16,
        /// The epoch that was lost.
        epoch: u64,
    },
    /// LEAF_SNOWFLAKE's start-up check: the repository recorded a later time for the service.
    #[error(
        "the registry's time for service '{service}' is {stored} ms, {ahead} ms ahead of this \
         clock (tolerance {tolerance} ms): fix the clock before starting"
    )]
    ClockBehindRegistry {
        /// The `service.id`.
        service: String,
        /// The stored time.
        stored: i64,
        /// By how much it is ahead.
        ahead: i64,
        /// The configured tolerance.
        tolerance: i64,
    },
    /// A data source the keys are written to remembers a fleet this claim would collide with
    /// ([`crate::FleetRecords`]).
    #[error("data source '{data_source}': {found}")]
    Fleet {
        /// The data source.
        data_source: String,
        /// What it remembers, and what to do.
        found: String,
    },
    /// The repository handed out an epoch of a worker id that a data source remembers as
    /// used already: the repository has lost claims. Each new claim raises the epoch.
    #[error(
        "data source '{data_source}': the repository gave worker id {worker_id} epoch {epoch}, \
         but epoch {remembered} of it was used here already: the repository has lost claims \
         (restored from a backup, or failed over to a replica that lags). Transactions are \
         named after the epoch, so the claim is given back and taken again until its epoch \
         passes {remembered}"
    )]
    EpochBehind {
        /// The data source.
        data_source: String,
        /// The worker id.
        worker_id: u16,
        /// The epoch the repository gave.
        epoch: u64,
        /// The highest epoch the data source remembers.
        remembered: u64,
    },
    /// The database behind a JDBC repository failed.
    #[error("coordination database: {0}")]
    Database(sqlx::Error),
    /// ZooKeeper failed.
    #[error("ZooKeeper: {0}")]
    ZooKeeper(String),
    /// The repository did not answer in time.
    #[error("coordination repository did not answer within {0:?}")]
    Timeout(std::time::Duration),
    /// The repository holds something it should not (a corrupt row or node).
    #[error("coordination repository holds an unexpected value: {0}")]
    Corrupt(String),
    /// Misconfiguration found when connecting.
    #[error("{0}")]
    Config(String),
}

// By hand rather than `#[from]`: the message already carries the database's, and a source
// would print it twice in an error chain.
impl From<sqlx::Error> for CoordinationError {
    fn from(error: sqlx::Error) -> Self {
        Self::Database(error)
    }
}
