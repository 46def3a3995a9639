//! A gathered read (see `keyshard_router::gather`): each sharded table's rows copied from its
//! nodes into a temporary table of the logic table's name on a connection of the gathering
//! data source, the statement run there, the temporary tables dropped.
//!
//! The rows pass through the proxy in bounded pieces, never whole: PostgreSQL's as COPY data
//! from each node's `COPY … TO STDOUT` into `COPY … FROM STDIN`, MySQL's and SQLite's as
//! multi-row INSERTs of about [`BATCH_BYTES`] each, while the node's result is still being
//! read; the nodes of the gathering data source itself, outside a transaction, by the database
//! (`INSERT INTO … SELECT`). What one statement may gather is bounded by `props` (rows and
//! bytes; rows only for what the database copies itself).

use std::fmt::Write as _;

use bytes::Bytes;
use futures_util::TryStreamExt;
use keyshard_config::DatabaseKind;
use keyshard_router::ExecutionUnit;
use keyshard_router::gather::{Gather, GatheredTable};
use keyshard_types::Value;
use sqlx::{Either, Executor, MySql, Postgres, Sqlite, Statement as _};

use crate::branch::Branch;
use crate::driver::Driver;
use crate::execute::run_statement;
use crate::outcome::{Column, Outcome};
use crate::reuse::{Connections, Kind};
use crate::{Backend, BackendError, Pool, Transaction};

/// The INSERT text that fills a temporary table in one round trip, about.
const BATCH_BYTES: usize = 1 << 20;

/// What one statement may gather: `props.gather-max-rows` and `props.gather-max-bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GatherLimits {
    /// Rows over all its tables and nodes.
    pub max_rows: u64,
    /// Bytes of those rows, as the nodes sent them.
    pub max_bytes: u64,
}

/// Rows and bytes gathered so far, against the limits.
struct Tally {
    limits: GatherLimits,
    rows: u64,
    bytes: u64,
}

impl Tally {
    fn add(&mut self, rows: u64, bytes: u64) -> Result<(), BackendError> {
        self.rows += rows;
        self.bytes += bytes;
        if self.rows > self.limits.max_rows {
            return Err(BackendError::GatherLimit {
                limit: "gather-max-rows",
                value: self.limits.max_rows,
            });
        }
        if self.bytes > self.limits.max_bytes {
            return Err(BackendError::GatherLimit {
                limit: "gather-max-bytes",
                value: self.limits.max_bytes,
            });
        }
        Ok(())
    }
}

impl Backend {
    /// Gathers `gather`'s tables and runs its statement (its rows in the binary format when
    /// `binary`); node reads run in `transaction` when there is one. With `describe`, the
    /// tables stay empty and the statement is only described: its columns and (PostgreSQL) its
    /// parameters' types.
    pub async fn gather(
        &self,
        mut transaction: Option<&mut Transaction>,
        gather: &Gather,
        binary: bool,
        describe: bool,
    ) -> Result<(Outcome, Vec<u32>), BackendError> {
        let data_source = gather.data_source.as_str();
        let failed = |e| BackendError::from_sqlx(data_source, e);
        let mut tally = Tally {
            limits: self.gather_limits,
            rows: 0,
            bytes: 0,
        };
        let mut statement = gather.statement.clone();
        statement.binary_results = binary;
        macro_rules! gathered {
            ($connections:expr, $db:ty, $fill:expr) => {{
                let connections = $connections;
                let mut conn = connections.acquire_apart().await.map_err(failed)?;
                // Its temporary tables would hide tables of the same name from whoever took
                // it next: until they are dropped, a cancelled statement closes it.
                conn.holding(true);
                let mut result = async {
                    let actual = actual_columns::<$db>(&mut conn, &gather.tables)
                        .await
                        .map_err(failed)?;
                    create::<$db>(&mut conn, &gather.tables)
                        .await
                        .map_err(failed)?;
                    if !describe {
                        for table in &gather.tables {
                            let within = transaction.as_deref_mut();
                            $fill(self, within, &mut conn, gather, table, &mut tally).await?;
                        }
                    }
                    let mut answered = answer::<$db>(&mut conn, &statement, describe)
                        .await
                        .map_err(failed)?;
                    restore_table_flags(&mut answered.0.columns, &actual);
                    let columns = &mut answered.0.columns;
                    tell_origins::<$db>(self, &mut conn, &gather.tables, columns)
                        .await
                        .map_err(failed)?;
                    Ok(answered)
                }
                .await;
                let dropped = drop_tables::<$db>(&mut conn, &gather.tables).await;
                match (&mut result, dropped) {
                    (_, Ok(())) => {
                        conn.holding(false);
                        connections.release_apart(conn);
                    }
                    (Ok(_), Err(e)) => {
                        conn.close();
                        result = Err(failed(e));
                    }
                    (Err(_), Err(_)) => conn.close(),
                }
                result
            }};
        }
        match self.pool(data_source)? {
            Pool::MySql(c) => gathered!(c, MySql, Backend::fill_by_inserts::<MySql>),
            Pool::Postgres(c) => gathered!(c, Postgres, Backend::fill_by_copy),
            Pool::Sqlite(c) => gathered!(c, Sqlite, Backend::fill_by_inserts::<Sqlite>),
        }
    }

