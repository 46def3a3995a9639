//! Result rows written to the client as the shards send them (see `keyshard_backend::stream`).

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use keyshard_backend::Column;
use keyshard_backend::stream::Batches;
use keyshard_types::Value;
use mysql_common::constants::{CapabilityFlags, StatusFlags};

use super::{PacketIo, Stream};
use crate::engine::Engine;
use crate::error::Error;
use crate::mysql::protocol::response::{self, Naming, ResultColumn};
use crate::reply::Reply;

/// How a result goes to this connection's client.
pub(super) struct Written<'a> {
    pub(super) engine: &'a Engine,
    /// The logical database, which result columns read from a table name as theirs.
    pub(super) database: &'a Bytes,
    pub(super) caps: CapabilityFlags,
    pub(super) extended_metadata: bool,
    /// Rows in the binary protocol (COM_STMT_EXECUTE), else in text.
    pub(super) binary: bool,
    /// What the EOF after the column definitions says of the session.
    pub(super) status: StatusFlags,
}

/// Runs `run`, a statement of the session whose tap `batches` receives from (if it has one), writing its
/// read's rows to the client as they arrive: the column definitions with the first batch,
/// then each batch, flushed, so that the client's pace sets the shards'. Such a statement
/// answers [`Reply::Streamed`], whose end the caller writes; so does a result answered whole
/// of more than [`PART`] rows, written here in flushed parts. Any other answer is the caller's
/// to send.
///
/// `run` is pinned where the caller made it: the engine's future is large, and moving it (into
/// a box or a join) would copy it for every statement.
pub(super) async fn answer(
    io: &mut PacketIo<Stream>,
    run: Pin<&mut impl Future<Output = Result<Reply, Error>>>,
    batches: Option<Batches>,
    written: &Written<'_>,
) -> Result<Reply, Error> {
    let write = async {
        let Some(mut batches) = batches else { return };
        let mut columns = None;
        while let Some(batch) = batches.recv().await {
            let columns = columns.get_or_insert_with(|| {
                let described = batch.columns.unwrap_or_default();
                let first =
                    result_columns(written.engine, written.database, &described, &batch.rows);
                written.head(io, &first);
                first
            });
            response::write_rows(io, columns, &batch.rows, written.binary);
            // A client that went away ends the statement: its shard reads stop.
            if io.flush().await.is_err() {
                break;
            }
        }
    };
    let reply = tokio::join!(run, write).0;
    // A result answered whole (merged) goes out in flushed parts too, each encoded as it goes:
    // the encoded rows are never all held beside the rows.
    match reply {
        Ok(Reply::Rows { columns, rows }) if rows.len() > PART && !columns.is_empty() => {
            let columns = result_columns(written.engine, written.database, &columns, &rows);
            written.head(io, &columns);
            let count = rows.len() as u64;
            let mut rows = rows.into_iter();
            loop {
                let part: Vec<_> = rows.by_ref().take(PART).collect();
                if part.is_empty() {
                    break;
                }
                response::write_rows(io, &columns, &part, written.binary);
                if io.flush().await.is_err() {
                    break;
                }
            }
            Ok(Reply::Streamed { rows: count })
        }
        other => other,
    }
}

/// Rows of a whole result encoded at a time.
const PART: usize = 256;

impl Written<'_> {
    fn head(&self, io: &mut PacketIo<Stream>, columns: &[ResultColumn]) {
        response::write_result_head(io, self.caps, self.extended_metadata, columns, self.status);
    }
}

/// Result columns as the client is told them: as the shards described them, with the logical
/// database and logic tables named, each typed by its first value in `rows` where the shard
/// gave no type.
pub(super) fn result_columns(
    engine: &Engine,
    database: &Bytes,
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
