//! Result rows written to the client as the shards send them (see `keyshard_backend::stream`).

use keyshard_backend::{Column, stream};
use keyshard_router::Value;

use super::{Connection, PacketIo, Stream};
use crate::engine::Engine;
use crate::error::Error;
use crate::mysql::protocol::response::{self, Naming, ResultColumn};
use crate::reply::Reply;
use crate::session::Statement;

/// The statement [`Connection::streamed`] runs.
pub(super) enum Work<'a> {
    /// COM_QUERY's text: rows in the text protocol.
    Query(&'a str),
    /// COM_STMT_EXECUTE's statement and parameters: rows in the binary protocol.
    Execute(&'a Statement, &'a [Value]),
}

impl Connection {
    /// Runs `work`, one statement of the session, writing its read's rows to the client as
    /// they arrive: the column definitions with the first batch, then each batch, flushed, so
    /// that the client's pace sets the shards'. Such a statement answers [`Reply::Streamed`],
    /// whose end `send_result` writes; any other answer is sent whole by the caller. `more`:
    /// another result of the same COM_QUERY follows.
    pub(super) async fn streamed(
        &mut self,
        io: &mut PacketIo<Stream>,
        more: bool,
        work: Work<'_>,
    ) -> Result<Reply, Error> {
        let status = self.status(more);
        let binary = matches!(work, Work::Execute(..));
        let (tap, mut batches) = stream::channel();
        let Connection {
            session,
            engine,
            caps,
            extended_metadata,
            database,
            ..
        } = self;
        let engine: &Engine = engine;
        // Boxed: the engine's future inline in the connection's takes too much stack (and
        // goes past the compiler's depth limit for computing its layout).
        let run = Box::pin(async {
            session.stream = Some(tap);
            let reply = match work {
                Work::Query(sql) => engine.query(session, sql).await,
                Work::Execute(statement, params) => {
                    session.binary_results = true;
                    let reply = engine.execute(session, statement, params).await;
                    session.binary_results = false;
                    reply
                }
            };
            // The read took it if it streamed; a tap left unused would keep `write` waiting.
            session.stream = None;
            reply
        });
        let write = async {
            let mut columns = None;
            while let Some(batch) = batches.recv().await {
                let columns = columns.get_or_insert_with(|| {
                    let described = batch.columns.unwrap_or_default();
                    let first = result_columns(engine, database, &described, &batch.rows);
                    response::write_result_head(io, *caps, *extended_metadata, &first, status);
                    first
                });
                response::write_rows(io, columns, &batch.rows, binary);
                // A client that went away ends the statement: its shard reads stop.
                if io.flush().await.is_err() {
                    break;
                }
            }
        };
        let reply = tokio::join!(run, write).0;
        // A result answered whole (merged) goes out in flushed parts too, each encoded as it
        // goes: the encoded rows are never all held beside the rows.
        match reply {
            Ok(Reply::Rows { columns, rows }) if rows.len() > PART && !columns.is_empty() => {
                let columns = result_columns(engine, database, &columns, &rows);
                response::write_result_head(io, *caps, *extended_metadata, &columns, status);
                let count = rows.len() as u64;
                let mut rows = rows.into_iter();
                loop {
                    let part: Vec<_> = rows.by_ref().take(PART).collect();
                    if part.is_empty() {
                        break;
                    }
                    response::write_rows(io, &columns, &part, binary);
                    if io.flush().await.is_err() {
                        break;
                    }
                }
                Ok(Reply::Streamed { rows: count })
            }
            other => other,
        }
    }
}

/// Rows of a whole result encoded at a time.
const PART: usize = 256;

/// Result columns as the client is told them: as the shards described them, with the logical
/// database and logic tables named, each typed by its first value in `rows` where the shard
/// gave no type.
pub(super) fn result_columns(
    engine: &Engine,
    database: &bytes::Bytes,
    columns: &[Column],
    rows: &[Vec<Value>],
) -> Vec<ResultColumn> {
    let logic_table = |actual: &str| engine.mysql_logic_table(actual);
    let naming = Naming {
        database,
        logic_table: &logic_table,
    };
    columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let sample = rows
                .iter()
                .map(|r| r.get(i))
                .find(|v| !matches!(v, None | Some(Value::Null)))
                .flatten();
            ResultColumn::of_column(c, sample, Some(&naming))
        })
        .collect()
}
