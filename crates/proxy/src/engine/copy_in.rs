//! The data of a `COPY … FROM STDIN`, once the client has sent it all: its rows become one
//! multi-row INSERT, keys generated and rows routed as for any other.

use std::time::Instant;

use keyshard_backend::SqlType;
use keyshard_router::Value;

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

    /// Inserts the rows of `data`, what the client streamed for `copy` in text or CSV.
    pub(crate) async fn copy_in(
        &self,
        session: &mut Session,
        copy: &CopyIn,
        data: Vec<u8>,
    ) -> Result<Reply, Error> {
        let rows = String::from_utf8(data)
            .map_err(|e| {
                Error::new(
                    ErrorKind::InvalidEncoding,
                    format!("invalid byte sequence for encoding \"UTF8\" in COPY data: {e}"),
                )
            })
            .and_then(|data| copy.rows(&data));
        match rows {
            Ok(rows) => self.copy_rows(session, copy, rows).await,
            Err(e) => {
                let reply = Err(e);
                self.finished(session, "copy", Instant::now(), &reply);
                reply
            }
        }
    }

    /// Inserts `rows`, read from what the client streamed for `copy` (by `copy_in`, or by the
    /// PostgreSQL frontend for the binary format).
    pub(crate) async fn copy_rows(
        &self,
        session: &mut Session,
        copy: &CopyIn,
        rows: Vec<Vec<Value>>,
    ) -> Result<Reply, Error> {
        let started = Instant::now();
        let reply = async {
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

    /// The declared types of the columns `copy` loads, in its order: what a binary COPY's
    /// fields are read as. Read from the logic table's metadata (loaded now when the table was
    /// created after start); `None` when it has none (a table without a rule). A column the
    /// table does not have is refused before any data is asked for, as PostgreSQL does.
    pub(crate) async fn copy_column_types(
        &self,
        copy: &CopyIn,
    ) -> Result<Option<Vec<SqlType>>, Error> {
        let (table, named) = copy.table_and_columns();
        let metadata = self.backend.metadata();
        if metadata.columns(&table).is_none()
            && let Some(rule) = self.config.sharding.table(&table)
            && let Err(e) = self.backend.refresh_metadata(rule).await
        {
            tracing::debug!("columns of {table} not read: {e}");
        }
        let Some(columns) = metadata.columns(&table) else {
            return Ok(None);
        };
        let Some(named) = named else {
            return Ok(Some(columns.iter().map(|c| c.ty).collect()));
        };
        named
            .iter()
            .map(|name| {
                columns
                    .iter()
                    .find(|c| c.name.eq_ignore_ascii_case(name))
                    .map(|c| c.ty)
                    .ok_or_else(|| {
                        Error::new(
                            ErrorKind::UnknownColumn,
                            format!("column \"{name}\" of relation \"{table}\" does not exist"),
                        )
                    })
            })
            .collect::<Result<_, _>>()
            .map(Some)
    }
}
