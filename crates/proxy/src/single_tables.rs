//! `!SINGLE`'s tables, found where they live: `ds.table` as written, and for `ds.*` and `*.*`
//! the tables each data source holds at start that no rule names (not an actual table of a
//! sharded one, not broadcast, not Keyshard's own).

use keyshard_backend::Backend;
use keyshard_config::{Config, DatabaseKind};

use crate::identity::read_texts;

/// Each single table with the data source it lives on, and the data sources that could not
/// be read (down, or refusing the catalog query).
pub(crate) async fn discover(
    backend: &Backend,
    config: &Config,
) -> (Vec<(String, String)>, Vec<String>) {
    let rule = &config.sharding;
    let mut homes = Vec::new();
    let mut unread = Vec::new();
    for entry in &rule.single_tables {
        let sources: Vec<&String> = match &entry.data_source {
            Some(ds) => config.data_sources.keys().filter(|k| *k == ds).collect(),
            None => config.data_sources.keys().collect(),
        };
        for ds in sources {
            if let Some(table) = &entry.table {
                homes.push((table.clone(), ds.clone()));
                continue;
            }
            let Some(kind) = config.data_sources.get(ds).map(|d| d.kind) else {
                continue;
            };
            let Some(rows) = read_texts(backend, ds, tables_sql(kind), "tables").await else {
                unread.push(ds.clone());
                continue;
            };
            for table in rows.into_iter().filter_map(|row| row.into_iter().next()) {
                let ruled = rule.table(&table).is_some()
                    || config.is_broadcast_table(&table)
                    || rule.tables.values().any(|r| {
                        r.data_nodes
                            .iter()
                            .any(|n| n.data_source == *ds && n.table.eq_ignore_ascii_case(&table))
                    })
                    || keyshard_coordination::TABLES
                        .iter()
                        .any(|own| own.eq_ignore_ascii_case(&table));
                if !ruled {
                    homes.push((table, ds.clone()));
                }
            }
        }
    }
    (homes, unread)
}

/// The tables and views of the connection's database (MySQL), search path (PostgreSQL) or file.
fn tables_sql(kind: DatabaseKind) -> &'static str {
    match kind {
        DatabaseKind::MySql => {
            "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
        }
        DatabaseKind::Postgres => {
            "SELECT c.relname::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n \
             ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') \
             AND n.nspname = ANY (current_schemas(false))"
        }
        DatabaseKind::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') \
             AND name NOT LIKE 'sqlite_%'"
        }
    }
}
