//! One MySQL client connection: handshake, then commands until the client quits, the
//! connection breaks, or the server shuts down between two commands.

mod local_infile;
mod prepared;
mod streamed;

use std::sync::Arc;
use std::time::Duration;

use keyshard_backend::{session_state, stream};
use keyshard_types::{Dialect, Value};
use mysql_common::constants::{CapabilityFlags, StatusFlags};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::protocol::command::{Command, decode_command, decode_params};
use super::protocol::error::ProtocolError;
use super::protocol::handshake::{self, DatabaseRefused, Greeting};
use super::protocol::packet::{DEFAULT_MAX_PAYLOAD, PacketIo};
use super::protocol::response::{self, ResultColumn};
use crate::admission::Ticket;
use crate::distsql;
use crate::engine::Databases;
use crate::engine::Engine;
use crate::error::{Error, ErrorKind};
use crate::intent::Intent;
use crate::memory::KeptMap;
use crate::mysql::versioned;
use crate::reply::Reply;
use crate::session::{Effect, Session, Statement};
use crate::sql::Sql;
use crate::throttle;
use crate::tls::{Stream, Tls};
pub(crate) use prepared::PreparedStatement;
use streamed::{Written, result_columns};

/// How long a client may take to log in (PostgreSQL's frontend allows the same).
const LOGIN_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest packet accepted before login: a handshake response with every attribute a
/// client library sends fits many times over.
const LOGIN_MAX_PAYLOAD: usize = 64 * 1024;

