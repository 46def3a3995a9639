//! `COPY … FROM STDIN` and `COPY … TO STDOUT`: the sub-protocols that stream a load's data
//! after the statement, and a copy's data after its answer.

use bytes::Bytes;
use pgwire::messages::PgWireBackendMessage as Out;
use pgwire::messages::PgWireFrontendMessage as In;
use pgwire::messages::copy::{CopyData, CopyDone, CopyInResponse, CopyOutResponse};
use tokio::sync::mpsc;

use super::Connection;
use crate::copy::CopyIn;
use crate::copy::out::{CopyOut, Malformed, Merge};
use crate::error::Error;
use crate::postgres::copy_binary;
use crate::postgres::pg_error::PgError;
use crate::postgres::wire::{Wire, WireError};
use crate::reply::Reply;

impl Connection {
    /// Runs the copy the statement just answered left pending, if any: COPY FROM STDIN's data
    /// in, or COPY TO STDOUT's out. Its command tag, or why it failed.
    pub(super) async fn pending_copy(
        &mut self,
        wire: &mut Wire,
    ) -> Result<Option<Result<String, PgError>>, WireError> {
        if let Some(copy) = self.session.copy_in.take() {
            return self.copy_from_stdin(wire, &copy).await.map(Some);
        }
        if let Some(copy) = self.session.copy_out.take() {
            return self.copy_to_stdout(wire, &copy).await.map(Some);
        }
        Ok(None)
    }

    /// Asks for the data (CopyInResponse) and takes CopyData until CopyDone: text and CSV
    /// rows are inserted as they arrive, binary data once it is all there, all in one
    /// transaction (see `engine::copy_in`): all rows or none. CopyFail, an error or another
    /// message end it with an error and nothing inserted. Returns the command tag.
    async fn copy_from_stdin(
        &mut self,
        wire: &mut Wire,
        copy: &CopyIn,
    ) -> Result<Result<String, PgError>, WireError> {
        // A binary load's fields are read by its columns' types, known before the data comes.
        // Its columns are checked against the table's first, whatever the format.
        let engine = &self.engine;
        let types = match engine.copy_column_types(copy).await {
            Ok(types) if copy.is_binary() => types.map(Some).ok_or_else(|| {
                Error::unsupported(format!(
                    "binary COPY into {}: its column types are not known (only sharded \
                     tables' are)",
                    copy.table_and_columns().0
                ))
            }),
            Ok(_) => Ok(None),
            Err(e) => Err(e),
        };
        let started = match types {
            Ok(types) => engine
                .load_start(&mut self.session, copy)
                .await
                .map(|load| (types, load)),
            Err(e) => Err(e),
        };
        let (types, mut load) = match started {
            Ok(started) => started,
            Err(e) => {
                self.session.statement_failed();
                return Ok(Err(e.into()));
            }
        };
        let columns = types.as_ref().map_or(copy.columns().unwrap_or(0), Vec::len);
        let width = i16::try_from(columns).unwrap_or(i16::MAX);
        let format = i8::from(types.is_some());
        wire.send(Out::CopyInResponse(CopyInResponse::new(
            format,
            width,
            vec![i16::from(format); columns],
        )))
        .await?;
        wire.flush().await?;
        let limit = engine.copy_limit();
        // Binary data, read whole.
        let mut data = Vec::new();
        let mut failed: Option<Error> = None;
        let mut ended: Option<PgError> = None;
        loop {
            let Some(message) = wire.read_message().await? else {
                return Err(WireError::Io(std::io::ErrorKind::UnexpectedEof.into()));
            };
            match message {
                In::CopyData(chunk) if failed.is_none() => {
                    let fed = if types.is_none() {
                        engine
                            .load_feed(&mut self.session, &mut load, &chunk.data)
                            .await
                    } else if data.len() + chunk.data.len() > limit {
                        data = Vec::new();
                        Err(Error::new(
                            crate::error::ErrorKind::OutOfMemory,
                            format!(
                                "binary COPY data over {limit} bytes: it is read whole (raise \
                                 props.statement-memory-bytes, split the load, or send text)"
                            ),
                        ))
                    } else {
                        data.extend_from_slice(&chunk.data);
                        Ok(())
                    };
                    // What comes after an error is read and dropped, up to CopyDone.
                    failed = fed.err();
                }
                In::CopyData(_) | In::Flush(_) | In::Sync(_) => {}
                In::CopyDone(_) => break,
                In::CopyFail(fail) => {
                    ended = Some(PgError::new(
                        "57014",
                        format!("COPY from stdin failed: {}", fail.message),
                    ));
                    break;
                }
                _ => {
                    ended = Some(PgError::new(
                        "08P01",
                        "unexpected message during COPY from stdin",
                    ));
                    break;
                }
            }
        }
        // Binary data, all there now, is read by the columns' types.
        let binary = match (&ended, &failed, types) {
            (None, None, Some(types)) => copy_binary::rows(&std::mem::take(&mut data), &types),
            _ => Ok(Vec::new()),
        };
        let ended = ended.or(binary.as_ref().err().cloned());
        if let Some(ended) = ended {
            let abandoned = Error::new(crate::error::ErrorKind::Internal, "COPY ended");
            let _ = engine
                .load_finish(&mut self.session, load, Some(abandoned))
                .await;
            return Ok(Err(ended));
        }
        if let (Ok(rows), None) = (binary, &failed) {
            failed = engine
                .load_rows(&mut self.session, &mut load, rows)
                .await
                .err();
        }
        let reply = engine.load_finish(&mut self.session, load, failed).await;
        Ok(match reply {
            Ok(Reply::Ok { affected_rows, .. }) => Ok(format!("COPY {affected_rows}")),
            Ok(reply @ (Reply::Rows { .. } | Reply::Streamed { .. })) => Ok(format!(
                "COPY {}",
                reply.rows_returned().unwrap_or_default()
            )),
            Err(e) => Err(e.into()),
        })
    }

