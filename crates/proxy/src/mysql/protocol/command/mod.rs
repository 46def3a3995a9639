//! Decoding of the command phase: the first packet of each client request.

mod binary_value;
mod execute;

pub use execute::{ExecuteRequest, decode_params};

use mysql_common::constants::Command as Code;

use super::error::ProtocolError;
use super::wire::{Reader, utf8};

/// One client command. Payload-carrying variants are decoded; the rest of the protocol's
/// commands arrive as [`Command::Unknown`] for the caller to answer with an error.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// COM_QUERY: a text-protocol statement.
    Query(String),
    /// COM_INIT_DB: `USE db`.
    InitDb(String),
    /// COM_PING.
    Ping,
    /// COM_QUIT: the client is closing the connection; no response.
    Quit,
    /// COM_STMT_PREPARE: the statement text.
    StmtPrepare(String),
    /// COM_STMT_EXECUTE; its parameters need the statement's parameter count, see [`decode_params`].
    StmtExecute(ExecuteRequest),
    /// COM_STMT_CLOSE: no response.
    StmtClose(u32),
    /// COM_STMT_RESET: forget long data sent for the statement.
    StmtReset(u32),
    /// COM_STMT_SEND_LONG_DATA: a chunk to append to one parameter; no response.
    StmtSendLongData {
        /// The prepared statement.
        stmt_id: u32,
        /// The parameter's index, from 0.
        param: u16,
        /// The chunk.
        data: Vec<u8>,
    },
    /// COM_RESET_CONNECTION: reset session state without re-authenticating.
    ResetConnection,
    /// COM_SET_OPTION: 0 enables multi-statements, 1 disables them.
    SetOption(u16),
    /// COM_FIELD_LIST (deprecated): the table name; the wildcard that may follow is dropped.
    FieldList(String),
    /// COM_STATISTICS.
    Statistics,
    /// Any other command byte.
    Unknown(u8),
}

/// Decodes a command packet's payload.
pub fn decode_command(payload: Vec<u8>) -> Result<Command, ProtocolError> {
    let Some(&code) = payload.first() else {
        return Err(ProtocolError::malformed("empty command packet"));
    };
    // A statement is taken out of its packet without a copy: it may be 64 MiB.
    let statement = |mut text: Vec<u8>, what: &str| {
        text.remove(0);
        String::from_utf8(text)
            .map_err(|_| ProtocolError::malformed(format!("{what} is not valid UTF-8")))
    };
    if code == Code::COM_QUERY as u8 {
        return Ok(Command::Query(statement(payload, "query")?));
    }
    if code == Code::COM_STMT_PREPARE as u8 {
        return Ok(Command::StmtPrepare(statement(payload, "statement")?));
    }
    if code == Code::COM_STMT_EXECUTE as u8 {
        return Ok(Command::StmtExecute(ExecuteRequest::decode(payload)?));
    }
    let body = &payload[1..];
    let command = match code {
        c if c == Code::COM_INIT_DB as u8 => Command::InitDb(utf8(body, "database name")?),
        c if c == Code::COM_PING as u8 => Command::Ping,
        c if c == Code::COM_QUIT as u8 => Command::Quit,
        c if c == Code::COM_STATISTICS as u8 => Command::Statistics,
        c if c == Code::COM_RESET_CONNECTION as u8 => Command::ResetConnection,
        c if c == Code::COM_STMT_CLOSE as u8 => {
            Command::StmtClose(Reader::new(body, "COM_STMT_CLOSE").u32()?)
        }
        c if c == Code::COM_STMT_RESET as u8 => {
            Command::StmtReset(Reader::new(body, "COM_STMT_RESET").u32()?)
        }
        c if c == Code::COM_STMT_SEND_LONG_DATA as u8 => {
            let mut r = Reader::new(body, "COM_STMT_SEND_LONG_DATA");
            Command::StmtSendLongData {
                stmt_id: r.u32()?,
                param: r.u16()?,
                data: r.rest().to_vec(),
            }
        }
        c if c == Code::COM_SET_OPTION as u8 => {
            Command::SetOption(Reader::new(body, "COM_SET_OPTION").u16()?)
        }
        c if c == Code::COM_FIELD_LIST as u8 => {
            let table = body.split(|&b| b == 0).next().unwrap_or_default();
            Command::FieldList(utf8(table, "table name")?)
        }
        other => Command::Unknown(other),
    };
    Ok(command)
}

#[cfg(test)]
mod tests;
