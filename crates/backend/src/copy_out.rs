//! `COPY … TO STDOUT` on one data node: its data handed on chunk by chunk as the database
//! writes it, on the session's transaction branch when it has one, so a copy reads what the
//! session's own statements see.

use bytes::Bytes;
use futures_util::TryStreamExt;
use keyshard_router::ExecutionUnit;
use sqlx::postgres::PgConnection;
use tokio::sync::mpsc::Sender;

use crate::{Backend, BackendError, Pool, Transaction};

impl Backend {
    /// Runs `unit`, a `COPY … TO STDOUT`, and sends each chunk of its data to `sink`, in
    /// order. Only PostgreSQL data sources have it. When the receiver is gone (its client
    /// went away), the copy is abandoned and its connection closed.
    pub async fn copy_out(
        &self,
        transaction: Option<&mut Transaction>,
        unit: &ExecutionUnit,
        sink: Sender<Bytes>,
    ) -> Result<(), BackendError> {
        let data_source = unit.data_source.as_str();
        let failed = |e| BackendError::from_sqlx(data_source, e);
        match transaction {
            Some(transaction) => {
                self.open_branch(transaction, data_source).await?;
                let branch = transaction
                    .branch(data_source)
                    .ok_or_else(|| not_postgres(data_source))?;
                let conn = branch.postgres().ok_or_else(|| not_postgres(data_source))?;
                let copied = pass_on(conn, &unit.sql, &sink).await;
                if !copied.keeps_connection() {
                    branch.close_connection();
                }
                copied.into_result().map_err(failed)
            }
            None => {
                let Pool::Postgres(pool) = self.pool(data_source)? else {
                    return Err(not_postgres(data_source));
                };
                let mut conn = pool.acquire().await.map_err(failed)?;
                let copied = pass_on(&mut conn, &unit.sql, &sink).await;
                match copied.keeps_connection() {
                    true => pool.release(conn),
                    false => conn.close(),
                }
                copied.into_result().map_err(failed)
            }
        }
    }
}

/// How a copy ended.
enum Copied {
    Done,
    /// Refused before its data: sqlx leaves the refusal's ReadyForQuery unread, so the next
    /// statement on the connection would read it as its own answer and each one after that
    /// the answer of the one before.
    Refused(sqlx::Error),
    /// Failed while sending data: sqlx read the connection back to ready when the database
    /// reported the failure, not otherwise.
    Failed(sqlx::Error),
}

impl Copied {
    fn keeps_connection(&self) -> bool {
        match self {
            Copied::Done => true,
            Copied::Refused(_) => false,
            Copied::Failed(e) => e.as_database_error().is_some(),
        }
    }

    fn into_result(self) -> Result<(), sqlx::Error> {
        match self {
            Copied::Done => Ok(()),
            Copied::Refused(e) | Copied::Failed(e) => Err(e),
        }
    }
}

/// Streams `sql`'s copy data into `sink`. A chunk nobody receives ends the copy early, its
/// data left pending on the connection.
async fn pass_on(conn: &mut PgConnection, sql: &str, sink: &Sender<Bytes>) -> Copied {
    let mut data = match conn.copy_out_raw(sql).await {
        Ok(data) => data,
        Err(e) => return Copied::Refused(e),
    };
    loop {
        match data.try_next().await {
            Ok(Some(chunk)) => {
                if sink.send(chunk).await.is_err() {
                    let abandoned = "copy data not read to its end".to_owned();
                    return Copied::Failed(sqlx::Error::Protocol(abandoned));
                }
            }
            Ok(None) => return Copied::Done,
            Err(e) => return Copied::Failed(e),
        }
    }
}

fn not_postgres(data_source: &str) -> BackendError {
    BackendError::NotPostgres {
        data_source: data_source.to_owned(),
        statement: "COPY … TO STDOUT",
    }
}
