use keyshard_keygen::KeyGenError;

/// Why a statement could not be planned. Every variant is the client's to see: the message says
/// what is wrong with the statement (or its parameters), never how the router works inside.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RouteError {
    /// The statement does not parse.
    #[error("{0}")]
    Syntax(String),
    /// An operator chain too long to walk safely (see [`crate::MAX_OPERATOR_CHAIN`]).
    #[error(
        "statement too complex: more than {limit} operators chained in one expression; use IN \
         (…) for a long list of alternatives"
    )]
    TooComplex {
        /// The most operators one chain may hold.
        limit: usize,
    },
    /// Several statements (or none) where one was expected.
    #[error("expected exactly one statement, found {0}")]
    StatementCount(usize),
    /// Valid SQL the router does not handle (yet).
    #[error("not supported: {0}")]
    Unsupported(String),
    /// ShardingSphere's rule: rows copied by a SELECT cannot get generated keys.
    #[error(
        "INSERT INTO ... SELECT can not support applying key generator with absent generate key column"
    )]
    InsertSelectWithoutKey,
    /// A row whose value count differs from the column count.
    #[error("Column count doesn't match value count at row {row}")]
    ColumnCount {
        /// 1-based row number.
        row: usize,
    },
    /// An INSERT without a column list into a table whose columns are not known.
    #[error("cannot insert into '{table}' without a column list: its columns are not known")]
    UnknownColumns {
        /// The logic table.
        table: String,
    },
    /// Fewer parameters bound than the statement uses.
    #[error("the statement uses parameter {needed} but {given} were bound")]
    MissingParameter {
        /// 1-based number of the parameter that is missing.
        needed: usize,
        /// How many were bound.
        given: usize,
    },
    /// A row whose sharding value maps to no data node, or cannot be read.
    #[error("row {row}: cannot route by column '{column}': {reason}")]
    NoRoute {
        /// 1-based row number.
        row: usize,
        /// The sharding column.
        column: String,
        /// What went wrong with its value.
        reason: String,
    },
    /// A row that maps to several data nodes (its sharding column is missing).
    #[error("row {row}: insert must route to exactly one data node, but it matches {nodes}{hint}")]
    AmbiguousRoute {
        /// 1-based row number.
        row: usize,
        /// How many data nodes it matches.
        nodes: usize,
        /// Which sharding column the row lacks, if that is why.
        hint: String,
    },
    /// The key generator failed (for example, the clock moved back too far).
    #[error("key generation failed: {0}")]
    KeyGeneration(#[from] KeyGenError),
    /// A condition the router's own invariants rule out; reported rather than panicking.
    #[error("internal router error: {0}")]
    Internal(&'static str),
}

impl RouteError {
    /// [`RouteError::Internal`], for `ok_or_else`: an eager `ok_or(RouteError::Internal(…))`
    /// builds and drops an error on every success (the type has drop glue), which on the
    /// per-row and per-piece paths cost ~200 instructions per INSERT.
    pub(crate) fn internal(what: &'static str) -> impl FnOnce() -> RouteError {
        move || RouteError::Internal(what)
    }
}
