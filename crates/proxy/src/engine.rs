//! What every connection shares: the configuration, the router, the backend; and how a
//! statement is answered, whichever protocol it came in by.

use std::sync::atomic::{AtomicU32, Ordering};

use keyshard_backend::Backend;
use keyshard_config::Config;
use keyshard_keygen::Key;
use keyshard_router::{Dialect, Other, Plan, Prepared, PreparedInsert, RouteError, Router, Value};

use crate::admin;
use crate::error::{Error, ErrorKind};
use crate::reply::Reply;
use crate::session::{Session, Statement, StatementKind};

/// The proxy's shared state.
#[derive(Debug)]
pub struct Engine {
    config: Config,
    mysql: Router,
    postgres: Router,
    backend: Backend,
    logic_tables: Vec<String>,
    next_connection_id: AtomicU32,
}

impl Engine {
    /// Builds the router and the data source pools (inside a Tokio runtime) and loads the
    /// logic tables' metadata. A data source that is down is logged, not fatal: its
    /// statements fail until it is back.
    pub async fn start(config: Config) -> Result<Self, keyshard_backend::BackendError> {
        let backend = Backend::new(&config)?;
        if let Err(e) = backend.load_metadata(&config.sharding).await {
            tracing::warn!("table metadata not loaded: {e}");
        }
        let logic_tables = config
            .sharding
            .tables
            .values()
            .map(|t| t.logic_table.clone())
            .collect();
        Ok(Self {
            mysql: Router::new(&config.sharding, Dialect::MySql),
            postgres: Router::new(&config.sharding, Dialect::Postgres),
            config,
            backend,
            logic_tables,
            next_connection_id: AtomicU32::new(1),
        })
    }

