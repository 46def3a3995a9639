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
    /// Pools were created outside a Tokio runtime, which sqlx needs for their upkeep.
    #[error("the backend must be created inside a Tokio runtime")]
    NoRuntime,
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
    #[error("{0}")]
    Merge(String),
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
            | BackendError::Database { data_source, .. }
            | BackendError::UnsupportedType { data_source, .. } => Some(data_source),
            BackendError::UnknownDataSource(_)
            | BackendError::NoRuntime
            | BackendError::Merge(_) => None,
        }
    }
}
