//! The YAML as written: serde structs mirroring ShardingSphere 5's vocabulary.
//!
//! Every struct denies unknown fields so a typo fails loudly (with its YAML path, which
//! `serde_yaml_ng` reports) instead of silently falling back to a default. Nothing here is
//! validated beyond its shape; `resolve` turns it into the model.
use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::IgnoredAny;

mod readwrite;
mod rules;
mod sharding;
mod values;

pub(crate) use readwrite::{Names, RawGroup, RawReadwriteSplitting};
pub(crate) use rules::{RawRule, RawSingle, RawTransaction};
pub(crate) use sharding::{
    RawAuditStrategy, RawAutoTable, RawKeyGenerateStrategy, RawSharding, RawStrategy, RawTable,
};
pub(crate) use values::{InOrder, Scalar};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawConfig {
    pub server: Option<RawServer>,
    pub mode: Option<RawMode>,
    pub authority: Option<RawAuthority>,
    #[serde(default)]
    pub props: RawProps,
    pub database_name: String,
    #[serde(default)]
    pub data_sources: InOrder<RawDataSource>,
    #[serde(default)]
    pub rules: Vec<RawRule>,
    /// SS-Proxy 5.4+'s `transaction:` beside `rules` (the `!TRANSACTION` rule's body).
    pub transaction: Option<RawTransaction>,
    // SS-Proxy 5.4+'s global settings that tune ShardingSphere's own engine: they change no
    // result here, and load with a warning.
    pub sql_parser: Option<IgnoredAny>,
    pub sql_federation: Option<IgnoredAny>,
    pub sql_translator: Option<IgnoredAny>,
    pub logging: Option<IgnoredAny>,
    pub global_clock: Option<IgnoredAny>,
    pub traffic: Option<IgnoredAny>,
}

