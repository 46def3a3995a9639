//! The validated configuration the proxy and router run on: every name resolved, every
//! expression parsed, so nothing is parsed or looked up by string at statement time.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use keyshard_keygen::{KeyGenerator, Registry};

use crate::algorithm::Algorithm;
use crate::datasource::DataSource;
use crate::mode::Mode;
use crate::remainder_nodes::RemainderNodes;

/// A loaded, validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where instances coordinate (`mode:`).
    pub mode: Mode,
    /// Where the frontends listen.
    pub server: Server,
    /// Who may connect; empty when `authority` is absent (the proxy decides what that means).
    pub users: Vec<User>,
    /// Global properties.
    pub props: Props,
    /// The logical database clients see (`databaseName`).
    pub database_name: String,
    /// The data sources other rules name, by name: the real databases, and each read/write
    /// group under its own name with its primary's settings (its members are not here).
    pub data_sources: BTreeMap<String, DataSource>,
    /// `!READWRITE_SPLITTING`: the replicas behind data sources, and how they are read.
    pub read_write: crate::ReadWriteSplitting,
    /// The `!SHARDING` rule; empty when there is none.
    pub sharding: ShardingRule,
    /// Tables copied in full to every data source (`!BROADCAST`), as written.
    pub broadcast_tables: Vec<String>,
    /// One shared generator per configured key generator name.
    pub key_generators: Registry,
    /// How statements and transactions that write to several data sources commit
    /// (`!TRANSACTION defaultType`).
    pub transaction_type: TransactionType,
    /// What the configuration says that changes nothing here (ShardingSphere's engine
    /// settings), each with its YAML path: logged at start, listed by `keyshard check`.
    pub warnings: Vec<String>,
}

/// `!TRANSACTION defaultType`: how a statement or transaction that writes to several data
/// sources commits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TransactionType {
    /// Each data source commits its local transaction in turn (the default): a failure between
    /// two commits leaves the first committed, and the client is told so.
    #[default]
    Local,
    /// Two-phase commit with a durable decision in the coordination repository: all or
    /// nothing, through crashes of a data source or of the proxy.
    Xa,
}

impl Config {
    /// Whether `table` is a broadcast table (case-insensitive).
    pub fn is_broadcast_table(&self, table: &str) -> bool {
        self.broadcast_tables
            .iter()
            .any(|t| t.eq_ignore_ascii_case(table))
    }
}

/// The frontends' listen addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// The MySQL protocol frontend.
    pub mysql: Option<SocketAddr>,
    /// The PostgreSQL protocol frontend.
    pub postgres: Option<SocketAddr>,
    /// TLS offered on both frontends; `None`: plain connections only.
    pub tls: Option<Tls>,
    /// Where the Prometheus metrics are served (`GET /metrics`); `None`: nowhere.
    pub metrics: Option<SocketAddr>,
    /// `server.workerThreads`: the threads that serve connections. 1 (the default): one
    /// thread runs everything (Tokio's current-thread runtime), which costs the least CPU per
    /// statement; N: a multi-threaded runtime of N workers; 0: one worker per core.
    pub worker_threads: usize,
}

/// `server.tls`: the certificate both frontends present to clients that ask for TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    /// PEM file holding the certificate chain, the server's own certificate first.
    pub certificate: PathBuf,
    /// PEM file holding its private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// Refuse clients that do not ask for TLS (MySQL's `require_secure_transport`,
    /// PostgreSQL's `hostssl`).
    pub required: bool,
}

impl Default for Server {
    /// MySQL on 127.0.0.1:3307, ShardingSphere-Proxy's port, and no PostgreSQL frontend.
    fn default() -> Self {
        Self {
            mysql: Some(SocketAddr::from(([127, 0, 0, 1], 3307))),
            postgres: None,
            tls: None,
            metrics: None,
            worker_threads: 1,
        }
    }
}

/// A user of the proxy.
#[derive(Clone, PartialEq, Eq)]
pub struct User {
    /// The name (`root` from `root@%`).
    pub name: String,
    /// The host part after `@`, kept for display; Keyshard does not match on it.
    pub host: Option<String>,
    /// The password, with `${ENV}` placeholders replaced.
    pub password: String,
    /// The logical databases the user may use (`DATABASE_PERMITTED`'s
    /// `user-database-mappings`); `None`: every one (`ALL_PERMITTED`, or a mapping to `*`).
    pub databases: Option<Vec<String>>,
}

impl User {
    /// Whether the user may use logical database `database`.
    pub fn may_use(&self, database: &str) -> bool {
        self.databases
            .as_ref()
            .is_none_or(|d| d.iter().any(|d| d.eq_ignore_ascii_case(database)))
    }
}

