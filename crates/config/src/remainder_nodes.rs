//! Which data nodes each remainder of an INLINE `prefix${column % n}` strategy sends a row to,
//! worked out at load. Routing a statement by an integer then reads a mask, where it would
//! otherwise write the target's name and compare it with every node's (about 8 % of a point
//! SELECT's instructions).
//!
//! The names match as the router's own path matches them (`keyshard_router`'s `nodes_with`,
//! whose tests compare the two): the target is the first node name equal to the expression's
//! result, else the first equal to it ignoring ASCII case; a data source then keeps the nodes
//! whose data source is that name, a table the nodes whose table is it ignoring case.

use crate::algorithm::Algorithm;
use crate::model::{DataNode, Strategy, TableRule};

/// The masks of a rule's two strategy levels: bit `i` stands for data node `i`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemainderNodes {
    database: Option<Masks>,
    table: Option<Masks>,
}

/// One level's masks, by remainder.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Masks {
    modulus: i64,
    /// The nodes for remainder `r` (−modulus < r < modulus) at `r + modulus − 1`; 0 where the
    /// result names no node (routing then reports it).
    by_slot: Vec<u64>,
}

impl Masks {
    fn of(
        strategy: Option<&Strategy>,
        nodes: &[DataNode],
        name: fn(&DataNode) -> &str,
        exact: bool,
    ) -> Option<Self> {
        let (Algorithm::Inline { expression, .. } | Algorithm::HintInline { expression }) =
            &*strategy?.algorithm
        else {
            return None;
        };
        let modulus = expression.remainder_modulus()?;
        let by_slot = (1 - modulus..modulus)
            .map(|r| {
                let Some(result) = expression.kept_result(r) else {
                    return 0;
                };
                let found = nodes.iter().map(name).find(|n| *n == result).or_else(|| {
                    nodes
                        .iter()
                        .map(name)
                        .find(|n| n.eq_ignore_ascii_case(result))
                });
                let Some(found) = found else {
                    return 0;
                };
                nodes.iter().enumerate().fold(0, |mask, (i, node)| {
                    let keep = if exact {
                        name(node) == found
                    } else {
                        name(node).eq_ignore_ascii_case(found)
                    };
                    mask | (u64::from(keep) << i)
                })
            })
            .collect();
        Some(Self { modulus, by_slot })
    }

    fn nodes(&self, value: i64) -> Option<u64> {
        let slot = usize::try_from(value % self.modulus + self.modulus - 1).ok()?;
        self.by_slot.get(slot).copied().filter(|mask| *mask != 0)
    }
}

impl RemainderNodes {
    /// The masks of `rule`'s strategies that are INLINE by a remainder, for a rule of at most
    /// 64 nodes.
    pub(crate) fn of(rule: &TableRule) -> Self {
        if rule.data_nodes.len() > 64 {
            return Self::default();
        }
        let nodes = &rule.data_nodes;
        Self {
            database: Masks::of(
                rule.database_strategy.as_ref(),
                nodes,
                |n| &n.data_source,
                true,
            ),
            table: Masks::of(rule.table_strategy.as_ref(), nodes, |n| &n.table, false),
        }
    }

    /// The nodes (bit `i`: data node `i`) whose data source the database strategy names for
    /// the integer `value`; `None` when the masks do not say (a strategy of another form, a
    /// result that names no node): the strategy must then be asked.
    pub fn database(&self, value: i64) -> Option<u64> {
        self.database.as_ref()?.nodes(value)
    }

    /// [`RemainderNodes::database`]'s twin for the table strategy.
    pub fn table(&self, value: i64) -> Option<u64> {
        self.table.as_ref()?.nodes(value)
    }
}

#[cfg(test)]
mod tests {
    fn rule(yaml_nodes: &str, database: &str, table: &str) -> crate::TableRule {
        let yaml = format!(
            r#"
databaseName: db
dataSources:
  ds_0: {{ url: "sqlite::memory:" }}
  ds_1: {{ url: "sqlite::memory:" }}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: {yaml_nodes}
      databaseStrategy:
        standard: {{ shardingColumn: user_id, shardingAlgorithmName: db }}
      tableStrategy:
        standard: {{ shardingColumn: order_id, shardingAlgorithmName: tb }}
  shardingAlgorithms:
    db: {{ type: INLINE, props: {{ algorithm-expression: "{database}" }} }}
    tb: {{ type: INLINE, props: {{ algorithm-expression: "{table}" }} }}
"#
        );
        let config = crate::from_yaml_str(&yaml, std::path::Path::new(".")).unwrap();
        config.sharding.tables["t_order"].clone()
    }

    #[test]
    fn each_remainder_reads_its_nodes() {
        let rule = rule(
            "ds_${0..1}.t_order_${0..1}",
            "ds_${user_id % 2}",
            "t_order_${order_id % 2}",
        );
        let masks = &rule.remainder_nodes;
        // Nodes: ds_0.t_order_0, ds_0.t_order_1, ds_1.t_order_0, ds_1.t_order_1.
        assert_eq!(masks.database(4), Some(0b0011));
        assert_eq!(masks.database(7), Some(0b1100));
        assert_eq!(masks.table(9), Some(0b1010));
        assert_eq!(masks.table(i64::MAX), Some(0b1010));
        // `-1 % 2` is -1 (Java's remainder): `ds_-1` names no node.
        assert_eq!(masks.database(-1), None);
        assert_eq!(masks.database(-2), Some(0b0011));
    }

    #[test]
    fn names_match_ignoring_case_only_when_no_name_is_exact() {
        let rule = rule(
            "ds_0.T_ORDER_0,ds_0.t_order_1,ds_1.t_order_0,ds_1.t_order_1",
            "DS_${user_id % 2}",
            "t_order_${order_id % 2}",
        );
        let masks = &rule.remainder_nodes;
        assert_eq!(masks.table(0), Some(0b0101));
        assert_eq!(masks.database(1), Some(0b1100));
    }

    #[test]
    fn other_expressions_have_no_masks() {
        let rule = rule(
            "ds_${0..1}.t_order_${0..1}",
            "ds_${user_id / 2 % 2}",
            "t_order_${(order_id + 1) % 2}",
        );
        assert_eq!(rule.remainder_nodes.database(1), None);
        assert_eq!(rule.remainder_nodes.table(1), None);
    }
}
