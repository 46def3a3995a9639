//! Every case of ShardingSphere's own INSERT rewrite tests (shared/testdata), byte for byte.

use crate::common;

use std::sync::Arc;

use keyshard_router::Router;
use keyshard_types::{Dialect, Value};
use serde_json::Value as Json;

fn value(json: &Json) -> Value {
    match json {
        Json::Number(n) => Value::Int(n.as_i64().unwrap()),
        Json::String(s) => Value::Text(s.clone()),
        Json::Null => Value::Null,
        other => panic!("unexpected parameter {other}"),
    }
}

#[test]
fn shardingsphere_rewrite_cases() {
    let text = include_str!("../../testdata/shardingsphere_rewrite_cases.json");
    let cases: Json = serde_json::from_str(text).unwrap();
    let rule = common::with_generator(
        common::rule(common::T_ACCOUNT),
        Arc::new(common::ConstantOne),
    );
    let router = Router::new(&rule, Dialect::MySql);
    let metadata = common::metadata();
    let cases = cases["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 8);
    for case in cases {
        let id = case["id"].as_str().unwrap();
        let sql = case["input_sql"].as_str().unwrap();
        let params: Vec<Value> = case["input_params"]
            .as_array()
            .unwrap()
            .iter()
            .map(value)
            .collect();
        let plan = router
            .plan(sql, &params, &metadata)
            .unwrap_or_else(|e| panic!("{id}: {e}"))
            .unwrap_or_else(|o| panic!("{id}: not planned: {o:?}"));
        let expected = case["outputs"].as_array().unwrap();
        assert_eq!(plan.units.len(), expected.len(), "{id}: unit count");
        for (unit, want) in plan.units.iter().zip(expected) {
            assert_eq!(unit.sql, want["sql"].as_str().unwrap(), "{id}: sql");
            let want_params: Vec<Value> = want["params"]
                .as_array()
                .unwrap()
                .iter()
                .map(value)
                .collect();
            assert_eq!(unit.params, want_params, "{id}: params");
            assert_eq!(
                unit.data_source,
                want["data_source"].as_str().unwrap(),
                "{id}: data source"
            );
            assert_eq!(unit.table, want["table"].as_str().unwrap(), "{id}: table");
        }
        assert_eq!(
            !plan.generated_keys.is_empty(),
            case["key_generated"].as_bool().unwrap(),
            "{id}: key generated"
        );
    }
}
