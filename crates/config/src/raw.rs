//! The YAML as written: serde structs mirroring ShardingSphere 5's vocabulary.
//!
//! Every struct denies unknown fields so a typo fails loudly (with its YAML path, which
//! `serde_yaml_ng` reports) instead of silently falling back to a default. Nothing here is
//! validated beyond its shape; `resolve` turns it into the model.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, EnumAccess, IgnoredAny, VariantAccess, Visitor};

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

/// One entry of `rules:`, told apart by its YAML tag.
#[derive(Debug)]
pub(crate) enum RawRule {
    // Boxed: the sharding rule dwarfs the others, and a file holds a handful of rules.
    Sharding(Box<RawSharding>),
    Broadcast(RawBroadcast),
    Transaction(RawTransaction),
    Single(RawSingle),
    ReadwriteSplitting(Box<RawReadwriteSplitting>),
    /// SS 5.1–5.3's global `!AUTHORITY` rule (server.yaml), the same as `authority:`.
    Authority(RawAuthority),
    /// A global rule that tunes ShardingSphere's own engine (`!SQL_PARSER` …): accepted with
    /// a warning.
    Ignored(String),
    /// Any other tag, kept so validation can name its index (serde_yaml_ng's own
    /// unknown-variant error loses the sequence index).
    Unsupported(String),
}

/// The global rules that change no result in Keyshard.
const IGNORED_RULES: [&str; 6] = [
    "SQL_PARSER",
    "SQL_FEDERATION",
    "SQL_TRANSLATOR",
    "LOGGING",
    "GLOBAL_CLOCK",
    "TRAFFIC",
];

/// `!SINGLE`: where tables without a sharding or broadcast rule live.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawSingle {
    /// `*.*`, `ds.*`, `ds.table` (and `schema`-qualified forms on PostgreSQL).
    #[serde(default)]
    pub tables: Vec<String>,
    pub default_data_source: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawSharding {
    #[serde(default)]
    pub tables: BTreeMap<String, RawTable>,
    #[serde(default)]
    pub binding_tables: Vec<RawBindingGroup>,
    /// SS 5.0–5.3's broadcast tables, inside the sharding rule.
    #[serde(default)]
    pub broadcast_tables: Vec<String>,
    /// SS 5.x's automatic tables: numbered and spread over data sources by the algorithm.
    #[serde(default)]
    pub auto_tables: BTreeMap<String, RawAutoTable>,
    #[serde(default)]
    pub auditors: BTreeMap<String, RawAlgorithm>,
    pub default_audit_strategy: Option<RawAuditStrategy>,
    pub default_database_strategy: Option<RawStrategy>,
    pub default_table_strategy: Option<RawStrategy>,
    pub default_key_generate_strategy: Option<RawKeyGenerateStrategy>,
    /// SS 5.5+'s key generation by name: a table's column, or a sequence.
    #[serde(default)]
    pub key_generate_strategies: BTreeMap<String, RawNamedKeyStrategy>,
    pub default_sharding_column: Option<String>,
    pub default_data_source: Option<String>,
    #[serde(default)]
    pub sharding_algorithms: BTreeMap<String, RawAlgorithm>,
    #[serde(default)]
    pub key_generators: BTreeMap<String, RawAlgorithm>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawTable {
    pub actual_data_nodes: Option<String>,
    pub database_strategy: Option<RawStrategy>,
    pub table_strategy: Option<RawStrategy>,
    pub key_generate_strategy: Option<RawKeyGenerateStrategy>,
    pub audit_strategy: Option<RawAuditStrategy>,
}

/// An automatic table: `{logic}_0` … `{logic}_{n-1}`, n the algorithm's partitions, over the
/// data sources in turn.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawAutoTable {
    pub actual_data_sources: Option<String>,
    pub sharding_strategy: Option<RawStrategy>,
    pub key_generate_strategy: Option<RawKeyGenerateStrategy>,
    pub audit_strategy: Option<RawAuditStrategy>,
}