/// Serves one client until it leaves; `tls` is offered to it when configured.
pub async fn serve(
    stream: TcpStream,
    databases: Arc<Databases>,
    tls: Option<Arc<Tls>>,
    mut shutdown: watch::Receiver<bool>,
    mut admitted: Ticket,
) {
    let peer = crate::server::accepted(&stream);
    // Before login only a handshake response can arrive, a few hundred bytes: a stranger gets
    // neither the 64 MiB statement limit nor unlimited time.
    let mut io = PacketIo::with_max_payload(Stream::Plain(stream), LOGIN_MAX_PAYLOAD);
    // Until the client names its database, the first one speaks for the instance: users,
    // logins and connection ids are the instance's.
    let engine = Arc::clone(databases.first());
    let connection_id = engine.connection_id();
    let greeting = Greeting {
        connection_id,
        server_version: engine.identity().mysql_greeting(),
        mariadb: engine.identity().mysql_server().mariadb,
    };
    let login = handshake::accept(
        &mut io,
        &greeting,
        tls.as_deref(),
        &peer,
        |user| match engine.logins().wait(user, &peer) {
            Some(wait) => Err(throttle::refusal(user, &peer, wait)),
            None => Ok(engine.password(user)),
        },
        |user, database| match database.map(|d| (d, databases.named(d))) {
            Some((_, None)) => Err(DatabaseRefused::Unknown),
            Some((name, Some(named))) if !named.may_use(user, name) => Err(DatabaseRefused::Denied),
            Some(_) => Ok(()),
            // Naming none, the session uses the first the user may use: there must be one.
            None if databases
                .iter()
                .any(|e| e.may_use(user, &e.config().database_name)) =>
            {
                Ok(())
            }
            None => Err(DatabaseRefused::Denied),
        },
    );
    // Nothing has run for a client still logging in: shutdown closes it at once.
    let login = tokio::select! {
        login = tokio::time::timeout(LOGIN_TIMEOUT, login) => login,
        _ = shutdown.changed() => return,
    };
    let client = match login {
        Ok(Ok(client)) => {
            engine.logins().record(&client.user, &peer, true);
            admitted.logged_in();
            client
        }
        Ok(Err(e)) => {
            if let ProtocolError::AccessDenied { user } = &e {
                engine.logins().record(user, &peer, false);
            }
            tracing::debug!("connection {connection_id} from {peer} refused: {e}");
            return;
        }
        Err(_) => {
            tracing::debug!(
                "connection {connection_id} from {peer}: no login within {LOGIN_TIMEOUT:?}"
            );
            return;
        }
    };
    io.set_max_payload(DEFAULT_MAX_PAYLOAD);
    // No database named: the first the user may use (the handshake checked there is one).
    let engine = match client.database.as_deref().and_then(|d| databases.named(d)) {
        Some(named) => Arc::clone(named),
        None => databases
            .iter()
            .find(|e| e.may_use(&client.user, &e.config().database_name))
            .map_or(engine, Arc::clone),
    };
    let counted = Arc::clone(&engine);
    let _connected = counted.metrics().connected(Dialect::MySql);
    let ignores_space = client
        .capabilities
        .contains(CapabilityFlags::CLIENT_IGNORE_SPACE);
    let mut session = Session::new(
        connection_id,
        client.user,
        client.database,
        Dialect::MySql,
        Arc::clone(engine.identity()),
    )
    .with_memory(engine.session_memory());
    let base_mode = engine.identity().mysql_variables.get("sql_mode");
    if let Some((settings, mode)) =
        crate::engine::mysql_startup_settings(ignores_space, base_mode.map(String::as_str))
    {
        session = session.with_startup_settings(Some(settings));
        session.reported.insert("sql_mode".to_owned(), mode);
    }
    engine.list(&mut session, &peer, None);
    let mut connection = Connection {
        caps: client.capabilities,
        extended_metadata: client.extended_metadata,
        multi_statements: client
            .capabilities
            .contains(CapabilityFlags::CLIENT_MULTI_STATEMENTS),
        server: engine.identity().mysql_server(),
        database: bytes::Bytes::from(engine.config().database_name.clone()),
        session,
        prepared: KeptMap::default(),
        next_statement_id: 1,
        engine,
        databases,
    };
    // The session's settings and kept shard connections follow it into the backend.
    let shard = Arc::clone(&connection.session.shard);
    session_state::serve(shard, async {
        // One wait for shutdown for the whole session: a new one per packet cost more than
        // reading the packet. `biased` polls it first, so that a busy client is closed too.
        let shutdown = shutdown.changed();
        tokio::pin!(shutdown);
        loop {
            io.reset_sequence();
            let packet = tokio::select! {
                biased;
                _ = &mut shutdown => break,
                packet = io.read_packet() => packet,
                // `KILL CONNECTION` of an idle session: MariaDB closes it without a word.
                () = connection.session.until_killed() => break,
                () = connection.engine.idle_in_transaction(&connection.session) => {
                    // Its shard connections go back to the pools with the rollback below.
                    connection.send_error(&mut io, &Error::new(
                        ErrorKind::IdleInTransaction,
                        "The client was disconnected by the server because it was idle in a \
                         transaction for too long; the transaction was rolled back",
                    ));
                    let _ = io.flush().await;
                    break;
                }
            };
            let payload = match packet {
                Ok(Some(payload)) => payload,
                Ok(None) => break,
                Err(e) => {
                    // Malformed or oversized: this connection only is closed.
                    tracing::debug!("connection {connection_id}: {e}");
                    break;
                }
            };
            let keep_going = connection.command(&mut io, payload).await;
            connection.apply_effects();
            // Killed while it ran: the statement's answer (the shards' 1317) goes out first.
            if io.flush().await.is_err() || !keep_going || connection.session.killed() {
                break;
            }
        }
        connection
            .engine
            .close_session(&mut connection.session)
            .await;
    })
    .await;
}

/// How a result of the statement about to run on `$connection` goes out (see
/// [`Written`]): borrowing its fields one by one leaves its session free for the statement.
macro_rules! written {
    ($connection:expr, $binary:expr, $status:expr) => {
        Written {
            engine: &$connection.engine,
            database: &$connection.database,
            caps: $connection.caps,
            extended_metadata: $connection.extended_metadata,
            binary: $binary,
            status: $status,
        }
    };
}

