//! What every connection shares: the configuration, the routers, the backend; and how a
//! statement is answered, whichever protocol it came in by.

use std::sync::Arc;
use std::time::Instant;

use keyshard_backend::{Backend, Characteristics, Outcome};
use keyshard_config::{Config, TransactionType};
use keyshard_coordination::Repository;
use keyshard_keygen::Key;
use keyshard_router::{
    Plan, Router, SessionValues, Shape, SingleTables, substitute_session_values,
};
use keyshard_types::{Dialect, Value};

use crate::distsql::{self, DistSql};
use crate::error::Error;
use crate::identity::Identity;
use crate::instance::Instance;
use crate::intent::Intent;
use crate::memory::{self, Reserved};
use crate::metrics::{CountedAs, Metrics};
use crate::reflection;
use crate::reply::Reply;
use crate::routines::{self, Routines};
use crate::session::{Effect, Session, Statement, StatementKind};
use crate::shapes::{Known, Shapes};

mod copy_in;
mod copy_out;
mod explain;
mod insert_select;
mod logical;
mod pinned;
mod planning;
mod prepared;
mod session_sql;
mod settings;
mod shaped;
mod status;
mod stopping;
mod table_locks;

pub(crate) use settings::{mysql_startup_settings, startup_parameters, startup_settings};
mod transactions;

/// The proxy's shared state.
#[derive(Debug)]
pub struct Engine {
    config: Config,
    mysql: Router,
    pub(crate) postgres: Router,
    backend: Backend,
    shapes: Shapes,
    coordination: Option<Arc<dyn Repository>>,
    /// What this engine shares with the other logical databases of the instance.
    instance: Arc<Instance>,
    identity: Arc<Identity>,
    /// The functions and procedures the shards define: calling one pins a session.
    routines: Routines,
    /// When the proxy started serving, for its uptime.
    started: Instant,
    /// `!SINGLE`'s tables and where they were found, shared with the routers.
    single_tables: Arc<SingleTables>,
}

impl Engine {
    /// Builds the routers and the data source pools (inside a Tokio runtime) and loads the
    /// logic tables' metadata. A data source that is down is logged, not fatal: its
    /// statements fail until it is back.
    pub(crate) async fn start(
        config: Config,
        coordination: Option<Arc<dyn Repository>>,
        instance: Arc<Instance>,
    ) -> Result<Self, keyshard_backend::BackendError> {
        let mut backend = Backend::new(&config)?;
        crate::xa::enable(&mut backend, &config, coordination.as_ref()).await?;
        if let Err(e) = backend.load_metadata(&config.sharding).await {
            tracing::warn!("table metadata not loaded: {e}");
        }
        let single = Arc::new(SingleTables::new(
            crate::single_tables::discover(&backend, &config).await.0,
        ));
        let router = async |dialect| {
            let router = Router::new(&config.sharding, dialect)
                .with_data_sources(
                    config.data_sources.keys().cloned().collect(),
                    config.broadcast_tables.clone(),
                )
                .with_single_tables(Arc::clone(&single));
            reflection::with_catalog(router, &backend, &config).await
        };
        let identity = Arc::new(Identity::of(&backend, &config).await);
        let routines = Routines::default();
        routines.load(&backend, &config).await;
        Ok(Self {
            mysql: router(Dialect::MySql).await,
            postgres: router(Dialect::Postgres).await,
            shapes: Shapes::new(config.props.shape_cache),
            config,
            backend,
            coordination,
            instance,
            identity,
            routines,
            single_tables: single,
            started: Instant::now(),
        })
    }

    /// MySQL's COM_STATISTICS line (the mariadb client's `\s`), from what the proxy counts:
    /// its uptime, sessions and statements.
    pub(crate) fn statistics(&self) -> String {
        let uptime = self.started.elapsed().as_secs();
        let questions = self.instance.metrics.statements_answered();
        let per_second = questions as f64 / uptime.max(1) as f64;
        format!(
            "Uptime: {uptime}  Threads: {}  Questions: {questions}  Slow queries: 0  Opens: 0  \
             Open tables: 0  Queries per second avg: {per_second:.3}",
            self.instance.sessions.count()
        )
    }

    /// Lists `session` among the proxy's sessions until it ends; `host` is its client's
    /// address, `secret` its PostgreSQL cancel key's.
    pub(crate) fn list(&self, session: &mut Session, host: &str, secret: Option<i32>) {
        session.listed = Some(self.instance.sessions.enter(
            session.connection_id,
            (&session.user, host),
            session.database.as_deref(),
            Arc::clone(&session.shard),
            secret,
        ));
    }

