//! The nodes' rows into the gathering data source's temporary tables. The rows pass through the
//! proxy in bounded pieces, never whole: PostgreSQL's as COPY data from each node's `COPY … TO
//! STDOUT` into `COPY … FROM STDIN`, MySQL's and SQLite's as multi-row INSERTs of about
//! [`BATCH_BYTES`] each, while the node's result is still being read; the nodes of the
//! gathering data source itself, outside a transaction, by the database (`INSERT INTO …
//! SELECT`).

use bytes::Bytes;
use futures_util::TryStreamExt;
use keyshard_config::DatabaseKind;
use keyshard_router::ExecutionUnit;
use keyshard_router::gather::{Gather, GatheredTable};
use sqlx::{Either, Executor, MySql, Sqlite};

use super::literals::push_literal;
use super::{Tally, quoted};
use crate::branch::Branch;
use crate::driver::Driver;
use crate::reuse::{Connections, Kind};
use crate::{Backend, BackendError, Pool, Transaction};

/// The INSERT text that fills a temporary table in one round trip, about.
const BATCH_BYTES: usize = 1 << 20;

impl Backend {
    /// Copies every node's rows of `table` into its temporary table on `into`, a connection of
    /// the gathering data source, as INSERTs.
    pub(super) async fn fill_by_inserts<D: Gathering>(
        &self,
        mut transaction: Option<&mut Transaction>,
        into: &mut D::Connection,
        gather: &Gather,
        table: &GatheredTable,
        tally: &mut Tally,
    ) -> Result<(), BackendError>
    where
        for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    {
        let data_source = gather.data_source.as_str();
        let head = insert_head(<D as Driver>::KIND, &table.name);
        for read in &table.reads {
            self.starting(read);
            if copies_within(transaction.as_deref(), read, gather) {
                let copy = copy_within(&table.name, &read.sql, <D as Driver>::KIND);
                let done = into
                    .execute(sqlx::raw_sql(&copy))
                    .await
                    .map_err(|e| BackendError::from_sqlx(data_source, e))?;
                tally.add(D::rows_affected(&done), 0)?;
                continue;
            }
            let kinds = || BackendError::GatherKinds {
                data_source: read.data_source.clone(),
                gathering: data_source.to_owned(),
            };
            let attribute = |e: CopyError| e.attribute(&read.data_source, data_source);
            let connections = D::connections(self.pool(&read.data_source)?).ok_or_else(kinds)?;
            match transaction.as_deref_mut() {
                Some(transaction) => {
                    self.open_branch(transaction, &read.data_source).await?;
                    let from = transaction
                        .branch(&read.data_source)
                        .and_then(D::branch_connection)
                        .ok_or_else(kinds)?;
                    insert_rows::<D>(from, into, &read.sql, &head, tally)
                        .await
                        .map_err(attribute)?;
                }
                None => {
                    let mut from = connections
                        .acquire()
                        .await
                        .map_err(|e| BackendError::from_sqlx(&read.data_source, e))?;
                    let copied = insert_rows::<D>(&mut from, into, &read.sql, &head, tally).await;
                    match &copied {
                        Ok(()) => connections.release(from),
                        Err(_) => from.close(),
                    }
                    copied.map_err(attribute)?;
                }
            }
        }
        Ok(())
    }

    /// Copies every node's rows of `table` into its temporary table on `into`, as COPY data.
    pub(super) async fn fill_by_copy(
        &self,
        mut transaction: Option<&mut Transaction>,
        into: &mut sqlx::PgConnection,
        gather: &Gather,
        table: &GatheredTable,
        tally: &mut Tally,
    ) -> Result<(), BackendError> {
        let data_source = gather.data_source.as_str();
        for read in &table.reads {
            self.starting(read);
            if copies_within(transaction.as_deref(), read, gather) {
                let copy = copy_within(&table.name, &read.sql, DatabaseKind::Postgres);
                let done = into
                    .execute(sqlx::raw_sql(&copy))
                    .await
                    .map_err(|e| BackendError::from_sqlx(data_source, e))?;
                tally.add(done.rows_affected(), 0)?;
                continue;
            }
            if self.pool(&read.data_source)?.kind() != DatabaseKind::Postgres {
                return Err(BackendError::GatherKinds {
                    data_source: read.data_source.clone(),
                    gathering: data_source.to_owned(),
                });
            }
            self.copy_node(
                transaction.as_deref_mut(),
                into,
                read,
                data_source,
                &table.name,
                tally,
            )
            .await?;
        }
        Ok(())
    }

    /// A PostgreSQL node's rows into the temporary table, as COPY data passed on chunk by
    /// chunk while the node writes it.
    async fn copy_node(
        &self,
        transaction: Option<&mut Transaction>,
        into: &mut sqlx::PgConnection,
        read: &ExecutionUnit,
        data_source: &str,
        table: &str,
        tally: &mut Tally,
    ) -> Result<(), BackendError> {
        let mut copy_read = read.clone();
        copy_read.sql = format!("COPY ({}) TO STDOUT", read.sql);
        let gathering = |e| BackendError::from_sqlx(data_source, e);
        let (sink, mut chunks) = tokio::sync::mpsc::channel::<Bytes>(4);
        let mut copy_in = into
            .copy_in_raw(&format!(
                "COPY {} FROM STDIN",
                quoted(DatabaseKind::Postgres, table)
            ))
            .await
            .map_err(gathering)?;
        let receive = async {
            while let Some(chunk) = chunks.recv().await {
                let rows = chunk.iter().filter(|&&b| b == b'\n').count() as u64;
                tally.add(rows, chunk.len() as u64)?;
                copy_in.send(chunk).await.map_err(gathering)?;
            }
            Ok::<_, BackendError>(())
        };
        let (sent, received) = tokio::join!(self.copy_out(transaction, &copy_read, sink), receive);
        match (received, sent) {
            (Err(e), _) | (Ok(()), Err(e)) => {
                let _ = copy_in.abort("the gathered read failed").await;
                Err(e)
            }
            (Ok(()), Ok(())) => copy_in.finish().await.map(|_| ()).map_err(gathering),
        }
    }
}

