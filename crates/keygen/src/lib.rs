//! Distributed key generators.
//!
//! Every generator is thread-safe and meant to be shared: build one per configured name with
//! [`Registry`] and hand out `Arc`s of it. Building a generator per statement is how
//! ShardingSphere users ended up with duplicate keys (two SNOWFLAKE instances in the same
//! millisecond both start at the same sequence).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod clock;
mod error;
mod key;
mod lease;
mod props;
mod registry;
pub mod segment;
pub mod snowflake;
mod uuid_gen;

pub use clock::{Clock, SystemClock};
pub use error::KeyGenError;
pub use key::Key;
pub use lease::{Grant, WorkerLease};
pub use props::Props;
pub use registry::{Built, Configured, Registry, SUPPORTED_TYPES, build};
pub use segment::SegmentGenerator;
pub use snowflake::{Snowflake, SnowflakeGenerator};
pub use uuid_gen::{UuidGenerator, uuid_v7_timestamp};

/// A source of distributed keys, shared by every connection that inserts into its tables.
pub trait KeyGenerator: Send + Sync + std::fmt::Debug {
    /// The configuration type name, as written in YAML (`SNOWFLAKE`, `UUID`).
    fn type_name(&self) -> &'static str;

    /// One key.
    fn next_key(&self) -> Result<Key, KeyGenError>;

    /// `count` keys taken in one step, appended to `out`.
    ///
    /// Integer generators return consecutive integers for blocks of up to
    /// [`snowflake::MAX_BLOCK`] keys (LEAF_SEGMENT: up to `leaf.segment.step`), so a MySQL client that computes a multi-row INSERT's keys
    /// as `last_insert_id + i` gets every one of them right.
    fn next_keys(&self, count: usize, out: &mut Vec<Key>) -> Result<(), KeyGenError>;

    /// The most keys [`KeyGenerator::next_keys`] hands out in one step.
    fn max_block(&self) -> usize {
        usize::MAX
    }

    /// How many of every key's lowest bits are left zero for the row's gene: the low bits of
    /// another sharding column's value, which whoever inserts the row puts there (`gene-bits`).
    /// A block's keys are then 2^bits apart instead of consecutive.
    fn gene_bits(&self) -> u32 {
        0
    }

    /// `count` keys for a statement whose client is told every key (`RETURNING`), so they
    /// need not be consecutive: taken in blocks of at most [`KeyGenerator::max_block`], they may
    /// span milliseconds (SNOWFLAKE) or segments (LEAF_SEGMENT).
    fn next_keys_spread(&self, count: usize, out: &mut Vec<Key>) -> Result<(), KeyGenError> {
        let block = self.max_block().max(1);
        let mut left = count;
        while left > 0 {
            let take = left.min(block);
            self.next_keys(take, out)?;
            left -= take;
        }
        Ok(())
    }
}