impl fmt::Debug for User {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("User")
            .field("name", &self.name)
            .field("host", &self.host)
            .field("password", &"***")
            .finish()
    }
}

/// Global `props`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Props {
    /// `sql-show`: log the SQL sent to each shard.
    pub sql_show: bool,
    /// `idle-in-transaction-timeout-milliseconds` (Keyshard's own; 0 or absent: none): a
    /// client idle this long inside a transaction is disconnected and its transaction rolled
    /// back, giving its shard connections back to the pools.
    pub idle_in_transaction_timeout: Option<std::time::Duration>,
    /// `shutdown-drain-timeout-milliseconds` (Keyshard's own; default 30 s): how long a
    /// shutdown lets statements that started finish (and extended-protocol batches reach their
    /// Sync) before it closes the connections anyway.
    pub shutdown_drain_timeout: std::time::Duration,
    /// `statement-memory-bytes` (Keyshard's own; default 256 MiB): a statement estimated to
    /// take more of the proxy's memory is refused before it is parsed.
    pub statement_memory: usize,
    /// `memory-budget-bytes` (Keyshard's own; default 1 GiB): what all statements in flight
    /// may take together; a statement that does not fit waits.
    pub memory_budget: usize,
    /// `session-memory-bytes` (Keyshard's own; default 64 MiB): what one session may keep
    /// between its statements (user variables, prepared statements, long data, portals); all
    /// sessions together keep at most half of `memory-budget-bytes`.
    pub session_memory: usize,
    /// `max-connections-size-per-query` (ShardingSphere's; default 1): how many connections a
    /// read takes on one data source. Its units there share them: on one connection they go
    /// as one multi-statement text (one round trip, the server answering one after the
    /// other); with as many connections as units, each runs on its own at once.
    pub max_connections_per_query: usize,
    /// `gather-max-rows` (Keyshard's own; default 1,000,000): rows a read across shards that
    /// no merge answers may gather onto one data source (see docs/src/sql.md, "Reads the shards
    /// cannot merge").
    pub gather_max_rows: u64,
    /// `gather-max-bytes` (Keyshard's own; default 256 MiB): bytes of those rows.
    pub gather_max_bytes: u64,
    /// `result-memory-bytes` (Keyshard's own; default 128 MiB): about the bytes of rows one
    /// read keeps in the proxy because it merges them or answers them whole (ORDER BY,
    /// GROUP BY, LIMIT over several nodes, RETURNING); rows that go to the client as they
    /// arrive count nothing.
    pub result_memory: u64,
    /// `max-row-bytes` (Keyshard's own; default 64 MiB): the largest result row (any message
    /// or packet) read from a PostgreSQL or MariaDB shard, which sqlx reads whole before anyone
    /// sees it; a longer one fails its statement and its shard connection is closed.
    pub max_row_bytes: u64,
    /// `max-connections` (Keyshard's own; default 10,000): client connections the proxy keeps
    /// at once; beyond, a new one is refused at once (1040, 53300).
    pub max_connections: usize,
    /// `max-unauthenticated-connections` (Keyshard's own; default 512): of those, the ones
    /// still logging in.
    pub max_unauthenticated_connections: usize,
    /// `max-unauthenticated-connections-per-address` (Keyshard's own; default 128): the ones
    /// still logging in from one address.
    pub max_unauthenticated_per_address: usize,
    /// `shape-cache-entries` / `shape-cache-bytes` (Keyshard's own; default 1,024 and 4 MiB):
    /// the statement shapes kept per frontend, so that repeated statements skip the parser.
    pub shape_cache: CacheBounds,
    /// `column-cache-entries` / `column-cache-bytes` (Keyshard's own; default 1,024 and
    /// 4 MiB): the reads' result columns kept as the shards described them.
    pub column_cache: CacheBounds,
    /// `collation-cache-entries` / `collation-cache-bytes` (Keyshard's own; default 1,024
    /// and 1 MiB): the collations of the tables' text columns a merge compares, per table.
    pub collation_cache: CacheBounds,
    /// `insert-batch-max-rows` (Keyshard's own; default 256; 0 or 1: off): the most
    /// single-row INSERTs of several sessions sent to a shard as one multi-row INSERT when
    /// they queue for the same table at once (see docs/src/batching.md).
    pub insert_batch_max_rows: usize,
}

/// A cache's bounds: entries and bytes at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheBounds {
    /// Entries at most (0: nothing is kept).
    pub entries: usize,
    /// Bytes at most, as each entry is weighed.
    pub bytes: usize,
}

