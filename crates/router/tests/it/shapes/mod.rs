//! A statement planned through the shape of another statement (prepared once, checked with
//! `stands_for`) plans exactly as when it is parsed itself: same units, same SQL, same errors.
//! INSERTs here, SELECT, UPDATE and DELETE in `queries`.

use crate::common;
mod queries;

use std::sync::{Arc, OnceLock};

use keyshard_router::{Plan, Prepared, PreparedInsert, RouteError, Router, Shape};
use keyshard_types::{Dialect, Value};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// A cell's spelling, by kind; `n` varies between statements of one shape.
fn cell(kind: usize, n: i64, dialect: Dialect) -> String {
    match kind {
        0 => format!("{n}"),
        1 => format!("-{n}"),
        2 => format!("- {n}"),
        3 => format!("'{n}'"),
        4 => format!("'s {n}'"),
        5 => format!("{n}.5"),
        6 => "NULL".into(),
        7 => "DEFAULT".into(),
        8 => format!("({n})"),
        9 => format!("{n} + 1"),
        10 => match dialect {
            Dialect::MySql => format!("CAST({n} AS SIGNED)"),
            Dialect::Postgres => format!("{n}::bigint"),
        },
        11 => format!("CAST(({n}) AS CHAR)"),
        12 => format!("-'{n}'"),
        13 => format!("upper('{n}')"),
        _ => "0".into(),
    }
}

#[derive(Debug, Clone)]
struct Template {
    dialect: Dialect,
    with_key: bool,
    rows: Vec<[usize; 3]>,
    set_form: bool,
    tail: usize,
}

fn template() -> impl Strategy<Value = Template> {
    let dialect = prop_oneof![Just(Dialect::MySql), Just(Dialect::Postgres)];
    (
        dialect,
        any::<bool>(),
        prop::collection::vec(prop::array::uniform3(0usize..15), 1..4),
        any::<bool>(),
        any::<bool>(),
        0usize..3,
    )
        .prop_map(|(dialect, with_key, mut rows, alike, set_form, tail)| {
            // Rows alike, as a bulk load sends them, are what a shape folds.
            if alike {
                let first = rows[0];
                rows.iter_mut().for_each(|row| *row = first);
            }
            Template {
                dialect,
                with_key,
                rows,
                set_form: set_form && dialect == Dialect::MySql,
                tail,
            }
        })
}

fn spell(t: &Template, values: &[i64]) -> String {
    let mut n = values.iter().cycle().copied();
    let mut next = |kind| cell(kind, n.next().unwrap_or(1), t.dialect);
    let columns: &[&str] = if t.with_key {
        &["user_id", "status", "order_id"]
    } else {
        &["user_id", "status"]
    };
    let mut sql = String::from("INSERT INTO t_order ");
    if t.set_form {
        let row = t.rows[0];
        let sets: Vec<String> = columns
            .iter()
            .zip(row)
            .map(|(c, kind)| format!("{c} = {}", next(kind)))
            .collect();
        sql.push_str(&format!("SET {}", sets.join(", ")));
    } else {
        sql.push_str(&format!("({}) VALUES ", columns.join(", ")));
        let rows: Vec<String> = t
            .rows
            .iter()
            .map(|row| {
                let cells: Vec<String> = row[..columns.len()].iter().map(|&k| next(k)).collect();
                format!("({})", cells.join(","))
            })
            .collect();
        sql.push_str(&rows.join(", "));
    }
    match (t.tail, t.dialect) {
        (1, Dialect::MySql) => {
            sql.push_str(&format!(" ON DUPLICATE KEY UPDATE status = {}", next(4)))
        }
        (1, Dialect::Postgres) => sql.push_str(" ON CONFLICT DO NOTHING"),
        (2, _) if t.dialect == Dialect::Postgres => sql.push_str(" RETURNING order_id"),
        _ => {}
    }
    sql
}

/// Every key is 1, so that two plans of one statement are equal.
fn router(dialect: Dialect) -> &'static Router {
    static MYSQL: OnceLock<Router> = OnceLock::new();
    static POSTGRES: OnceLock<Router> = OnceLock::new();
    let cell = match dialect {
        Dialect::MySql => &MYSQL,
        Dialect::Postgres => &POSTGRES,
    };
    cell.get_or_init(|| {
        let rule = common::with_generator(
            common::rule(&common::T_ORDER),
            Arc::new(common::ConstantOne),
        );
        Router::new(&rule, dialect)
    })
}

fn prepare(sql: &str, dialect: Dialect) -> Result<Option<PreparedInsert>, RouteError> {
    Ok(match router(dialect).prepare(sql, &common::metadata())? {
        Prepared::Insert(insert) => Some(insert),
        _ => None,
    })
}