    /// The versions the proxy reports, its shards'.
    pub(crate) fn identity(&self) -> &Arc<Identity> {
        &self.identity
    }

    /// The configuration the proxy runs.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Completes when `session` has been idle inside a transaction for the configured time;
    /// never when it is not in a transaction or no limit is configured.
    pub async fn idle_in_transaction(&self, session: &Session) {
        match self.config.props.idle_in_transaction_timeout {
            Some(limit) if session.in_transaction() => tokio::time::sleep(limit).await,
            _ => std::future::pending().await,
        }
    }

    /// Failed logins, shared by both frontends.
    pub(crate) fn logins(&self) -> &crate::throttle::LoginThrottle {
        &self.instance.logins
    }

    /// Each of its caches (the statement shapes per frontend, the reads' result columns), as
    /// it is now.
    pub(crate) fn caches(&self) -> Vec<(&'static str, keyshard_backend::cache::CacheStats)> {
        let mut caches = self.shapes.stats().to_vec();
        caches.push(("columns", self.backend.column_cache()));
        caches
    }

    /// The backend (pools and metadata).
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The account of what a new session keeps between its statements.
    pub(crate) fn session_memory(&self) -> Arc<crate::memory::SessionMemory> {
        self.instance.memory.session()
    }

    /// A new connection id.
    pub fn connection_id(&self) -> u32 {
        self.instance.connection_id()
    }

    /// The configured password of `user` (`root` and `root@%` alike), if the user exists.
    pub fn password(&self, user: &str) -> Option<String> {
        self.config
            .users
            .iter()
            .find(|u| u.name == user)
            .map(|u| u.password.clone())
    }

    /// Closes the data source pools.
    pub async fn close(&self) {
        self.backend.close().await;
    }

    /// Finishes prepared XA branches left by instances that are gone, until `stop` turns
    /// true (at once when transactions are not XA).
    pub async fn keep_recovering(&self, stop: tokio::sync::watch::Receiver<bool>) {
        crate::xa::keep_recovering(&self.backend, &self.config, stop).await;
    }

    /// Reads the shards' routines again every 30 s until `stop` turns true: an application's
    /// migrations create functions beside the proxy, and a call of one must pin its session.
    pub async fn keep_routines_fresh(&self, mut stop: tokio::sync::watch::Receiver<bool>) {
        loop {
            tokio::select! {
                () = tokio::time::sleep(routines::REFRESH) => {
                    self.routines.load(&self.backend, &self.config).await;
                }
                changed = stop.changed() => if changed.is_err() || *stop.borrow() { return },
            }
        }
    }

    /// Ends what `session` holds open when its client leaves.
    pub async fn close_session(&self, session: &mut Session) {
        // A cancel that ended the session (KILL CONNECTION) stops no rollback.
        session.shard.statement_started();
        self.roll_back_open(session).await;
        tracing::debug!(
            "{:?} connection {} closed",
            session.dialect,
            session.connection_id
        );
    }

    /// Rolls back an open transaction on every shard it touched.
    async fn roll_back_open(&self, session: &mut Session) {
        session.failed = false;
        if let Some(transaction) = session.transaction.take()
            && let Err(e) = self.backend.rollback(transaction).await
        {
            tracing::warn!("connection {}: rollback failed: {e}", session.connection_id);
        }
    }

    /// Returns the session to its state at connect (COM_RESET_CONNECTION, `DISCARD ALL`).
    pub async fn reset_session(&self, session: &mut Session) {
        self.roll_back_open(session).await;
        session.autocommit = true;
        session.last_insert_id = 0;
        session.last_generated = None;
        session.transaction_type = None;
        session.characteristics = Characteristics::default();
        session.next_characteristics = Characteristics::default();
        session.variables.clear();
        session.sql_statements.clear();
        session.effects.push(Effect::Reset);
        // The shard connections it kept are closed with all they held, and the ones it takes
        // next are brought back to the settings it began with.
        session.held.clear();
        session.sequences_advanced.clear();
        session.table_locks_on.clear();
        session.listener = None;
        session.listening_before = None;
        session.shard.unpin();
        self.reset_settings(session).await;
    }

