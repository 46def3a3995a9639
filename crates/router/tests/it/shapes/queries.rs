//! SELECT, UPDATE and DELETE through their shapes: the same units, SQL, merge and errors as
//! when each statement is parsed itself.

use keyshard_router::{Plan, Prepared, PreparedQuery, Shape};
use keyshard_types::Dialect;
use proptest::prelude::*;

use super::{common, config, router};

/// A value's spelling, by kind; `n` varies between statements of one shape.
fn value(kind: usize, n: i64, dialect: Dialect) -> String {
    match kind {
        0 => format!("{n}"),
        1 => format!("-{n}"),
        2 => format!("- {n}"),
        3 => format!("'{n}'"),
        4 => format!("{n}.5"),
        5 => format!("({n})"),
        6 => format!("{n} + 1"),
        7 => match dialect {
            Dialect::MySql => format!("CAST({n} AS SIGNED)"),
            Dialect::Postgres => format!("{n}::bigint"),
        },
        8 => format!("abs({n})"),
        9 => "NULL".into(),
        10 => format!("'{n}' || 'x'"),
        _ => format!("DATE '2020-01-0{}'", n.rem_euclid(9) + 1),
    }
}

/// One comparison: a column, an operator and values.
fn comparison(parts: [usize; 4], next: &mut dyn FnMut(usize) -> String) -> String {
    // Mostly sharding columns compared for equality, so that many statements route narrowly.
    let column = ["user_id", "order_id", "status", "t_order.user_id"][parts[0] % 4];
    match [0, 0, 0, 0, 1, 2, 2, 3, 4, 5, 0, 2][parts[1] % 12] {
        0 => format!("{column} = {}", next(parts[2])),
        1 => format!("{} = {column}", next(parts[2])),
        2 => format!("{column} IN ({}, {})", next(parts[2]), next(parts[3])),
        3 => format!("{column} > {}", next(parts[2])),
        4 => format!("{column} BETWEEN {} AND {}", next(parts[2]), next(parts[3])),
        _ => format!(
            "({column} = {} OR {column} <> {})",
            next(parts[2]),
            next(parts[3])
        ),
    }
}

#[derive(Debug, Clone)]
struct Template {
    dialect: Dialect,
    statement: usize,
    comparisons: Vec<[usize; 4]>,
    joiners: Vec<bool>,
    tail: usize,
}

fn template() -> impl Strategy<Value = Template> {
    let dialect = prop_oneof![Just(Dialect::MySql), Just(Dialect::Postgres)];
    (
        dialect,
        0usize..6,
        prop::collection::vec(prop::array::uniform4(0usize..12), 1..4),
        prop::collection::vec(prop::bool::weighted(0.8), 3),
        0usize..4,
    )
        .prop_map(
            |(dialect, statement, comparisons, joiners, tail)| Template {
                dialect,
                statement,
                comparisons,
                joiners,
                tail,
            },
        )
}

fn spell(t: &Template, values: &[i64]) -> String {
    let mut n = values.iter().cycle().copied();
    let mut next = |kind| value(kind, n.next().unwrap_or(1), t.dialect);
    let mut clause = String::new();
    for (i, parts) in t.comparisons.iter().enumerate() {
        if i > 0 {
            clause.push_str(if t.joiners[i - 1] { " AND " } else { " OR " });
        }
        clause.push_str(&comparison(*parts, &mut next));
    }
    let head = match t.statement {
        0 => "SELECT order_id, status FROM t_order",
        1 => "SELECT COUNT(*), MAX(order_id) FROM t_order",
        2 => "SELECT status, SUM(user_id) FROM t_order",
        3 => "UPDATE t_order SET status = 'x'",
        4 => "DELETE FROM t_order",
        _ => "SELECT o.order_id FROM t_order o",
    };
    let tail = match (t.tail, t.statement) {
        (_, 3 | 4) => "",
        (1, 2) => " GROUP BY status ORDER BY 2 DESC",
        (1, _) => " ORDER BY 1 DESC LIMIT 3",
        (2, _) => " LIMIT 2",
        (3, _) if t.dialect == Dialect::MySql => " LIMIT 1, 2",
        (3, _) => " LIMIT 2 OFFSET 1",
        _ => "",
    };
    let clause = if t.statement == 5 {
        clause.replace("t_order.", "o.")
    } else {
        clause
    };
    format!("{head} WHERE {clause}{tail}")
}

