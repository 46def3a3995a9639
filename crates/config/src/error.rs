use std::path::PathBuf;

use keyshard_keygen::KeyGenError;

use crate::datasource::DataSourceError;
use crate::inline::InlineError;

/// Why a configuration could not be loaded. Every variant's message names the YAML path of the
/// offending value.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read configuration file '{}': {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        error: std::io::Error,
    },
    /// The YAML is malformed, or has a field of the wrong type or an unknown field. The message
    /// names the YAML path and the line.
    #[error(transparent)]
    Yaml(#[from] serde_yaml_ng::Error),
    /// The YAML is well-formed but its content is not a usable configuration.
    #[error("{path}: {problem}")]
    Invalid {
        /// Where, e.g. `rules[0].tables.t_order.actualDataNodes`.
        path: String,
        /// What is wrong there.
        problem: Problem,
    },
    /// Several problems of one kind (data sources, algorithms, tables), each on its line.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Several(Vec<ConfigError>),
}

/// Problems gathered over the items of one kind, so that a configuration's every bad data
/// source, algorithm or table is reported in one run.
#[derive(Default)]
pub(crate) struct Problems(Vec<ConfigError>);

impl Problems {
    /// The value, or `None` with its error kept.
    pub(crate) fn keep<T>(&mut self, result: Result<T, ConfigError>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(ConfigError::Several(errors)) => {
                self.0.extend(errors);
                None
            }
            Err(error) => {
                self.0.push(error);
                None
            }
        }
    }

    /// Keeps `error`.
    pub(crate) fn push(&mut self, error: ConfigError) {
        self.keep::<()>(Err(error));
    }

    /// Ok when nothing was kept; the one error, or all of them.
    pub(crate) fn check(self) -> Result<(), ConfigError> {
        let mut errors = self.0;
        match errors.len() {
            0 => Ok(()),
            1 => Err(errors.remove(0)),
            _ => Err(ConfigError::Several(errors)),
        }
    }
}

impl ConfigError {
    /// The error of an item that names another one already found bad (a table naming a bad
    /// algorithm): [`Problems`] keeps nothing for it, so only the cause is reported.
    pub(crate) fn already_reported() -> Self {
        ConfigError::Several(Vec::new())
    }

    pub(crate) fn at(path: impl Into<String>, problem: impl Into<Problem>) -> Self {
        Self::Invalid {
            path: path.into(),
            problem: problem.into(),
        }
    }
}

