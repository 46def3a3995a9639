//! Statements prepared once and executed many times (PostgreSQL's Parse/Bind, MySQL's
//! COM_STMT_PREPARE/EXECUTE, SQL `PREPARE`): parsed and planned at prepare, bound and run at
//! each execution.

use std::time::{Duration, Instant};

use keyshard_keygen::KeyGenError;
use keyshard_router::{
    Leading, Plan, PreparedInsert, RouteError, substitute_session_values, with_sessions,
};
use keyshard_types::{Dialect, Value};
use sqlparser::ast;

use super::session_values::NO_VALUES;
use super::{Engine, pinned};
use crate::error::{Error, ErrorKind};
use crate::intent::Intent;
use crate::memory::Reserved;
use crate::metrics::CountedAs;
use crate::pinning;
use crate::reply::Reply;
use crate::session::{Planned, Session, Statement, StatementKind};
use crate::sql::Sql;

impl Engine {
    /// Prepares a statement: parsed and planned once, bound at each execution. A statement the
    /// router does not plan runs as text at each execution. The syntax tree of a planned one
    /// comes back too, for describing it without parsing it again.
    pub async fn prepare(
        &self,
        statement: Sql<'_>,
        dialect: Dialect,
    ) -> Result<(Statement, Option<ast::Statement>), Error> {
        let (sql, leading) = (statement.text, statement.leading);
        let _held = self.instance.memory.reserve(sql, 0).await?;
        match Intent::of(statement, dialect) {
            // Answered by the session at each execution when it generated a key last, or
            // listens.
            Intent::Routed
                if dialect == Dialect::Postgres
                    && (crate::pinning::is_bare_lastval(sql)
                        || crate::notify::is_bare_listening_channels(sql)) =>
            {
                return Ok((text(statement), None));
            }
            Intent::Routed => {}
            // MySQL asks for the file only for a LOAD DATA sent as text.
            Intent::CopyIn(_) if dialect == Dialect::MySql => return Err(load_prepared()),
            // Answered from the session at each execution: nothing to plan.
            _ => return Ok((text(statement), None)),
        }
        // Its value is the session's at each execution, which a plan made once cannot carry.
        if dialect == Dialect::MySql && substitute_session_values(sql, &NO_VALUES)?.is_some() {
            return Err(Error::unsupported(
                "LAST_INSERT_ID(), ROW_COUNT(), FOUND_ROWS() or a user variable inside a \
                 prepared statement (send the statement as text, or bind the value as a \
                 parameter)",
            ));
        }
        // Its count is a second statement the proxy runs (see `calc_found_rows`).
        if dialect == Dialect::MySql && keyshard_router::calc_found_rows(sql)?.is_some() {
            return Err(Error::unsupported(
                "SQL_CALC_FOUND_ROWS in a prepared statement (send the statement as text)",
            ));
        }
        match self.plan_with_tree(sql, dialect).await {
            // Its data is the frontend's to pass on at each execution, as COPY FROM's.
            Ok((Planned::CopyOut(_), _)) => Ok((text(statement), None)),
            Ok((planned, tree)) => {
                let config = &self.config;
                let routines = self.routines.learn(&self.backend, config, statement).await;
                let mut prepared = Statement::new(StatementKind::Planned(planned), leading);
                prepared.effect = pinning::effect(statement, dialect, &routines.routines);
                Ok((prepared, Some(tree)))
            }
            // One that takes parameters cannot run as text, without them: the client hears
            // of its syntax error now, not as a parameter count mismatch at execution.
            Err(e) if e.kind == ErrorKind::Syntax && takes_parameters(sql, dialect) => Err(e),
            // A statement the parser refuses may still be a session statement, answered from
            // its text at execution; a real syntax error is reported then.
            Err(Error {
                kind: ErrorKind::Syntax | ErrorKind::Unsupported,
                ..
            }) => Ok((text(statement), None)),
            Err(e) => Err(e),
        }
    }

    /// The result columns (none for a write) and parameter types of a prepared statement, as
    /// the first shard it goes to describes its SQL, without running it; `None` when there is
    /// nothing to ask or the shard cannot say. The parameters only pick the shard: NULLs, or
    /// zeros where NULL routes nowhere (`user_id = ?` on a sharding column).
    pub async fn shard_description(
        &self,
        statement: &Statement,
    ) -> Option<(Vec<keyshard_backend::Column>, Vec<u32>)> {
        for filler in [Value::Null, Value::Int(0)] {
            let params = vec![filler; statement.param_count];
            if let Some(description) = self.shard_description_with(statement, &params).await {
                return Some(description);
            }
        }
        None
    }

    /// [`Engine::shard_description`] of the statement bound with `params`.
    pub async fn shard_description_with(
        &self,
        statement: &Statement,
        params: &[Value],
    ) -> Option<(Vec<keyshard_backend::Column>, Vec<u32>)> {
        let plan = match &statement.kind {
            StatementKind::Planned(Planned::Query(query)) => query.bind(params).ok()?,
            StatementKind::Planned(Planned::Direct(direct)) => direct.bind(params),
            _ => return None,
        };
        self.backend.result_columns(&plan).await.ok()
    }