fn prepare(sql: &str, dialect: Dialect) -> Option<PreparedQuery> {
    match router(dialect).prepare(sql, &common::metadata()) {
        Ok(Prepared::Query(query)) => Some(query),
        _ => None,
    }
}

/// `sql` bound through `query`, prepared from `shape`'s text, as a parsed statement's plan
/// compares: the plan names the shape it came from (`described_as`), a parsed one does not.
fn through_shape(query: &PreparedQuery, sql: &str, shape: &Shape) -> Result<Plan, String> {
    let plan = query.bind_shape(sql, shape).map_err(|e| e.to_string())?;
    assert_eq!(plan.described_as.as_deref(), Some(shape.text()));
    Ok(Plan {
        described_as: None,
        ..plan
    })
}

fn parsed_plan(sql: &str, dialect: Dialect) -> Result<Plan, String> {
    match router(dialect).prepare(sql, &common::metadata()) {
        Ok(Prepared::Query(query)) => query.bind(&[]).map_err(|e| e.to_string()),
        Ok(_) => Err("not a query".into()),
        Err(e) => Err(e.to_string()),
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
        let (Some(original), Some(from_shape)) = (prepare(&sql_a, dialect), prepare(shape_a.text(), dialect)) else {
            return Ok(());
        };
        if !from_shape.stands_for(&original, &shape_a) {
            return Ok(());
        }
        for (sql, shape) in [(&sql_a, &shape_a), (&sql_b, &shape_b)] {
            let expected = parsed_plan(sql, dialect);
            let got = through_shape(&from_shape, sql, shape);
            prop_assert_eq!(&got, &expected, "{}", sql);
        }
    }
}

#[test]
fn the_bench_reads_go_through_their_shapes() {
    for dialect in [Dialect::MySql, Dialect::Postgres] {
        for sql in [
            "SELECT order_id, user_id, status FROM t_order WHERE user_id = 42 AND order_id = 7",
            "SELECT order_id, user_id, status FROM t_order WHERE user_id = 42 \
             ORDER BY order_id DESC LIMIT 10",
            "UPDATE t_order SET status = 'b' WHERE order_id = 7 AND user_id = 42",
        ] {
            let shape = Shape::of(sql, dialect).unwrap();
            let original = prepare(sql, dialect).unwrap();
            let from_shape = prepare(shape.text(), dialect).unwrap();
            assert!(from_shape.stands_for(&original, &shape), "{sql}");
            let plan = through_shape(&from_shape, sql, &shape).unwrap();
            assert_eq!(plan, original.bind(&[]).unwrap(), "{sql}");
            // The shards get the text as the client wrote it, tables renamed.
            assert!(plan.units[0].sql.contains("= 42"), "{}", plan.units[0].sql);
            assert!(plan.units.iter().all(|u| u.params.is_empty()));
        }
    }
}

#[test]
fn a_literal_the_parsed_statement_does_not_route_by_is_not_a_parameter() {
    // An array literal routes as its elements; the parameter cut from it is one array value.
    // Whatever the scan cuts, a shape it checks plans as parsing does.
    for sql in [
        "SELECT status FROM t_order WHERE user_id = ANY('{1,2}')",
        "SELECT status FROM t_order WHERE order_id = '{1}'",
    ] {
        let dialect = Dialect::Postgres;
        let Some(shape) = Shape::of(sql, dialect) else {
            continue;
        };
        let (Some(original), Some(from_shape)) =
            (prepare(sql, dialect), prepare(shape.text(), dialect))
        else {
            continue;
        };
        if from_shape.stands_for(&original, &shape) {
            assert_eq!(
                through_shape(&from_shape, sql, &shape),
                parsed_plan(sql, dialect),
                "{sql}"
            );
        }
    }
}
