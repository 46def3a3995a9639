//! A statement prepared with COM_STMT_PREPARE, and what the binary protocol keeps beside it
//! between executions, within the session's memory.

use std::collections::HashMap;
use std::sync::Arc;

use mysql_common::constants::ColumnType;

use super::super::protocol::packet::DEFAULT_MAX_PAYLOAD;
use crate::error::{Error, ErrorKind};
use crate::memory::{Charge, SessionMemory, Weigh};
use crate::session::Statement;

#[derive(Debug)]
pub(crate) struct PreparedStatement {
    pub(super) statement: Arc<Statement>,
    /// Parameter types sent with an earlier execution, reused when a client does not resend them.
    pub(super) param_types: Vec<(ColumnType, bool)>,
    pub(super) long_data: LongData,
    /// What keeping the statement takes ([`crate::memory::kept_estimate`] of its text).
    weight: usize,
}

impl PreparedStatement {
    /// `statement`, prepared from `sql`, with its long data charged to `memory`.
    pub(super) fn new(statement: Statement, sql: &str, memory: &Arc<SessionMemory>) -> Self {
        Self {
            statement: Arc::new(statement),
            param_types: Vec::new(),
            long_data: LongData {
                chunks: HashMap::new(),
                charge: memory.empty(),
                refused: None,
            },
            weight: crate::memory::kept_estimate(sql),
        }
    }

    /// Keeps a chunk of a long parameter (see [`LongData`]).
    pub(super) fn add_long_data(&mut self, param: u16, data: &[u8]) {
        let params = self.statement.param_count;
        self.long_data.add(param, data, params);
    }
}

impl Weigh for PreparedStatement {
    fn weight(&self) -> usize {
        self.weight
    }
}

/// `COM_STMT_SEND_LONG_DATA` chunks by parameter, until the next execution: within the
/// parameter count, over all parameters within the packet limit, and within what the session
/// may keep.
#[derive(Debug)]
pub(crate) struct LongData {
    chunks: HashMap<u16, Vec<u8>>,
    charge: Charge,
    /// Why long data was refused since the last execution: the protocol has no reply to
    /// `COM_STMT_SEND_LONG_DATA`, so the next execution reports it, as MySQL does.
    refused: Option<Error>,
}

impl LongData {
    fn add(&mut self, param: u16, data: &[u8], params: usize) {
        if self.refused.is_some() {
            return;
        }
        if usize::from(param) >= params {
            return self.refuse(Error::new(
                ErrorKind::BadArguments,
                "Incorrect arguments to mysqld_stmt_send_long_data: no such parameter",
            ));
        }
        let held: usize = self.chunks.values().map(Vec::len).sum::<usize>() + data.len();
        if held > DEFAULT_MAX_PAYLOAD {
            return self.refuse(Error::new(
                ErrorKind::TooLarge,
                "Parameter of prepared statement which is set through mysql_send_long_data() is \
                 longer than 'max_allowed_packet' bytes",
            ));
        }
        if let Err(e) = self.charge.resize(held, "COM_STMT_SEND_LONG_DATA") {
            return self.refuse(e);
        }
        self.chunks
            .entry(param)
            .or_default()
            .extend_from_slice(data);
    }

    fn refuse(&mut self, error: Error) {
        self.clear();
        self.refused = Some(error);
    }

    /// Why the long data since the last execution was refused, if it was; it is then
    /// dropped.
    pub(super) fn refused(&mut self) -> Option<Error> {
        let refused = self.refused.take();
        if refused.is_some() {
            self.clear();
        }
        refused
    }

    /// The chunks, for the execution to take.
    pub(super) fn chunks(&mut self) -> &mut HashMap<u16, Vec<u8>> {
        &mut self.chunks
    }

    /// Drops everything, refusal included: the statement starts over.
    pub(super) fn clear(&mut self) {
        self.chunks.clear();
        self.charge.shrink_to(0);
        self.refused = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::StatementKind;

    fn prepared(param_count: usize) -> PreparedStatement {
        let statement = Statement {
            kind: StatementKind::Text("SELECT ?".into()),
            param_count,
            effect: None,
            leading: keyshard_router::Leading::Select,
        };
        PreparedStatement::new(statement, "SELECT ?", &Arc::default())
    }

    #[test]
    fn long_data_for_a_parameter_that_does_not_exist_is_refused() {
        let mut statement = prepared(1);
        statement.add_long_data(0, b"kept");
        statement.add_long_data(7, &[0; 1024]);
        assert!(statement.long_data.chunks.is_empty());
        let refused = statement.long_data.refused.as_ref().unwrap();
        assert_eq!(refused.mysql_code().0, 1210);
        // Nothing more is kept until the next execution reports the refusal.
        statement.add_long_data(0, b"more");
        assert!(statement.long_data.chunks.is_empty());
    }

    #[test]
    fn long_data_beyond_the_packet_limit_is_refused_without_being_kept() {
        let mut statement = prepared(2);
        let chunk = vec![0u8; 16 * 1024 * 1024];
        for _ in 0..4 {
            statement.add_long_data(1, &chunk);
        }
        assert_eq!(statement.long_data.chunks[&1].len(), 64 * 1024 * 1024);
        statement.add_long_data(0, b"one byte too many");
        assert!(statement.long_data.chunks.is_empty());
        let refused = statement.long_data.refused().unwrap();
        assert_eq!(refused.mysql_code(), (1153, "08S01"));
        assert!(statement.long_data.refused.is_none());
    }
}