    /// Executes a prepared statement with `params`, within the memory budget.
    pub async fn execute(
        &self,
        session: &mut Session,
        statement: &Statement,
        params: &[Value],
    ) -> Result<Reply, Error> {
        let started = Instant::now();
        session.copy_in = None;
        session.copy_out = None;
        let text = statement.text();
        if let Some(listed) = &session.listed {
            let sql = match &statement.kind {
                StatementKind::Text(sql) => sql.as_str(),
                StatementKind::Planned(Planned::Query(query)) => query.sql(),
                StatementKind::Planned(Planned::Direct(direct)) => direct.sql(),
                StatementKind::Planned(_) => "(a prepared statement)",
            };
            listed.running(sql, session.database.as_deref());
        }
        let reply = async {
            session.refuse_when_failed(text)?;
            let params_size = params.iter().map(Value::size).sum();
            let _held = self
                .instance
                .memory
                .reserve(text.map_or("", |sql| sql.text), params_size)
                .await?;
            let leading = statement.leading;
            match &statement.kind {
                StatementKind::Text(text) => {
                    let sql = Sql { text, leading };
                    self.query_text(session, sql, Reserved::Whole).await
                }
                StatementKind::Planned(planned) => match &statement.effect {
                    None => {
                        self.execute_planned(session, planned, leading, params)
                            .await
                    }
                    Some(effect) => {
                        let pinned_now = pinned::holding(session, effect)?;
                        let reply = self
                            .execute_planned(session, planned, leading, params)
                            .await;
                        pinned::held(session, effect.clone(), pinned_now, reply.is_ok());
                        reply
                    }
                },
            }
        }
        .await;
        self.finished(session, CountedAs::of(statement.leading), started, &reply);
        reply
    }

    pub(super) async fn execute_planned(
        &self,
        session: &mut Session,
        planned: &Planned,
        leading: Leading,
        params: &[Value],
    ) -> Result<Reply, Error> {
        let (plan, reads) = match planned {
            Planned::Insert(insert) => (
                self.bind_insert(insert, || insert.bind(params)).await?,
                false,
            ),
            Planned::InsertSelect(select) => {
                return self.insert_select(session, select, params).await;
            }
            Planned::Query(query) => {
                let plan = query.bind(params)?;
                return self
                    .reply_or_gather(session, plan, query, query.sql(), params)
                    .await;
            }
            // A table may have come or gone where `!SINGLE` looks for them.
            Planned::Direct(direct) if !direct.is_read() && leading.may_change_tables() => {
                let reply = self.reply(session, direct.bind(params), false).await;
                if reply.is_ok() {
                    self.refresh_single_tables().await;
                }
                return reply;
            }
            Planned::Direct(direct) => {
                let mut plan = direct.bind(params);
                if direct.lists_sessions() {
                    let sessions = self.instance.sessions.json(session.dialect);
                    for unit in &mut plan.units {
                        unit.sql = with_sessions(&unit.sql, &sessions, session.dialect);
                    }
                }
                (plan, direct.is_read())
            }
            Planned::Locks(locks) => return self.table_locks(session, locks).await,
            Planned::Explain(explain) => return self.explain(session, explain).await,
            // The frontend passes the data on, with `copy_out`.
            Planned::CopyOut(copy) => {
                session.copy_out = Some((**copy).clone());
                return Ok(Reply::done());
            }
            Planned::Ddl(ddl) => {
                let outcome = match session.transaction {
                    Some(_) => self.run(session, &ddl.plan).await?,
                    None => match self.ddl_keeping_table_locks(session, &ddl.plan).await {
                        Some(outcome) => outcome?,
                        None => self.backend.execute_local(&ddl.plan).await?,
                    },
                };
                // The table's columns changed (or it appeared or went): read them again.
                if let Some(rule) = self.config.sharding.table(&ddl.logic_table)
                    && let Err(e) = self.backend.refresh_metadata(rule).await
                {
                    tracing::warn!("metadata of {} not refreshed: {e}", ddl.logic_table);
                }
                return Ok(Reply::Ok {
                    affected_rows: outcome.affected_rows,
                    last_insert_id: 0,
                });
            }
        };
        self.reply(session, plan, reads).await
    }

    /// Binds an INSERT. A LEAF_SEGMENT generator outrun by a burst has its next segment on the
    /// way: the statement waits for it (asynchronously, up to the repository's operation
    /// timeout) instead of failing; in steady state the segment is already there. The keys
    /// it generated are counted.
    pub(super) async fn bind_insert(
        &self,
        insert: &PreparedInsert,
        bind: impl Fn() -> Result<Plan, RouteError>,
    ) -> Result<Plan, Error> {
        let patience = self.config.mode.timing.operation_timeout;
        let started = Instant::now();
        loop {
            match bind() {
                Err(RouteError::KeyGeneration(KeyGenError::SegmentExhausted { .. }))
                    if started.elapsed() < patience =>
                {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                Ok(plan) => {
                    if let Some(strategy) = &insert.table_rule().key_generate
                        && !plan.generated_keys.is_empty()
                    {
                        self.metrics()
                            .keys(&strategy.generator_name, plan.generated_keys.len());
                    }
                    return Ok(plan);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// MySQL's refusal of LOAD DATA in a prepared statement.
pub(super) fn load_prepared() -> Error {
    Error::unsupported("LOAD DATA in a prepared statement (send it as text)")
}

/// A statement answered from its text at each execution.
fn text(sql: Sql<'_>) -> Statement {
    Statement::new(StatementKind::Text(sql.text.to_owned()), sql.leading)
}

/// Whether `sql` has placeholders (`?`, `$1`) outside strings and comments.
pub(super) fn takes_parameters(sql: &str, dialect: Dialect) -> bool {
    use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect};
    use sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = match dialect {
        Dialect::MySql => Tokenizer::new(&MySqlDialect {}, sql).tokenize(),
        Dialect::Postgres => Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize(),
    };
    tokens.is_ok_and(|tokens| tokens.iter().any(|t| matches!(t, Token::Placeholder(_))))
}