/// The databases whose nodes' rows are gathered as INSERTs: where their connections are.
pub(super) trait Gathering: Driver + Kind {
    fn connections(pool: &Pool) -> Option<&Connections<Self>>;
    fn branch_connection(branch: &mut Branch) -> Option<&mut Self::Connection>;
}

impl Gathering for MySql {
    fn connections(pool: &Pool) -> Option<&Connections<Self>> {
        match pool {
            Pool::MySql(c) => Some(c),
            _ => None,
        }
    }
    fn branch_connection(branch: &mut Branch) -> Option<&mut Self::Connection> {
        branch.mysql()
    }
}

impl Gathering for Sqlite {
    fn connections(pool: &Pool) -> Option<&Connections<Self>> {
        match pool {
            Pool::Sqlite(c) => Some(c),
            _ => None,
        }
    }
    fn branch_connection(branch: &mut Branch) -> Option<&mut Self::Connection> {
        branch.sqlite()
    }
}

/// A failure while copying rows: on the node read, or on the gathering connection.
enum CopyError {
    Node(sqlx::Error),
    Into(sqlx::Error),
    Limit(BackendError),
}

impl CopyError {
    fn attribute(self, node: &str, gathering: &str) -> BackendError {
        match self {
            CopyError::Node(e) => BackendError::from_sqlx(node, e),
            CopyError::Into(e) => BackendError::from_sqlx(gathering, e),
            CopyError::Limit(e) => e,
        }
    }
}

/// Streams `sql`'s rows from `from` into INSERTs (`head` and the rows' literals) on `into`,
/// the next batch written while the database inserts the one before.
async fn insert_rows<D: Driver>(
    from: &mut D::Connection,
    into: &mut D::Connection,
    sql: &str,
    head: &str,
    tally: &mut Tally,
) -> Result<(), CopyError>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
{
    let (send, mut batches) = tokio::sync::mpsc::channel::<String>(1);
    // Owns the sender, so the writer's loop ends once the reader is done.
    let read = async move {
        let mut stream = from.fetch_many(sqlx::raw_sql(sql));
        let fresh = || {
            let mut batch = String::with_capacity(head.len() + BATCH_BYTES + 1024);
            batch.push_str(head);
            batch
        };
        let mut batch = fresh();
        let mut decoding = Vec::new();
        while let Some(item) = stream.try_next().await.map_err(CopyError::Node)? {
            let Either::Right(row) = item else { continue };
            tokio::task::consume_budget().await;
            let start = batch.len();
            if start > head.len() {
                batch.push_str(", ");
            }
            batch.push('(');
            decoding.resize(sqlx::Row::len(&row), None);
            for (i, first) in decoding.iter_mut().enumerate() {
                if i > 0 {
                    batch.push_str(", ");
                }
                let value = D::decode(&row, i, first, false).map_err(CopyError::Node)?;
                push_literal(&mut batch, <D as Driver>::KIND, &value);
            }
            batch.push(')');
            tally
                .add(1, (batch.len() - start) as u64)
                .map_err(CopyError::Limit)?;
            if batch.len() >= BATCH_BYTES
                && send
                    .send(std::mem::replace(&mut batch, fresh()))
                    .await
                    .is_err()
            {
                // The writer stopped on an error, which it reports.
                return Ok(());
            }
        }
        if batch.len() > head.len() {
            let _ = send.send(batch).await;
        }
        Ok(())
    };
    let write = async move {
        while let Some(batch) = batches.recv().await {
            into.execute(sqlx::raw_sql(&batch))
                .await
                .map_err(CopyError::Into)?;
        }
        Ok(())
    };
    let (read, write) = tokio::join!(read, write);
    write.and(read)
}

/// `INSERT INTO table VALUES ` for the temporary table.
fn insert_head(kind: DatabaseKind, table: &str) -> String {
    format!("INSERT INTO {} VALUES ", quoted(kind, table))
}

/// Whether `read` is copied by the database on the gathering connection ([`copy_within`]): a
/// node of the gathering data source itself, outside a transaction, whose table no temporary
/// table hides there (`ds_0.t_log` under logic table `t_log` is read as any other node).
fn copies_within(transaction: Option<&Transaction>, read: &ExecutionUnit, gather: &Gather) -> bool {
    transaction.is_none()
        && read.data_source == gather.data_source
        && !gather
            .tables
            .iter()
            .any(|t| t.name.eq_ignore_ascii_case(&read.table))
}

/// A node's read on the gathering data source itself: copied into the temporary table by the
/// database, on the gathering connection (no rows through the proxy, and no second connection
/// of a pool that may have only one).
fn copy_within(table: &str, read: &str, kind: DatabaseKind) -> String {
    format!("INSERT INTO {} {read}", quoted(kind, table))
}
