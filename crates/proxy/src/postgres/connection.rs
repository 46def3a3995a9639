//! One PostgreSQL client connection: startup, then the simple and extended query protocols
//! until the client terminates, the connection breaks, or the server shuts down between two
//! messages.
//!
//! Errors are the protocol's: an ErrorResponse, then (extended protocol) every message up to
//! the next Sync is skipped, as PostgreSQL does, and the connection goes on. A message that
//! cannot be decoded closes this connection only.

use std::sync::Arc;

use keyshard_backend::session_state;
use keyshard_router::Leading;
use keyshard_types::{Dialect, Value};
use pgwire::messages::PgWireBackendMessage as Out;
use pgwire::messages::PgWireFrontendMessage as In;
use pgwire::messages::response::{ErrorResponse, NotificationResponse};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::Frontend;
use super::auth::{self, StartupError};
use super::command::tag;
use super::describe::{self, Fields, reply_fields};
use super::formats::{Bare, push_data_row, push_ready_for_query, push_row_description};
use super::pg_error::PgError;
use super::wire::{Wire, WireError};
use crate::admission::Ticket;
use crate::dialect::postgres::ProxyText;
use crate::dialect::postgres::parameters::Parameters;
use crate::engine::{Engine, startup_parameters, startup_settings};
use crate::error::Error;
use crate::memory::KeptMap;
use crate::postgres::Prepared;
use crate::reply::Reply;
use crate::session::{self, Effect, Session, Statement};
use crate::sql::Sql;
use crate::tls::Stream;

mod copy;
mod extended;
mod implicit;
mod portals;
mod streamed;

use implicit::{Implicit, Step};
use portals::Portals;
use streamed::RowsOut;