/// A binding group: `t_order, t_order_item`, or named as SS 5.4+ writes it,
/// `ref_0:t_order,t_order_item` or `ref_0: t_order, t_order_item` (a YAML map).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum RawBindingGroup {
    Tables(String),
    Named(BTreeMap<String, String>),
}

impl RawBindingGroup {
    /// The group's name, when it has one.
    pub fn name(&self) -> Option<&str> {
        match self {
            RawBindingGroup::Tables(text) => text.split_once(':').map(|(name, _)| name.trim()),
            RawBindingGroup::Named(map) => map.keys().next().map(String::as_str),
        }
    }

    /// The group's tables, as written.
    pub fn tables(&self) -> Vec<&str> {
        let list = match self {
            // A name before a colon is the group's; the tables follow it.
            RawBindingGroup::Tables(text) => text.split_once(':').map_or(text.as_str(), |(_, t)| t),
            RawBindingGroup::Named(map) => map.values().next().map_or("", String::as_str),
        };
        list.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect()
    }
}

/// `auditStrategy`: which auditors check a table's statements.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawAuditStrategy {
    #[serde(default)]
    pub auditor_names: Vec<String>,
    /// A hint (`disableAuditNames`) may switch the auditors off; not by default.
    pub allow_hint_disable: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStrategy {
    pub standard: Option<RawStandardStrategy>,
    pub complex: Option<RawComplexStrategy>,
    pub hint: Option<RawHintStrategy>,
    /// `none: {}` and a bare `none:` both count as present.
    #[serde(default, deserialize_with = "present")]
    pub none: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawComplexStrategy {
    /// `user_id,order_id`.
    pub sharding_columns: String,
    pub sharding_algorithm_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawHintStrategy {
    pub sharding_algorithm_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawStandardStrategy {
    pub sharding_column: Option<String>,
    pub sharding_algorithm_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawKeyGenerateStrategy {
    pub column: String,
    pub key_generator_name: String,
}

/// An entry of `keyGenerateStrategies`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawNamedKeyStrategy {
    /// `column` or `sequence`.
    pub key_generate_type: String,
    pub key_generator_name: String,
    pub logic_table: Option<String>,
    pub key_generate_column: Option<String>,
    /// A sequence's name: its strategy type is refused, so it is not read.
    #[serde(rename = "keyGenerateSequence")]
    pub _key_generate_sequence: Option<IgnoredAny>,
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBroadcast {
    #[serde(default)]
    pub tables: Vec<String>,
}

/// `!TRANSACTION`, ShardingSphere 5's global transaction rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawTransaction {
    pub default_type: Option<String>,
    /// ShardingSphere's XA library (Atomikos, Narayana): accepted so its files load; Keyshard
    /// is its own transaction manager.
    #[serde(rename = "providerType")]
    pub _provider_type: Option<IgnoredAny>,
    /// The provider's settings, ignored with it.
    #[serde(rename = "props")]
    pub _props: Option<IgnoredAny>,
}

/// A YAML scalar of any type read as its text: `worker-id: 1` and `password: 123456` are
/// numbers to YAML but strings to ShardingSphere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scalar(pub String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ScalarVisitor;
        impl Visitor<'_> for ScalarVisitor {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, number or boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar(v.to_owned()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
        }
        deserializer.deserialize_any(ScalarVisitor)
    }
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Empty {}
    Option::<Empty>::deserialize(deserializer).map(|_| true)
}