    /// The configuration the proxy runs.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// A new connection id.
    pub fn connection_id(&self) -> u32 {
        self.next_connection_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The configured password of `user` (`root` and `root@%` alike), if the user exists.
    pub fn password(&self, user: &str) -> Option<String> {
        self.config
            .users
            .iter()
            .find(|u| u.name == user)
            .map(|u| u.password.clone())
    }

    /// Whether `database` is the logical database clients may use.
    pub fn is_database(&self, database: &str) -> bool {
        database.eq_ignore_ascii_case(&self.config.database_name)
    }

    /// Closes the data source pools.
    pub async fn close(&self) {
        self.backend.close().await;
    }

    /// Ends what `session` holds open, when its client leaves.
    pub async fn close_session(&self, session: &mut Session) {
        session.reset();
    }

    /// Answers one statement sent as text.
    pub async fn query(&self, session: &mut Session, sql: &str) -> Result<Reply, Error> {
        if session.dialect == Dialect::MySql
            && let Some(reply) =
                admin::answer(sql, session, &self.config.database_name, &self.logic_tables)
        {
            return reply;
        }
        if let Some(statement) = strip_keyword(sql, "preview") {
            return self.preview(statement, session.dialect).await;
        }
        match self.prepare_routed(sql, session.dialect).await? {
            Prepared::Insert(insert) => {
                self.insert(&insert, &[], &mut session.last_insert_id).await
            }
            Prepared::Ddl(ddl) => {
                self.backend.execute(&ddl.plan).await?;
                // The table's columns changed (or it appeared or went): read them again.
                if let Some(rule) = self.config.sharding.table(&ddl.logic_table)
                    && let Err(e) = self.backend.refresh_metadata(rule).await
                {
                    tracing::warn!("metadata of {} not refreshed: {e}", ddl.logic_table);
                }
                Ok(Reply::done())
            }
            Prepared::Query(_) | Prepared::Direct(_) => {
                Err(Error::unsupported("this statement yet"))
            }
            Prepared::Other(other) => Err(not_supported(other)),
        }
    }

    /// Prepares a statement: an INSERT into a sharded table is parsed once; anything else runs
    /// as text at each execution.
    pub async fn prepare(&self, sql: &str, dialect: Dialect) -> Result<Statement, Error> {
        Ok(match self.prepare_routed(sql, dialect).await {
            Ok(Prepared::Insert(insert)) => Statement {
                param_count: insert.param_count(),
                kind: StatementKind::Insert(Box::new(insert)),
            },
            // A statement the parser refuses may still be a session statement, answered from
            // its text at execution; a real syntax error is reported then.
            Ok(_)
            | Err(Error {
                kind: ErrorKind::Syntax,
                ..
            }) => Statement {
                param_count: 0,
                kind: StatementKind::Text(sql.to_owned()),
            },
            Err(e) => return Err(e),
        })
    }

    /// Executes a prepared statement with `params`.
    pub async fn execute(
        &self,
        session: &mut Session,
        statement: &Statement,
        params: &[Value],
    ) -> Result<Reply, Error> {
        match &statement.kind {
            StatementKind::Insert(insert) => {
                self.insert(insert, params, &mut session.last_insert_id)
                    .await
            }
            StatementKind::Text(sql) => self.query(session, sql).await,
        }
    }

    /// Executes a prepared INSERT with `params`; when it generated keys, its first key becomes
    /// the session's `last_insert_id`.
    async fn insert(
        &self,
        insert: &PreparedInsert,
        params: &[Value],
        last_insert_id: &mut u64,
    ) -> Result<Reply, Error> {
        let plan = insert.bind(params)?;
        let outcome = self.backend.execute(&plan).await?;
        let first_key = first_key(&plan);
        if let Some(key) = first_key {
            *last_insert_id = key;
        }
        Ok(if outcome.columns.is_empty() {
            Reply::Ok {
                affected_rows: outcome.affected_rows,
                last_insert_id: first_key.unwrap_or(0),
            }
        } else {
            Reply::Rows {
                columns: outcome.columns,
                rows: outcome.rows,
            }
        })
    }

    /// Routes `sql`, loading a table's columns first when a column-less INSERT needs them.
    async fn prepare_routed(&self, sql: &str, dialect: Dialect) -> Result<Prepared, Error> {
        let router = match dialect {
            Dialect::MySql => &self.mysql,
            Dialect::Postgres => &self.postgres,
        };
        match router.prepare(sql, self.backend.metadata()) {
            Err(RouteError::UnknownColumns { table }) => {
                if let Some(rule) = self.config.sharding.table(&table) {
                    self.backend.refresh_metadata(rule).await?;
                }
                Ok(router.prepare(sql, self.backend.metadata())?)
            }
            other => Ok(other?),
        }
    }

    /// ShardingSphere's `PREVIEW`: where a statement would go and as what, without running it.
    async fn preview(&self, sql: &str, dialect: Dialect) -> Result<Reply, Error> {
        let plan: Plan = match self.prepare_routed(sql, dialect).await? {
            Prepared::Insert(insert) => insert.bind(&[])?,
            Prepared::Ddl(ddl) => ddl.plan,
            Prepared::Query(query) => query.bind(&[])?,
            Prepared::Direct(direct) => direct.bind(&[]),
            Prepared::Other(other) => return Err(not_supported(other)),
        };
        let rows = plan
            .units
            .into_iter()
            .map(|u| vec![Value::Text(u.data_source), Value::Text(u.sql)])
            .collect();
        Ok(Reply::text_rows(&["data_source_name", "actual_sql"], rows))
    }
}

fn first_key(plan: &Plan) -> Option<u64> {
    match plan.generated_keys.first()? {
        Key::Int(v) => u64::try_from(*v).ok(),
        Key::Text(_) => None,
    }
}

fn not_supported(other: Other) -> Error {
    match other {
        Other::NotRouted => Error::unsupported("this kind of statement"),
        Other::UnshardedTable(table) => {
            Error::unsupported(format!("tables without a sharding rule ('{table}') yet"))
        }
    }
}

/// `rest` when `sql` starts with `keyword` and white space, case-insensitively.
fn strip_keyword<'a>(sql: &'a str, keyword: &str) -> Option<&'a str> {
    let sql = sql.trim_start();
    let head = sql.get(..keyword.len())?;
    let rest = &sql[keyword.len()..];
    (head.eq_ignore_ascii_case(keyword) && rest.starts_with(char::is_whitespace))
        .then(|| rest.trim())
}
