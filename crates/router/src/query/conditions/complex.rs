//! Complex strategies (`complex: {shardingColumns: a,b}`) among a WHERE clause's conditions:
//! their expression needs every column's value at once, so they narrow where equalities on all
//! their columns are joined by AND, over every combination of the values those allow.

use std::sync::Arc;

use keyshard_config::TableRule;

use super::Condition;
use crate::RouteError;
use crate::route::{NodeSet, complex_target};
use keyshard_types::Value;

/// More combinations than this (IN lists on several columns) narrow nothing: every node.
const MAX_COMBINATIONS: usize = 1024;

/// Narrows `nodes` by the complex strategies of `rules` whose every column an equality among
/// `conjuncts` (conditions joined by AND) gives.
pub(super) fn narrow(
    rules: &[Arc<TableRule>],
    conjuncts: &[Condition],
    params: &[Value],
    nodes: &mut NodeSet,
    scratch: &mut String,
) -> Result<(), RouteError> {
    for (t, rule) in rules.iter().enumerate() {
        let levels = [
            (&rule.database_strategy, true),
            (&rule.table_strategy, false),
        ];
        for (strategy, on_data_source) in levels {
            let Some(strategy) = strategy.as_ref().filter(|s| s.is_complex()) else {
                continue;
            };
            let Some(values) = column_values(t, &strategy.columns, conjuncts, params)? else {
                continue;
            };
            let combinations: usize = values.iter().map(Vec::len).product();
            if combinations > MAX_COMBINATIONS {
                continue;
            }
            let mut reachable = NodeSet::none(nodes.len());
            for combination in 0..combinations {
                // Mixed radix: one value of each column per combination.
                let mut rest = combination;
                let chosen: Vec<&Value> = values
                    .iter()
                    .map(|these| {
                        let value = &these[rest % these.len()];
                        rest /= these.len();
                        value
                    })
                    .collect();
                let value_of = |name: &str| {
                    strategy
                        .columns
                        .iter()
                        .position(|c| c.eq_ignore_ascii_case(name))
                        .map(|i| chosen[i].clone())
                };
                let names = rule.data_nodes.iter().map(|n| match on_data_source {
                    true => n.data_source.as_str(),
                    false => n.table.as_str(),
                });
                // A combination that routes nowhere is looked for everywhere: the database
                // evaluates the condition anyway, so this is only slower, never wrong.
                let Ok(target) = complex_target(strategy, &value_of, names, scratch) else {
                    reachable.fill(true);
                    break;
                };
                for (i, node) in rule.data_nodes.iter().enumerate() {
                    let name = if on_data_source {
                        &node.data_source
                    } else {
                        &node.table
                    };
                    if name.eq_ignore_ascii_case(target) {
                        reachable.insert(i);
                    }
                }
            }
            nodes.and(&reachable);
        }
    }
    Ok(())
}

/// For each of `columns`, the values an equality among `conjuncts` allows it for table `t`;
/// `None` when one has none.
fn column_values(
    t: usize,
    columns: &[String],
    conjuncts: &[Condition],
    params: &[Value],
) -> Result<Option<Vec<Vec<Value>>>, RouteError> {
    let mut all = Vec::with_capacity(columns.len());
    for column in columns {
        let operands = conjuncts.iter().find_map(|c| match c {
            Condition::Equals {
                table,
                column: c,
                values,
            } if table.is_none_or(|only| only == t) && c.eq_ignore_ascii_case(column) => {
                Some(values)
            }
            _ => None,
        });
        let Some(operands) = operands else {
            return Ok(None);
        };
        let values = operands
            .iter()
            .map(|o| o.resolve(params).cloned())
            .collect::<Result<Vec<_>, _>>()?;
        if values.is_empty() {
            return Ok(None);
        }
        all.push(values);
    }
    Ok(Some(all))
}