struct Connection {
    caps: CapabilityFlags,
    /// MariaDB's extended type metadata goes in every column definition.
    extended_metadata: bool,
    /// Whether a COM_QUERY may hold several statements (CLIENT_MULTI_STATEMENTS, or
    /// COM_SET_OPTION).
    multi_statements: bool,
    /// The server whose executable comments (`/*!40101 … */`) run here.
    server: versioned::Server,
    /// The logical database, which result columns read from a table name as theirs.
    database: bytes::Bytes,
    session: Session,
    /// Statements prepared with the protocol (COM_STMT_PREPARE), by id; SQL's PREPARE names
    /// are another namespace.
    prepared: KeptMap<u32, PreparedStatement>,
    /// The id the next COM_STMT_PREPARE gets.
    next_statement_id: u32,
    /// The engine of the session's logical database.
    engine: Arc<Engine>,
    /// Every logical database's, for `USE`.
    databases: Arc<Databases>,
}

/// MySQL's default `max_prepared_stmt_count`, here per connection.
const MAX_PREPARED_STATEMENTS: usize = 16_382;

impl Connection {
    /// Applies what the last command's statements did to what this connection holds for the
    /// session (a reset drops its prepared statements; `DEALLOCATE` reaches only PostgreSQL's
    /// protocol statements, MySQL's being by id), and tells the session how many it holds.
    fn apply_effects(&mut self) {
        for effect in self.session.effects.drain(..) {
            if effect == Effect::Reset {
                self.prepared.clear();
            }
        }
        self.session.protocol_statements = self.prepared.len();
    }

    /// Handles one command; `false` when the connection should close.
    async fn command(&mut self, io: &mut PacketIo<Stream>, payload: Vec<u8>) -> bool {
        let command = match decode_command(payload) {
            Ok(command) => command,
            Err(e) => {
                self.send_error(
                    io,
                    &Error::new(ErrorKind::Malformed, format!("Malformed command: {e}")),
                );
                return true;
            }
        };
        match command {
            Command::Query(sql) => {
                let sql = versioned::opened(&sql, self.server);
                let statements = match self.multi_statements {
                    true => crate::statements::split(&sql, Dialect::MySql),
                    false => Vec::new(),
                };
                if statements.len() < 2 {
                    let Some(reply) = self.query(io, &sql, false).await else {
                        return false;
                    };
                    self.send_reply(io, reply, false);
                    return true;
                }
                // One result per statement, each but the last flagged as followed by more;
                // the first error ends them, as in MySQL.
                for (i, statement) in statements.iter().enumerate() {
                    let more = i + 1 < statements.len();
                    let Some(reply) = self.query(io, statement, more).await else {
                        return false;
                    };
                    let failed = reply.is_err();
                    self.send_result(io, reply, false, more);
                    if failed {
                        break;
                    }
                }
            }
            Command::InitDb(database) => {
                let reply = match self.databases.named(&database) {
                    Some(engine) if !engine.may_use(&self.session.user, &database) => {
                        Err(Error::database_denied(&self.session.user, &database))
                    }
                    Some(engine) if !Arc::ptr_eq(engine, &self.engine) => {
                        self.session.may_change_database().map(|()| {
                            self.session.database = Some(engine.config().database_name.clone());
                            Reply::done()
                        })
                    }
                    Some(_) => {
                        self.session.database = Some(database);
                        Ok(Reply::done())
                    }
                    None => Err(Error::unknown_database(&database)),
                };
                self.follow_database();
                self.send_reply(io, reply, false);
            }
            Command::Ping => self.send_reply(io, Ok(Reply::done()), false),
            Command::ResetConnection => {
                self.engine.reset_session(&mut self.session).await;
                self.send_reply(io, Ok(Reply::done()), false);
            }
            Command::Quit => return false,
            Command::StmtPrepare(_) if self.prepared.len() >= MAX_PREPARED_STATEMENTS => {
                self.send_error(
                    io,
                    &Error::new(
                        ErrorKind::TooManyStatements,
                        format!(
                            "Can't create more than max_prepared_stmt_count statements (current \
                             value: {MAX_PREPARED_STATEMENTS})"
                        ),
                    ),
                );
            }
            Command::StmtPrepare(sql) => match self
                .engine
                .prepare(
                    Sql::new(&versioned::opened(&sql, self.server)),
                    Dialect::MySql,
                )
                .await
            {
                Ok((statement, _)) => {
                    let params = statement.param_count;
                    let columns = self.prepared_columns(&statement).await;
                    match self.add_statement(statement, &sql) {
                        Ok(id) => {
                            response::write_prepare_ok(
                                io,
                                self.caps,
                                self.extended_metadata,
                                id,
                                params,
                                &columns,
                            );
                        }
                        Err(e) => self.send_error(io, &e),
                    }
                }
                Err(e) => self.send_error(io, &e),
            },
            Command::StmtExecute(request) => {
                let reply = self.execute(io, request).await;
                self.send_reply(io, reply, true);
            }
            // No response, by the protocol.
            Command::StmtClose(id) => {
                self.prepared.remove(&id);
            }
            Command::StmtSendLongData {
                stmt_id,
                param,
                data,
            } => {
                if let Some(statement) = self.prepared.get_mut(&stmt_id) {
                    statement.add_long_data(param, &data);
                }
            }
            Command::StmtReset(id) => {
                let reply = match self.prepared.get_mut(&id) {
                    Some(statement) => {
                        statement.long_data.clear();
                        Ok(Reply::done())
                    }
                    None => Err(unknown_statement(id)),
                };
                self.send_reply(io, reply, false);
            }
            // Multi-statements are not supported either way; the protocol answers with EOF.
            Command::SetOption(option) => {
                self.multi_statements = option == 0;
                let (caps, status) = (self.caps, self.status(false));
                io.write_packet_with(|buf| response::put_eof(buf, caps, status));
            }
            Command::FieldList(_) => {
                let (caps, status) = (self.caps, self.status(false));
                io.write_packet_with(|buf| response::put_eof(buf, caps, status));
            }
            Command::Statistics => io.write_packet(self.engine.statistics().as_bytes()),
            Command::Unknown(code) => {
                self.send_error(
                    io,
                    &Error::new(ErrorKind::Malformed, format!("Unknown command {code:#04x}")),
                );
            }
        }
        true
    }