/// How long a client may take to authenticate, PostgreSQL's `authentication_timeout`.
const STARTUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Serves one client until it leaves.
pub async fn serve(
    stream: TcpStream,
    frontend: Arc<Frontend>,
    mut shutdown: watch::Receiver<bool>,
    mut admitted: Ticket,
) {
    let peer = crate::server::accepted(&stream);
    let mut wire = Wire::new(Stream::Plain(stream));
    let connection_id = frontend.databases.first().connection_id();
    // A client that never finishes startup must not hold a connection (or shutdown) forever.
    let startup = tokio::time::timeout(
        STARTUP_TIMEOUT,
        auth::accept(
            &mut wire,
            &frontend.databases,
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
            admitted.logged_in();
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
    let engine = client.engine;
    let counted = Arc::clone(&engine);
    let _connected = counted.metrics().connected(Dialect::Postgres);
    let session = Session::new(
        connection_id,
        client.user,
        Some(client.database),
        Dialect::Postgres,
        Arc::clone(engine.identity()),
    )
    .with_memory(engine.session_memory());
    let parameters = startup_parameters(&client.parameters);
    let mut session = session.with_startup_settings(startup_settings(&parameters));
    session.postgres.parameters = Parameters::from_startup(&parameters);
    engine.list(&mut session, &peer, Some(client.secret));
    let mut connection = Connection {
        session,
        known: describe::TableColumns::new(Arc::clone(&engine)),
        engine,
        prepared: KeptMap::default(),
        portals: Portals::default(),
        skipping: false,
        batch: Implicit::default(),
        mid_batch: false,
        last_unnamed: None,
        startup_text: None,
    };
    // The session's settings and kept shard connections follow it into the backend.
    let shard = Arc::clone(&connection.session.shard);
    session_state::serve(shard, async {
        // One wait for shutdown for the whole session: a new one per message cost more than
        // reading the message. `biased` polls it first, so that a busy client is closed too.
        let shutdown = shutdown.changed();
        tokio::pin!(shutdown);
        loop {
            // A listening session's notifications go out while it is idle, between
            // transactions and batches, as PostgreSQL sends them. The listener is out of the
            // session while the session is borrowed below.
            let mut listener = connection.session.postgres.listener.take();
            let notify = listener.is_some()
                && !connection.mid_batch
                && connection.session.status() == session::TransactionStatus::Idle;
            // Shutdown closes the connection only between batches: a client must not lose the
            // answer to a statement that committed, or its retry would insert a duplicate.
            let message = if connection.mid_batch && wire.message_is_buffered() {
                // What the select below would take at once (shutdown, kills and notifications
                // wait for the batch's end): read without setting up the other waits, for
                // each message of an extended-protocol batch.
                wire.read_message().await
            } else {
                tokio::select! {
                    biased;
                    _ = &mut shutdown, if !connection.mid_batch => break,
                    message = wire.read_message() => message,
                    () = connection.session.until_killed(), if !connection.mid_batch => {
                        let _ = wire.send(terminated()).await;
                        break;
                    }
                    () = connection.engine.idle_in_transaction(&connection.session) => {
                        let _ = wire
                            .send(auth::fatal(
                                "25P03",
                                "terminating connection due to idle-in-transaction timeout",
                            ))
                            .await;
                        break;
                    }
                    notification = notified(listener.as_mut()), if notify => {
                        connection.session.postgres.listener = listener;
                        if pass_on(&mut wire, notification).await.is_err() {
                            break;
                        }
                        continue;
                    }
                }
            };
            connection.session.postgres.listener = listener;
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
            .engine
            .close_session(&mut connection.session)
            .await;
    })
    .await;
}

/// What PostgreSQL tells a client whose session `pg_terminate_backend` ended.
fn terminated() -> pgwire::messages::PgWireBackendMessage {
    auth::fatal(
        "57P01",
        "terminating connection due to administrator command",
    )
}

/// The next notification of a session that listens (never, for one that does not).
async fn notified(
    listener: Option<&mut keyshard_backend::Listener>,
) -> Result<keyshard_backend::Notification, keyshard_backend::BackendError> {
    match listener {
        Some(listener) => listener.recv().await,
        None => std::future::pending().await,
    }
}

/// Writes a notification to the client. A listening connection that failed is logged, and
/// listening goes on a second later (sqlx opens the connection again), so a shard that stays
/// down costs a retry a second, not a busy loop.
async fn pass_on(
    wire: &mut Wire,
    notification: Result<keyshard_backend::Notification, keyshard_backend::BackendError>,
) -> Result<(), WireError> {
    match notification {
        Ok(n) => {
            let message = NotificationResponse::new(n.process_id, n.channel, n.payload);
            wire.send(Out::NotificationResponse(message)).await?;
            wire.flush().await
        }
        Err(e) => {
            tracing::warn!("LISTEN: {e}");
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            Ok(())
        }
    }
}

struct Connection {
    /// Inside an extended-protocol batch: after Parse/Bind/Execute/…, before Sync.
    mid_batch: bool,
    /// The engine of the session's logical database.
    engine: Arc<Engine>,
    /// The logic tables' columns, for Describe.
    known: describe::TableColumns,
    session: Session,
    /// Statements prepared with the protocol (Parse), by name; SQL's `DEALLOCATE` and
    /// `DISCARD ALL` reach them too (see `apply_effects`).
    prepared: KeptMap<String, Arc<Prepared>>,
    portals: Portals,
    /// After an error in the extended protocol: skip messages until Sync.
    skipping: bool,
    /// The implicit transaction block of the extended-protocol batch up to the next Sync.
    batch: Implicit,
    /// The last unnamed INSERT parsed, to be reused by the next Parse of the same text.
    last_unnamed: Option<extended::Unnamed>,
    /// What the proxy writes in text for the session while it has set nothing: its startup
    /// parameters' (see `proxy_text`).
    startup_text: Option<ProxyText>,
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
            In::Describe(describe) => {
                let name = describe.name.unwrap_or_default();
                if describe.target_type == b'S' {
                    self.describe_statement(wire, &name).await
                } else {
                    self.describe_portal(wire, name).await
                }
            }
            In::Execute(execute) => {
                let name = execute.name.unwrap_or_default();
                self.execute(wire, name, execute.max_rows).await
            }
            In::Close(close) => self.close(wire, close).await,
            In::Sync(_) => {
                let failed = std::mem::take(&mut self.skipping);
                let mut batch = std::mem::take(&mut self.batch);
                if let Err(e) = self.leave(&mut batch, failed).await {
                    self.send_error(wire, &e).await?;
                }
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
        let status = match self.session.status() {
            session::TransactionStatus::Idle => b'I',
            session::TransactionStatus::InTransaction => b'T',
            session::TransactionStatus::Failed => b'E',
        };
        push_ready_for_query(wire.buffer(), status);
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

    /// Query: each statement in turn, stopping at the first error; then ReadyForQuery. Its
    /// statements share one implicit transaction block (see `implicit`).
    async fn simple_query(&mut self, wire: &mut Wire, sql: &str) -> Result<(), WireError> {
        let sql = super::operators::plain(sql);
        let statements = crate::statements::split(&sql, Dialect::Postgres);
        if statements.is_empty() {
            wire.bare(Bare::EmptyQueryResponse).await?;
        }
        let mut implicit = Implicit::new(statements.len());
        let mut failure = None;
        for statement in statements {
            let statement = Sql::new(statement);
            failure = match self.enter(&mut implicit, statement).await {
                Ok(Step::Run) => self.query_one(wire, &mut implicit, statement).await?,
                Ok(Step::Answered(tag)) => {
                    wire.command_complete(tag).await?;
                    None
                }
                Err(e) => Some(e),
            };
            if failure.is_some() {
                break;
            }
        }
        let ended = self.leave(&mut implicit, failure.is_some()).await;
        if let Some(e) = failure.or(ended.err()) {
            self.send_error(wire, &e).await?;
        }
        self.ready(wire).await
    }

    /// One statement of a Query, its results sent; the error it failed with, not yet sent.
    async fn query_one(
        &mut self,
        wire: &mut Wire,
        implicit: &mut Implicit,
        statement: Sql<'_>,
    ) -> Result<Option<PgError>, WireError> {
        let out = RowsOut {
            describe: true,
            known: None,
            formats: &[],
        };
        let text = self.proxy_text();
        let may_stream = statement.leading.may_stream();
        let (tap, batches) = keyshard_backend::stream::channel_if(may_stream);
        let ran = {
            let run = std::pin::pin!(self.run(statement, None, &[], tap));
            streamed::answer(wire, run, batches, out, &text).await?
        };
        let (reply, tag) = match ran {
            Ok(done) => done,
            Err(e) => return Ok(Some(e)),
        };
        self.ran(wire, implicit, statement).await?;
        // COPY: its data comes in or goes out now; its own answer is its tag.
        match self.pending_copy(wire).await? {
            Some(Ok(tag)) => {
                wire.command_complete(&tag).await?;
                return Ok(None);
            }
            Some(Err(e)) => return Ok(Some(e)),
            None => {}
        }
        let fields = match reply_fields(&reply) {
            Fields::Known(fields) => Some(fields),
            _ => None,
        };
        if let Some(fields) = &fields {
            if let Err(e) = push_row_description(wire.buffer(), fields, &[]) {
                return Ok(Some(e));
            }
            wire.queued().await?;
        }
        let rows = match reply {
            Reply::Rows { rows, .. } => rows,
            // Its rows went out as they came.
            Reply::Ok { .. } | Reply::Streamed { .. } => Vec::new(),
        };
        let fields = fields.unwrap_or_default();
        for row in &rows {
            if let Err(e) = push_data_row(wire.buffer(), row, &fields, &[]) {
                return Ok(Some(e));
            }
            wire.queued().await?;
        }
        wire.command_complete(&tag).await?;
        Ok(None)
    }

    /// What the proxy may write in text for this session now (see `ProxyText`): taken once
    /// while the session has set nothing, since it then depends on the startup parameters only.
    fn proxy_text(&mut self) -> ProxyText {
        let shard_settings = &self.engine.identity().postgres_settings;
        if !self.session.reported.is_empty() || self.session.postgres.parameters.any_set() {
            return ProxyText::of(&self.session, shard_settings);
        }
        *self
            .startup_text
            .get_or_insert_with(|| ProxyText::of(&self.session, shard_settings))
    }

    /// Applies what a statement did to what this connection holds for the session: a reset
    /// drops the statements prepared with the protocol, `DEALLOCATE` reaches them (and fails
    /// when no statement had its name, as it would in a transaction block too); then tells the
    /// session how many it holds.
    fn apply_effects(&mut self, reply: Result<Reply, Error>) -> Result<Reply, Error> {
        let mut reply = reply;
        for effect in std::mem::take(&mut self.session.effects) {
            match effect {
                Effect::Reset | Effect::DeallocateAll => self.prepared.clear(),
                Effect::Deallocate { name, or_fail } => {
                    if self.prepared.remove(&name).is_none() && or_fail && reply.is_ok() {
                        self.session.statement_failed();
                        let verb = "DEALLOCATE PREPARE";
                        reply = Err(crate::sql_prepare::unknown(Dialect::Postgres, &name, verb));
                    }
                }
            }
        }
        self.session.protocol_statements = self.prepared.len();
        reply
    }

    /// Runs one statement through the engine, and tags its reply; with `tap`, the rows of its
    /// read go there as they arrive (see `run_streamed`).
    async fn run(
        &mut self,
        sql: Sql<'_>,
        statement: Option<&Statement>,
        params: &[Value],
        tap: Option<keyshard_backend::stream::Tap>,
    ) -> Result<(Reply, String), PgError> {
        // COMMIT of a failed transaction block rolls it back, and says so.
        let rolls_back = self.session.failed;
        let engine = &self.engine;
        // The engine drops it when the statement is answered.
        self.session.stream = tap;
        let reply = match statement {
            Some(statement) => engine.execute(&mut self.session, statement, params).await,
            None => engine.query(&mut self.session, sql).await,
        };
        let reply = self.apply_effects(reply)?;
        if rolls_back {
            return Ok((reply, "ROLLBACK".to_owned()));
        }
        // EXECUTE of a statement prepared with SQL is tagged as that statement.
        let prepared = match sql.leading {
            Leading::Execute => match crate::sql_prepare::parse(sql.text, Dialect::Postgres) {
                Some(crate::sql_prepare::Command::Execute { name, .. }) => {
                    self.session.sql_statements.get(&name).cloned()
                }
                _ => None,
            },
            _ => None,
        };
        let tag = match &prepared {
            Some(executed) => tag(Sql::new(executed), &reply),
            None => tag(sql, &reply),
        };
        Ok((reply, tag))
    }
}