    /// Answers one statement sent as text, within the memory budget.
    pub async fn query(&self, session: &mut Session, sql: &str) -> Result<Reply, Error> {
        let started = Instant::now();
        if let Some(listed) = &session.listed {
            listed.running(sql, session.database.as_deref());
        }
        // A load waits for its data only until the statement that named it is answered.
        session.copy_in = None;
        session.copy_out = None;
        let reply = async {
            session.refuse_when_failed(Some(sql))?;
            // A long INSERT may be a bulk load that binds by its shape: it reserves in steps.
            let (_held, reserved) = if sql.len() > memory::SHORT
                && crate::words::starts_with_any(sql, &["insert", "replace"])
            {
                let scan = memory::scan_estimate(sql);
                (
                    self.instance.memory.reserve_beside(0, scan).await?,
                    Reserved::Scan(scan),
                )
            } else {
                (self.instance.memory.reserve(sql, 0).await?, Reserved::Whole)
            };
            self.query_text(session, sql, reserved).await
        }
        .await;
        self.finished(session, CountedAs::of_text(sql), started, &reply);
        reply
    }

    /// After a statement from a client: a failure may fail its transaction, and both count.
    fn finished(
        &self,
        session: &mut Session,
        counted: CountedAs,
        started: Instant,
        reply: &Result<Reply, Error>,
    ) {
        // Answered: a tap its read did not take goes, which ends the frontend's receiving.
        session.stream = None;
        if let Some(listed) = &session.listed {
            listed.idle();
        }
        session.row_count = match reply {
            Ok(Reply::Ok { affected_rows, .. }) => i64::try_from(*affected_rows).unwrap_or(-1),
            Ok(Reply::Rows { .. } | Reply::Streamed { .. }) | Err(_) => -1,
        };
        let calculated = session.calculated_found_rows.take();
        if let Ok(reply) = reply
            && let Some(rows) = reply.rows_returned()
        {
            session.found_rows = calculated.unwrap_or(rows);
        }
        let code = match reply {
            Ok(_) => None,
            Err(e) => {
                session.statement_failed();
                Some(match session.dialect {
                    Dialect::MySql => e.mysql_code().1,
                    Dialect::Postgres => e.pg_sqlstate(),
                })
            }
        };
        let took = started.elapsed();
        let counts = &mut session.statements;
        self.instance
            .metrics
            .statement(session.dialect, counted, took, code, counts);
    }

    /// What the proxy has counted.
    pub(crate) fn metrics(&self) -> &Metrics {
        &self.instance.metrics
    }