    /// COM_STMT_EXECUTE: bind the statement's parameters and run it.
    async fn execute(
        &mut self,
        io: &mut PacketIo<Stream>,
        request: super::protocol::command::ExecuteRequest,
    ) -> Result<Reply, Error> {
        let prepared = self
            .prepared
            .get_mut(&request.stmt_id)
            .ok_or_else(|| unknown_statement(request.stmt_id))?;
        if let Some(refused) = prepared.long_data.refused() {
            return Err(refused);
        }
        let params: Vec<Value> = decode_params(
            &request,
            prepared.statement.param_count,
            &mut prepared.param_types,
            prepared.long_data.chunks(),
        )
        .map_err(|e| {
            Error::new(
                ErrorKind::BadArguments,
                format!("Incorrect arguments to mysqld_stmt_execute: {e}"),
            )
        })?;
        prepared.long_data.clear();
        // Decoded: the raw parameters (a long one is megabytes) are not held while it runs.
        drop(request);
        // The session runs it, and holds it: a reference of its own.
        let statement = Arc::clone(&prepared.statement);
        let (tap, batches) = stream::channel_if(statement.may_stream());
        let status = self.status(false);
        self.session.stream = tap;
        self.session.binary_results = true;
        let reply = {
            let written = written!(self, true, status);
            let run = std::pin::pin!(self.engine.execute(&mut self.session, &statement, &params));
            streamed::answer(io, run, batches, &written).await
        };
        self.session.binary_results = false;
        reply
    }

    /// The result columns COM_STMT_PREPARE_OK announces, as MySQL announces a statement's
    /// columns when it prepares it (JDBC's `getMetaData` and sqlx's `describe` read them
    /// there): a DistSQL statement's own, a read's as a shard describes it, none for a write
    /// or a statement answered from its text.
    async fn prepared_columns(&self, statement: &Statement) -> Vec<ResultColumn> {
        if let Some(sql) = statement.text() {
            let Intent::DistSql(statement) = Intent::of(sql, Dialect::MySql) else {
                return Vec::new();
            };
            let columns = distsql::columns(statement).into_iter();
            return columns
                .map(|c| ResultColumn::of(&c.name, c.ty, None))
                .collect();
        }
        if !statement.is_read() {
            return Vec::new();
        }
        match self.engine.shard_description(statement).await {
            Some((columns, _)) => result_columns(&self.engine, &self.database, &columns, &[]),
            None => Vec::new(),
        }
    }

