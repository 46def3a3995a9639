//! Table metadata: each logic table's visible columns, read from its first actual table.

use std::collections::HashMap;
use std::sync::RwLock;

use keyshard_config::TableRule;
use keyshard_router::Metadata;

use crate::{BackendError, Pool};

/// The visible columns of logic tables, shared by every connection; refreshed after DDL.
#[derive(Debug, Default)]
pub struct MetadataStore {
    tables: RwLock<HashMap<String, Vec<String>>>,
}

impl MetadataStore {
    /// Records (or, with `None`, forgets) a logic table's columns.
    pub fn set(&self, logic_table: &str, columns: Option<Vec<String>>) {
        let mut tables = self.tables.write().unwrap_or_else(|e| e.into_inner());
        let key = logic_table.to_ascii_lowercase();
        match columns {
            Some(columns) => tables.insert(key, columns),
            None => tables.remove(&key),
        };
    }
}

impl Metadata for MetadataStore {
    fn visible_columns(&self, logic_table: &str) -> Option<Vec<String>> {
        let tables = self.tables.read().unwrap_or_else(|e| e.into_inner());
        tables.get(&logic_table.to_ascii_lowercase()).cloned()
    }
}

/// Reads the visible columns of `rule`'s first actual table, or `None` when it does not exist.
pub(crate) async fn load_columns(
    pool: &Pool,
    rule: &TableRule,
) -> Result<Option<Vec<String>>, BackendError> {
    let Some(node) = rule.data_nodes.first() else {
        return Ok(None);
    };
    let table = node.table.as_str();
    let columns: Result<Vec<String>, sqlx::Error> = match pool {
        Pool::MySql(p) => {
            // MariaDB and MySQL mark invisible columns in EXTRA; they take no value in a
            // column-less INSERT.
            let query = sqlx::query_scalar(
                "SELECT CAST(COLUMN_NAME AS CHAR) FROM information_schema.COLUMNS \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? \
                 AND UPPER(EXTRA) NOT LIKE '%INVISIBLE%' ORDER BY ORDINAL_POSITION",
            )
            .bind(table);
            p.with(async |conn| query.fetch_all(conn).await).await
        }
        Pool::Postgres(p) => {
            let query = sqlx::query_scalar(
                "SELECT column_name::text FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = $1 \
                 ORDER BY ordinal_position",
            )
            .bind(table);
            p.with(async |conn| query.fetch_all(conn).await).await
        }
        // table_info leaves out hidden (generated virtual) columns and is in column order.
        Pool::Sqlite(p) => {
            let query = sqlx::query_scalar("SELECT name FROM pragma_table_info(?1)").bind(table);
            p.with(async |conn| query.fetch_all(conn).await).await
        }
    };
    let columns = columns.map_err(|e| BackendError::from_sqlx(&node.data_source, e))?;
    Ok((!columns.is_empty()).then_some(columns))
}
