//! The logical database's view of the default data source's catalog: which actual tables it
//! shows under their logic table's name, and which it hides.

use std::sync::Arc;

use keyshard_config::TableRule;

use crate::{LogicalNames, Router};

impl Router {
    /// What the catalog shows of the default data source's tables: each logic table as its
    /// first actual table there, no other actual table, none of `own_tables`.
    pub fn logical_names(
        &self,
        shard_database: &str,
        logic_database: &str,
        own_tables: &[&str],
    ) -> LogicalNames {
        let mut names = LogicalNames {
            shard_database: shard_database.to_owned(),
            logic_database: logic_database.to_owned(),
            renames: Vec::new(),
            hidden: own_tables.iter().map(|t| (*t).to_owned()).collect(),
        };
        let default = self.default_data_source.as_deref();
        let mut rules: Vec<&Arc<TableRule>> = self.tables.values().collect();
        rules.sort_by(|a, b| a.logic_table.cmp(&b.logic_table));
        for rule in rules {
            let shown = rule
                .data_nodes
                .iter()
                .find(|n| Some(n.data_source.as_str()) == default);
            if let Some(node) = shown
                && node.table != rule.logic_table
            {
                names
                    .renames
                    .push((node.table.clone(), rule.logic_table.clone()));
                // A table under the logic name itself would be listed twice.
                names.hidden.push(rule.logic_table.clone());
            }
            names.hidden.extend(
                rule.data_nodes
                    .iter()
                    .filter(|n| shown.is_none_or(|s| !s.table.eq_ignore_ascii_case(&n.table)))
                    .map(|n| n.table.clone()),
            );
        }
        let shown: Vec<&String> = names.renames.iter().map(|(actual, _)| actual).collect();
        names
            .hidden
            .retain(|h| !shown.iter().any(|s| s.eq_ignore_ascii_case(h)));
        names.hidden.sort();
        names.hidden.dedup();
        names
    }
}
