//! Statements the proxy or the session answers itself (session statements, DistSQL,
//! `PREVIEW`, `lastval()` …): their columns are known from their text, without a shard.

use keyshard_types::Dialect;

use super::description::{Field, Fields};
use super::result_fields::reply_fields;
use crate::dialect::SessionStatement;
use crate::distsql;
use crate::intent::Intent;
use crate::postgres::types::oid;
use crate::reply::Reply;
use crate::sql::Sql;

/// The columns of a statement the proxy or the session answers itself, known from its text
/// as the engine will answer it; `None` for any other statement.
pub(super) fn fields(sql: Sql<'_>) -> Option<Fields> {
    let columns = match Intent::of(sql, Dialect::Postgres) {
        // Known without running it, so clients that describe before they execute decode its
        // rows.
        Intent::DistSql(statement) => distsql::columns(statement),
        Intent::Session(SessionStatement::Postgres(statement)) => statement.columns(),
        // The same whatever it previews: a client that describes before it executes (asyncpg)
        // otherwise expects no rows and waits.
        Intent::Preview(_) => return Some(reply_fields(&Reply::preview(Vec::new()))),
        Intent::Kill(Ok(kill)) => kill.columns(),
        // The session may answer these itself.
        Intent::Routed if crate::pinning::is_bare_lastval(sql.text) => {
            return Some(Fields::Known([Field::new("lastval", oid::INT8)].into()));
        }
        Intent::Routed if crate::notify::is_bare_listening_channels(sql.text) => {
            let field = Field::new("pg_listening_channels", oid::TEXT);
            return Some(Fields::Known([field].into()));
        }
        _ => return None,
    };
    // A statement the proxy answers without rows (`SET application_name`, `DISCARD ALL`,
    // `SET DIST VARIABLE` …) is described as PostgreSQL describes one: NoData, not an empty
    // RowDescription.
    if columns.is_empty() {
        return Some(Fields::None);
    }
    Some(reply_fields(&Reply::Rows {
        columns,
        rows: Vec::new(),
    }))
}
