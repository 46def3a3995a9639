//! One PostgreSQL client connection: startup, then the simple and extended query protocols
//! until the client terminates, the connection breaks, or the server shuts down between two
//! messages.
//!
//! Errors are the protocol's: an ErrorResponse, then (extended protocol) every message up to
//! the next Sync is skipped, as PostgreSQL does, and the connection goes on. A message that
//! cannot be decoded closes this connection only.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use keyshard_router::{Dialect, Value};
use pgwire::messages::PgWireBackendMessage as Out;
use pgwire::messages::PgWireFrontendMessage as In;
use pgwire::messages::data::{NoData, ParameterDescription};
use pgwire::messages::extendedquery::{
    Bind, BindComplete, Close, CloseComplete, Describe, Execute, Parse, ParseComplete,
    PortalSuspended,
};
use pgwire::messages::response::{
    CommandComplete, EmptyQueryResponse, ErrorResponse, ReadyForQuery, TransactionStatus,
};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::Frontend;
use super::admin::{self, Settings};
use super::auth::{self, StartupError};
use super::command::tag;
use super::describe::{
    Description, Field, Fields, MAX_PARAMETERS, describe, highest_placeholder, reply_fields,
};
use super::formats::{check_format_codes, data_row, format_of, row_description};
use super::pg_error::{PgError, unknown_portal, unknown_statement, wire_failed};
use super::types;
use super::wire::{Wire, WireError};
use crate::reply::Reply;
use crate::session::{Session, Statement, StatementKind};
use crate::tls::Stream;

/// How long a client may take to authenticate, PostgreSQL's `authentication_timeout`.
const STARTUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Serves one client until it leaves.
pub async fn serve(
    stream: TcpStream,
    frontend: Arc<Frontend>,
    mut shutdown: watch::Receiver<bool>,
) {
    // Small request/response messages: Nagle's algorithm would hold them back.
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!("TCP_NODELAY not set: {e}");
    }
    let peer = stream
        .peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_default();
    let mut wire = Wire::new(Stream::Plain(stream));
    let connection_id = frontend.engine.connection_id();
    // A client that never finishes startup must not hold a connection (or shutdown) forever.
    let startup = tokio::time::timeout(
        STARTUP_TIMEOUT,
        auth::accept(
            &mut wire,
            &frontend.engine,
            &frontend.credentials,
            frontend.tls.as_deref(),
            connection_id,
            &peer,
        ),
    );
    // Nothing has run for a client still logging in: shutdown closes it at once.
    let startup = tokio::select! {
        startup = startup => startup,
        _ = shutdown.changed() => return,
    };
    let client = match startup {
        Ok(Ok(client)) => {
            wire.logged_in();
            client
        }
        Ok(Err(StartupError::Gone)) => return,
        Err(_) => {
            tracing::debug!("postgres connection {connection_id}: startup timed out");
            return;
        }
        Ok(Err(e)) => {
            tracing::debug!("postgres connection {connection_id} refused: {e}");
            return;
        }
    };
    let counted = Arc::clone(&frontend);
    let _connected = counted.engine.metrics().connected(Dialect::Postgres);
    let settings = Settings::new(
        &client.user,
        &client.database,
        connection_id,
        &client.parameters,
    );
    let mut connection = Connection {
        session: Session::new(
            connection_id,
            client.user,
            Some(client.database),
            Dialect::Postgres,
        ),
        settings,
        frontend,
        statements: HashMap::new(),
        portals: HashMap::new(),
        skipping: false,
        mid_batch: false,
    };
    loop {
        // Shutdown closes the connection only between batches: a client must not lose the
        // answer to a statement that committed, or its retry would insert a duplicate.
        let message = tokio::select! {
            message = wire.read_message() => message,
            _ = shutdown.changed(), if !connection.mid_batch => break,
            () = connection.frontend.engine.idle_in_transaction(&connection.session) => {
                let _ = wire
                    .send(auth::fatal(
                        "25P03",
                        "terminating connection due to idle-in-transaction timeout",
                    ))
                    .await;
                break;
            }
        };
        let message = match message {
            Ok(Some(message)) => message,
            Ok(None) => break,
            Err(WireError::NotUtf8 { byte, extended }) => {
                match connection.refuse_text(&mut wire, byte, extended).await {
                    Ok(()) => continue,
                    Err(_) => break,
                }
            }
            Err(e) => {
                // Malformed: PostgreSQL closes the connection with a FATAL error.
                tracing::debug!("postgres connection {connection_id}: {e}");
                if let WireError::Malformed(m) = &e {
                    let _ = wire
                        .send(auth::fatal("08P01", &format!("invalid message: {m}")))
                        .await;
                    let _ = wire.flush().await;
                }
                break;
            }
        };
        match connection.message(&mut wire, message).await {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                tracing::debug!("postgres connection {connection_id}: {e}");
                break;
            }
        }
    }
    let _ = wire.flush().await;
    connection
        .frontend
        .engine
        .close_session(&mut connection.session)
        .await;
    tracing::debug!("postgres connection {connection_id} closed");
}

