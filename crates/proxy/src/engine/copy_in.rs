//! The data of a `COPY … FROM STDIN`, once the client has sent it all: its rows become one
//! multi-row INSERT, keys generated and rows routed as for any other.

use std::time::Instant;

use super::Engine;
use crate::copy::CopyIn;
use crate::error::{Error, ErrorKind};
use crate::reply::Reply;
use crate::session::Session;

impl Engine {
    /// The most COPY data one statement may send: its INSERT takes about four times its size
    /// (see `memory::estimate`), within the statement limit.
    pub(crate) fn copy_limit(&self) -> usize {
        self.config.props.statement_memory / 4
    }

    /// Inserts the rows of `data`, what the client streamed for `copy`.
    pub(crate) async fn copy_in(
        &self,
        session: &mut Session,
        copy: &CopyIn,
        data: Vec<u8>,
    ) -> Result<Reply, Error> {
        let started = Instant::now();
        let reply = async {
            let data = String::from_utf8(data).map_err(|e| {
                Error::new(
                    ErrorKind::InvalidEncoding,
                    format!("invalid byte sequence for encoding \"UTF8\" in COPY data: {e}"),
                )
            })?;
            let rows = copy.rows(&data)?;
            drop(data);
            if rows.is_empty() {
                return Ok(Reply::done());
            }
            let sql = copy.insert(&rows);
            drop(rows);
            self.insert_rows(session, &sql).await
        }
        .await;
        self.finished(session, "copy", started, &reply);
        reply
    }
}
