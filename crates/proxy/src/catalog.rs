//! `SHOW TABLES` and `SHOW COLUMNS` / `DESCRIBE`, answered for the logical database: logic
//! tables in place of their actual tables, and a logic table's columns read from its first
//! actual table, in MySQL's shape whatever database the shard is.

use keyshard_config::DatabaseKind;
use keyshard_router::Value;

use crate::engine::Engine;
use crate::error::{Error, ErrorKind};
use crate::reply::Reply;
use crate::words::starts_with_any;

/// What a catalog statement asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Request {
    /// `SHOW [FULL] TABLES`.
    Tables { full: bool },
    /// `SHOW [FULL] COLUMNS FROM t`, `SHOW FIELDS FROM t`, `DESCRIBE t`, `DESC t`.
    Columns { table: String, full: bool },
}

/// The catalog statement `sql` is, if it is one.
pub(crate) fn request(sql: &str) -> Option<Request> {
    let text = sql.trim().trim_end_matches(';').trim_end();
    if !starts_with_any(text, &["show", "describe", "desc"]) {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let original: Vec<&str> = text.split_whitespace().collect();
    let name = |i: usize| {
        original
            .get(i)
            .map(|w| w.trim_matches(|c| c == '`' || c == '"').to_owned())
    };
    match words.as_slice() {
        ["show", "tables", ..] => Some(Request::Tables { full: false }),
        ["show", "full", "tables", ..] => Some(Request::Tables { full: true }),
        ["show", "columns" | "fields", "from" | "in", ..] => Some(Request::Columns {
            table: name(3)?,
            full: false,
        }),
        ["show", "full", "columns" | "fields", "from" | "in", ..] => Some(Request::Columns {
            table: name(4)?,
            full: true,
        }),
        ["describe" | "desc", _] => Some(Request::Columns {
            table: name(1)?,
            full: false,
        }),
        _ => None,
    }
}

/// Answers `request` from the configuration and the shards.
pub(crate) async fn answer(
    engine: &Engine,
    request: Request,
    database_name: &str,
) -> Result<Reply, Error> {
    match request {
        Request::Tables { full } => tables(engine, full, database_name).await,
        Request::Columns { table, full } => columns(engine, &table, full, database_name).await,
    }
}

async fn tables(engine: &Engine, full: bool, database_name: &str) -> Result<Reply, Error> {
    let config = engine.config();
    let sharding = &config.sharding;
    let mut names: Vec<String> = sharding
        .tables
        .values()
        .map(|t| t.logic_table.clone())
        .collect();
    names.extend(config.broadcast_tables.iter().cloned());
    // Unsharded tables are those on the default data source that no rule places there.
    if let Some(default) = default_data_source(engine) {
        let is_actual = |name: &str| {
            // Keyshard's own coordination tables are not the application's.
            keyshard_coordination::TABLES
                .iter()
                .any(|t| t.eq_ignore_ascii_case(name))
                || sharding.tables.values().any(|t| {
                    t.data_nodes
                        .iter()
                        .any(|n| n.table.eq_ignore_ascii_case(name))
                })
        };
        let list = match kind_of(engine, &default) {
            DatabaseKind::MySql => "SHOW TABLES",
            DatabaseKind::Postgres => {
                "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()"
            }
            DatabaseKind::Sqlite => {
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
            }
        };
        for row in engine.run_on(&default, list).await?.rows {
            if let Some(Value::Text(name)) = row.into_iter().next()
                && !is_actual(&name)
            {
                names.push(name);
            }
        }
    }
    names.sort_by_key(|n| n.to_ascii_lowercase());
    names.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    let column = format!("Tables_in_{database_name}");
    let rows = names
        .into_iter()
        .map(|n| {
            let mut row = vec![Value::Text(n)];
            if full {
                row.push(Value::Text("BASE TABLE".into()));
            }
            row
        })
        .collect();
    Ok(if full {
        Reply::text_rows(&[&column, "Table_type"], rows)
    } else {
        Reply::text_rows(&[&column], rows)
    })
}

async fn columns(
    engine: &Engine,
    table: &str,
    full: bool,
    database_name: &str,
) -> Result<Reply, Error> {
    let (data_source, actual) = match engine.config().sharding.table(table) {
        Some(rule) => match rule.data_nodes.first() {
            Some(node) => (node.data_source.clone(), node.table.clone()),
            None => return Err(no_such_table(database_name, table)),
        },
        None => match default_data_source(engine) {
            Some(default) => (default, table.to_owned()),
            None => return Err(no_such_table(database_name, table)),
        },
    };
    if actual.contains(['\'', '`', '"', '\\']) {
        return Err(no_such_table(database_name, table));
    }
    let sql = match kind_of(engine, &data_source) {
        DatabaseKind::MySql if full => format!("SHOW FULL COLUMNS FROM `{actual}`"),
        DatabaseKind::MySql => format!("SHOW COLUMNS FROM `{actual}`"),
        DatabaseKind::Sqlite => format!(
            "SELECT name AS \"Field\", type AS \"Type\", \
             CASE WHEN \"notnull\" = 0 THEN 'YES' ELSE 'NO' END AS \"Null\", \
             CASE WHEN pk > 0 THEN 'PRI' ELSE '' END AS \"Key\", \
             dflt_value AS \"Default\", '' AS \"Extra\" \
             FROM pragma_table_info('{actual}') ORDER BY cid"
        ),
        DatabaseKind::Postgres => format!(
            "SELECT column_name::text AS \"Field\", data_type::text AS \"Type\", \
             is_nullable::text AS \"Null\", '' AS \"Key\", column_default::text AS \"Default\", \
             '' AS \"Extra\" FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = '{actual}' \
             ORDER BY ordinal_position"
        ),
    };
    let outcome = engine.run_on(&data_source, &sql).await?;
    if outcome.rows.is_empty() {
        return Err(no_such_table(database_name, table));
    }
    Ok(Reply::Rows {
        columns: outcome.columns,
        rows: outcome.rows,
    })
}

fn default_data_source(engine: &Engine) -> Option<String> {
    let config = engine.config();
    config
        .sharding
        .default_data_source
        .clone()
        .or_else(|| config.data_sources.keys().next().cloned())
}

fn kind_of(engine: &Engine, data_source: &str) -> DatabaseKind {
    engine
        .config()
        .data_sources
        .get(data_source)
        .map_or(DatabaseKind::MySql, |d| d.kind)
}

fn no_such_table(database_name: &str, table: &str) -> Error {
    Error::new(
        ErrorKind::UnknownTable,
        format!("Table '{database_name}.{table}' doesn't exist"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_catalog_statements() {
        assert_eq!(
            request("SHOW TABLES"),
            Some(Request::Tables { full: false })
        );
        assert_eq!(
            request("show full tables from sharding_db"),
            Some(Request::Tables { full: true })
        );
        for sql in [
            "DESCRIBE t_order",
            "desc `t_order`;",
            "SHOW COLUMNS FROM t_order",
        ] {
            assert_eq!(
                request(sql),
                Some(Request::Columns {
                    table: "t_order".into(),
                    full: false
                }),
                "{sql}"
            );
        }
        assert_eq!(
            request("SHOW FULL FIELDS IN T_Order"),
            Some(Request::Columns {
                table: "T_Order".into(),
                full: true
            })
        );
        assert_eq!(request("SHOW VARIABLES"), None);
        assert_eq!(request("SELECT 1"), None);
    }
}