struct Connection {
    /// Inside an extended-protocol batch: after Parse/Bind/Execute/…, before Sync.
    mid_batch: bool,
    frontend: Arc<Frontend>,
    session: Session,
    settings: Settings,
    statements: HashMap<String, Arc<Prepared>>,
    portals: HashMap<String, Portal>,
    /// After an error in the extended protocol: skip messages until Sync.
    skipping: bool,
}

/// A parsed statement (Parse), prepared once through the engine.
struct Prepared {
    sql: String,
    /// `None` for an empty query string.
    statement: Option<Statement>,
    description: Description,
}

/// A bound statement (Bind) waiting to be executed.
struct Portal {
    prepared: Arc<Prepared>,
    params: Vec<Value>,
    formats: Vec<i16>,
    /// The columns Describe reported, which the rows must then match.
    described: Option<Vec<Field>>,
    state: PortalState,
}

enum PortalState {
    Ready,
    /// Ran (at Describe, or an Execute that hit its row limit): rows not yet sent.
    Pending {
        fields: Vec<Field>,
        rows: VecDeque<Vec<Value>>,
        tag: String,
    },
    Done(String),
}

impl Connection {
    /// Handles one message; `false` when the connection should close.
    async fn message(&mut self, wire: &mut Wire, message: In) -> Result<bool, WireError> {
        let extended = message.is_extended_query();
        // Until its Sync, an extended-protocol batch may have run statements whose answer the
        // client has not got: shutdown waits for the Sync.
        self.mid_batch = extended && !matches!(message, In::Sync(_));
        if self.skipping && !matches!(message, In::Sync(_) | In::Terminate(_)) {
            return Ok(true);
        }
        let result = match message {
            In::Query(query) => {
                self.simple_query(wire, &query.query).await?;
                Ok(())
            }
            In::Parse(parse) => self.parse(wire, parse).await,
            In::Bind(bind) => self.bind(wire, bind).await,
            In::Describe(describe) => self.describe(wire, describe).await,
            In::Execute(execute) => self.execute(wire, execute).await,
            In::Close(close) => self.close(wire, close).await,
            In::Sync(_) => {
                self.skipping = false;
                if !self.session.in_transaction() {
                    self.portals.clear();
                }
                self.ready(wire).await?;
                Ok(())
            }
            In::Flush(_) => {
                wire.flush().await?;
                Ok(())
            }
            In::Terminate(_) => return Ok(false),
            // COPY is not offered, so copy data outside COPY is ignored, as PostgreSQL does.
            In::CopyData(_) | In::CopyDone(_) | In::CopyFail(_) => Ok(()),
            other => {
                let _ = wire
                    .send(auth::fatal(
                        "08P01",
                        &format!("unexpected message {other:?} after startup"),
                    ))
                    .await;
                return Ok(false);
            }
        };
        if let Err(e) = result {
            self.send_error(wire, &e).await?;
            if extended {
                self.skipping = true;
            }
        }
        Ok(true)
    }

