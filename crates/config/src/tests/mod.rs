//! Loading whole configurations, by topic: each file loads the sample from the design brief
//! (`SAMPLE`), usually with one part replaced, and checks what it resolves to or the exact
//! path-naming message of the error. The sample and the helpers that load it live here.

use std::path::Path;

use crate::{Config, ConfigError, from_yaml_str};

mod algorithms;
mod data_sources;
mod errors;
mod loading;
mod mode;
mod server_and_props;
mod transaction_and_authority;

const SAMPLE: &str = r#"
server:
  mysql:
    listen: 127.0.0.1:3307
  postgres:
    listen: 127.0.0.1:5433
authority:
  users:
    - user: root@%
      password: root
    - user: app
      password: 123456
props:
  sql-show: true
databaseName: sharding_db
dataSources:
  ds_0:
    url: sqlite://data/ds_0.db
  ds_1:
    url: mysql://root@127.0.0.1:3306/shop_1
    maxPoolSize: 16
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard:
          shardingColumn: user_id
          shardingAlgorithmName: db_inline
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: t_inline
      keyGenerateStrategy:
        column: order_id
        keyGeneratorName: snowflake
    T_Order_Item:
      actualDataNodes: ds_${0..1}.t_order_item_${0..1}
      tableStrategy:
        none:
    t_user:
      actualDataNodes: ds_0.t_user
  bindingTables:
    - t_order, t_order_item
  defaultDatabaseStrategy:
    standard:
      shardingColumn: user_id
      shardingAlgorithmName: db_inline
  defaultTableStrategy:
    standard:
      shardingColumn: id
      shardingAlgorithmName: mod4
  defaultKeyGenerateStrategy:
    column: id
    keyGeneratorName: uuid
  defaultDataSource: ds_0
  shardingAlgorithms:
    db_inline:
      type: INLINE
      props:
        algorithm-expression: ds_${user_id % 2}
    t_inline:
      type: INLINE
      props:
        algorithm-expression: t_order_$->{order_id % 2}
        allow-range-query-with-inline-sharding: true
    mod4:
      type: mod
      props:
        sharding-count: 4
  keyGenerators:
    snowflake:
      type: SNOWFLAKE
      props:
        worker-id: 1
        max-vibration-offset: 3
    uuid:
      type: UUID
- !BROADCAST
  tables: [t_dict]
"#;

fn load(text: &str) -> Result<Config, ConfigError> {
    from_yaml_str(text, Path::new("/srv/keyshard"))
}

/// The message of loading `SAMPLE` with `from` replaced by `to`.
fn error_with(from: &str, to: &str) -> String {
    assert!(SAMPLE.contains(from), "sample has no {from:?}");
    match load(&SAMPLE.replacen(from, to, 1)) {
        Ok(_) => panic!("{from:?} -> {to:?} loaded"),
        Err(e) => e.to_string(),
    }
}
