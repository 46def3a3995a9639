//! Where a PostgreSQL result column comes from, as the logical database names it.
//! RowDescription gives a column read from a table the table's OID and the column's number; a
//! shard's OID names one actual table of one database. A client looks such an OID up in the
//! catalog (pgjdbc's `getTableName`, `isAutoIncrement`), which it reads through the proxy's
//! catalog views on the default data source, where each logic table is shown as its first
//! actual table there (see `keyshard_router::catalog`). So a column of any actual table of a
//! logic table is told as from that one; a column of a table no rule places, read from the
//! default data source, as that data source said; any other's origin is not told (0), as
//! PostgreSQL tells none for an expression.

use foldhash::HashMap;
use std::sync::RwLock;

use keyshard_config::TableRule;
use sqlx::Row;

use crate::outcome::Column;
use crate::{Backend, BackendError, Pool};

/// The actual tables' OIDs, by data source, each with the OID the logical database shows for
/// its logic table (0: none, the logic table has no actual table on the default data source).
#[derive(Debug, Default)]
pub(crate) struct Origins {
    /// Where catalog queries go, and tables no rule places live.
    default: Option<String>,
    /// Looked up for every PostgreSQL read's columns: foldhash, where SipHash cost 0.5k
    /// instructions a point SELECT (the keys are the configuration's and the shards' OIDs).
    actual: RwLock<HashMap<String, HashMap<u32, u32>>>,
}

impl Origins {
    pub(crate) fn new(default: Option<String>) -> Self {
        Self {
            default,
            actual: RwLock::default(),
        }
    }

    /// Gives `columns`, as `data_source` described them, the origins the logical database
    /// shows.
    pub(crate) fn logical(&self, data_source: &str, columns: &mut [Column]) {
        if columns.iter().all(|c| c.pg_origin.is_none()) {
            return;
        }
        let actual = self.actual.read().unwrap_or_else(|e| e.into_inner());
        let tables = actual.get(data_source);
        let default = self.default.as_deref() == Some(data_source);
        for column in columns {
            let Some((table, number)) = column.pg_origin else {
                continue;
            };
            column.pg_origin = match tables.and_then(|t| t.get(&table)) {
                Some(0) => None,
                Some(&shown) => Some((shown, number)),
                None if default => Some((table, number)),
                None => None,
            };
        }
    }
}

impl Backend {
    /// Reads the OIDs of `rule`'s actual tables on its PostgreSQL data sources (see
    /// [`Origins`]). A table that does not exist yet has none.
    pub(crate) async fn load_origins(&self, rule: &TableRule) -> Result<(), BackendError> {
        let mut found: Vec<(&str, &str, u32)> = Vec::new();
        let mut data_sources: Vec<&str> = rule
            .data_nodes
            .iter()
            .map(|n| n.data_source.as_str())
            .collect();
        data_sources.sort_unstable();
        data_sources.dedup();
        for data_source in data_sources {
            let Pool::Postgres(pool) = self.pool(data_source)? else {
                return Ok(());
            };
            let tables: Vec<&str> = rule
                .data_nodes
                .iter()
                .filter(|n| n.data_source == data_source)
                .map(|n| n.table.as_str())
                .collect();
            let list = tables
                .iter()
                .map(|t| format!("'{}'", t.replace('\'', "''")))
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "SELECT n, to_regclass(n)::oid::int8 FROM unnest(ARRAY[{list}]::text[]) AS n"
            );
            let rows = pool
                .with(async |conn| sqlx::query(&sql).fetch_all(conn).await)
                .await
                .map_err(|e| BackendError::from_sqlx(data_source, e))?;
            for row in rows {
                let name: String = row.try_get(0).unwrap_or_default();
                let oid: Option<i64> = row.try_get(1).unwrap_or_default();
                if let (Some(table), Some(oid)) = (
                    tables.iter().find(|t| **t == name),
                    oid.and_then(|o| u32::try_from(o).ok()),
                ) {
                    found.push((data_source, table, oid));
                }
            }
        }
        let origins = &self.origins;
        let shown = rule
            .data_nodes
            .iter()
            .filter(|n| origins.default.as_deref() == Some(n.data_source.as_str()))
            .find_map(|n| {
                found
                    .iter()
                    .find(|(ds, t, _)| *ds == n.data_source && *t == n.table)
                    .map(|(_, _, oid)| *oid)
            })
            .unwrap_or(0);
        let mut actual = origins.actual.write().unwrap_or_else(|e| e.into_inner());
        for (data_source, _, oid) in found {
            actual
                .entry(data_source.to_owned())
                .or_default()
                .insert(oid, shown);
        }
        Ok(())
    }
}