    async fn ready(&mut self, wire: &mut Wire) -> Result<(), WireError> {
        let status = if self.session.failed {
            TransactionStatus::Error
        } else if self.session.in_transaction() {
            TransactionStatus::Transaction
        } else {
            TransactionStatus::Idle
        };
        wire.send(Out::ReadyForQuery(ReadyForQuery::new(status)))
            .await?;
        wire.flush().await
    }

    /// Answers a Query or Parse whose SQL is not UTF-8 as PostgreSQL does: an error (22021),
    /// then ReadyForQuery for a simple query, or skipping to the Sync in the extended protocol.
    async fn refuse_text(
        &mut self,
        wire: &mut Wire,
        byte: u8,
        extended: bool,
    ) -> Result<(), WireError> {
        if self.skipping {
            return Ok(());
        }
        let error = PgError::new(
            "22021",
            format!("invalid byte sequence for encoding \"UTF8\": 0x{byte:02x}"),
        );
        self.send_error(wire, &error).await?;
        if extended {
            self.skipping = true;
            Ok(())
        } else {
            self.ready(wire).await
        }
    }

    async fn send_error(&mut self, wire: &mut Wire, error: &PgError) -> Result<(), WireError> {
        self.session.statement_failed();
        wire.send(Out::ErrorResponse(ErrorResponse::new(vec![
            (b'S', "ERROR".to_owned()),
            (b'V', "ERROR".to_owned()),
            (b'C', error.code.clone()),
            (b'M', error.message.clone()),
        ])))
        .await
    }

    /// Query: each statement in turn, stopping at the first error; then ReadyForQuery.
    async fn simple_query(&mut self, wire: &mut Wire, sql: &str) -> Result<(), WireError> {
        let statements = crate::statements::split(sql, Dialect::Postgres);
        if statements.is_empty() {
            wire.send(Out::EmptyQueryResponse(EmptyQueryResponse::new()))
                .await?;
        }
        for statement in statements {
            match self.run(statement, None, &[]).await {
                Ok((reply, tag)) => {
                    let fields = match reply_fields(&reply) {
                        Fields::Known(fields) => Some(fields),
                        _ => None,
                    };
                    if let Some(fields) = &fields {
                        wire.send(row_description(fields, &[])).await?;
                    }
                    let rows = match reply {
                        Reply::Rows { rows, .. } => rows,
                        Reply::Ok { .. } => Vec::new(),
                    };
                    let fields = fields.unwrap_or_default();
                    let mut failed = None;
                    for row in &rows {
                        match data_row(row, &fields, &[]) {
                            Ok(row) => wire.send(row).await?,
                            Err(e) => {
                                failed = Some(e);
                                break;
                            }
                        }
                    }
                    if let Some(e) = failed {
                        self.send_error(wire, &e).await?;
                        break;
                    }
                    wire.send(Out::CommandComplete(CommandComplete::new(tag)))
                        .await?;
                }
                Err(e) => {
                    self.send_error(wire, &e).await?;
                    break;
                }
            }
        }
        self.ready(wire).await
    }