impl Default for Props {
    fn default() -> Self {
        Self {
            sql_show: false,
            idle_in_transaction_timeout: None,
            shutdown_drain_timeout: std::time::Duration::from_secs(30),
            statement_memory: 256 << 20,
            memory_budget: 1 << 30,
            session_memory: 64 << 20,
            max_connections_per_query: 1,
            gather_max_rows: 1_000_000,
            gather_max_bytes: 256 << 20,
            result_memory: 128 << 20,
            max_row_bytes: 64 << 20,
            max_connections: 10_000,
            max_unauthenticated_connections: 512,
            max_unauthenticated_per_address: 128,
            shape_cache: CacheBounds {
                entries: 1024,
                bytes: 4 << 20,
            },
            column_cache: CacheBounds {
                entries: 1024,
                bytes: 4 << 20,
            },
            collation_cache: CacheBounds {
                entries: 1024,
                bytes: 1 << 20,
            },
            insert_batch_max_rows: 256,
        }
    }
}

/// The sharding rule: which logic tables are split across which data nodes, and how.
#[derive(Debug, Clone, Default)]
pub struct ShardingRule {
    /// Table rules keyed by the ASCII-lower-cased logic table name; use [`ShardingRule::table`].
    pub tables: BTreeMap<String, TableRule>,
    /// Binding groups: tables sharded alike, so joins between them stay on one node. Names are
    /// lower-cased keys of [`ShardingRule::tables`].
    pub binding_groups: Vec<Vec<String>>,
    /// Where unsharded tables live, if configured.
    pub default_data_source: Option<String>,
    /// The configured sharding algorithms by name, shared by the strategies that use them.
    pub algorithms: BTreeMap<String, Arc<Algorithm>>,
    /// `defaultDatabaseStrategy` and `defaultTableStrategy` as configured (`None`: absent or
    /// `none`), for `SHOW DEFAULT SHARDING STRATEGY`; the tables' rules already hold them.
    pub default_strategies: [Option<Strategy>; 2],
    /// Each algorithm's properties as configured, for `SHOW SHARDING ALGORITHMS`.
    pub algorithm_props: BTreeMap<String, BTreeMap<String, String>>,
    /// Each binding group's name (`ref_0`, or as configured), in `binding_groups`' order.
    pub binding_names: Vec<String>,
    /// The auditors by name, with their type.
    pub auditors: BTreeMap<String, String>,
    /// `!SINGLE`'s tables: where tables without a sharding or broadcast rule live.
    pub single_tables: Vec<SingleTable>,
    /// SS 5.0–5.3's `broadcastTables` inside `!SHARDING`, until the configuration merges them
    /// with `!BROADCAST`'s (always empty in a loaded [`Config`]).
    pub broadcast_tables: Vec<String>,
}

/// An entry of `!SINGLE`'s `tables`: `*.*`, `ds.*` or `ds.table`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SingleTable {
    /// The data source; `None` for every one (`*.*`).
    pub data_source: Option<String>,
    /// The table; `None` for every table of the data source.
    pub table: Option<String>,
}

impl ShardingRule {
    /// The rule for logic table `name`, matched case-insensitively as MySQL matches table names.
    pub fn table(&self, name: &str) -> Option<&TableRule> {
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            self.tables.get(&name.to_ascii_lowercase())
        } else {
            self.tables.get(name)
        }
    }

    /// The binding group `table` belongs to, if any.
    pub fn binding_group(&self, table: &str) -> Option<&[String]> {
        self.binding_groups
            .iter()
            .find(|group| group.iter().any(|t| t.eq_ignore_ascii_case(table)))
            .map(Vec::as_slice)
    }

    /// Whether no table is sharded.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}

/// How one logic table is sharded.
#[derive(Debug, Clone)]
pub struct TableRule {
    /// The logic table name as configured.
    pub logic_table: String,
    /// Every physical table, in `actualDataNodes` order.
    pub data_nodes: Vec<DataNode>,
    /// Where the nodes come from, as configured (RQL shows it).
    pub configured_nodes: ConfiguredNodes,
    /// Chooses the data source; `None` means every data source the table has nodes on.
    pub database_strategy: Option<Strategy>,
    /// Chooses the table within a data source; `None` means every table there.
    pub table_strategy: Option<Strategy>,
    /// The table's own key generation, else the rule's default; `None` generates no keys.
    pub key_generate: Option<KeyGenerateStrategy>,
    /// The `DML_SHARDING_CONDITIONS` auditors of the table (its own `auditStrategy`, else the
    /// rule's default): a SELECT, UPDATE or DELETE of it without a condition on a sharding
    /// column is refused.
    pub auditors: Vec<String>,
    /// Its audit strategy's `allowHintDisable`: a statement's `disableAuditNames` hint switches
    /// the named auditors off.
    pub audit_hint_disable: bool,
    /// Gene keys: its generator leaves the low bits of every key for another sharding
    /// column's, so a key alone routes like that column.
    pub gene: Option<Gene>,
    /// Where its INLINE strategies send integers, by remainder, worked out at load.
    pub remainder_nodes: RemainderNodes,
}

