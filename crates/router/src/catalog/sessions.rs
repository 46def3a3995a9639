//! The relations that list sessions (`pg_stat_activity`, `information_schema.PROCESSLIST`),
//! which stand for the proxy's sessions rather than a shard's pooled connections: their rows
//! are a JSON document the proxy writes into the statement at each execution.

use keyshard_types::{Dialect, Value};

use super::CatalogColumn;
use crate::names::{identifier_quote, push_identifier};

/// Where a statement reading the sessions' relation takes its rows: the proxy puts a JSON
/// array of its sessions in place of this text at each execution (see
/// [`with_sessions`]): an object per session, keyed by the relation's column names.
pub const SESSIONS: &str = "/*keyshard:sessions*/'[]'";

/// The columns of MySQL's PROCESSLIST the proxy knows of its sessions, with their types; the
/// relation's others are NULL.
const PROCESSLIST_COLUMNS: &[(&str, &str)] = &[
    ("ID", "BIGINT UNSIGNED"),
    ("USER", "VARCHAR(128)"),
    ("HOST", "VARCHAR(64)"),
    ("DB", "VARCHAR(64)"),
    ("COMMAND", "VARCHAR(16)"),
    ("TIME", "INT"),
    ("STATE", "VARCHAR(64)"),
    ("INFO", "LONGTEXT"),
];

/// `sql` (a statement the router planned) with the proxy's sessions, `json`, as the rows of
/// the sessions' relation; as it is when it reads no such relation.
pub fn with_sessions(sql: &str, json: &str, dialect: Dialect) -> String {
    sql.replace(SESSIONS, &Value::Text(json.to_owned()).to_literal(dialect))
}

/// The derived table's SELECT of the sessions' relation over `columns`: rows of the JSON
/// document the proxy writes in place of [`SESSIONS`].
pub(super) fn sessions_select(dialect: Dialect, columns: &[CatalogColumn]) -> String {
    let ident = |s: &str| {
        let mut out = String::new();
        push_identifier(&mut out, s, Some(identifier_quote(dialect)));
        out
    };
    match dialect {
        // The view's own row type takes every key of an object as its column, whatever the
        // server's version has.
        Dialect::Postgres => format!(
            "SELECT r.* FROM jsonb_array_elements(CAST({SESSIONS} AS jsonb)) AS e(value) \
             CROSS JOIN LATERAL jsonb_populate_record(NULL::pg_catalog.pg_stat_activity, \
             e.value) AS r"
        ),
        Dialect::MySql => {
            let known = |name: &str| {
                PROCESSLIST_COLUMNS
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case(name))
            };
            let list: Vec<String> = columns
                .iter()
                .map(|c| match known(&c.name) {
                    true => format!("p.{}", ident(&c.name)),
                    false => format!("NULL AS {}", ident(&c.name)),
                })
                .collect();
            let shape: Vec<String> = PROCESSLIST_COLUMNS
                .iter()
                .map(|(name, ty)| format!("{name} {ty} PATH '$.{name}'"))
                .collect();
            format!(
                "SELECT {} FROM JSON_TABLE({SESSIONS}, '$[*]' COLUMNS ({})) AS p",
                list.join(", "),
                shape.join(", ")
            )
        }
    }
}