    /// Runs one statement: a session statement here, anything else through the engine.
    async fn run(
        &mut self,
        sql: &str,
        statement: Option<&Statement>,
        params: &[Value],
    ) -> Result<(Reply, String), PgError> {
        let first = first_word(sql);
        if first == "DEALLOCATE" {
            // Protocol-level statements and SQL-level ones (PREPARE … AS) alike.
            let name = sql.split_whitespace().last().unwrap_or_default();
            let name = name.trim_end_matches(';').trim_matches('"');
            if name.eq_ignore_ascii_case("all") {
                self.statements.clear();
                self.session.sql_statements.clear();
            } else {
                let protocol = self.statements.remove(name).is_some();
                let sql_level = self
                    .session
                    .sql_statements
                    .remove(&name.to_lowercase())
                    .is_some();
                if !protocol && !sql_level {
                    return Err(PgError::new(
                        "26000",
                        format!("prepared statement \"{name}\" does not exist"),
                    ));
                }
            }
            return Ok((Reply::done(), "DEALLOCATE".to_owned()));
        }
        // DISCARD ALL (what poolers send between clients) also ends the session's transaction
        // and forgets its prepared statements, as PostgreSQL does.
        if first == "DISCARD"
            && sql
                .split_whitespace()
                .nth(1)
                .is_some_and(|w| w.trim_end_matches(';').eq_ignore_ascii_case("all"))
        {
            self.frontend.engine.reset_session(&mut self.session).await;
            self.statements.clear();
        }
        self.session.refuse_when_failed(Some(sql))?;
        // COMMIT of a failed transaction block rolls it back, and says so.
        let rolls_back = self.session.failed;
        // DistSQL's `SET DIST VARIABLE` and transaction control are the engine's, not
        // PostgreSQL settings.
        self.settings.follow(&self.session);
        if crate::distsql::parse(sql).is_none()
            && crate::control::parse(sql).is_none()
            && let Some(answer) = admin::answer(sql, &mut self.settings)
        {
            return answer.map_err(PgError::from);
        }
        let engine = &self.frontend.engine;
        let reply = match statement {
            Some(statement) => engine.execute(&mut self.session, statement, params).await,
            None => engine.query(&mut self.session, sql).await,
        }?;
        if matches!(first.as_str(), "CREATE" | "DROP" | "ALTER" | "TRUNCATE") {
            // The tables' columns may have changed: describe them afresh.
            self.frontend.catalog.invalidate();
        }
        if rolls_back {
            return Ok((reply, "ROLLBACK".to_owned()));
        }
        // EXECUTE of a statement prepared with SQL is tagged as that statement.
        let prepared = match first.as_str() {
            "EXECUTE" => match crate::sql_prepare::parse(sql, Dialect::Postgres) {
                Some(crate::sql_prepare::Command::Execute { name, .. }) => {
                    self.session.sql_statements.get(&name).cloned()
                }
                _ => None,
            },
            _ => None,
        };
        let tag = tag(prepared.as_deref().unwrap_or(sql), &reply);
        Ok((reply, tag))
    }

