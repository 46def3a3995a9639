//! One MySQL client connection: handshake, then commands until the client quits, the
//! connection breaks, or the server shuts down between two commands.

use std::sync::Arc;

use keyshard_router::Value;
use mysql_common::constants::{CapabilityFlags, StatusFlags};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::protocol::command::{Command, decode_command, decode_params};
use super::protocol::handshake::{self, Greeting};
use super::protocol::packet::PacketIo;
use super::protocol::response::{self, ResultColumn};
use crate::admin::SERVER_VERSION;
use crate::engine::Engine;
use crate::error::MySqlError;
use crate::reply::Reply;
use crate::session::{Session, StatementKind};

/// Serves one client until it leaves.
pub async fn serve(stream: TcpStream, engine: Arc<Engine>, mut shutdown: watch::Receiver<bool>) {
    // Small request/response packets: Nagle's algorithm would hold them back.
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!("TCP_NODELAY not set: {e}");
    }
    let peer = stream
        .peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_default();
    let mut io = PacketIo::new(stream);
    let connection_id = engine.connection_id();
    let greeting = Greeting {
        connection_id,
        server_version: SERVER_VERSION.to_owned(),
    };
    let client = match handshake::accept(
        &mut io,
        &greeting,
        &peer,
        |user| engine.password(user),
        |database| engine.is_database(database),
    )
    .await
    {
        Ok(client) => client,
        Err(e) => {
            tracing::debug!("connection {connection_id} from {peer} refused: {e}");
            return;
        }
    };
    let mut connection = Connection {
        caps: client.capabilities,
        session: Session::new(connection_id, client.user, client.database),
        engine,
    };
    loop {
        io.reset_sequence();
        let packet = tokio::select! {
            packet = io.read_packet() => packet,
            _ = shutdown.changed() => break,
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
        let keep_going = connection.command(&mut io, &payload).await;
        if io.flush().await.is_err() || !keep_going {
            break;
        }
    }
    tracing::debug!("connection {connection_id} closed");
}

struct Connection {
    caps: CapabilityFlags,
    session: Session,
    engine: Arc<Engine>,
}

impl Connection {
    /// Handles one command; `false` when the connection should close.
    async fn command(&mut self, io: &mut PacketIo<TcpStream>, payload: &[u8]) -> bool {
        let command = match decode_command(payload) {
            Ok(command) => command,
            Err(e) => {
                self.send_error(
                    io,
                    &MySqlError::new(1047, "08S01", format!("Malformed command: {e}")),
                );
                return true;
            }
        };
        match command {
            Command::Query(sql) => {
                let reply = self.engine.query(&mut self.session, &sql).await;
                self.send_reply(io, reply, false);
            }
            Command::InitDb(database) => {
                let reply = if self.engine.is_database(&database) {
                    self.session.database = Some(database);
                    Ok(Reply::done())
                } else {
                    Err(MySqlError::unknown_database(&database))
                };
                self.send_reply(io, reply, false);
            }
            Command::Ping => self.send_reply(io, Ok(Reply::done()), false),
            Command::ResetConnection => {
                self.session.reset();
                self.send_reply(io, Ok(Reply::done()), false);
            }
            Command::Quit => return false,
            Command::StmtPrepare(sql) => match self.engine.prepare(&mut self.session, &sql).await {
                Ok((id, params)) => response::write_prepare_ok(io, self.caps, id, params, &[]),
                Err(e) => self.send_error(io, &e),
            },
            Command::StmtExecute(request) => {
                let reply = self.execute(&request).await;
                self.send_reply(io, reply, true);
            }
            // No response, by the protocol.
            Command::StmtClose(id) => {
                self.session.statements.remove(&id);
            }
            Command::StmtSendLongData {
                stmt_id,
                param,
                data,
            } => {
                if let Some(statement) = self.session.statements.get_mut(&stmt_id) {
                    statement
                        .long_data
                        .entry(param)
                        .or_default()
                        .extend_from_slice(&data);
                }
            }
            Command::StmtReset(id) => {
                let reply = match self.session.statements.get_mut(&id) {
                    Some(statement) => {
                        statement.long_data.clear();
                        Ok(Reply::done())
                    }
                    None => Err(unknown_statement(id)),
                };
                self.send_reply(io, reply, false);
            }
            // Multi-statements are not supported either way; the protocol answers with EOF.
            Command::SetOption(_) => io.write_packet(&response::eof(self.caps, self.status())),
            Command::FieldList(_) => io.write_packet(&response::eof(self.caps, self.status())),
            Command::Statistics => io.write_packet(b"Keyshard: statistics are not collected"),
            Command::Unknown(code) => {
                self.send_error(
                    io,
                    &MySqlError::new(1047, "08S01", format!("Unknown command {code:#04x}")),
                );
            }
        }
        true
    }

    /// COM_STMT_EXECUTE: bind the statement's parameters and run it.
    async fn execute(
        &mut self,
        request: &super::protocol::command::ExecuteRequest,
    ) -> Result<Reply, MySqlError> {
        let statement = self
            .session
            .statements
            .get_mut(&request.stmt_id)
            .ok_or_else(|| unknown_statement(request.stmt_id))?;
        let params: Vec<Value> = decode_params(
            request,
            statement.param_count,
            &mut statement.param_types,
            &mut statement.long_data,
        )
        .map_err(|e| {
            MySqlError::new(
                1210,
                "HY000",
                format!("Incorrect arguments to mysqld_stmt_execute: {e}"),
            )
        })?;
        statement.long_data.clear();
        match &statement.kind {
            StatementKind::Insert(insert) => {
                self.engine
                    .insert(insert, &params, &mut self.session.last_insert_id)
                    .await
            }
            StatementKind::Text(sql) => {
                let sql = sql.clone();
                self.engine.query(&mut self.session, &sql).await
            }
        }
    }

    fn status(&self) -> StatusFlags {
        StatusFlags::SERVER_STATUS_AUTOCOMMIT
    }

    fn send_reply(
        &self,
        io: &mut PacketIo<TcpStream>,
        reply: Result<Reply, MySqlError>,
        binary: bool,
    ) {
        match reply {
            Ok(Reply::Ok {
                affected_rows,
                last_insert_id,
            }) => {
                io.write_packet(&response::ok(
                    self.caps,
                    affected_rows,
                    last_insert_id,
                    self.status(),
                    0,
                    "",
                ));
            }
            Ok(Reply::Rows { columns, rows }) => {
                let columns: Vec<ResultColumn> = columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let sample = rows
                            .iter()
                            .map(|r| r.get(i))
                            .find(|v| !matches!(v, None | Some(Value::Null)))
                            .flatten();
                        ResultColumn::from_type_name(&c.name, &c.type_name, sample)
                    })
                    .collect();
                response::write_result_set(io, self.caps, &columns, &rows, binary, self.status());
            }
            Err(e) => self.send_error(io, &e),
        }
    }

    fn send_error(&self, io: &mut PacketIo<TcpStream>, error: &MySqlError) {
        io.write_packet(&response::err(error.code, &error.sqlstate, &error.message));
    }
}

fn unknown_statement(id: u32) -> MySqlError {
    MySqlError::new(
        1243,
        "HY000",
        format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"),
    )
}
