//! Whether the sharded tables one statement joins are bound: sharded alike, so that data
//! node `i` of one joins data node `i` of the others.

use std::sync::Arc;

use keyshard_config::TableRule;

use crate::{RouteError, Router};

impl Router {
    /// Several sharded tables in one statement must be bound (sharded alike), so that data
    /// node `i` of one joins data node `i` of the others.
    pub(crate) fn check_bound(&self, rules: &[Arc<TableRule>]) -> Result<(), RouteError> {
        let [first, rest @ ..] = rules else {
            return Ok(());
        };
        if rest.is_empty() {
            return Ok(());
        }
        let lower = |r: &Arc<TableRule>| r.logic_table.to_ascii_lowercase();
        let bound = self
            .binding_groups
            .iter()
            .any(|group| rules.iter().all(|r| group.contains(&lower(r))))
            && rest.iter().all(|r| {
                // Node `i` of each must be on the same data source with the same table suffix
                // (`t_order_3` with `t_order_item_3`), as ShardingSphere pairs them.
                r.data_nodes.len() == first.data_nodes.len()
                    && r.data_nodes.iter().zip(&first.data_nodes).all(|(a, b)| {
                        a.data_source == b.data_source
                            && suffix(&a.table, &r.logic_table)
                                == suffix(&b.table, &first.logic_table)
                    })
            });
        if bound {
            Ok(())
        } else {
            let names: Vec<&str> = rules.iter().map(|r| r.logic_table.as_str()).collect();
            Err(RouteError::Unsupported(format!(
                "a join of sharded tables that are not bound ({}); list them in bindingTables",
                names.join(", ")
            )))
        }
    }
}

/// What an actual table's name adds to its logic table's (`_3` of `t_order_3`), compared
/// case-insensitively; the whole name when it does not start with the logic name.
fn suffix(actual: &str, logic: &str) -> String {
    let lower = actual.to_ascii_lowercase();
    match lower.strip_prefix(&logic.to_ascii_lowercase()) {
        Some(rest) => rest.to_owned(),
        None => lower,
    }
}
