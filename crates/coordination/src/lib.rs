//! What Keyshard instances must share to hand out unique keys: worker ids held by lease (with
//! an epoch and a persisted time high-water mark), named segments of consecutive keys, and time
//! marks per service. Two repositories implement it: JDBC (tables in a database reached through
//! sqlx; the default) and ZooKeeper (ShardingSphere 5's paths).
//!
//! [`Keeper`] drives the key generators of one instance from a repository: it claims a worker
//! id, renews it well before it expires, revokes it from the generators the moment it can no
//! longer prove it holds it, and fetches segments in the background.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod db;
mod error;
mod fleet;
mod jdbc;
mod keeper;
mod zookeeper;

use std::fmt;
use std::time::Duration;

use futures_util::future::BoxFuture;

pub use error::CoordinationError;
pub use fleet::FleetRecords;
pub use jdbc::JdbcRepository;
pub use keeper::{Keeper, KeeperSettings, WorkerIdStatus};
pub use zookeeper::{ZooKeeperRepository, ZooKeeperSettings};

/// Keyshard's own tables in a data source (the JDBC repository's and the fleet records'):
/// never a client's single table, never listed as one.
pub const TABLES: &[&str] = &[
    jdbc::WORKERS,
    jdbc::SEGMENTS,
    jdbc::SERVICE_TIMES,
    jdbc::DECISIONS,
    jdbc::IDENTITY,
    fleet::FLEET,
    fleet::SEGMENTS,
];

/// Worker ids are 10 bits.
pub const WORKER_IDS: u16 = 1024;

/// A claimed worker id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The worker id, 0..=1023.
    pub worker_id: u16,
    /// Increases with every claim of this worker id: tells this holder from every earlier one.
    pub epoch: u64,
    /// The time high-water mark persisted for the id (milliseconds since the Unix epoch; 0
    /// when the id was never used): every key ever generated with the id lies at or below it.
    pub high_water_millis: i64,
}

/// One instance holding a worker id, as `SHOW COMPUTE NODES` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComputeNode {
    /// The instance's id (unique per process start).
    pub instance_id: String,
    /// The worker id it holds.
    pub worker_id: u16,
    /// The lease epoch.
    pub epoch: u64,
    /// When the lease expires unless renewed (milliseconds since the Unix epoch on the
    /// repository's clock), or `None` where the repository has no such time (ZooKeeper
    /// sessions).
    pub expires_at_millis: Option<i64>,
}

/// Who claims: written next to the worker id so operators and error messages can name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// Unique per process start.
    pub id: String,
    /// Where it serves (`127.0.0.1:3307`), for people reading `SHOW COMPUTE NODES`.
    pub address: String,
}

impl Instance {
    /// A new instance id (a UUID, as ShardingSphere's) for a process serving at `address`.
    pub fn new(address: impl Into<String>) -> Self {
        Self {
            id: uuid::Uuid::new_v4().to_string(),
            address: address.into(),
        }
    }
}

/// A shared store of leases, high-water marks and segments.
///
/// Every method is one round trip (or a few) and atomic with respect to other instances using
/// the same repository. Leases expire on the repository's clock, never on the instance's.
pub trait Repository: Send + Sync + fmt::Debug {
    /// What and where the repository is, for the log (`JDBC mysql://127.0.0.1:3306/ds_0`).
    fn describe(&self) -> String;

    /// Who the repository is, apart from where it is reached: made once, with its data, so a
    /// backup restored or a replica failed over to keeps it, and another repository (another
    /// database, another ZooKeeper namespace) has its own. The shards remember it
    /// ([`FleetRecords`]).
    fn identity(&self) -> &str;

    /// How long a claim or renewal holds: the holder must renew within this time, and may
    /// generate only until this time after it *sent* the claim or renewal.
    fn time_to_live(&self) -> Duration;

    /// Claims a worker id for `instance`: `preferred` when given (failing with
    /// [`CoordinationError::WorkerIdHeld`] naming the holder when a live instance holds it),
    /// else the lowest free one ([`CoordinationError::NoFreeWorkerId`] when all 1,024 are held).
    fn claim<'a>(
        &'a self,
        instance: &'a Instance,
        preferred: Option<u16>,
    ) -> BoxFuture<'a, Result<Claim, CoordinationError>>;

    /// Extends `claim` by [`Repository::time_to_live`] and raises its persisted high-water
    /// mark to at least `reserve_millis`. [`CoordinationError::LeaseLost`] when the id is no
    /// longer this claim's.
    fn renew<'a>(
        &'a self,
        instance: &'a Instance,
        claim: &'a Claim,
        reserve_millis: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>>;

    /// Gives the id back at once, recording `high_water_millis` (the last generator
    /// millisecond actually used; the caller has stopped generating) as its high-water mark.
    fn release<'a>(
        &'a self,
        instance: &'a Instance,
        claim: &'a Claim,
        high_water_millis: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>>;

    /// The instances holding a worker id now.
    fn compute_nodes(&self) -> BoxFuture<'_, Result<Vec<ComputeNode>, CoordinationError>>;

    /// Takes the next `step` values of the sequence `key` (created starting at `initial`) and
    /// returns them as `(first, last)`, inclusive. Concurrent callers get disjoint ranges.
    fn next_segment<'a>(
        &'a self,
        key: &'a str,
        initial: i64,
        step: i64,
    ) -> BoxFuture<'a, Result<(i64, i64), CoordinationError>>;

    /// Moves the sequence `key` on so that the next segment starts above `at_least` (creating
    /// it there when it does not exist): how a repository continues above keys another
    /// repository handed out ([`FleetRecords`]).
    fn raise_segment<'a>(
        &'a self,
        key: &'a str,
        at_least: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>>;

    /// The repository's own clock, in milliseconds since the Unix epoch: the reference that
    /// tells an instance whose clock is behind from one that recorded a time from a clock
    /// ahead (LEAF_SNOWFLAKE's registry time check).
    fn clock_millis(&self) -> BoxFuture<'_, Result<i64, CoordinationError>>;

    /// The time last recorded for `service` (LEAF_SNOWFLAKE's registry time check), if any.
    fn service_time<'a>(
        &'a self,
        service: &'a str,
    ) -> BoxFuture<'a, Result<Option<i64>, CoordinationError>>;

    /// Records `millis` for `service`, never lowering what is stored.
    fn record_service_time<'a>(
        &'a self,
        service: &'a str,
        millis: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>>;

    /// Records the outcome of two-phase transaction `gtrid` unless one is recorded already:
    /// the first decision stands, so a coordinator committing and a recovering instance
    /// aborting can never both win. Returns whether the standing decision is to commit.
    fn decide<'a>(
        &'a self,
        gtrid: &'a str,
        commit: bool,
    ) -> BoxFuture<'a, Result<bool, CoordinationError>>;

    /// The statement that records a commit decision for `gtrid` when it runs inside a
    /// transaction on the repository's own database, so that the transaction's commit is the
    /// decision: what lets a coordinator make the one-phase commit of its branch there the
    /// commit point. `None` for a repository kept elsewhere (ZooKeeper), whose decisions are
    /// only taken with [`decide`](Repository::decide).
    fn decision_statement(&self, _gtrid: &str) -> Option<String> {
        None
    }

    /// Drops the decisions of `gtrids`, once no branch of them is left prepared anywhere.
    fn forget<'a>(&'a self, gtrids: &'a [String]) -> BoxFuture<'a, Result<(), CoordinationError>>;
}
