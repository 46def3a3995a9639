//! Whole configurations that load: the sample from the design brief with every default
//! resolved, a minimal one, the shipped default (from its file and embedded), and a sharded table
//! that names neither strategies nor data nodes.

use std::path::Path;

use super::{SAMPLE, load};
use crate::inline::Value;
use crate::{Algorithm, DatabaseKind, from_yaml_str};

#[test]
fn sample_loads_with_defaults_resolved() {
    let config = load(SAMPLE).unwrap();
    assert_eq!(config.server.mysql, Some("127.0.0.1:3307".parse().unwrap()));
    assert_eq!(
        config.server.postgres,
        Some("127.0.0.1:5433".parse().unwrap())
    );
    assert_eq!(config.users[0].name, "root");
    assert_eq!(config.users[0].host.as_deref(), Some("%"));
    assert_eq!(config.users[1].password, "123456");
    assert!(config.props.sql_show);
    assert_eq!(config.database_name, "sharding_db");

    let ds0 = &config.data_sources["ds_0"];
    assert_eq!(
        (ds0.kind, ds0.url.as_str()),
        (DatabaseKind::Sqlite, "sqlite:///srv/keyshard/data/ds_0.db")
    );
    assert_eq!(config.data_sources["ds_1"].pool.max_size, Some(16));
    assert!(!config.data_sources["ds_1"].pool.strict_session_state);

    let sharding = &config.sharding;
    let order = sharding.table("T_ORDER").unwrap();
    let nodes: Vec<String> = order.data_nodes.iter().map(ToString::to_string).collect();
    assert_eq!(
        nodes,
        [
            "ds_0.t_order_0",
            "ds_0.t_order_1",
            "ds_1.t_order_0",
            "ds_1.t_order_1"
        ]
    );
    assert_eq!(order.data_source_names(), ["ds_0", "ds_1"]);
    let db = order.database_strategy.as_ref().unwrap();
    assert_eq!(
        (db.column.as_str(), db.algorithm_name.as_str()),
        ("user_id", "db_inline")
    );
    let Algorithm::Inline {
        expression,
        allow_range_query,
    } = &*order.table_strategy.as_ref().unwrap().algorithm
    else {
        panic!("t_inline is INLINE");
    };
    assert!(*allow_range_query);
    assert_eq!(
        expression.evaluate_with(Value::Int(7)).unwrap(),
        "t_order_1"
    );
    let key = order.key_generate.as_ref().unwrap();
    assert_eq!(
        (key.column.as_str(), key.generator_name.as_str()),
        ("order_id", "snowflake")
    );
    assert_eq!(key.generator.type_name(), "SNOWFLAKE");
    // One shared instance per generator name.
    assert!(std::sync::Arc::ptr_eq(
        &key.generator,
        &config.key_generators.get("snowflake").unwrap()
    ));

    // Explicit `none` overrides the default table strategy; the database default is inherited.
    let item = sharding.table("t_order_item").unwrap();
    assert_eq!(item.logic_table, "T_Order_Item");
    assert!(item.table_strategy.is_none());
    assert_eq!(
        item.database_strategy.as_ref().unwrap().algorithm_name,
        "db_inline"
    );
    assert_eq!(item.key_generate.as_ref().unwrap().generator_name, "uuid");

    let user = sharding.table("t_user").unwrap();
    let table = user.table_strategy.as_ref().unwrap();
    assert_eq!(
        (table.column.as_str(), &*table.algorithm),
        ("id", &Algorithm::Mod { sharding_count: 4 })
    );

    assert_eq!(
        sharding.binding_groups,
        [vec!["t_order".to_owned(), "t_order_item".to_owned()]]
    );
    assert_eq!(sharding.binding_group("T_ORDER_ITEM").unwrap().len(), 2);
    assert_eq!(sharding.default_data_source.as_deref(), Some("ds_0"));
    assert!(config.is_broadcast_table("T_DICT"));
    assert!(sharding.table("t_dict").is_none());
}

#[test]
fn minimal_config_uses_defaults() {
    let config =
        load("databaseName: db\ndataSources:\n  ds:\n    url: \"sqlite::memory:\"\n").unwrap();
    assert_eq!(config.server.mysql, Some("127.0.0.1:3307".parse().unwrap()));
    assert_eq!(config.server.postgres, None);
    assert!(config.users.is_empty());
    assert!(!config.props.sql_show);
    assert_eq!(config.props.max_connections_per_query, 1);
    assert!(config.sharding.is_empty());
    assert_eq!(config.data_sources["ds"].url, "sqlite::memory:");
}

#[test]
fn table_without_strategies_or_nodes_is_on_every_data_source_unsharded() {
    let text = "databaseName: db\ndataSources:\n  a:\n    url: \"sqlite::memory:\"\n  b:\n    url: \"sqlite::memory:\"\nrules:\n- !SHARDING\n  tables:\n    t: {}\n";
    let config = load(text).unwrap();
    let t = config.sharding.table("t").unwrap();
    assert_eq!(
        t.data_nodes
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["a.t", "b.t"]
    );
    assert!(
        t.database_strategy.is_none() && t.table_strategy.is_none() && t.key_generate.is_none()
    );
}

#[test]
fn shipped_default_loads_and_spreads_over_four_tables() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config");
    let from_file = crate::load(&dir.join("keyshard.yaml")).unwrap();
    let embedded = from_yaml_str(crate::embedded_default(), &dir).unwrap();
    for config in [&from_file, &embedded] {
        let order = config.sharding.table("t_order").unwrap();
        assert_eq!(order.data_nodes.len(), 4);
        assert_eq!(
            order.key_generate.as_ref().unwrap().generator.type_name(),
            "SNOWFLAKE"
        );
        assert_eq!(config.users[0].name, "root");
        assert_eq!(config.server.mysql, Some("127.0.0.1:3307".parse().unwrap()));
    }
    let url = &from_file.data_sources["ds_0"].url;
    assert!(
        url.starts_with("sqlite:///") && url.ends_with("/config/../data/ds_0.db"),
        "{url}"
    );
}