/// A table's nodes as its configuration writes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfiguredNodes {
    /// A table's `actualDataNodes` (empty when it has none: the logic table on every data
    /// source).
    DataNodes(String),
    /// An auto table's `actualDataSources`.
    DataSources(String),
}

/// A table's gene keys (`gene-bits` on its key generator): each generated key's lowest `bits`
/// are the low bits of the row's `column`, whose strategies route by no more than those bits
/// (checked at load), so a row found by its key is on the node its `column` picks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gene {
    /// The key column.
    pub key_column: String,
    /// The sharding column whose low bits each key carries.
    pub column: String,
    /// How many.
    pub bits: u32,
}

impl Gene {
    /// The gene of `value` (of [`Gene::column`], or a key): its low bits, for a value that
    /// routes by them (one that is not negative).
    pub fn of(&self, value: i64) -> Option<i64> {
        (value >= 0).then(|| value & ((1 << self.bits) - 1))
    }
}

impl TableRule {
    /// The distinct data sources of [`TableRule::data_nodes`], in order.
    pub fn data_source_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for node in &self.data_nodes {
            if !names.contains(&node.data_source.as_str()) {
                names.push(&node.data_source);
            }
        }
        names
    }
}

/// One physical table: `ds_1.t_order_3`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DataNode {
    /// The data source name.
    pub data_source: String,
    /// The physical table name.
    pub table: String,
}

impl fmt::Display for DataNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.data_source, self.table)
    }
}

/// What a `hint` strategy shards by in place of a column: the value a statement's hint gives
/// its table at that level (`t_order.SHARDING_DATABASE_VALUE=1`). No SQL identifier holds a
/// NUL, so no column of a statement is ever taken for it.
pub const HINT_DATABASE_VALUE: &str = "\0SHARDING_DATABASE_VALUE";
/// [`HINT_DATABASE_VALUE`]'s table-level twin (`t_order.SHARDING_TABLE_VALUE=1`).
pub const HINT_TABLE_VALUE: &str = "\0SHARDING_TABLE_VALUE";
/// What a `complex` strategy has for its column: it shards by all of [`Strategy::columns`]
/// at once, never by one of them alone.
pub const COMPLEX_COLUMNS: &str = "\0COMPLEX";

/// A resolved `standard` strategy (one column through one algorithm), or a `hint` one (the
/// statement's hint value through a HINT_INLINE algorithm).
#[derive(Debug, Clone)]
pub struct Strategy {
    /// The sharding column; for a hint strategy, [`HINT_DATABASE_VALUE`] or
    /// [`HINT_TABLE_VALUE`]; for a complex one, [`COMPLEX_COLUMNS`].
    pub column: String,
    /// A complex strategy's sharding columns, as configured; empty for any other.
    pub columns: Vec<String>,
    /// The algorithm's configured name, for messages and admin output.
    pub algorithm_name: String,
    /// The algorithm, shared with other strategies that name it.
    pub algorithm: Arc<Algorithm>,
}

impl Strategy {
    /// Whether it shards by the statement's hint, not by a column.
    pub fn is_hint(&self) -> bool {
        self.column == HINT_DATABASE_VALUE || self.column == HINT_TABLE_VALUE
    }

    /// Whether it shards by several columns at once.
    pub fn is_complex(&self) -> bool {
        self.column == COMPLEX_COLUMNS
    }

    /// Its type as ShardingSphere's RQL shows it.
    pub fn kind(&self) -> &'static str {
        match (self.is_hint(), self.is_complex()) {
            (true, _) => "HINT",
            (_, true) => "COMPLEX",
            _ => "STANDARD",
        }
    }

    /// Its sharding columns as ShardingSphere's RQL shows them: none for a hint strategy.
    pub fn sharding_column(&self) -> String {
        match (self.is_hint(), self.is_complex()) {
            (true, _) => String::new(),
            (_, true) => self.columns.join(","),
            _ => self.column.clone(),
        }
    }
}

/// Which column gets generated keys, and from which generator.
#[derive(Debug, Clone)]
pub struct KeyGenerateStrategy {
    /// The key column.
    pub column: String,
    /// The generator's configured name.
    pub generator_name: String,
    /// The shared generator (the same instance as in [`Config::key_generators`]).
    pub generator: Arc<dyn KeyGenerator>,
}
