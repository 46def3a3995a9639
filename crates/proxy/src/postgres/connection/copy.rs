//! `COPY … FROM STDIN`: the sub-protocol that streams a load's data after the statement.

use pgwire::messages::PgWireBackendMessage as Out;
use pgwire::messages::PgWireFrontendMessage as In;
use pgwire::messages::copy::CopyInResponse;

use super::Connection;
use crate::copy::CopyIn;
use crate::error::Error;
use crate::postgres::copy_binary;
use crate::postgres::pg_error::PgError;
use crate::postgres::wire::{Wire, WireError};
use crate::reply::Reply;

impl Connection {
    /// Asks for the data (CopyInResponse), takes CopyData until CopyDone, then inserts all its
    /// rows at once: all or none. CopyFail, data beyond the statement limit or another message
    /// end it with an error and nothing inserted. Returns the command tag.
    pub(super) async fn copy_from_stdin(
        &mut self,
        wire: &mut Wire,
        copy: &CopyIn,
    ) -> Result<Result<String, PgError>, WireError> {
        // A binary load's fields are read by its columns' types, known before the data comes.
        // Its columns are checked against the table's first, whatever the format.
        let types = match self.frontend.engine.copy_column_types(copy).await {
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
        let types = match types {
            Ok(types) => types,
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
        let limit = self.frontend.engine.copy_limit();
        let mut data = Vec::new();
        let mut refused = None;
        loop {
            let Some(message) = wire.read_message().await? else {
                return Err(WireError::Io(std::io::ErrorKind::UnexpectedEof.into()));
            };
            match message {
                In::CopyData(chunk) if refused.is_none() => {
                    if data.len() + chunk.data.len() > limit {
                        // What came is dropped at once; the rest is read and dropped too.
                        data = Vec::new();
                        refused = Some(PgError::new(
                            "53200",
                            format!(
                                "COPY data over {limit} bytes: a COPY is inserted as one \
                                 statement (raise props.statement-memory-bytes, or split \
                                 the load)"
                            ),
                        ));
                    } else {
                        data.extend_from_slice(&chunk.data);
                    }
                }
                In::CopyData(_) | In::Flush(_) | In::Sync(_) => {}
                In::CopyDone(_) => break,
                In::CopyFail(fail) => {
                    return Ok(Err(PgError::new(
                        "57014",
                        format!("COPY from stdin failed: {}", fail.message),
                    )));
                }
                _ => {
                    return Ok(Err(PgError::new(
                        "08P01",
                        "unexpected message during COPY from stdin",
                    )));
                }
            }
        }
        if let Some(error) = refused {
            return Ok(Err(error));
        }
        let engine = &self.frontend.engine;
        let reply = match types {
            Some(types) => {
                let rows = copy_binary::rows(&data, &types);
                drop(data);
                match rows {
                    Ok(rows) => engine.copy_rows(&mut self.session, copy, rows).await,
                    Err(e) => {
                        self.session.statement_failed();
                        return Ok(Err(e));
                    }
                }
            }
            None => engine.copy_in(&mut self.session, copy, data).await,
        };
        Ok(match reply {
            Ok(Reply::Ok { affected_rows, .. }) => Ok(format!("COPY {affected_rows}")),
            Ok(Reply::Rows { rows, .. }) => Ok(format!("COPY {}", rows.len())),
            Err(e) => Err(e.into()),
        })
    }
}
