//! Statements the proxy or the session answers itself (session statements, DistSQL,
//! `PREVIEW`, `lastval()` …): their columns are known from their text, without a shard.

use super::description::{Field, Fields};
use super::result_fields::reply_fields;
use crate::distsql;
use crate::intent::previewed;
use crate::postgres::types::oid;
use crate::reply::Reply;

/// The columns of a statement the proxy or the session answers itself, known from its text;
/// `None` for any other statement.
pub(super) fn fields(sql: &str) -> Option<Fields> {
    distsql_fields(sql)
        .or_else(|| session_fields(sql))
        .or_else(|| preview_fields(sql))
        .or_else(|| lastval_fields(sql))
        .or_else(|| listening_channels_fields(sql))
        .or_else(|| kill_fields(sql))
}

/// The columns of a session statement, known from its text.
fn session_fields(sql: &str) -> Option<Fields> {
    let columns = crate::dialect::postgres::recognise(sql)?.columns();
    Some(reply_fields(&Reply::Rows {
        columns,
        rows: Vec::new(),
    }))
}

/// The column of `SELECT lastval()`, which the session may answer itself.
fn lastval_fields(sql: &str) -> Option<Fields> {
    crate::pinning::is_bare_lastval(sql)
        .then(|| Fields::Known(vec![Field::new("lastval", oid::INT8)]))
}

/// The column of `SELECT pg_listening_channels()`, which a listening session answers itself.
fn listening_channels_fields(sql: &str) -> Option<Fields> {
    crate::notify::is_bare_listening_channels(sql)
        .then(|| Fields::Known(vec![Field::new("pg_listening_channels", oid::TEXT)]))
}

/// The column of `SELECT pg_cancel_backend(id)`, which the proxy answers itself.
fn kill_fields(sql: &str) -> Option<Fields> {
    let kill = crate::kill::Kill::parse(sql, keyshard_types::Dialect::Postgres)?.ok()?;
    Some(reply_fields(&Reply::Rows {
        columns: kill.columns(),
        rows: Vec::new(),
    }))
}

/// The columns of `PREVIEW …`, the same whatever it previews: a client that describes before
/// it executes (asyncpg) otherwise expects no rows and waits.
fn preview_fields(sql: &str) -> Option<Fields> {
    previewed(sql)?;
    Some(reply_fields(&Reply::preview(Vec::new())))
}

/// The columns of a DistSQL statement the proxy answers (`SHOW COMPUTE NODES`): known without
/// running it, so clients that describe before they execute decode its rows.
fn distsql_fields(sql: &str) -> Option<Fields> {
    Some(reply_fields(&Reply::Rows {
        columns: distsql::result_columns(sql)?,
        rows: Vec::new(),
    }))
}