    /// Copies every node's rows of `table` into its temporary table on `into`, a connection of
    /// the gathering data source, as INSERTs.
    async fn fill_by_inserts<D: Gathering>(
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
    async fn fill_by_copy(
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
trait Gathering: Driver + Kind {
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

/// Creates each table, empty, with the columns of the actual table it stands for.
async fn create<DB: Kind>(
    conn: &mut DB::Connection,
    tables: &[GatheredTable],
) -> Result<(), sqlx::Error> {
    let mut sql = String::new();
    for table in tables {
        let _ = write!(
            sql,
            "CREATE TEMPORARY TABLE {} AS {} LIMIT 0;",
            quoted(DB::KIND, &table.name),
            table.like
        );
    }
    DB::run_text(conn, &sql).await
}

/// MySQL column flags a table's definition gives its columns and a temporary table made by
/// [`create`] does not: PRI_KEY, UNIQUE_KEY, MULTIPLE_KEY, AUTO_INCREMENT, ON_UPDATE_NOW and
/// PART_KEY.
const TABLE_FLAGS: u16 = 0x0002 | 0x0004 | 0x0008 | 0x0200 | 0x2000 | 0x4000;

/// MySQL: each gathered table's name with the columns of the actual table it stands for, as
/// the database describes them (a prepared statement's description: nothing runs, and the
/// connection's statement cache keeps it for the next gather).
async fn actual_columns<'t, D: Driver>(
    conn: &mut D::Connection,
    tables: &'t [GatheredTable],
) -> Result<Vec<(&'t str, Column)>, sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
{
    let mut columns = Vec::new();
    if <D as Driver>::KIND != DatabaseKind::MySql {
        return Ok(columns);
    }
    for table in tables {
        let described = conn.prepare(&table.like).await?;
        columns.extend(
            described
                .columns()
                .iter()
                .map(|c| (table.name.as_str(), D::column(c))),
        );
    }
    Ok(columns)
}

/// Gives each result column read from a gathered table the [`TABLE_FLAGS`] of the actual
/// table's column, so that a client is told what a plain database holding the rows would tell
/// it.
fn restore_table_flags(columns: &mut [Column], actual: &[(&str, Column)]) {
    for column in columns {
        let Some(result) = column.mysql.as_deref_mut() else {
            continue;
        };
        let origin = &result.origin;
        let Some(flags) = actual.iter().find_map(|(table, actual)| {
            let actual = actual.mysql.as_deref()?;
            (origin.table.as_ref() == table.as_bytes() && origin.name == actual.origin.name)
                .then_some(actual.flags)
        }) else {
            continue;
        };
        result.flags = (result.flags & !TABLE_FLAGS) | (flags & TABLE_FLAGS);
    }
}

/// PostgreSQL: the gathered statement's columns told as from the tables the logical database
/// shows (see `origins`): a temporary table's column `k` is its logic table's `k`th, the
/// temporary table having the actual table's visible columns in order.
async fn tell_origins<D: Driver>(
    backend: &Backend,
    conn: &mut D::Connection,
    tables: &[GatheredTable],
    columns: &mut [Column],
) -> Result<(), sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
{
    if <D as Driver>::KIND != DatabaseKind::Postgres
        || columns.iter().all(|c| c.pg_origin.is_none())
    {
        return Ok(());
    }
    let sql = "SELECT c.oid::int8, c.relname::text FROM pg_catalog.pg_class c \
               WHERE c.relnamespace = pg_catalog.pg_my_temp_schema()";
    let mut temporary: Vec<(i64, String)> = Vec::new();
    let mut decoding = [None, None];
    for row in conn.fetch_all(sqlx::raw_sql(sql)).await? {
        let [oid, name] = &mut decoding;
        if let (Value::Int(oid), Value::Text(name)) = (
            D::decode(&row, 0, oid, false)?,
            D::decode(&row, 1, name, false)?,
        ) {
            temporary.push((oid, name));
        }
    }
    for column in columns {
        column.pg_origin = column.pg_origin.and_then(|(oid, number)| {
            let (_, name) = temporary.iter().find(|(t, _)| *t == i64::from(oid))?;
            let table = tables.iter().find(|t| t.name == *name)?;
            let logic = backend.metadata().columns(&table.name)?;
            let at = usize::try_from(number).ok()?.checked_sub(1)?;
            logic.get(at)?.pg_origin
        });
    }
    Ok(())
}

/// Drops the tables [`create`] made, so the connection goes back as it came.
async fn drop_tables<DB: Kind>(
    conn: &mut DB::Connection,
    tables: &[GatheredTable],
) -> Result<(), sqlx::Error> {
    let mut sql = String::new();
    for table in tables {
        let name = quoted(DB::KIND, &table.name);
        let _ = match DB::KIND {
            DatabaseKind::MySql => write!(sql, "DROP TEMPORARY TABLE IF EXISTS {name};"),
            DatabaseKind::Postgres => write!(sql, "DROP TABLE IF EXISTS pg_temp.{name};"),
            DatabaseKind::Sqlite => write!(sql, "DROP TABLE IF EXISTS temp.{name};"),
        };
    }
    DB::run_text(conn, &sql).await
}

/// Runs (or with `describe`, only describes) the gathered statement.
async fn answer<D: Driver + Kind>(
    conn: &mut D::Connection,
    statement: &ExecutionUnit,
    describe: bool,
) -> Result<(Outcome, Vec<u32>), sqlx::Error>
where
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
{
    let mut outcome = Outcome::default();
    if !describe {
        let result = run_statement::<D>(conn, statement).await?;
        outcome.affected_rows = result.affected_rows;
        outcome.columns = result.columns;
        outcome.rows = result.rows;
    }
    let mut params = Vec::new();
    if outcome.columns.is_empty() {
        // No row, so no columns came: the statement's description has them. Its own key
        // (a line added) keeps it apart from the execution's cached statement.
        let key = format!("{}\n", statement.sql);
        let described = conn.prepare(&key).await?;
        outcome.columns = described
            .columns()
            .iter()
            .map(D::column)
            .collect::<Vec<Column>>();
        params = D::parameter_oids(&described);
    }
    Ok((outcome, params))
}

/// `INSERT INTO table VALUES ` for the temporary table.
fn insert_head(kind: DatabaseKind, table: &str) -> String {
    format!("INSERT INTO {} VALUES ", quoted(kind, table))
}

fn quoted(kind: DatabaseKind, name: &str) -> String {
    let quote = match kind {
        DatabaseKind::MySql => '`',
        DatabaseKind::Postgres | DatabaseKind::Sqlite => '"',
    };
    let mut out = String::with_capacity(name.len() + 2);
    keyshard_router::names::push_identifier(&mut out, name, Some(quote));
    out
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

/// Writes `value`, read from a node in the text protocol, as a literal the same database
/// reads back as the column's value. MySQL strings go as hexadecimal with their character
/// set, whatever the connection's `sql_mode` says of backslashes; binary values (BIT, BLOB)
/// as binary strings.
fn push_literal(out: &mut String, kind: DatabaseKind, value: &Value) {
    let hex = |out: &mut String, bytes: &[u8]| {
        out.push_str("X'");
        for b in bytes {
            let _ = write!(out, "{b:02x}");
        }
        out.push('\'');
    };
    match (kind, value) {
        (_, Value::Null) => out.push_str("NULL"),
        (_, Value::Int(v)) => {
            let _ = write!(out, "{v}");
        }
        (_, Value::UInt(v)) => {
            let _ = write!(out, "{v}");
        }
        (_, Value::Double(v)) => {
            let _ = write!(out, "{v:?}");
        }
        (_, Value::Bool(b)) => out.push_str(if *b { "TRUE" } else { "FALSE" }),
        (_, Value::Bytes(bytes)) => hex(out, bytes),
        (DatabaseKind::MySql, Value::Wire(wire))
            if wire.kind == keyshard_types::WireKind::Bytewise =>
        {
            hex(out, &wire.bytes)
        }
        (DatabaseKind::MySql, Value::Text(text)) => {
            out.push_str("_utf8mb4 ");
            hex(out, text.as_bytes());
        }
        (DatabaseKind::MySql, Value::Wire(wire)) => {
            out.push_str("_utf8mb4 ");
            hex(out, &wire.bytes);
        }
        (_, Value::Text(text)) => push_quoted(out, text),
        (_, Value::Wire(wire)) => push_quoted(out, &String::from_utf8_lossy(&wire.bytes)),
        (_, Value::Array(array)) => push_quoted(
            out,
            &keyshard_types::array::write_text(array, keyshard_types::array::plain_element_text),
        ),
    }
}

fn push_quoted(out: &mut String, text: &str) {
    out.push('\'');
    for c in text.chars() {
        if c == '\'' {
            out.push('\'');
        }
        out.push(c);
    }
    out.push('\'');
}
