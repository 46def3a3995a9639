//! Validation errors of the rules' shape and references, each checking the exact path-naming
//! message, and several problems reported together in one run.

use super::{SAMPLE, error_with, load};

#[test]
fn reference_errors_name_path_and_value() {
    assert_eq!(
        error_with("keyGeneratorName: snowflake", "keyGeneratorName: snowflak"),
        "rules[0].tables.t_order.keyGenerateStrategy.keyGeneratorName: no key generator named 'snowflak'"
    );
    assert_eq!(
        error_with(
            "shardingAlgorithmName: t_inline",
            "shardingAlgorithmName: t_inlin"
        ),
        "rules[0].tables.t_order.tableStrategy.standard.shardingAlgorithmName: no sharding algorithm named 't_inlin'"
    );
    assert_eq!(
        error_with("ds_${0..1}.t_order_${0..1}", "ds_${0..2}.t_order_${0..1}"),
        "rules[0].tables.t_order.actualDataNodes: no data source named 'ds_2'"
    );
    assert_eq!(
        error_with("t_order, t_order_item", "t_order, t_ordr_item"),
        "rules[0].bindingTables[0]: no sharded table named 't_ordr_item'"
    );
    assert_eq!(
        error_with("defaultDataSource: ds_0", "defaultDataSource: ds_9"),
        "rules[0].defaultDataSource: no data source named 'ds_9'"
    );
    assert_eq!(
        error_with("actualDataNodes: ds_0.t_user", "actualDataNodes: t_user"),
        "rules[0].tables.t_user.actualDataNodes: data node 't_user' is not of the form <data source>.<table>"
    );
    assert_eq!(
        error_with("tables: [t_dict]", "tables: [t_dict, T_ORDER]"),
        "rules[1].tables[1]: table 'T_ORDER' is both sharded and broadcast"
    );
}

#[test]
fn shape_errors_name_path() {
    assert_eq!(
        error_with("- !BROADCAST", "- !ENCRYPT"),
        "rules[1]: unsupported rule '!ENCRYPT' (supported: !SHARDING, !READWRITE_SPLITTING, !BROADCAST, !SINGLE, \
         !TRANSACTION, !AUTHORITY; ShardingSphere's engine settings such as !SQL_PARSER load with \
         a warning)"
    );
    let unknown = error_with(
        "actualDataNodes: ds_0.t_user",
        "actualDataNode: ds_0.t_user",
    );
    assert!(
        unknown.starts_with(
            "rules[0].tables.t_user: unknown field `actualDataNode`, expected one of `actualDataNodes`"
        ),
        "{unknown}"
    );
    assert_eq!(
        error_with("sql-show: true", "sql-shown: true"),
        "props.sql-shown: unknown setting 'sql-shown' (neither Keyshard's nor ShardingSphere's)"
    );
    assert_eq!(
        error_with("listen: 127.0.0.1:5433", "listen: 127.0.0.1"),
        "server.postgres.listen: expected an address such as 127.0.0.1:3307, got '127.0.0.1'"
    );
    assert_eq!(
        load("databaseName: db\ndataSources: {}\n")
            .unwrap_err()
            .to_string(),
        "dataSources: at least one data source is required"
    );
}

/// Problems of different kinds are all reported in one run, and what names a bad item is not
/// reported again: a bad algorithm (and not the tables that use it), a bad table, a binding
/// group naming an unknown table (but not one naming the bad table), an unknown default data
/// source.
#[test]
fn every_kind_of_problem_is_reported_in_one_run() {
    let text = SAMPLE
        .replacen("sharding-count: 4", "sharding-count: 0", 1)
        .replacen(
            "actualDataNodes: ds_0.t_user",
            "actualDataNodes: ds_9.t_user",
            1,
        )
        .replacen(
            "    - t_order, t_order_item",
            "    - t_order, t_order_item\n    - t_user, t_nowhere",
            1,
        )
        .replacen("defaultDataSource: ds_0", "defaultDataSource: ds_7", 1);
    let error = load(&text).unwrap_err().to_string();
    let lines: Vec<&str> = error.lines().collect();
    assert_eq!(lines.len(), 4, "{error}");
    for (line, wanted) in lines.iter().zip([
        "shardingAlgorithms.mod4.props.sharding-count",
        "tables.t_user.actualDataNodes",
        "bindingTables[1]: no sharded table named 't_nowhere'",
        "defaultDataSource",
    ]) {
        assert!(line.contains(wanted), "{line} / {wanted}\n{error}");
    }
}
