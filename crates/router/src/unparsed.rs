//! Statements sqlparser does not read that the router still knows by their text: MySQL's
//! `ALTER TABLE t DISABLE|ENABLE KEYS` (mysqldump's) and MariaDB's sequence expressions (see
//! `sequences`). Any other is the parse error it was.

use crate::{DdlPlan, Direct, ExecutionUnit, Plan, Prepared, RouteError, Router};
use crate::{ddl, names};
use keyshard_types::Dialect;

impl Router {
    /// A statement the parser does not read but the router knows by its text: MySQL's
    /// `ALTER TABLE t DISABLE|ENABLE KEYS` (mysqldump's), one statement per actual table of a
    /// sharded table, as written where other tables live; a statement on MariaDB's sequences
    /// (see `sequences`). `None` for any other.
    pub fn prepare_unparsed(&self, sql: &str) -> Option<Result<Prepared, RouteError>> {
        if self.dialect != Dialect::MySql {
            return None;
        }
        match ddl::toggled_keys(sql) {
            Some(toggled) => self.toggled_keys(sql, toggled).map(Ok),
            None => self.sequence_statement(sql),
        }
    }

    /// `ALTER TABLE t DISABLE|ENABLE KEYS`, the name `table` at `range` of `sql`.
    fn toggled_keys(
        &self,
        sql: &str,
        (range, table, quote): (std::ops::Range<usize>, String, Option<char>),
    ) -> Option<Prepared> {
        let Some(rule) = self.table(&table) else {
            let default = self.default_data_source.as_deref()?;
            let data_sources = match self.is_broadcast(&table) {
                true => self.data_sources.clone(),
                false => vec![self.home(std::slice::from_ref(&table), default).ok()?],
            };
            return Some(Prepared::Direct(Direct {
                sql: sql.into(),
                replicated: data_sources.len() > 1,
                replica_safe: false,
                data_sources,
                param_count: 0,
                is_read: false,
                table,
            }));
        };
        let units = rule
            .data_nodes
            .iter()
            .map(|node| {
                let mut text = sql[..range.start].to_owned();
                names::push_identifier(&mut text, &node.table, quote);
                text.push_str(&sql[range.end..]);
                ExecutionUnit {
                    data_source: node.data_source.clone(),
                    table: node.table.clone(),
                    sql: text,
                    params: Vec::new(),
                    rows: Vec::new(),
                    binary_results: false,
                }
            })
            .collect();
        Some(Prepared::Ddl(DdlPlan {
            logic_table: rule.logic_table.clone(),
            plan: Plan::of_units(units),
        }))
    }
}