    async fn parse(&mut self, wire: &mut Wire, parse: Parse) -> Result<(), PgError> {
        let name = parse.name.unwrap_or_default();
        if !name.is_empty() && self.statements.contains_key(&name) {
            return Err(PgError::new(
                "42P05",
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        let sql = parse.query;
        // Refused before anything is sized by it: `$99999999999` would otherwise ask for a
        // parameter list of that length.
        let highest = highest_placeholder(&sql);
        if highest > MAX_PARAMETERS {
            return Err(PgError::new(
                "42P02",
                format!(
                    "there is no parameter ${highest}: a statement takes at most {MAX_PARAMETERS} \
                     parameters"
                ),
            ));
        }
        let statement = if crate::statements::is_blank(&sql) {
            None
        } else {
            Some(
                self.frontend
                    .engine
                    .prepare(&sql, Dialect::Postgres)
                    .await?,
            )
        };
        let mut description = describe(
            &sql,
            highest,
            &parse.type_oids,
            &self.frontend.catalog,
            &self.settings,
        )
        .await;
        // As PostgreSQL does, refuse at Parse what will not parse: the client would otherwise
        // bind parameters typed by a guess.
        if let Some(e) = description.syntax_error.take() {
            return Err(PgError::new("42601", format!("syntax error: {e}")));
        }
        // Columns the statement's text does not tell: ask a shard to describe its SQL.
        if description.fields == Fields::Unknown
            && let Some(statement) = &statement
            && let Some(fields) = self.shard_fields(statement).await
        {
            description.fields = Fields::Known(fields);
        }
        if let Some(statement) = &statement
            && statement.param_count > description.params.len()
        {
            description
                .params
                .resize(statement.param_count, types::oid::TEXT);
        }
        self.statements.insert(
            name,
            Arc::new(Prepared {
                sql,
                statement,
                description,
            }),
        );
        wire.send(Out::ParseComplete(ParseComplete::new()))
            .await
            .map_err(wire_failed)
    }

    /// The result columns of a read, as the first shard it goes to describes its SQL (bound
    /// with NULL parameters only to pick that shard); `None` when there is nothing to ask.
    async fn shard_fields(&self, statement: &Statement) -> Option<Vec<Field>> {
        let nulls = vec![Value::Null; statement.param_count];
        let plan = match &statement.kind {
            StatementKind::Query(query) => query.bind(&nulls).ok()?,
            StatementKind::Direct(direct) => direct.bind(&nulls),
            _ => return None,
        };
        let columns = self
            .frontend
            .engine
            .backend()
            .result_columns(&plan)
            .await
            .ok()?;
        (!columns.is_empty()).then(|| {
            columns
                .iter()
                .map(|c| Field {
                    name: c.name.clone(),
                    oid: types::oid_of(&c.type_name),
                })
                .collect()
        })
    }

    async fn bind(&mut self, wire: &mut Wire, bind: Bind) -> Result<(), PgError> {
        let statement_name = bind.statement_name.unwrap_or_default();
        let prepared = self
            .statements
            .get(&statement_name)
            .cloned()
            .ok_or_else(|| unknown_statement(&statement_name))?;
        let portal_name = bind.portal_name.unwrap_or_default();
        if !portal_name.is_empty() && self.portals.contains_key(&portal_name) {
            return Err(PgError::new(
                "42P03",
                format!("portal \"{portal_name}\" already exists"),
            ));
        }
        let types = &prepared.description.params;
        if bind.parameters.len() != types.len() {
            return Err(PgError::new(
                "08P01",
                format!(
                    "bind message supplies {} parameters, but prepared statement \"{statement_name}\" requires {}",
                    bind.parameters.len(),
                    types.len()
                ),
            ));
        }
        let formats = &bind.parameter_format_codes;
        if formats.len() > 1 && formats.len() != types.len() {
            return Err(PgError::new(
                "08P01",
                format!(
                    "bind message has {} parameter formats but {} parameters",
                    formats.len(),
                    types.len()
                ),
            ));
        }
        check_format_codes(formats)?;
        check_format_codes(&bind.result_column_format_codes)?;
        let params = bind
            .parameters
            .iter()
            .enumerate()
            .map(|(i, bytes)| {
                let binary = format_of(formats, i) == 1;
                types::decode(bytes.as_deref(), types[i], binary)
                    .map_err(|e| PgError::from(e).with_context(&format!("parameter ${}", i + 1)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.portals.insert(
            portal_name,
            Portal {
                prepared,
                params,
                formats: bind.result_column_format_codes,
                described: None,
                state: PortalState::Ready,
            },
        );
        wire.send(Out::BindComplete(BindComplete::new()))
            .await
            .map_err(wire_failed)
    }

    async fn describe(&mut self, wire: &mut Wire, describe: Describe) -> Result<(), PgError> {
        let name = describe.name.unwrap_or_default();
        if describe.target_type == b'S' {
            let prepared = self
                .statements
                .get(&name)
                .ok_or_else(|| unknown_statement(&name))?;
            let description = &prepared.description;
            let mut out = vec![Out::ParameterDescription(ParameterDescription::new(
                description.params.clone(),
            ))];
            out.push(match &description.fields {
                Fields::Known(fields) => row_description(fields, &[]),
                Fields::None | Fields::Unknown => Out::NoData(NoData::new()),
            });
            for message in out {
                wire.send(message).await.map_err(wire_failed)?;
            }
            return Ok(());
        }
        let Some(portal) = self.portals.get(&name) else {
            return Err(unknown_portal(&name));
        };
        let fields = match (&portal.prepared.description.fields, &portal.state) {
            (_, PortalState::Pending { fields, .. }) => Some(fields.clone()),
            (Fields::Known(fields), _) => Some(fields.clone()),
            (Fields::None, _) => None,
            // Only running it tells its columns: run it now and keep the rows for Execute.
            (Fields::Unknown, _) => {
                let prepared = Arc::clone(&portal.prepared);
                let params = portal.params.clone();
                let (reply, tag) = self
                    .run(&prepared.sql, prepared.statement.as_ref(), &params)
                    .await?;
                let fields = match reply_fields(&reply) {
                    Fields::Known(fields) => fields,
                    _ => Vec::new(),
                };
                let rows = match reply {
                    Reply::Rows { rows, .. } => rows.into(),
                    Reply::Ok { .. } => VecDeque::new(),
                };
                let has_rows = !fields.is_empty();
                if let Some(portal) = self.portals.get_mut(&name) {
                    portal.state = PortalState::Pending {
                        fields: fields.clone(),
                        rows,
                        tag,
                    };
                }
                has_rows.then_some(fields)
            }
        };
        let Some(portal) = self.portals.get_mut(&name) else {
            return Err(unknown_portal(&name));
        };
        let message = match &fields {
            Some(fields) => row_description(fields, &portal.formats),
            None => Out::NoData(NoData::new()),
        };
        portal.described = fields;
        wire.send(message).await.map_err(wire_failed)
    }

    async fn execute(&mut self, wire: &mut Wire, execute: Execute) -> Result<(), PgError> {
        let name = execute.name.unwrap_or_default();
        let Some(portal) = self.portals.get_mut(&name) else {
            return Err(unknown_portal(&name));
        };
        if portal.prepared.statement.is_none() {
            return wire
                .send(Out::EmptyQueryResponse(EmptyQueryResponse::new()))
                .await
                .map_err(wire_failed);
        }
        let state = std::mem::replace(&mut portal.state, PortalState::Ready);
        let (fields, mut rows, tag) = match state {
            PortalState::Pending { fields, rows, tag } => (fields, rows, tag),
            PortalState::Done(tag) => {
                portal.state = PortalState::Done(tag.clone());
                return wire
                    .send(Out::CommandComplete(CommandComplete::new(tag)))
                    .await
                    .map_err(wire_failed);
            }
            PortalState::Ready => {
                let prepared = Arc::clone(&portal.prepared);
                let params = std::mem::take(&mut portal.params);
                let described = portal.described.clone();
                let (reply, tag) = self
                    .run(&prepared.sql, prepared.statement.as_ref(), &params)
                    .await?;
                let derived = match reply_fields(&reply) {
                    Fields::Known(fields) => fields,
                    _ => Vec::new(),
                };
                // Rows go out as the client was told they would, when it was told.
                let known = described.or(match &prepared.description.fields {
                    Fields::Known(fields) => Some(fields.clone()),
                    _ => None,
                });
                let fields = match known {
                    Some(known) if known.len() == derived.len() => known,
                    _ => derived,
                };
                let rows = match reply {
                    Reply::Rows { rows, .. } => rows.into(),
                    Reply::Ok { .. } => VecDeque::new(),
                };
                (fields, rows, tag)
            }
        };
        let Some(portal) = self.portals.get_mut(&name) else {
            return Err(unknown_portal(&name));
        };
        let limit = usize::try_from(execute.max_rows)
            .ok()
            .filter(|n| *n > 0)
            .unwrap_or(usize::MAX);
        let mut sent = 0;
        while sent < limit {
            let Some(row) = rows.pop_front() else { break };
            let row = data_row(&row, &fields, &portal.formats)?;
            wire.send(row).await.map_err(wire_failed)?;
            sent += 1;
        }
        if rows.is_empty() {
            portal.state = PortalState::Done(tag.clone());
            wire.send(Out::CommandComplete(CommandComplete::new(tag)))
                .await
                .map_err(wire_failed)
        } else {
            portal.state = PortalState::Pending { fields, rows, tag };
            wire.send(Out::PortalSuspended(PortalSuspended::new()))
                .await
                .map_err(wire_failed)
        }
    }

    async fn close(&mut self, wire: &mut Wire, close: Close) -> Result<(), PgError> {
        let name = close.name.unwrap_or_default();
        if close.target_type == b'S' {
            self.statements.remove(&name);
        } else {
            self.portals.remove(&name);
        }
        wire.send(Out::CloseComplete(CloseComplete::new()))
            .await
            .map_err(wire_failed)
    }
}

fn first_word(sql: &str) -> String {
    crate::words::first_word(sql).to_ascii_uppercase()
}