    /// Answers `sql`, for which `reserved` is held of the memory budget.
    pub(super) async fn answer_text(
        &self,
        session: &mut Session,
        sql: &str,
        reserved: Reserved,
    ) -> Result<Reply, Error> {
        let dialect = session.dialect;
        let shape = Shape::of(sql, dialect);
        let metadata_version = self.backend.metadata().version();
        let known = shape
            .as_ref()
            .and_then(|shape| self.shapes.get(dialect, shape, metadata_version));
        // Only routed statements are learned (see `shapes`): one of a known shape is routed.
        if let (Some(shape), Some(known)) = (&shape, &known) {
            match known {
                Known::Insert(shaped) => {
                    let _binding = self
                        .instance
                        .memory
                        .reserve_step(reserved, |_| shaped.insert.binding_bytes(sql, shape))
                        .await?;
                    return self.insert_by_shape(session, sql, shape, shaped).await;
                }
                Known::Query(query) if reserved == Reserved::Whole => {
                    let plan = query.bind_shape(sql, shape)?;
                    return self.reply_or_gather(session, plan, query, sql, &[]).await;
                }
                Known::Query(_) | Known::Parse | Known::Seen => {}
            }
        }
        // A multi-row INSERT whose rows fold into one is learned from its first row at once:
        // one row parsed instead of every row's tokens and tree (see `shapes`).
        if let (Some(shape), None | Some(Known::Seen)) = (&shape, &known)
            && shape.folded_rows().is_some()
            && let Some(shaped) = self
                .learn_from_first_row(session, sql, shape, metadata_version, reserved)
                .await?
        {
            let _binding = self
                .instance
                .memory
                .reserve_step(reserved, |_| shaped.insert.binding_bytes(sql, shape))
                .await?;
            return self.insert_by_shape(session, sql, shape, &shaped).await;
        }
        // Parsed whole from here on: a statement that reserved only its shape's scan holds its
        // whole estimate now, as any other statement does.
        let _parsed = self
            .instance
            .memory
            .reserve_step(reserved, |held| memory::estimate(sql).saturating_sub(held))
            .await?;
        let routed = match Intent::of(sql, dialect) {
            Intent::Control(control) => return self.control(session, control).await,
            Intent::DistSql(statement) => return self.distsql(session, statement).await,
            Intent::SqlPrepare(command) => return self.sql_prepare(session, command).await,
            Intent::SetUserVariables(assignments) => {
                return self.set_user_variables(session, &assignments).await;
            }
            Intent::ProcessList { full } => return Ok(self.instance.sessions.processlist(full)),
            Intent::Kill(kill) => {
                let kill = kill?;
                return kill.answer(self.kill(kill.id, kill.end).await);
            }
            Intent::Status { global, like } => {
                let session = (!global).then_some(&*session);
                return Ok(self.status(like.as_deref(), session));
            }
            // The first that fails ends them; those before it hold (MySQL makes none).
            Intent::SetEach(assignments) => {
                for assignment in assignments {
                    let set = format!("SET {assignment}");
                    Box::pin(self.answer_text(session, &set, Reserved::Whole)).await?;
                }
                return Ok(Reply::done());
            }
            Intent::Settings(set) => {
                // mysqldump's `SET SQL_MODE=@OLD_SQL_MODE`: the value is the variable's.
                if dialect == Dialect::MySql
                    && let Some(text) = self.with_user_variables(session, sql)?
                {
                    return Box::pin(self.answer_text(session, &text, Reserved::Whole)).await;
                }
                return self.set_settings(session, sql, set?).await;
            }
            Intent::Session(statement) => {
                if statement.resets_session() {
                    self.reset_session(session).await;
                }
                let current = &self.config.database_name;
                let user = session.user.clone();
                let permitted = |database: &str| self.may_use(&user, database);
                return statement.answer(session, self.databases(), &permitted, current);
            }
            Intent::Reflection(request) => {
                if let Some(other) = request.database().and_then(|d| self.other_database(d)) {
                    return Box::pin(other.answer_text(session, sql, Reserved::Whole)).await;
                }
                let shards = reflection::Shards {
                    backend: &self.backend,
                    config: &self.config,
                };
                let (database, user) = (&self.config.database_name, &session.user);
                return reflection::answer(&shards, request, database, user).await;
            }
            // The frontend streams the data in, then calls `copy_in`.
            Intent::CopyIn(copy) => {
                session.copy_in = Some(copy?);
                return Ok(Reply::done());
            }
            Intent::Listen(command) => return self.listen(session, command).await,
            Intent::Preview(statement) => Some(statement),
            Intent::Routed => None,
        };
        // Before the variables it names are written in as values.
        if dialect == Dialect::MySql
            && routed.is_none()
            && memchr::memchr(b'@', sql.as_bytes()).is_some()
            && let Some(into) = keyshard_router::select_into_variables(sql)?
        {
            return self.select_into(session, into).await;
        }
        let substituted = match session.dialect {
            Dialect::MySql => self.with_user_variables(session, routed.unwrap_or(sql))?,
            Dialect::Postgres => None,
        };
        let text = substituted.as_deref().unwrap_or(routed.unwrap_or(sql));
        if routed.is_some() {
            return self.preview(text, dialect).await;
        }
        if dialect == Dialect::MySql
            && crate::words::find_ignore_ascii_case(text.as_bytes(), b"sql_calc_found_rows")
                .next()
                .is_some()
            && let Some(calc) = keyshard_router::calc_found_rows(text)?
        {
            return self.calc_found_rows(session, calc).await;
        }
        let planned = self.plan(text, dialect).await?;
        if let (Some(shape), None | Some(Known::Seen), None) = (&shape, &known, &substituted)
            && shape.folded_rows().is_none()
        {
            self.learn_shape(dialect, shape, &planned, metadata_version, false);
        }
        self.execute_planned(session, &planned, &[]).await
    }

    /// MySQL: `sql` with the session's user variables, `LAST_INSERT_ID()` and `ROW_COUNT()`
    /// written in as literals, when it names any.
    fn with_user_variables(&self, session: &Session, sql: &str) -> Result<Option<String>, Error> {
        let variables = &session.variables;
        let values = SessionValues {
            last_insert_id: session.last_insert_id,
            row_count: session.row_count,
            found_rows: session.found_rows,
            variable: &|name| {
                variables
                    .get(name)
                    .unwrap_or(&Value::Null)
                    .to_literal(Dialect::MySql)
            },
        };
        Ok(substitute_session_values(sql, &values)?)
    }