    /// Stores a prepared statement and returns its id.
    fn add_statement(&mut self, statement: Statement, sql: &str) -> Result<u32, Error> {
        let id = self.next_statement_id;
        let prepared = PreparedStatement::new(statement, sql, &self.session.memory);
        (self.prepared).insert(&self.session.memory, id, prepared, "COM_STMT_PREPARE")?;
        self.next_statement_id = id.wrapping_add(1).max(1);
        Ok(id)
    }

    /// What the OK and EOF packets tell the client of its session: connectors read these
    /// flags to know whether a transaction is open.
    /// `more`: another result of the same COM_QUERY follows.
    fn status(&self, more: bool) -> StatusFlags {
        let mut status = StatusFlags::empty();
        if more {
            status |= StatusFlags::SERVER_MORE_RESULTS_EXISTS;
        }
        if self.session.autocommit {
            status |= StatusFlags::SERVER_STATUS_AUTOCOMMIT;
        }
        if self.session.in_transaction() {
            status |= StatusFlags::SERVER_STATUS_IN_TRANS;
        }
        status
    }

    fn send_reply(&self, io: &mut PacketIo<Stream>, reply: Result<Reply, Error>, binary: bool) {
        self.send_result(io, reply, binary, false);
    }

    /// One statement sent as text, and the file a LOAD DATA LOCAL INFILE asks for; `None` when
    /// the connection broke.
    /// `more`: another result of the same COM_QUERY follows.
    async fn query(
        &mut self,
        io: &mut PacketIo<Stream>,
        sql: &str,
        more: bool,
    ) -> Option<Result<Reply, Error>> {
        let sql = Sql::new(sql);
        let (tap, batches) = stream::channel_if(sql.leading.may_stream());
        let status = self.status(more);
        self.session.stream = tap;
        let reply = {
            let written = written!(self, false, status);
            let run = std::pin::pin!(self.engine.query(&mut self.session, sql));
            streamed::answer(io, run, batches, &written).await
        };
        self.follow_database();
        match self.session.copy_in.take() {
            Some(copy) if reply.is_ok() => self.load_local_file(io, &copy).await,
            _ => Some(reply),
        }
    }

    /// Follows the session to the engine of the logical database it now uses, after a `USE`
    /// of another one (which checked that the session may move).
    fn follow_database(&mut self) {
        let Some(name) = &self.session.database else {
            return;
        };
        if self.engine.is_database(name) {
            return;
        }
        if let Some(engine) = self.databases.named(name) {
            self.engine = Arc::clone(engine);
            self.database = bytes::Bytes::from(engine.config().database_name.clone());
        }
    }

    /// One result of a COM_QUERY; `more`: another follows.
    fn send_result(
        &self,
        io: &mut PacketIo<Stream>,
        reply: Result<Reply, Error>,
        binary: bool,
        more: bool,
    ) {
        match reply {
            Ok(Reply::Ok {
                affected_rows,
                last_insert_id,
            }) => {
                let status = self.status(more);
                io.write_packet_with(|buf| {
                    response::put_ok(buf, self.caps, affected_rows, last_insert_id, status, 0, "")
                });
            }
            Ok(Reply::Rows { columns, rows }) => {
                let columns = result_columns(&self.engine, &self.database, &columns, &rows);
                response::write_result_set(
                    io,
                    self.caps,
                    self.extended_metadata,
                    &columns,
                    &rows,
                    binary,
                    self.status(more),
                );
            }
            // Its columns and rows went out as they came.
            Ok(Reply::Streamed { .. }) => {
                let status = self.status(more);
                io.write_packet_with(|buf| response::put_eof(buf, self.caps, status))
            }
            Err(e) => self.send_error(io, &e),
        }
    }

    fn send_error(&self, io: &mut PacketIo<Stream>, error: &Error) {
        let (code, sqlstate) = error.mysql_code();
        io.write_packet(&response::err(code, sqlstate, &error.message));
    }
}

fn unknown_statement(id: u32) -> Error {
    Error::new(
        ErrorKind::UnknownStatement,
        format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"),
    )
}
