//! The router itself: the sharding rule's tables and where everything else lives, as it is
//! built, and what it answers about them. Planning is in `prepare` and the modules it calls.

use foldhash::HashMap;
use std::sync::Arc;

use keyshard_config::{ShardingRule, TableRule};
use keyshard_types::Dialect;

use crate::CatalogViews;
use crate::single;

/// Plans statements for one sharding rule and one client dialect.
#[derive(Debug, Clone)]
pub struct Router {
    pub(crate) tables: HashMap<String, Arc<TableRule>>,
    pub(crate) binding_groups: Vec<Vec<String>>,
    broadcast_tables: Vec<String>,
    pub(crate) data_sources: Vec<String>,
    pub(crate) default_data_source: Option<String>,
    pub(crate) dialect: Dialect,
    /// The default data source's catalog as the logical database, when it has been read.
    pub(crate) catalog: Option<CatalogViews>,
    /// Where `!SINGLE`'s tables live.
    pub(crate) single: Arc<single::SingleTables>,
    /// Each actual table's logic table, for naming result columns' origins as the client
    /// knows them.
    actual_tables: HashMap<String, String>,
}

impl Router {
    /// A router for `rule`'s sharded tables, parsing `dialect`. It plans statements on other
    /// tables only once it knows the data sources ([`Router::with_data_sources`]).
    pub fn new(rule: &ShardingRule, dialect: Dialect) -> Self {
        let tables = rule
            .tables
            .values()
            .map(|t| (t.logic_table.to_ascii_lowercase(), Arc::new(t.clone())))
            .collect();
        let actual_tables = rule
            .tables
            .values()
            .flat_map(|t| {
                t.data_nodes
                    .iter()
                    .map(|node| (node.table.clone(), t.logic_table.clone()))
            })
            .collect();
        Self {
            actual_tables,
            tables,
            binding_groups: rule.binding_groups.clone(),
            broadcast_tables: Vec::new(),
            data_sources: Vec::new(),
            default_data_source: rule.default_data_source.clone(),
            dialect,
            catalog: None,
            single: Arc::default(),
        }
    }

    /// Where statements on tables without a sharding rule go: unsharded tables live on the
    /// default data source (the rule's, else the first of `data_sources`); broadcast tables are
    /// read from it and written to every data source.
    pub fn with_data_sources(
        mut self,
        data_sources: Vec<String>,
        broadcast_tables: Vec<String>,
    ) -> Self {
        if self.default_data_source.is_none() {
            self.default_data_source = data_sources.first().cloned();
        }
        self.data_sources = data_sources;
        self.broadcast_tables = broadcast_tables;
        self
    }

    /// Reads of the catalog relations `views` presents go through them.
    pub fn with_catalog(mut self, views: CatalogViews) -> Self {
        self.catalog = Some(views);
        self
    }

    /// The logic table whose actual table is named `actual`; `None` for a table no rule
    /// splits (it has its own name).
    pub fn logic_table_of(&self, actual: &str) -> Option<&str> {
        self.actual_tables.get(actual).map(String::as_str)
    }

    /// The data source unsharded tables live on.
    pub fn default_data_source(&self) -> Option<&str> {
        self.default_data_source.as_deref()
    }

    /// The dialect this router parses.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    pub(crate) fn table(&self, name: &str) -> Option<&Arc<TableRule>> {
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            self.tables.get(&name.to_ascii_lowercase())
        } else {
            self.tables.get(name)
        }
    }

    pub(crate) fn is_broadcast(&self, table: &str) -> bool {
        self.broadcast_tables
            .iter()
            .any(|t| t.eq_ignore_ascii_case(table))
    }
}
