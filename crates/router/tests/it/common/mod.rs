//! Rules and fixtures shared by the router's integration tests.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use keyshard_config::ShardingRule;
use keyshard_keygen::{Key, KeyGenError, KeyGenerator};

/// A test's rule text: the two in-memory SQLite data sources every fixture routes over, then
/// `$rules`, the `rules:` list.
macro_rules! two_sources {
    ($rules:literal) => {
        concat!(
            "databaseName: sharding_db\ndataSources:\n  ds_0:\n    url: \"sqlite::memory:\"\n  \
             ds_1:\n    url: \"sqlite::memory:\"\nrules:",
            $rules
        )
    };
}
#[allow(unused_imports)] // Not every test binary has a fixture of its own.
pub(crate) use two_sources;

/// ShardingSphere's `REWRITE.FIXTURE` generator: every key is 1.
#[derive(Debug)]
pub struct ConstantOne;

impl KeyGenerator for ConstantOne {
    fn type_name(&self) -> &'static str {
        "REWRITE.FIXTURE"
    }
    fn next_key(&self) -> Result<Key, KeyGenError> {
        Ok(Key::Int(1))
    }
    fn next_keys(&self, count: usize, out: &mut Vec<Key>) -> Result<(), KeyGenError> {
        out.extend((0..count).map(|_| Key::Int(1)));
        Ok(())
    }
}

/// Loads a sharding rule from YAML (data sources named in `rules` must be listed).
/// Its worker id is granted locally: the router runs without the coordination layer.
pub fn rule(yaml: &str) -> ShardingRule {
    let config =
        keyshard_config::from_yaml_str(yaml, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
    config
        .key_generators
        .lease()
        .grant(keyshard_keygen::Grant::unchecked(0));
    config.sharding
}

/// Replaces every table's key generator with `generator`.
pub fn with_generator(mut rule: ShardingRule, generator: Arc<dyn KeyGenerator>) -> ShardingRule {
    for table in rule.tables.values_mut() {
        if let Some(k) = table.key_generate.as_mut() {
            k.generator = Arc::clone(&generator);
        }
    }
    rule
}

/// ShardingSphere's rewrite-test rule: `t_account` over `db.t_account_${0..1}` by
/// `account_id % 2`, key column `account_id`.
pub const T_ACCOUNT: &str = r#"
databaseName: sharding_db
dataSources:
  db:
    url: "sqlite::memory:"
rules:
- !SHARDING
  tables:
    t_account:
      actualDataNodes: db.t_account_${0..1}
      tableStrategy:
        standard:
          shardingColumn: account_id
          shardingAlgorithmName: t_account_inline
      keyGenerateStrategy:
        column: account_id
        keyGeneratorName: snowflake
  shardingAlgorithms:
    t_account_inline:
      type: INLINE
      props:
        algorithm-expression: t_account_${account_id % 2}
  keyGenerators:
    snowflake:
      type: SNOWFLAKE
"#;

#[path = "../../../../../tests/it/common/t_order.rs"]
mod t_order;

/// `t_order` sharded over two data sources by `user_id` and two tables each by `order_id`: the
/// embedded default's rule, over in-memory SQLite.
pub static T_ORDER: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| t_order::yaml("\"sqlite::memory:\"", "\"sqlite::memory:\""));

/// `t_order`'s data source by two columns at once (COMPLEX_INLINE over a complex strategy), its
/// table by `order_id` alone.
pub const T_ORDER_COMPLEX: &str = two_sources!(
    r#"
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        complex:
          shardingColumns: user_id, order_id
          shardingAlgorithmName: db_complex
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: t_inline
  shardingAlgorithms:
    db_complex:
      type: COMPLEX_INLINE
      props:
        sharding-columns: user_id,order_id
        algorithm-expression: ds_${(user_id + order_id) % 2}
    t_inline:
      type: INLINE
      props:
        algorithm-expression: t_order_${order_id % 2}
"#
);

/// The visible columns of the test tables.
pub fn metadata() -> HashMap<String, Vec<String>> {
    HashMap::from([
        (
            "t_account".to_owned(),
            vec!["account_id".to_owned(), "amount".to_owned()],
        ),
        (
            "t_order".to_owned(),
            vec![
                "order_id".to_owned(),
                "user_id".to_owned(),
                "status".to_owned(),
            ],
        ),
    ])
}