    /// Runs `plan` and answers with its rows, or with the rows it changed and its first key.
    async fn reply(
        &self,
        session: &mut Session,
        mut plan: Plan,
        reads: bool,
    ) -> Result<Reply, Error> {
        if session.binary_results {
            for unit in &mut plan.units {
                unit.binary_results = true;
            }
        }
        table_locks::refuse_unlocked(session, &plan)?;
        if let Some(guard) = &plan.guard
            && !self.run(session, &guard.reads).await?.rows.is_empty()
        {
            return Err(guard.refusal().into());
        }
        let mut outcome = match reads {
            true => {
                // `reading` uses it only when the plan streams.
                let tap = session.stream.take();
                // Pinned in place: moved into the read's scope, it would be copied.
                let run = std::pin::pin!(self.run(session, &plan));
                self.backend.reading(&plan, tap, run).await?
            }
            false => self.run(session, &plan).await?,
        };
        if let Some(rows) = outcome.streamed {
            return Ok(Reply::Streamed { rows });
        }
        if reads && outcome.columns.is_empty() {
            // No rows, so no columns came with them; the client still needs the result's shape.
            outcome.columns = self.backend.result_columns(&plan).await?.0;
        }
        let first_key = first_key(&plan);
        if let Some(key) = first_key {
            session.last_insert_id = key;
        }
        if let Some(Key::Int(last)) = plan.generated_keys.last() {
            session.last_generated = Some(*last);
        }
        Ok(if reads || !outcome.columns.is_empty() {
            Reply::Rows {
                columns: outcome.columns,
                rows: outcome.rows,
            }
        } else {
            Reply::Ok {
                affected_rows: outcome.affected_rows,
                last_insert_id: first_key.unwrap_or(0),
            }
        })
    }

    /// Whether `session` chose LOCAL where the configuration commits in two phases.
    fn local(&self, session: &Session) -> bool {
        session.transaction_type == Some(TransactionType::Local)
            && self.config.transaction_type == TransactionType::Xa
    }

    /// Runs `plan` in the session's transaction, opening one when autocommit is off.
    async fn run(&self, session: &mut Session, plan: &Plan) -> Result<Outcome, Error> {
        if let Some(outcome) = self.run_keeping_table_locks(session, plan).await {
            return outcome;
        }
        if session.transaction.is_none() && !session.autocommit {
            session.transaction = Some(
                table_locks::implicit_transaction(session)
                    .unwrap_or_else(|| self.new_transaction(session, Characteristics::default())),
            );
        }
        if let Some(gather) = &plan.gather {
            let binary = session.binary_results;
            let gathered = self
                .backend
                .gather(session.transaction.as_mut(), gather, binary, false);
            return Ok(gathered.await?.0);
        }
        let local = self.local(session);
        Ok(match &mut session.transaction {
            Some(transaction) => self.backend.execute_in(transaction, plan).await?,
            None if local => self.backend.execute_local(plan).await?,
            None => self.backend.execute(plan).await?,
        })
    }

    /// The DistSQL statements the proxy answers. The repository gets as long as any of its
    /// calls may take (`operationTimeoutMilliseconds`).
    async fn distsql(&self, session: &mut Session, statement: DistSql) -> Result<Reply, Error> {
        if let DistSql::Rules(_, Some(database)) = &statement
            && let Some(other) = self.other_database(database)
        {
            return Box::pin(other.distsql(session, statement)).await;
        }
        if let DistSql::RefreshMetadata = statement {
            if let Err(e) = self.backend.load_metadata(&self.config.sharding).await {
                tracing::warn!("table metadata not refreshed: {e}");
            }
            self.refresh_single_tables().await;
            return Ok(Reply::done());
        }
        distsql::answer(
            statement,
            session,
            &self.config,
            &self.single_tables.listed(),
            &self.backend.replica_status(),
            self.coordination.as_ref(),
            self.config.mode.timing.operation_timeout,
        )
        .await
    }
}

/// MySQL's refusal of LOAD DATA in a prepared statement.
fn load_prepared() -> Error {
    Error::unsupported("LOAD DATA in a prepared statement (send it as text)")
}

fn text(sql: &str) -> Statement {
    Statement::new(StatementKind::Text(sql.to_owned()))
}

fn first_key(plan: &Plan) -> Option<u64> {
    match plan.generated_keys.first()? {
        Key::Int(v) => u64::try_from(*v).ok(),
        Key::Text(_) => None,
    }
}

/// Whether `sql` has placeholders (`?`, `$1`) outside strings and comments.
fn takes_parameters(sql: &str, dialect: Dialect) -> bool {
    use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect};
    use sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = match dialect {
        Dialect::MySql => Tokenizer::new(&MySqlDialect {}, sql).tokenize(),
        Dialect::Postgres => Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize(),
    };
    tokens.is_ok_and(|tokens| tokens.iter().any(|t| matches!(t, Token::Placeholder(_))))
}

/// Session values for finding whether a statement names any.
const NO_VALUES: SessionValues<'static> = SessionValues {
    last_insert_id: 0,
    row_count: 0,
    found_rows: 0,
    variable: &|_| String::new(),
};