    /// Passes on the data of each unit of `copy` in turn, joined into one stream
    /// (CopyOutResponse, CopyData…, CopyDone); returns the command tag. The response goes out
    /// with the first data, so a node refusing the statement is answered as the database would
    /// (an error, no copy), and it says as many columns as the first row has. A node failing
    /// later ends the copy with its error, as the database ends one it cannot finish.
    async fn copy_to_stdout(
        &mut self,
        wire: &mut Wire,
        copy: &CopyOut,
    ) -> Result<Result<String, PgError>, WireError> {
        let mut merge = Merge::new(&copy.format);
        let mut started = false;
        let binary = i8::from(copy.format == crate::copy::Format::Binary);
        let respond = |columns: Option<usize>| {
            let columns = columns.or(copy.columns).unwrap_or(0);
            Out::CopyOutResponse(CopyOutResponse::new(
                binary,
                i16::try_from(columns).unwrap_or(i16::MAX),
                vec![i16::from(binary); columns],
            ))
        };
        for (i, unit) in copy.plan.units.iter().enumerate() {
            if i > 0
                && let Err(e) = merge.next_unit()
            {
                return Ok(Err(malformed(e)));
            }
            // The node's data is read and written out at once, a few chunks apart.
            let (sink, chunks) = mpsc::channel::<Bytes>(COPY_CHUNKS_IN_FLIGHT);
            let copy_unit = self.engine.copy_out(&mut self.session, unit, sink);
            let pass_on = async {
                // Owned here, so that it is dropped when passing on stops, which ends the
                // node's copy.
                let mut chunks = chunks;
                let mut out = Vec::new();
                while let Some(chunk) = chunks.recv().await {
                    merge.feed(&chunk, &mut out).map_err(Sink::Malformed)?;
                    if out.is_empty() {
                        continue;
                    }
                    if !started {
                        started = true;
                        wire.send(respond(merge.columns()))
                            .await
                            .map_err(Sink::Wire)?;
                    }
                    let data = Bytes::from(std::mem::take(&mut out));
                    wire.send(Out::CopyData(CopyData::new(data)))
                        .await
                        .map_err(Sink::Wire)?;
                }
                Ok(())
            };
            let (copied, passed) = tokio::join!(copy_unit, pass_on);
            match (passed, copied) {
                (Err(Sink::Wire(e)), _) => return Err(e),
                (Err(Sink::Malformed(e)), _) => return Ok(Err(malformed(e))),
                (Ok(()), Err(e)) => return Ok(Err(e.into())),
                (Ok(()), Ok(())) => {}
            }
        }
        let mut end = Vec::new();
        if let Err(e) = merge.finish(&mut end) {
            return Ok(Err(malformed(e)));
        }
        if !started {
            wire.send(respond(merge.columns())).await?;
        }
        if !end.is_empty() {
            wire.send(Out::CopyData(CopyData::new(Bytes::from(end))))
                .await?;
        }
        wire.send(Out::CopyDone(CopyDone::new())).await?;
        Ok(Ok(format!("COPY {}", merge.rows())))
    }
}

/// Chunks of a node's copy data read ahead of the client.
const COPY_CHUNKS_IN_FLIGHT: usize = 16;

/// Why a chunk of copy data was not passed on.
enum Sink {
    Wire(WireError),
    Malformed(Malformed),
}

fn malformed(e: Malformed) -> PgError {
    PgError::new("08P01", e.to_string())
}
