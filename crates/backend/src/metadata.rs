//! Table metadata: each logic table's visible columns and their types, read from its first
//! actual table.

use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

use keyshard_router::Metadata;

use crate::Column;
use keyshard_types::SqlType;

/// The visible columns of logic tables, shared by every connection; refreshed after DDL.
#[derive(Debug, Default)]
pub struct MetadataStore {
    tables: RwLock<HashMap<String, Vec<Column>>>,
    /// Counts the changes, so that what was planned with older metadata can tell.
    version: AtomicU64,
}

impl MetadataStore {
    /// Records (or, with `None`, forgets) a logic table's columns.
    pub fn set(&self, logic_table: &str, columns: Option<Vec<Column>>) {
        let mut tables = self.tables.write().unwrap_or_else(|e| e.into_inner());
        let key = logic_table.to_ascii_lowercase();
        match columns {
            Some(columns) => tables.insert(key, columns),
            None => tables.remove(&key),
        };
        self.version.fetch_add(1, Ordering::Release);
    }

    /// Changes with every [`MetadataStore::set`].
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The columns of `logic_table`, when they are known.
    pub fn columns(&self, logic_table: &str) -> Option<Vec<Column>> {
        let tables = self.tables.read().unwrap_or_else(|e| e.into_inner());
        tables.get(&logic_table.to_ascii_lowercase()).cloned()
    }

    /// The type `column` of `logic_table` was declared with.
    pub fn column_type(&self, logic_table: &str, column: &str) -> Option<SqlType> {
        let tables = self.tables.read().unwrap_or_else(|e| e.into_inner());
        tables
            .get(&logic_table.to_ascii_lowercase())?
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(column))
            .map(|c| c.ty)
    }
}

impl Metadata for MetadataStore {
    fn visible_columns(&self, logic_table: &str) -> Option<Vec<String>> {
        let tables = self.tables.read().unwrap_or_else(|e| e.into_inner());
        let columns = tables.get(&logic_table.to_ascii_lowercase())?;
        Some(columns.iter().map(|c| c.name.clone()).collect())
    }
}