/// What is wrong at one path of a configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// A bad inline expression.
    #[error(transparent)]
    Inline(#[from] InlineError),
    /// A key generator that could not be built.
    #[error(transparent)]
    KeyGenerator(#[from] KeyGenError),
    /// A bad data source URL.
    #[error(transparent)]
    DataSource(#[from] DataSourceError),
    /// A reference to a data source that is not configured.
    #[error("no data source named '{0}'")]
    UnknownDataSource(String),
    /// A reference to a sharding algorithm that is not configured.
    #[error("no sharding algorithm named '{0}'")]
    UnknownAlgorithm(String),
    /// A reference to a key generator that is not configured.
    #[error("no key generator named '{0}'")]
    UnknownKeyGenerator(String),
    /// A reference to a sharded table that is not configured.
    #[error("no sharded table named '{0}'")]
    UnknownTable(String),
    /// A rule tag Keyshard does not implement.
    #[error(
        "unsupported rule '!{0}' (supported: !SHARDING, !READWRITE_SPLITTING, !BROADCAST, \
         !SINGLE, !TRANSACTION, !AUTHORITY; ShardingSphere's engine settings such as !SQL_PARSER load with a warning)"
    )]
    UnsupportedRule(String),
    /// A property neither Keyshard nor ShardingSphere defines.
    #[error("unknown setting '{0}' (neither Keyshard's nor ShardingSphere's)")]
    UnknownSetting(String),
    /// A field ShardingSphere defines whose meaning Keyshard does not implement yet.
    #[error("{0} is not supported yet")]
    NotYetSupported(&'static str),
    /// A table given a key strategy twice.
    #[error("table '{0}' has its own keyGenerateStrategy already")]
    DuplicateKeyStrategy(String),
    /// An auditor type Keyshard does not implement.
    #[error("unsupported auditor type '{0}' (supported: DML_SHARDING_CONDITIONS)")]
    UnsupportedAuditor(String),
    /// A reference to an auditor that is not configured.
    #[error("no auditor named '{0}'")]
    UnknownAuditor(String),
    /// A `!SINGLE` table not written as `*.*`, `ds.*` or `ds.table`.
    #[error("single table '{0}' is not of the form *.*, <data source>.* or <data source>.<table>")]
    MalformedSingleTable(String),
    /// Two default data sources that differ.
    #[error("defaultDataSource '{0}' differs from !SHARDING's '{1}'")]
    ConflictingDefault(String, String),
    /// A second rule of a kind that may appear once.
    #[error("only one !{0} rule is allowed")]
    DuplicateRule(&'static str),
    /// A sharding algorithm type Keyshard does not implement.
    #[error(
        "unsupported sharding algorithm type '{0}' (supported: INLINE, MOD, HASH_MOD, \
         VOLUME_RANGE, BOUNDARY_RANGE, AUTO_INTERVAL, INTERVAL, COMPLEX_INLINE, HINT_INLINE; \
         CLASS_BASED runs a Java class, which Keyshard cannot)"
    )]
    UnsupportedAlgorithm(String),
    /// Algorithm properties that do not make a working algorithm.
    #[error("{0}")]
    InvalidAlgorithm(String),
    /// A configuration directory with more than one logical database, where one is wanted.
    #[error(
        "several logical databases ({0}): this command takes one; keep one database file, or \
         give the one database's file"
    )]
    SeveralDatabases(String),
    /// A privilege provider Keyshard does not implement.
    #[error("unsupported privilege type '{0}' (supported: ALL_PERMITTED, DATABASE_PERMITTED)")]
    UnsupportedPrivilege(String),
    /// A property the algorithm type does not take.
    #[error("unknown property '{name}' for {algorithm} (allowed: {allowed})")]
    UnknownProperty {
        /// The property as written.
        name: String,
        /// The algorithm type.
        algorithm: &'static str,
        /// The properties it takes.
        allowed: &'static str,
    },
    /// A required property that is absent.
    #[error("missing property '{0}'")]
    MissingProperty(&'static str),
    /// A value that does not parse as what the field needs.
    #[error("expected {expected}, got '{value}'")]
    InvalidValue {
        /// The value as written.
        value: String,
        /// What the field accepts.
        expected: &'static str,
    },
    /// A `${NAME}` placeholder whose variable is not set.
    #[error("environment variable '{0}' is not set")]
    UnsetEnvVar(String),
    /// A `${` placeholder without its `}`.
    #[error("unclosed '${{' placeholder")]
    UnclosedPlaceholder,
    /// `dataSources` is absent or empty.
    #[error("at least one data source is required")]
    NoDataSources,
    /// `server` configures no frontend.
    #[error("no frontend configured (set mysql.listen or postgres.listen)")]
    NoFrontend,
    /// A strategy with both or neither of `standard` and `none`.
    #[error("expected exactly one of 'standard', 'complex', 'hint' or 'none'")]
    StrategyShape,
    /// A standard strategy without a column and no `defaultShardingColumn`.
    #[error("no shardingColumn, and the rule has no defaultShardingColumn")]
    MissingShardingColumn,
    /// An inline algorithm whose expression uses a variable other than the strategy's column.
    #[error(
        "algorithm '{algorithm}' uses variable '{variable}' but the sharding column is '{column}'"
    )]
    ColumnMismatch {
        /// The algorithm name.
        algorithm: String,
        /// The variable in its expression.
        variable: String,
        /// The strategy's sharding column.
        column: String,
    },
    /// A data node not written as `<data source>.<table>`.
    #[error("data node '{0}' is not of the form <data source>.<table>")]
    MalformedDataNode(String),
    /// The same data node listed twice.
    #[error("data node '{0}' is listed twice")]
    DuplicateDataNode(String),
    /// Data nodes that expand to nothing.
    #[error("'{0}' expands to no data nodes")]
    NoDataNodes(String),
    /// Two table names equal but for case.
    #[error("table '{0}' is configured twice (table names are case-insensitive)")]
    DuplicateTable(String),
    /// A table that is both sharded and broadcast.
    #[error("table '{0}' is both sharded and broadcast")]
    ShardedAndBroadcast(String),
}