impl<'de> Deserialize<'de> for RawRule {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RuleVisitor;
        impl<'de> Visitor<'de> for RuleVisitor {
            type Value = RawRule;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a rule tagged !SHARDING, !BROADCAST, !SINGLE, !TRANSACTION or \
                     !READWRITE_SPLITTING",
                )
            }
            fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<RawRule, A::Error> {
                let (tag, body): (String, _) = data.variant()?;
                match tag.as_str() {
                    "SHARDING" => body.newtype_variant().map(RawRule::Sharding),
                    "BROADCAST" => body.newtype_variant().map(RawRule::Broadcast),
                    "TRANSACTION" => body.newtype_variant().map(RawRule::Transaction),
                    "SINGLE" => body.newtype_variant().map(RawRule::Single),
                    "AUTHORITY" => body.newtype_variant().map(RawRule::Authority),
                    "READWRITE_SPLITTING" => {
                        body.newtype_variant().map(RawRule::ReadwriteSplitting)
                    }
                    tag if IGNORED_RULES.contains(&tag) => body
                        .newtype_variant::<IgnoredAny>()
                        .map(|_| RawRule::Ignored(tag.to_owned())),
                    _ => body
                        .newtype_variant::<IgnoredAny>()
                        .map(|_| RawRule::Unsupported(tag)),
                }
            }
        }
        deserializer.deserialize_enum(
            "Rule",
            &[
                "SHARDING",
                "BROADCAST",
                "TRANSACTION",
                "SINGLE",
                "AUTHORITY",
                "READWRITE_SPLITTING",
            ],
            RuleVisitor,
        )
    }
}

/// A YAML mapping kept in the order it is written: ShardingSphere spreads an auto table with no
/// `actualDataSources` over the data sources in the order they are configured.
#[derive(Debug)]
pub(crate) struct InOrder<V>(pub Vec<(String, V)>);

impl<V> Default for InOrder<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for InOrder<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Entries<V> {
            type Value = InOrder<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping of names")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<InOrder<V>, A::Error> {
                let mut entries: Vec<(String, V)> = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, V>()? {
                    if entries.iter().any(|(n, _)| *n == name) {
                        return Err(serde::de::Error::custom(format!("'{name}' is given twice")));
                    }
                    entries.push((name, value));
                }
                Ok(InOrder(entries))
            }
        }
        deserializer.deserialize_map(Entries(std::marker::PhantomData))
    }
}

/// `!READWRITE_SPLITTING` as written, in any of ShardingSphere 5's spellings (resolved in
/// `readwrite.rs`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawReadwriteSplitting {
    /// SS 5.4+.
    #[serde(default)]
    pub(crate) data_source_groups: InOrder<RawGroup>,
    /// SS 5.0–5.3.
    #[serde(default)]
    pub(crate) data_sources: InOrder<RawGroup>,
    #[serde(default)]
    pub(crate) load_balancers: BTreeMap<String, RawAlgorithm>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawGroup {
    pub(crate) write_data_source_name: Option<String>,
    pub(crate) read_data_source_names: Option<Names>,
    /// SS 5.2–5.3.
    pub(crate) static_strategy: Option<RawStatic>,
    /// SS 5.2–5.3's database discovery: not implemented.
    pub(crate) dynamic_strategy: Option<IgnoredAny>,
    /// SS 5.1: `type: Static` with the names in `props`.
    #[serde(rename = "type")]
    pub(crate) kind: Option<String>,
    pub(crate) props: Option<BTreeMap<String, Scalar>>,
    pub(crate) transactional_read_query_strategy: Option<String>,
    pub(crate) load_balancer_name: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawStatic {
    pub(crate) write_data_source_name: String,
    pub(crate) read_data_source_names: Names,
}

/// A list of names, or one comma-separated string (SS 5.1's props).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum Names {
    List(Vec<String>),
    Text(String),
}

impl Names {
    pub(crate) fn to_vec(&self) -> Vec<String> {
        match self {
            Names::List(names) => names.iter().map(|n| n.trim().to_owned()).collect(),
            Names::Text(text) => text
                .split(',')
                .map(|n| n.trim().to_owned())
                .filter(|n| !n.is_empty())
                .collect(),
        }
    }
}
