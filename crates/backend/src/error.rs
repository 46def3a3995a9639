use keyshard_coordination::CoordinationError;

use crate::MergeError;

/// Why the backend could not connect, load metadata or execute.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// A data source could not be reached or its connection options are invalid.
    #[error("data source '{data_source}': {message}")]
    Connect {
        /// The data source's configured name.
        data_source: String,
        /// What went wrong.
        message: String,
    },
    /// The database refused or failed a statement: its own error, attributed to the shard.
    #[error("data source '{data_source}': {message}")]
    Database {
        /// The data source's configured name.
        data_source: String,
        /// The database's SQLSTATE, when it reports one.
        sqlstate: Option<String>,
        /// MySQL's error number (1062 for a duplicate key), when the database is MySQL/MariaDB.
        mysql_errno: Option<u16>,
        /// The database's message.
        message: String,
    },
    /// A session may not keep (pin) one more connection of a data source.
    #[error("data source '{data_source}': {source}")]
    PinRefused {
        /// The data source's configured name.
        data_source: String,
        /// Why, and what to do.
        source: crate::reuse::PinRefused,
    },
    /// Pools were created outside a Tokio runtime, which sqlx needs for their upkeep.
    #[error("the backend must be created inside a Tokio runtime")]
    NoRuntime,
    /// A merge running apart from the runtime's thread did not finish.
    #[error("merging the shards' rows did not finish: the proxy is shutting down")]
    MergeInterrupted,
    /// The client stopped reading a result the proxy was passing on.
    #[error("the client stopped reading the result")]
    ClientGone,
    /// A PostgreSQL shard sent a row longer than `props.max-row-bytes`.
    #[error(
        "data source '{data_source}': a row of {len} bytes is longer than props.max-row-bytes \
         ({limit}) allows: read the value in parts (substring, lo_get) or raise the limit"
    )]
    RowTooLarge {
        /// The data source's configured name.
        data_source: String,
        /// The row's length.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// A read's rows that must be merged or answered whole outgrew `props`' limit.
    #[error(
        "this read's rows, which are merged in the proxy (ORDER BY, GROUP BY, LIMIT over several \
         nodes, RETURNING …), take more than props.result-memory-bytes ({0}) allows: narrow \
         it, read it in pages, or raise the limit"
    )]
    ResultLimit(u64),
    /// A plan names a data source the configuration does not have.
    #[error("no data source named '{0}'")]
    UnknownDataSource(String),
    /// A result column of a type the proxy cannot carry yet.
    #[error(
        "data source '{data_source}': column '{column}' has type {type_name}, which is not supported in results yet"
    )]
    UnsupportedType {
        /// The data source's configured name.
        data_source: String,
        /// The column.
        column: String,
        /// The database's type name.
        type_name: String,
    },
    /// The shards' results could not be merged into one.
    // Transparent: the merge's own message is the one clients have always seen, and a source
    // besides it would print it twice in an error chain.
    #[error(transparent)]
    Merge(#[from] MergeError),
    /// LOCAL: some data sources committed, then one failed to: the transaction is half
    /// committed.
    #[error(
        "transaction partially committed: committed on {}; then {failure}",
        committed.join(", ")
    )]
    PartialCommit {
        /// The data sources that committed.
        committed: Vec<String>,
        /// Why the first other one did not.
        failure: Box<BackendError>,
    },
    /// XA: recovery recorded an abort first (it took this instance for gone); rolled back
    /// everywhere.
    #[error("XA transaction {gtrid} was rolled back by recovery before it could commit")]
    XaAborted {
        /// The transaction id.
        gtrid: String,
    },
    /// XA: every branch prepared, but whether the commit decision was recorded is not known;
    /// recovery finishes the transaction one way or the other, the same on every data source.
    #[error(
        "XA transaction {gtrid}: outcome unknown (the commit decision could not be confirmed: \
         {message}); it will be committed or rolled back as a whole by recovery"
    )]
    XaOutcomeUnknown {
        /// The transaction id.
        gtrid: String,
        /// Why the decision could not be confirmed.
        message: String,
    },
    /// The connection failed while a statement ran with other sessions' rows (see
    /// `batching`): whether it was stored is not known.
    #[error("data source '{data_source}': outcome unknown: {message}")]
    OutcomeUnknown {
        /// The data source's configured name.
        data_source: String,
        /// What happened.
        message: String,
    },
    /// XA needs the worker-id lease to name its transactions.
    #[error(
        "XA transaction refused: this instance does not hold its worker-id lease (the \
         coordination repository is unreachable)"
    )]
    NoLease,
    /// The coordination repository failed, or did not answer in time.
    #[error(transparent)]
    Coordination(#[from] CoordinationError),
    /// A statement only PostgreSQL has, planned for a data source of another kind.
    #[error("data source '{data_source}' is not PostgreSQL, which {statement} needs")]
    NotPostgres {
        /// The data source's configured name.
        data_source: String,
        /// The statement, as a user names it.
        statement: &'static str,
    },
    /// A gathered read would gather more than `props` allow.
    #[error(
        "this read gathers more rows from the shards than props.{limit} ({value}) allows: \
         narrow it (a condition on the sharding column reads fewer nodes) or raise the limit"
    )]
    GatherLimit {
        /// The `props` key.
        limit: &'static str,
        /// Its value.
        value: u64,
    },
    /// A gathered read over data sources of different kinds.
    #[error(
        "data source '{data_source}' is not of the kind of '{gathering}', where the rows of a \
         read across shards are gathered"
    )]
    GatherKinds {
        /// The node's data source.
        data_source: String,
        /// The gathering data source.
        gathering: String,
    },
    /// A data source that cannot take part in XA.
    #[error("data source '{data_source}' cannot take part in XA transactions: {message}")]
    XaUnsupported {
        /// The data source's configured name.
        data_source: String,
        /// Why, and what to change.
        message: String,
    },
}