fn parsed_plan(sql: &str, dialect: Dialect) -> Result<Plan, String> {
    match prepare(sql, dialect) {
        Ok(Some(insert)) => insert.bind(&[]).map_err(|e| e.to_string()),
        Ok(None) => Err("not an insert".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn config() -> Config {
    Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(512),
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_shape_checked_on_one_statement_plans_every_statement_of_it_alike(
        t in template(),
        first in prop::collection::vec(0i64..3, 12),
        second in prop::collection::vec(0i64..1000, 12),
    ) {
        let dialect = t.dialect;
        let sql_a = spell(&t, &first);
        let sql_b = spell(&t, &second);
        let (Some(shape_a), Some(shape_b)) = (Shape::of(&sql_a, dialect), Shape::of(&sql_b, dialect)) else {
            return Ok(());
        };
        prop_assume!(shape_a.text() == shape_b.text());
        let Ok(Some(from_shape)) = prepare(shape_a.text(), dialect) else {
            return Ok(());
        };
        // Checked against the whole statement, or (as the proxy learns a shape that folds
        // rows) against its first row alone: either check answers for every statement.
        let first_row = shape_a.first_row_only(&sql_a);
        let checked_on = first_row.as_deref().unwrap_or(&sql_a);
        let Some(checked_shape) = Shape::of(checked_on, dialect) else {
            return Ok(());
        };
        prop_assert_eq!(checked_shape.text(), shape_a.text());
        let stands_for = |sql: &str, shape: &Shape| match prepare(sql, dialect) {
            Ok(Some(original)) => from_shape.stands_for(&original, shape),
            _ => None,
        };
        let on_first_row = stands_for(checked_on, &checked_shape);
        let on_whole = stands_for(&sql_a, &shape_a);
        if first_row.is_some() && on_whole.is_some() && on_first_row.is_some() {
            prop_assert_eq!(on_first_row, on_whole, "{}", sql_a);
        }
        if on_first_row != Some(true) && on_whole != Some(true) {
            return Ok(());
        }
        for (sql, shape) in [(&sql_a, &shape_a), (&sql_b, &shape_b)] {
            let expected = parsed_plan(sql, dialect);
            let got = from_shape.bind_shape(sql, shape).map_err(|e| e.to_string());
            prop_assert_eq!(&got, &expected, "{}", sql);
            // Bound as parameters instead, the literals route the rows alike (a statement of
            // rows folded into one has only one row's parameters).
            if from_shape.value_columns().is_some() && shape.folded_rows().is_none() {
                let bound = from_shape.bind(shape.values()).map_err(|e| e.to_string());
                prop_assert_eq!(routes(&bound), routes(&expected), "{}", sql);
            }
        }
    }
}

/// Where a plan sends each row, or its error.
fn routes(plan: &Result<Plan, String>) -> Result<Vec<(String, String, Vec<usize>)>, String> {
    let plan = plan.as_ref().map_err(Clone::clone)?;
    Ok(plan
        .units
        .iter()
        .map(|u| (u.data_source.clone(), u.table.clone(), u.rows.clone()))
        .collect())
}

#[test]
fn parameters_that_are_whole_values_name_their_columns() {
    let columns = |sql: &str| {
        prepare(sql, Dialect::Postgres)
            .unwrap()
            .unwrap()
            .value_columns()
            .map(|c| c.iter().map(|c| c.to_string()).collect::<Vec<_>>())
    };
    assert_eq!(
        columns("INSERT INTO t_order (status, user_id) VALUES ($1, $2)"),
        Some(vec!["status".to_owned(), "user_id".to_owned()])
    );
    assert_eq!(
        columns("INSERT INTO t_order (user_id, status) VALUES ($1, 'a'), ($2, $3)"),
        Some(vec![
            "user_id".to_owned(),
            "user_id".to_owned(),
            "status".to_owned()
        ])
    );
    assert_eq!(
        columns("INSERT INTO t_order (user_id, status) VALUES ($1, $2 || 'x')"),
        None
    );
    assert_eq!(
        columns("INSERT INTO t_order (user_id, status) VALUES ($1, $1)"),
        None
    );
    assert_eq!(
        columns(
            "INSERT INTO t_order (user_id, status) VALUES ($1, 'a') \
             ON CONFLICT (order_id) DO UPDATE SET status = $2"
        ),
        None
    );
}

#[test]
fn the_bench_insert_bound_as_parameters_has_its_key_as_one() {
    let sql = "INSERT INTO t_order (user_id, status) VALUES (42, 'new')";
    let shape = Shape::of(sql, Dialect::Postgres).unwrap();
    let from_shape = prepare(shape.text(), Dialect::Postgres).unwrap().unwrap();
    let plan = from_shape.bind(shape.values()).unwrap();
    let original = prepare(sql, Dialect::Postgres).unwrap().unwrap();
    let expected = original.bind(&[]).unwrap();
    assert_eq!(plan.units.len(), 1);
    assert_eq!(plan.units[0].table, expected.units[0].table);
    assert!(
        plan.units[0].sql.ends_with("VALUES ($1, $2, $3)"),
        "{}",
        plan.units[0].sql
    );
    assert_eq!(
        plan.units[0].params,
        vec![Value::Int(42), Value::Text("new".into()), Value::Int(1)]
    );
}

#[test]
fn the_bench_insert_goes_through_its_shape() {
    for (dialect, sql) in [
        (
            Dialect::MySql,
            "INSERT INTO t_order (user_id, status) VALUES (42, 'new')",
        ),
        (
            Dialect::Postgres,
            "INSERT INTO t_order (user_id, status) VALUES (42, 'new')",
        ),
        (
            Dialect::MySql,
            "INSERT INTO t_order (user_id, status, order_id) VALUES (1, 'a', 5), (2, 'b', 7)",
        ),
    ] {
        let shape = Shape::of(sql, dialect).unwrap();
        let original = prepare(sql, dialect).unwrap().unwrap();
        let from_shape = prepare(shape.text(), dialect).unwrap().unwrap();
        assert_eq!(
            from_shape.stands_for(&original, &shape),
            Some(true),
            "{sql}"
        );
        assert_eq!(
            from_shape.bind_shape(sql, &shape).unwrap(),
            original.bind(&[]).unwrap()
        );
    }
}

#[test]
fn a_mysql_zero_key_is_generated_through_a_shape_but_cannot_check_one() {
    let checked = "INSERT INTO t_order (user_id, status, order_id) VALUES (1, 'a', 5)";
    let zero = "INSERT INTO t_order (user_id, status, order_id) VALUES (1, 'a', 0)";
    let shape = Shape::of(checked, Dialect::MySql).unwrap();
    let from_shape = prepare(shape.text(), Dialect::MySql).unwrap().unwrap();
    let zero_shape = Shape::of(zero, Dialect::MySql).unwrap();
    let zero_original = prepare(zero, Dialect::MySql).unwrap().unwrap();
    assert_eq!(from_shape.stands_for(&zero_original, &zero_shape), None);
    let original = prepare(checked, Dialect::MySql).unwrap().unwrap();
    assert_eq!(from_shape.stands_for(&original, &shape), Some(true));
    let plan = from_shape.bind_shape(zero, &zero_shape).unwrap();
    assert_eq!(plan, zero_original.bind(&[]).unwrap());
    assert_eq!(plan.generated_keys.len(), 1);
}

#[test]
fn a_cast_literal_is_not_a_parameter() {
    // Routing by the uncast text could pick another shard than the cast value.
    let sql = "INSERT INTO t_order (user_id, status) VALUES (CAST(5 AS SIGNED), 'a')";
    let shape = Shape::of(sql, Dialect::MySql).unwrap();
    let original = prepare(sql, Dialect::MySql);
    let from_shape = prepare(shape.text(), Dialect::MySql).unwrap().unwrap();
    match original {
        Ok(Some(original)) => assert_eq!(from_shape.stands_for(&original, &shape), Some(false)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_bulk_insert_binds_the_shape_of_its_first_row_once_per_row() {
    for dialect in [Dialect::MySql, Dialect::Postgres] {
        let rows: Vec<String> = (1..=50).map(|i| format!("({i}, 's {i}')")).collect();
        let sql = format!(
            "INSERT INTO t_order (user_id, status) VALUES {}",
            rows.join(", ")
        );
        let shape = Shape::of(&sql, dialect).unwrap();
        assert_eq!(shape.folded_rows(), Some(50));
        let first = shape.first_row_only(&sql).unwrap();
        let first_shape = Shape::of(&first, dialect).unwrap();
        let original = prepare(&first, dialect).unwrap().unwrap();
        let from_shape = prepare(shape.text(), dialect).unwrap().unwrap();
        assert_eq!(from_shape.row_count(), 1);
        assert_eq!(from_shape.stands_for(&original, &first_shape), Some(true));
        let plan = from_shape.bind_shape(&sql, &shape).unwrap();
        assert_eq!(Ok(&plan), parsed_plan(&sql, dialect).as_ref());
        assert!(plan.units.len() > 1, "{:?}", routes(&Ok(plan.clone())));
        assert_eq!(plan.generated_keys.len(), 50);
    }
}

/// A complex strategy's columns are each compared when a shape's plan is reused: statements of
/// one shape whose pairs send rows to different data sources are planned as each alone.
#[test]
fn a_complex_strategy_s_rows_go_through_their_shape() {
    let rule = common::with_generator(
        common::rule(common::T_ORDER_COMPLEX),
        Arc::new(common::ConstantOne),
    );
    let router = Router::new(&rule, Dialect::MySql);
    let prepare = |sql: &str| match router.prepare(sql, &common::metadata()).unwrap() {
        Prepared::Insert(insert) => insert,
        other => panic!("{other:?}"),
    };
    let first = "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 2, 'a')";
    let shape = Shape::of(first, Dialect::MySql).unwrap();
    let from_shape = prepare(shape.text());
    assert_eq!(from_shape.stands_for(&prepare(first), &shape), Some(true));
    for sql in [
        first,
        "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'b')",
    ] {
        let shape = Shape::of(sql, Dialect::MySql).unwrap();
        let bound = from_shape.bind_shape(sql, &shape).unwrap();
        assert_eq!(bound, prepare(sql).bind(&[]).unwrap(), "{sql}");
    }
    let (a, b) = (
        from_shape.bind_shape(first, &shape).unwrap(),
        prepare("INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'b')")
            .bind(&[])
            .unwrap(),
    );
    assert_ne!(a.units[0].data_source, b.units[0].data_source);
}
