//! Sharding algorithms and key generators: their errors naming path and value, environment
//! placeholders in generator props, and gene keys carrying the other sharding column.

use super::{SAMPLE, error_with, load};

#[test]
fn algorithm_errors_name_path_and_value() {
    assert_eq!(
        error_with("ds_${user_id % 2}", "ds_${user_id.hashCode() % 2}"),
        "rules[0].shardingAlgorithms.db_inline.props.algorithm-expression: unsupported syntax at column 13: \
         '.hashCode()' (method calls and property access are not supported)"
    );
    // Each strategy that uses it so: the default and t_order's own.
    assert_eq!(
        error_with("ds_${user_id % 2}", "ds_${order_id % 2}"),
        "rules[0].defaultDatabaseStrategy.standard: algorithm 'db_inline' uses variable 'order_id' \
         but the sharding column is 'user_id'\nrules[0].tables.t_order.databaseStrategy.standard: \
         algorithm 'db_inline' uses variable 'order_id' but the sharding column is 'user_id'"
    );
    assert_eq!(
        error_with("sharding-count: 4", "sharding-count: 0"),
        "rules[0].shardingAlgorithms.mod4.props.sharding-count: expected a positive integer, got '0'"
    );
    assert_eq!(
        error_with("sharding-count: 4", "sharding-cnt: 4"),
        "rules[0].shardingAlgorithms.mod4.props: unknown property 'sharding-cnt' for MOD (allowed: sharding-count)"
    );
    assert_eq!(
        error_with(
            "type: mod\n      props:\n        sharding-count: 4",
            "type: HASH_MOD"
        ),
        "rules[0].shardingAlgorithms.mod4.props: missing property 'sharding-count'"
    );
    assert_eq!(
        error_with("type: mod", "type: VOLUME_RANGE"),
        "rules[0].shardingAlgorithms.mod4.props: unknown property 'sharding-count' for VOLUME_RANGE \
         (allowed: range-lower, range-upper, sharding-volume)"
    );
    assert_eq!(
        error_with("type: mod", "type: CLASS_BASED"),
        "rules[0].shardingAlgorithms.mod4.type: unsupported sharding algorithm type 'CLASS_BASED' \
         (supported: INLINE, MOD, HASH_MOD, VOLUME_RANGE, BOUNDARY_RANGE, AUTO_INTERVAL, INTERVAL, \
         COMPLEX_INLINE, HINT_INLINE; CLASS_BASED runs a Java class, which Keyshard cannot)"
    );
    assert_eq!(
        error_with(
            "type: mod\n      props:\n        sharding-count: 4",
            "type: INTERVAL\n      props:\n        datetime-pattern: yyyy-MM-dd\n        \
             datetime-lower: '2021-01-01'\n        sharding-suffix-pattern: yyyyMMdd\n        \
             datetime-interval-unit: HOURS"
        ),
        "rules[0].shardingAlgorithms.mod4.props: datetime-interval-unit Hours does not apply to \
         values of datetime-pattern 'yyyy-MM-dd'"
    );
    assert_eq!(
        error_with("worker-id: 1", "worker-id: 1024"),
        "rules[0].keyGenerators.snowflake: property 'worker-id' = '1024' is invalid: expected an integer \
         from 0 to 1023"
    );
    assert_eq!(
        error_with("tableStrategy:\n        none:", "tableStrategy: {}"),
        "rules[0].tables.T_Order_Item.tableStrategy: expected exactly one of 'standard', 'complex', 'hint' or 'none'"
    );
}

#[test]
fn generator_props_take_env_placeholders() {
    // SAFETY: the variable name is unique to this test and only this test reads it.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("KEYSHARD_CONFIG_TEST_WORKER_9F2", "7");
    }
    let config = load(&SAMPLE.replacen(
        "worker-id: 1",
        "worker-id: ${KEYSHARD_CONFIG_TEST_WORKER_9F2}",
        1,
    ))
    .unwrap();
    let (_, snowflake) = config.key_generators.iter().next().unwrap();
    assert_eq!(snowflake.props["worker-id"], "7");
    assert_eq!(
        error_with(
            "worker-id: 1",
            "worker-id: ${KEYSHARD_CONFIG_TEST_UNSET_4B1}"
        ),
        "rules[0].keyGenerators.snowflake.props.worker-id: environment variable \
         'KEYSHARD_CONFIG_TEST_UNSET_4B1' is not set"
    );
}

/// `gene-bits` on t_order's generator: its keys carry `user_id`'s low bits, which its data
/// source's `ds_${user_id % 2}` routes by. A table whose algorithm reads more of the value
/// than those bits loads without gene keys, with a warning naming the algorithm.
#[test]
fn gene_keys_carry_the_other_sharding_column() {
    let genes = SAMPLE.replacen(
        "max-vibration-offset: 3",
        "max-vibration-offset: 3\n        gene-bits: 4",
        1,
    );
    let config = load(&genes).unwrap();
    let gene = config.sharding.tables["t_order"].gene.clone().unwrap();
    assert_eq!(
        (gene.key_column.as_str(), gene.column.as_str(), gene.bits),
        ("order_id", "user_id", 4)
    );
    assert_eq!((gene.of(0x1234_5677), gene.of(-1)), (Some(7), None));
    assert!(config.sharding.tables["t_user"].gene.is_none());
    assert!(config.warnings.iter().all(|w| !w.contains("gene keys")));
    for to in ["ds_${(user_id + 1) % 2}", "ds_${user_id % 32}"] {
        let config = load(&genes.replacen("ds_${user_id % 2}", to, 1)).unwrap();
        assert!(config.sharding.tables["t_order"].gene.is_none());
        let warning = config
            .warnings
            .iter()
            .find(|w| w.contains("gene keys"))
            .unwrap();
        assert!(
            warning.contains("tables.t_order") && warning.contains("db_inline"),
            "{warning}"
        );
    }
}