impl BackendError {
    /// Attributes a driver error to `data_source`, keeping the database's own codes.
    pub(crate) fn from_sqlx(data_source: &str, error: sqlx::Error) -> Self {
        let data_source = data_source.to_owned();
        match error {
            sqlx::Error::Database(db) => {
                let mysql_errno = db
                    .try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
                    .map(|e| e.number());
                BackendError::Database {
                    data_source,
                    sqlstate: db.code().map(|c| c.into_owned()),
                    mysql_errno,
                    message: db.message().to_owned(),
                }
            }
            sqlx::Error::Configuration(e) if e.is::<crate::cancel::Interrupted>() => {
                let codes = e
                    .downcast_ref::<crate::cancel::Interrupted>()
                    .map(crate::cancel::Interrupted::codes);
                let (mysql_errno, sqlstate, message) = codes.unwrap_or_default();
                BackendError::Database {
                    data_source,
                    sqlstate: Some(sqlstate.to_owned()),
                    mysql_errno,
                    message: message.to_owned(),
                }
            }
            sqlx::Error::Configuration(e)
                if e.is::<sqlx::postgres::MessageTooLarge>()
                    || e.is::<sqlx::mysql::MessageTooLarge>() =>
            {
                let (len, limit) = match e.downcast_ref::<sqlx::postgres::MessageTooLarge>() {
                    Some(e) => (e.len, e.limit),
                    None => e
                        .downcast_ref::<sqlx::mysql::MessageTooLarge>()
                        .map_or((0, 0), |e| (e.len, e.limit)),
                };
                BackendError::RowTooLarge {
                    data_source,
                    len,
                    limit,
                }
            }
            sqlx::Error::Configuration(e) if e.is::<crate::stream::Stopped>() => {
                match e.downcast_ref::<crate::stream::Stopped>() {
                    Some(crate::stream::Stopped::TooLarge(limit)) => {
                        BackendError::ResultLimit(*limit)
                    }
                    _ => BackendError::ClientGone,
                }
            }
            sqlx::Error::Configuration(e) if e.is::<crate::reuse::PinRefused>() => {
                match e.downcast::<crate::reuse::PinRefused>() {
                    Ok(source) => BackendError::PinRefused {
                        data_source,
                        source: *source,
                    },
                    Err(e) => BackendError::Connect {
                        data_source,
                        message: e.to_string(),
                    },
                }
            }
            sqlx::Error::Configuration(_)
            | sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Protocol(_) => BackendError::Connect {
                data_source,
                message: error.to_string(),
            },
            other => BackendError::Database {
                data_source,
                sqlstate: None,
                mysql_errno: None,
                message: other.to_string(),
            },
        }
    }

    /// The data source the error concerns, if any.
    pub fn data_source(&self) -> Option<&str> {
        match self {
            BackendError::Connect { data_source, .. }
            | BackendError::PinRefused { data_source, .. }
            | BackendError::Database { data_source, .. }
            | BackendError::UnsupportedType { data_source, .. }
            | BackendError::RowTooLarge { data_source, .. }
            | BackendError::XaUnsupported { data_source, .. }
            | BackendError::GatherKinds { data_source, .. }
            | BackendError::NotPostgres { data_source, .. }
            | BackendError::OutcomeUnknown { data_source, .. } => Some(data_source),
            BackendError::PartialCommit { failure, .. } => failure.data_source(),
            BackendError::UnknownDataSource(_)
            | BackendError::NoRuntime
            | BackendError::ClientGone
            | BackendError::ResultLimit(_)
            | BackendError::Merge(_)
            | BackendError::MergeInterrupted
            | BackendError::XaAborted { .. }
            | BackendError::XaOutcomeUnknown { .. }
            | BackendError::NoLease
            | BackendError::GatherLimit { .. }
            | BackendError::Coordination(_) => None,
        }
    }
}
