//! The data of a `COPY … FROM STDIN` or `LOAD DATA LOCAL INFILE`: its rows become multi-row
//! INSERTs, keys generated and rows routed as for any other. A load in text or CSV is
//! inserted as its data arrives, [`ROWS_PER_INSERT`] rows at a time, inside one transaction
//! (the session's, or one the load opens and ends), so that it holds one batch in memory
//! however long it is, and stores all its rows or none. Binary data is read whole.

use std::time::Instant;

use keyshard_backend::Characteristics;
use keyshard_types::SqlType;
use keyshard_types::Value;

use super::Engine;
use crate::control::Control;
use crate::copy::CopyIn;
use crate::error::{Error, ErrorKind};
use crate::metrics::CountedAs;
use crate::reply::Reply;
use crate::session::Session;

/// Rows per INSERT of a load: within a SNOWFLAKE generator's 4,096 keys per statement, and
/// a statement of a few MiB at most.
const ROWS_PER_INSERT: usize = 1000;

/// A load whose data is arriving.
#[derive(Debug)]
pub(crate) struct Load {
    /// The load, as its next rows are read (its header and skipped lines dropped once).
    copy: CopyIn,
    /// Data not yet inserted: less than a batch of rows, or a row not complete yet.
    pending: Vec<u8>,
    /// Rows inserted so far, and the first key generated.
    rows: u64,
    first_key: u64,
    /// The load opened the transaction it runs in, and ends it.
    opened: bool,
    started: Instant,
}

impl Engine {
    /// The most data a load holds at once: one row, or a binary load whole. Its INSERT takes
    /// about eight times its size (see `memory::estimate`), within the statement limit.
    pub(crate) fn copy_limit(&self) -> usize {
        self.config.props.statement_memory / 8
    }

    /// Begins a load in text or CSV: a transaction, unless the session is in one.
    pub(crate) async fn load_start(
        &self,
        session: &mut Session,
        copy: &CopyIn,
    ) -> Result<Load, Error> {
        let opened = !session.in_transaction();
        if opened {
            self.control(session, Control::Begin(Characteristics::default()))
                .await?;
        }
        Ok(Load {
            copy: copy.clone(),
            pending: Vec::new(),
            rows: 0,
            first_key: 0,
            opened,
            started: Instant::now(),
        })
    }

    /// Takes a chunk of the load's data, and inserts each batch of rows it completes.
    pub(crate) async fn load_feed(
        &self,
        session: &mut Session,
        load: &mut Load,
        chunk: &[u8],
    ) -> Result<(), Error> {
        load.pending.extend_from_slice(chunk);
        let mut done = 0;
        while let Some(end) = load.copy.rows_end(&load.pending[done..], ROWS_PER_INSERT) {
            let batch = load.pending[done..done + end].to_vec();
            done += end;
            self.load_batch(session, load, batch).await?;
        }
        load.pending.drain(..done);
        if load.pending.len() > self.copy_limit() {
            return Err(Error::new(
                ErrorKind::OutOfMemory,
                format!(
                    "a row of the load is over {} bytes (props.statement-memory-bytes / 8)",
                    self.copy_limit()
                ),
            ));
        }
        Ok(())
    }

    /// Inserts the rest of the load and ends the transaction it opened: the load's reply.
    /// On an error, what the load opened is rolled back; within the session's transaction,
    /// that transaction then fails as any statement's error makes it.
    pub(crate) async fn load_finish(
        &self,
        session: &mut Session,
        mut load: Load,
        failed: Option<Error>,
    ) -> Result<Reply, Error> {
        let rest = std::mem::take(&mut load.pending);
        let inserted = match failed {
            Some(e) => Err(e),
            None => self.load_batch(session, &mut load, rest).await,
        };
        let end = match inserted {
            Ok(()) => Control::Commit { chain: false },
            Err(_) => Control::Rollback { chain: false },
        };
        let ended = match load.opened {
            true => self.control(session, end).await.map(drop),
            false => Ok(()),
        };
        let reply = inserted.and(ended).map(|()| Reply::Ok {
            affected_rows: load.rows,
            last_insert_id: load.first_key,
        });
        self.finished(session, CountedAs::Other, load.started, &reply);
        reply
    }

    /// Inserts `rows` of a binary load, read whole by the frontend, a batch at a time.
    pub(crate) async fn load_rows(
        &self,
        session: &mut Session,
        load: &mut Load,
        rows: Vec<Vec<Value>>,
    ) -> Result<(), Error> {
        for batch in rows.chunks(ROWS_PER_INSERT) {
            self.insert_batch(session, load, batch).await?;
        }
        Ok(())
    }

    /// Inserts the rows of `data`, complete rows of the load.
    async fn load_batch(
        &self,
        session: &mut Session,
        load: &mut Load,
        data: Vec<u8>,
    ) -> Result<(), Error> {
        if data.is_empty() {
            return Ok(());
        }
        let text = String::from_utf8(data).map_err(|e| {
            Error::new(
                ErrorKind::InvalidEncoding,
                format!("invalid byte sequence for encoding \"UTF8\" in COPY data: {e}"),
            )
        })?;
        let rows = load.copy.rows(&text)?;
        drop(text);
        load.copy = load.copy.continued(rows.len());
        self.insert_batch(session, load, &rows).await
    }

    async fn insert_batch(
        &self,
        session: &mut Session,
        load: &mut Load,
        rows: &[Vec<Value>],
    ) -> Result<(), Error> {
        if rows.is_empty() {
            return Ok(());
        }
        let sql = load.copy.insert(rows);
        if let Reply::Ok {
            affected_rows,
            last_insert_id,
        } = self.insert_rows(session, &sql).await?
        {
            if load.first_key == 0 {
                load.first_key = last_insert_id;
            }
            load.rows += affected_rows;
        }
        Ok(())
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
