//! Statements on tables without a sharding rule, or on none: sent as they are written to the
//! default data source, or, for writes to broadcast tables, to every data source.

use crate::plan::{ExecutionUnit, Plan};
use keyshard_types::Value;

/// A statement that goes unchanged to fixed data sources.
#[derive(Debug, Clone)]
pub struct Direct {
    pub(crate) sql: Box<str>,
    pub(crate) data_sources: Vec<String>,
    pub(crate) param_count: usize,
    pub(crate) is_read: bool,
    /// The first table it names, where it names one: its units' `table`.
    pub(crate) table: String,
    /// A write to a broadcast table: every data source holds the same rows.
    pub(crate) replicated: bool,
    /// A read a replica may answer (see [`Plan::replica_safe`]).
    pub(crate) replica_safe: bool,
}

impl Direct {
    /// Parameters the statement takes.
    pub fn param_count(&self) -> usize {
        self.param_count
    }

    /// Whether the statement only reads.
    pub fn is_read(&self) -> bool {
        self.is_read
    }

    /// The statement as written.
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// Whether it reads the sessions' relation, whose rows the proxy writes in at each
    /// execution (see [`crate::with_sessions`]).
    pub fn lists_sessions(&self) -> bool {
        self.sql.contains(crate::SESSIONS)
    }

    /// One unit per data source, the text and parameters as they are.
    pub fn bind(&self, params: &[Value]) -> Plan {
        let units = self
            .data_sources
            .iter()
            .map(|data_source| ExecutionUnit {
                data_source: data_source.clone(),
                table: self.table.clone(),
                sql: self.sql.to_string(),
                params: params.to_vec(),
                rows: Vec::new(),
                binary_results: false,
            })
            .collect();
        Plan {
            replicated: self.replicated,
            replica_safe: self.replica_safe,
            ..Plan::of_units(units)
        }
    }
}
