//! The declared columns of the logic tables a statement names, which type its placeholders
//! and its result columns.

use std::sync::Arc;

use keyshard_backend::Column;
use keyshard_router::names::last_ident;
use sqlparser::ast::{TableFactor, TableWithJoins};

use crate::engine::Engine;

/// The declared columns of the logic tables, as the backend's metadata holds them (read from
/// each first actual table, refreshed after DDL).
#[derive(Debug)]
pub struct TableColumns {
    pub(super) engine: Arc<Engine>,
}

impl TableColumns {
    /// Table columns read through the engine's backend.
    pub fn new(engine: Arc<Engine>) -> Self {
        Self { engine }
    }

    /// The columns of logic table `name`, when it has a rule and exists; read from its first
    /// actual table when the metadata does not have them yet (created after start).
    pub(super) async fn columns(&self, name: &str) -> Option<Vec<Column>> {
        let backend = self.engine.backend();
        if let Some(columns) = backend.metadata().columns(name) {
            return Some(columns);
        }
        let rule = self.engine.config().sharding.table(name)?;
        if let Err(e) = backend.refresh_metadata(rule).await {
            tracing::debug!("columns of {name} not read: {e}");
        }
        backend.metadata().columns(name)
    }
}

/// The columns of every sharded table in a FROM list (joins included).
pub(super) async fn table_columns(from: &[TableWithJoins], known: &TableColumns) -> Vec<Column> {
    let mut columns = Vec::new();
    for table in from {
        let factors =
            std::iter::once(&table.relation).chain(table.joins.iter().map(|j| &j.relation));
        for factor in factors {
            if let TableFactor::Table { name, .. } = factor
                && let Some(found) = known.columns(last_ident(name)).await
            {
                columns.extend(found);
            }
        }
    }
    columns
}

/// The column named `name` (in any case) among `columns`.
pub(super) fn find<'a>(columns: &'a [Column], name: &str) -> Option<&'a Column> {
    columns.iter().find(|c| c.name.eq_ignore_ascii_case(name))
}
