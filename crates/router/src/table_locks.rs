//! Table locks on logic tables: MySQL's `LOCK TABLES`, which the session holds until `UNLOCK
//! TABLES`, and PostgreSQL's `LOCK [TABLE]`, which its transaction holds. A lock on a sharded
//! table is a lock on each of its actual tables, each on its data source; a table without a
//! rule is locked where statements on it go (broadcast tables everywhere, since their writes
//! go everywhere). Each data source gets one statement with all its tables, as the database
//! takes a session's table locks in one statement.

use std::sync::Arc;

use keyshard_config::TableRule;
use sqlparser::ast::{Lock, LockTable, ObjectName};

use crate::RouteError;
use crate::names::{last_ident, push_identifier, quote_of};
use crate::plan::{ExecutionUnit, Plan};

/// Table locks planned: one statement per data source.
#[derive(Debug, Clone, PartialEq)]
pub struct TableLocks {
    /// Who holds the locks once taken, or that the statement lets them go.
    pub kind: LockKind,
    /// The statement for each data source, in the order the tables were named.
    pub plan: Plan,
}

/// Who holds a table lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// MySQL's `LOCK TABLES`: the session, until `UNLOCK TABLES`, a transaction begins, or it
    /// ends.
    Session,
    /// MySQL's `UNLOCK TABLES`.
    Unlock,
    /// PostgreSQL's `LOCK`: the transaction.
    Transaction,
}

/// Where the tables of a lock statement live: the rule of a sharded table, and the data
/// sources of the others.
pub(crate) struct Places<'a> {
    pub(crate) rule: &'a dyn Fn(&str) -> Option<Arc<TableRule>>,
    /// The data sources a table without a rule is locked on; `None` when none is known.
    pub(crate) unsharded: &'a dyn Fn(&str) -> Option<Vec<String>>,
}

/// The items each data source locks, in the order data sources are first reached.
#[derive(Default)]
struct PerSource(Vec<(String, Vec<String>)>);

impl PerSource {
    fn push(&mut self, data_source: &str, item: String) {
        match self.0.iter_mut().find(|(ds, _)| ds == data_source) {
            Some((_, items)) => items.push(item),
            None => self.0.push((data_source.to_owned(), vec![item])),
        }
    }

    /// Each data source's statement: `head`, its items, `tail`.
    fn plan(self, head: &str, tail: &str) -> Plan {
        let units = self
            .0
            .into_iter()
            .map(|(data_source, items)| ExecutionUnit {
                sql: format!("{head}{}{tail}", items.join(", ")),
                data_source,
                table: String::new(),
                params: Vec::new(),
                rows: Vec::new(),
                binary_results: false,
            })
            .collect();
        Plan::of_units(units)
    }

    /// Adds `item(actual table)` to the data sources `table` lives on.
    fn add(
        &mut self,
        places: &Places<'_>,
        table: &str,
        item: impl Fn(Option<&str>) -> String,
    ) -> Result<(), RouteError> {
        if let Some(rule) = (places.rule)(table) {
            for node in &rule.data_nodes {
                self.push(&node.data_source, item(Some(&node.table)));
            }
            return Ok(());
        }
        let data_sources = (places.unsharded)(table).ok_or_else(|| {
            RouteError::Unsupported(format!(
                "the table '{table}' without a sharding rule: no data source is configured for it"
            ))
        })?;
        for data_source in data_sources {
            self.push(&data_source, item(None));
        }
        Ok(())
    }
}

/// MySQL's `LOCK TABLES name [AS alias] type, …`.
pub(crate) fn lock_tables(
    tables: &[LockTable],
    places: &Places<'_>,
) -> Result<TableLocks, RouteError> {
    let mut per_source = PerSource::default();
    for LockTable {
        table,
        alias,
        lock_type,
    } in tables
    {
        // The statements on it are rewritten to the actual table under the alias they wrote,
        // which is what MySQL then asks to be locked; but one statement locks only one table
        // under an alias.
        if let (Some(alias), Some(rule)) = (alias, (places.rule)(&table.value))
            && let Some(node) = rule.data_nodes.iter().enumerate().find_map(|(i, n)| {
                rule.data_nodes[..i]
                    .iter()
                    .any(|m| m.data_source == n.data_source)
                    .then_some(n)
            })
        {
            return Err(RouteError::Unsupported(format!(
                "LOCK TABLES {table} AS {alias}: '{table}' has several actual tables on '{}', \
                 which MySQL cannot lock under one alias (lock it without one)",
                node.data_source
            )));
        }
        let alias = alias
            .as_ref()
            .map(|a| format!(" AS {a}"))
            .unwrap_or_default();
        per_source.add(places, &table.value, |actual| {
            let mut item = String::new();
            match actual {
                Some(actual) => push_identifier(&mut item, actual, table.quote_style),
                None => item.push_str(&table.to_string()),
            }
            format!("{item}{alias} {lock_type}")
        })?;
    }
    Ok(TableLocks {
        kind: LockKind::Session,
        plan: per_source.plan("LOCK TABLES ", ""),
    })
}

/// PostgreSQL's `LOCK [TABLE] [ONLY] name [*], … [IN mode MODE] [NOWAIT]`.
pub(crate) fn lock(lock: &Lock, places: &Places<'_>) -> Result<TableLocks, RouteError> {
    let mut per_source = PerSource::default();
    for target in &lock.tables {
        let only = if target.only { "ONLY " } else { "" };
        let descendants = if target.has_asterisk { " *" } else { "" };
        per_source.add(places, last_ident(&target.name), |actual| {
            let name = match actual {
                Some(actual) => qualified(&target.name, actual),
                None => target.name.to_string(),
            };
            format!("{only}{name}{descendants}")
        })?;
    }
    let mut tail = String::new();
    if let Some(mode) = &lock.lock_mode {
        tail.push_str(&format!(" IN {mode} MODE"));
    }
    if lock.nowait {
        tail.push_str(" NOWAIT");
    }
    Ok(TableLocks {
        kind: LockKind::Transaction,
        plan: per_source.plan("LOCK TABLE ", &tail),
    })
}

/// MySQL's `UNLOCK TABLES`: on the connections that hold the session's locks, which only the
/// caller knows; the plan is empty.
pub(crate) fn unlock_tables() -> TableLocks {
    TableLocks {
        kind: LockKind::Unlock,
        plan: Plan::of_units(Vec::new()),
    }
}

/// `name` with its last part replaced by `table` (its schema kept), quoted alike.
fn qualified(name: &ObjectName, table: &str) -> String {
    let mut out = String::new();
    if let Some((_, schema)) = name.0.split_last() {
        for part in schema {
            out.push_str(&part.to_string());
            out.push('.');
        }
    }
    push_identifier(&mut out, table, quote_of(name));
    out
}
