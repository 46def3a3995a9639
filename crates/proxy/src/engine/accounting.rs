//! What follows every statement from a client, however it came: the session's `ROW_COUNT()`
//! and `FOUND_ROWS()`, its transaction failed by an error, and the proxy's and the session's
//! counts.

use std::time::Instant;

use keyshard_types::Dialect;

use super::Engine;
use crate::error::Error;
use crate::metrics::CountedAs;
use crate::reply::Reply;
use crate::session::Session;

impl Engine {
    /// After a statement from a client: a failure may fail its transaction, and both count.
    pub(super) fn finished(
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
        session.mysql.row_count = match reply {
            Ok(Reply::Ok { affected_rows, .. }) => i64::try_from(*affected_rows).unwrap_or(-1),
            Ok(Reply::Rows { .. } | Reply::Streamed { .. }) | Err(_) => -1,
        };
        let calculated = session.mysql.calculated_found_rows.take();
        if let Ok(reply) = reply
            && let Some(rows) = reply.rows_returned()
        {
            session.mysql.found_rows = calculated.unwrap_or(rows);
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
        let counts = &mut session.mysql.statements;
        self.instance
            .metrics
            .statement(session.dialect, counted, took, code, counts);
    }
}