impl RawConfig {
    /// The names of ShardingSphere's engine settings present.
    pub fn engine_settings(&self) -> impl Iterator<Item = &'static str> {
        [
            ("sqlParser", self.sql_parser.is_some()),
            ("sqlFederation", self.sql_federation.is_some()),
            ("sqlTranslator", self.sql_translator.is_some()),
            ("logging", self.logging.is_some()),
            ("globalClock", self.global_clock.is_some()),
            ("traffic", self.traffic.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, present)| present.then_some(name))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawServer {
    pub mysql: Option<RawListener>,
    pub postgres: Option<RawListener>,
    pub tls: Option<RawTls>,
    pub metrics: Option<RawListener>,
    #[serde(rename = "workerThreads")]
    pub worker_threads: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTls {
    pub certificate: String,
    pub key: String,
    #[serde(default)]
    pub required: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawListener {
    pub listen: String,
}

/// ShardingSphere 5's `mode:`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMode {
    #[serde(rename = "type")]
    pub kind: String,
    pub repository: Option<RawAlgorithm>,
    /// ShardingSphere's "overwrite the registry with this file"; Keyshard keeps no
    /// configuration in the registry, so there is nothing to overwrite.
    #[serde(rename = "overwrite")]
    pub _overwrite: Option<IgnoredAny>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAuthority {
    #[serde(default)]
    pub users: Vec<RawUser>,
    pub privilege: Option<RawPrivilege>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawUser {
    pub user: String,
    pub password: Option<Scalar>,
}

/// ShardingSphere's `privilege:` block: `ALL_PERMITTED`, or `DATABASE_PERMITTED` with its
/// `user-database-mappings`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPrivilege {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub props: BTreeMap<String, Scalar>,
}

/// Unknown keys are kept in `other`, so that ShardingSphere's own (which tune its engine) load
/// with a warning and anything else is refused by name.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct RawProps {
    #[serde(rename = "sql-show", default)]
    pub sql_show: bool,
    /// Keyshard's own: 0 (the default) leaves idle transactions open.
    #[serde(rename = "idle-in-transaction-timeout-milliseconds", default)]
    pub idle_in_transaction_timeout_ms: u64,
    /// Keyshard's own: how long shutdown waits for running statements (default 30 s).
    #[serde(rename = "shutdown-drain-timeout-milliseconds")]
    pub shutdown_drain_timeout_ms: Option<u64>,
    /// Keyshard's own: the most memory one statement may take (default 256 MiB).
    #[serde(rename = "statement-memory-bytes")]
    pub statement_memory_bytes: Option<u64>,
    /// Keyshard's own: the memory all statements in flight may take (default 1 GiB).
    #[serde(rename = "memory-budget-bytes")]
    pub memory_budget_bytes: Option<u64>,
    /// Keyshard's own: what one session may keep between statements (default 64 MiB).
    #[serde(rename = "session-memory-bytes")]
    pub session_memory_bytes: Option<u64>,
    /// ShardingSphere's: connections one read takes per data source (default 1).
    #[serde(rename = "max-connections-size-per-query")]
    pub max_connections_size_per_query: Option<u64>,
    /// Keyshard's own: connections the proxy keeps at once (default 10,000).
    #[serde(rename = "max-connections")]
    pub max_connections: Option<u64>,
    /// Keyshard's own: connections still logging in (default 512).
    #[serde(rename = "max-unauthenticated-connections")]
    pub max_unauthenticated_connections: Option<u64>,
    /// Keyshard's own: connections still logging in from one address (default 128).
    #[serde(rename = "max-unauthenticated-connections-per-address")]
    pub max_unauthenticated_per_address: Option<u64>,
    /// Keyshard's own: rows one read across shards may gather (default 1,000,000).
    #[serde(rename = "gather-max-rows")]
    pub gather_max_rows: Option<u64>,
    /// Keyshard's own: bytes one read across shards may gather (default 256 MiB).
    #[serde(rename = "gather-max-bytes")]
    pub gather_max_bytes: Option<u64>,
    /// Keyshard's own: bytes of rows one read keeps for a merge (default 128 MiB).
    #[serde(rename = "result-memory-bytes")]
    pub result_memory_bytes: Option<u64>,
    /// Keyshard's own: the largest row read from a PostgreSQL shard (default 64 MiB).
    #[serde(rename = "max-row-bytes")]
    pub max_row_bytes: Option<u64>,
    #[serde(rename = "shape-cache-entries")]
    pub shape_cache_entries: Option<u64>,
    #[serde(rename = "shape-cache-bytes")]
    pub shape_cache_bytes: Option<u64>,
    #[serde(rename = "column-cache-entries")]
    pub column_cache_entries: Option<u64>,
    #[serde(rename = "column-cache-bytes")]
    pub column_cache_bytes: Option<u64>,
    #[serde(rename = "collation-cache-entries")]
    pub collation_cache_entries: Option<u64>,
    #[serde(rename = "collation-cache-bytes")]
    pub collation_cache_bytes: Option<u64>,
    /// Keyshard's own: the most rows of one natural batch (default 256; 0 or 1: off).
    #[serde(rename = "insert-batch-max-rows")]
    pub insert_batch_max_rows: Option<u64>,
    /// Keyshard's own (see `readwrite`).
    #[serde(rename = "readwrite-consistency")]
    pub readwrite_consistency: Option<String>,
    #[serde(rename = "max-replication-delay-milliseconds")]
    pub max_replication_delay_ms: Option<u64>,
    #[serde(rename = "readwrite-causal-wait-milliseconds")]
    pub readwrite_causal_wait_ms: Option<u64>,
    #[serde(rename = "replica-check-interval-milliseconds")]
    pub replica_check_interval_ms: Option<u64>,
    /// ShardingSphere's: client connections at once (0 or less: no limit), Keyshard's
    /// `max-connections`.
    #[serde(rename = "proxy-frontend-max-connections")]
    pub proxy_frontend_max_connections: Option<i64>,
    /// Every other key.
    #[serde(flatten)]
    pub other: BTreeMap<String, IgnoredAny>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawDataSource {
    pub url: Option<String>,
    pub jdbc_url: Option<String>,
    pub username: Option<Scalar>,
    pub password: Option<Scalar>,
    // HikariCP's own names, as ShardingSphere-JDBC files write them, mean the same.
    #[serde(alias = "maximumPoolSize")]
    pub max_pool_size: Option<u32>,
    #[serde(alias = "minimumIdle")]
    pub min_pool_size: Option<u32>,
    #[serde(alias = "connectionTimeout")]
    pub connection_timeout_milliseconds: Option<u64>,
    #[serde(alias = "idleTimeout")]
    pub idle_timeout_milliseconds: Option<u64>,
    #[serde(alias = "maxLifetime")]
    pub max_lifetime_milliseconds: Option<u64>,
    /// SS-Proxy's pool settings that change no result here, accepted with a warning.
    #[serde(rename = "readOnly")]
    pub read_only: Option<IgnoredAny>,
    /// As above.
    #[serde(rename = "customPoolProps")]
    pub custom_pool_props: Option<IgnoredAny>,
    /// HikariCP's pool name, as above.
    #[serde(rename = "poolName")]
    pub pool_name: Option<IgnoredAny>,
    /// Keyshard's own: `pin` (default) or `strict`.
    pub session_state: Option<String>,
    /// Accepted so ShardingSphere-JDBC files load unchanged; Keyshard picks its own driver.
    #[serde(rename = "dataSourceClassName")]
    pub _data_source_class_name: Option<IgnoredAny>,
    /// As above.
    #[serde(rename = "driverClassName")]
    pub _driver_class_name: Option<IgnoredAny>,
}

/// A typed SPI entry: a sharding algorithm or a key generator.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAlgorithm {
    #[serde(rename = "type")]
    pub kind: String,
    pub props: Option<BTreeMap<String, Scalar>>,
}

impl RawAlgorithm {
    /// The properties as text, as ShardingSphere's `Properties` holds them.
    pub fn props(&self) -> BTreeMap<String, String> {
        self.props
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.0.clone()))
            .collect()
    }
}
