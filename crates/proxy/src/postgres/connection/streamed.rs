//! Result rows written to the client as the shards send them (see `keyshard_backend::stream`).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use keyshard_backend::stream::Batches;

use super::super::describe::{Field, result_fields};
use super::super::formats::{check_written_as_asked, push_data_row, push_row_description};
use super::super::pg_error::PgError;
use super::super::wire::{Wire, WireError};
use crate::dialect::postgres::ProxyText;
use crate::reply::Reply;

/// How a statement's rows go out.
pub(super) struct RowsOut<'a> {
    /// A RowDescription before the rows (the simple protocol; the extended protocol's went
    /// out at Describe, when the client asked).
    pub(super) describe: bool,
    /// The fields the client was told of: the rows go out as they say, when as many.
    pub(super) known: Option<&'a [Field]>,
    /// The result formats Bind asked for (none: text).
    pub(super) formats: &'a [i16],
}

/// Why the rows stopped going out.
enum Stopped {
    /// They cannot be written as the client asked: the statement's error.
    Rows(PgError),
    /// The client's connection failed.
    Wire(WireError),
}

/// Runs `run`, a statement of the session whose tap `batches` receives from (if it has one), writing the rows
/// of its read to `wire` as they arrive (it then answers [`Reply::Streamed`] and the caller
/// ends the result with its tag); `text` says which values the proxy may write in text.
/// `Ok(Err(_))`: the statement failed, or its rows could not be written as asked; the error is
/// the caller's to send. `Err`: the client's connection failed.
///
/// `run` is pinned where the caller made it: the engine's future is large, and moving it (into
/// a box or a join) would copy it for every statement.
pub(super) async fn answer(
    wire: &mut Wire,
    run: Pin<&mut impl Future<Output = Result<(Reply, String), PgError>>>,
    batches: Option<Batches>,
    out: RowsOut<'_>,
    text: &ProxyText,
) -> Result<Result<(Reply, String), PgError>, WireError> {
    let write = async {
        let Some(mut batches) = batches else {
            return Ok(());
        };
        let RowsOut {
            describe,
            known,
            formats,
        } = out;
        let mut fields: Option<Cow<'_, [Field]>> = None;
        while let Some(batch) = batches.recv().await {
            let fields = match &mut fields {
                Some(fields) => fields,
                None => {
                    let columns = batch.columns.unwrap_or_default();
                    // Each column makes one field: the fields the client was told of, when as
                    // many, are taken as they are, and none are derived.
                    let first = match known {
                        Some(known) if known.len() == columns.len() => Cow::Borrowed(known),
                        _ => Cow::Owned(result_fields(&columns, &batch.rows)),
                    };
                    if describe {
                        push_row_description(wire.buffer(), &first, &[]).map_err(Stopped::Rows)?;
                        wire.queued().await.map_err(Stopped::Wire)?;
                    }
                    fields.insert(first)
                }
            };
            check_written_as_asked(text, fields, &batch.rows, formats).map_err(Stopped::Rows)?;
            for row in &batch.rows {
                push_data_row(wire.buffer(), row, fields, formats).map_err(Stopped::Rows)?;
                wire.queued().await.map_err(Stopped::Wire)?;
            }
            wire.flush().await.map_err(Stopped::Wire)?;
        }
        Ok(())
    };
    // Returning from `write` drops the receiver: a statement whose rows stopped going out
    // fails, and its shard reads stop.
    let (ran, written) = tokio::join!(run, write);
    match written {
        Ok(()) => Ok(ran),
        Err(Stopped::Rows(e)) => Ok(Err(e)),
        Err(Stopped::Wire(e)) => Err(e),
    }
}
