//! The router's cost per INSERT next to the cost of parsing it: `parse only` is sqlparser alone,
//! `unprepared` is a whole plan from text (parse, bind, generate keys, route, render), and
//! `prepared` binds a statement parsed once, and `by shape` plans a text INSERT through the
//! shape of the statements before it (what the proxy does for repeated text INSERTs). All on `t_order` with its real SNOWFLAKE generator
//! (4096 keys per millisecond per worker: far above what these rates consume).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use keyshard_router::{Metadata, Plan, Prepared, PreparedInsert, Router, Shape};
use keyshard_types::{Dialect, Value};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;

#[path = "../tests/it/common/mod.rs"]
mod common;

const SQL1: &str = "INSERT INTO t_order (user_id, status) VALUES (?, ?)";

fn hundred_rows() -> String {
    let rows: Vec<String> = (1..=100).map(|i| format!("({i}, 'OK')")).collect();
    format!(
        "INSERT INTO t_order (user_id, status) VALUES {}",
        rows.join(", ")
    )
}

fn router(c: &mut Criterion) {
    let rule = common::rule(&common::T_ORDER);
    let router = Router::new(&rule, Dialect::MySql);
    let metadata = common::metadata();
    let params = [Value::Int(7), Value::Text("OK".into())];
    let sql100 = hundred_rows();

    // Sanity: the statements plan as expected before they are timed.
    let plan = router.plan(SQL1, &params, &metadata).unwrap().unwrap();
    assert_eq!((plan.units.len(), plan.generated_keys.len()), (1, 1));
    let plan = router.plan(&sql100, &[], &metadata).unwrap().unwrap();
    assert_eq!(plan.generated_keys.len(), 100);
    let Prepared::Insert(prepared) = router.prepare(SQL1, &metadata).unwrap() else {
        panic!("SQL1 is an INSERT into a sharded table");
    };

    let mut parse = c.benchmark_group("parse only");
    parse.throughput(Throughput::Elements(1));
    parse.bench_function("one-row", |b| {
        b.iter(|| Parser::parse_sql(&MySqlDialect {}, black_box(SQL1)).unwrap())
    });
    parse.bench_function("100-row", |b| {
        b.iter(|| Parser::parse_sql(&MySqlDialect {}, black_box(&sql100)).unwrap())
    });
    parse.finish();

    let mut unprepared = c.benchmark_group("unprepared");
    unprepared.throughput(Throughput::Elements(1));
    unprepared.bench_function("one-row", |b| {
        b.iter(|| router.plan(black_box(SQL1), &params, &metadata).unwrap())
    });
    unprepared.bench_function("100-row", |b| {
        b.iter(|| router.plan(black_box(&sql100), &[], &metadata).unwrap())
    });
    unprepared.finish();

    // Where an unprepared statement's time goes: prepare = parse + the router's own analysis.
    let mut prepare = c.benchmark_group("prepare only");
    prepare.throughput(Throughput::Elements(1));
    prepare.bench_function("one-row", |b| {
        b.iter(|| router.prepare(black_box(SQL1), &metadata).unwrap())
    });
    prepare.bench_function("100-row", |b| {
        b.iter(|| router.prepare(black_box(&sql100), &metadata).unwrap())
    });
    prepare.finish();

    let mut bound = c.benchmark_group("prepared");
    bound.throughput(Throughput::Elements(1));
    bound.bench_function("one-row", |b| {
        b.iter(|| prepared.bind(black_box(&params)).unwrap())
    });
    bound.finish();

    // The shape's plan is prepared once; each statement is cut and bound.
    let text = "INSERT INTO t_order (user_id, status) VALUES (7, 'OK')";
    let from_shape = by_shape(&router, text, &metadata);
    let mut shaped = c.benchmark_group("by shape");
    shaped.throughput(Throughput::Elements(1));
    shaped.bench_function("one-row", |b| {
        b.iter(|| cut_and_bind(&from_shape, black_box(text), Dialect::MySql))
    });
    shaped.bench_function("100-row", |b| {
        let from_shape = by_shape(&router, &sql100, &metadata);
        b.iter(|| cut_and_bind(&from_shape, black_box(&sql100), Dialect::MySql))
    });
    shaped.finish();

    // The PostgreSQL frontend's path for the same statement (bench/callgrind.sh's pg-simple):
    // shape scan, bind, key, route, render with `$n`-free literals.
    let pg_router = Router::new(&rule, Dialect::Postgres);
    let pg_insert = by_shape(&pg_router, text, &metadata);
    let mut path = c.benchmark_group("per-statement path");
    path.throughput(Throughput::Elements(1));
    path.bench_function("postgres one-row by shape", |b| {
        b.iter(|| cut_and_bind(&pg_insert, black_box(text), Dialect::Postgres))
    });
    path.finish();
}

/// The INSERT that `sql`'s shape prepares, once, as the proxy's shape cache keeps it.
fn by_shape(router: &Router, sql: &str, metadata: &dyn Metadata) -> PreparedInsert {
    let shape = Shape::of(sql, router.dialect()).unwrap();
    match router.prepare(shape.text(), metadata).unwrap() {
        Prepared::Insert(insert) => insert,
        _ => panic!("the shape is an INSERT into a sharded table"),
    }
}

/// What the proxy does per repeated text INSERT: cut it by its shape, bind the values.
fn cut_and_bind(insert: &PreparedInsert, sql: &str, dialect: Dialect) -> Plan {
    let shape = Shape::of(sql, dialect).unwrap();
    insert.bind_shape(sql, &shape).unwrap()
}

/// One table per month of 2021, by INLINE over an integer and by INTERVAL over a date-time.
const BY_MONTH: &str = r#"
databaseName: sharding_db
dataSources:
  ds_0:
    url: "sqlite::memory:"
rules:
- !SHARDING
  tables:
    t_inline:
      actualDataNodes: ds_0.t_inline_${1..12}
      tableStrategy:
        standard:
          shardingColumn: month
          shardingAlgorithmName: inline
    t_interval:
      actualDataNodes: ds_0.t_interval_20210${1..9},ds_0.t_interval_2021${10..12}
      tableStrategy:
        standard:
          shardingColumn: created_at
          shardingAlgorithmName: interval
  shardingAlgorithms:
    inline:
      type: INLINE
      props:
        algorithm-expression: t_inline_${month}
    interval:
      type: INTERVAL
      props:
        datetime-pattern: "yyyy-MM-dd HH:mm:ss"
        datetime-lower: "2021-01-01 00:00:00"
        datetime-upper: "2021-12-31 23:59:59"
        sharding-suffix-pattern: yyyyMM
        datetime-interval-unit: MONTHS
"#;

/// A prepared one-row INSERT routed by INLINE and by INTERVAL: what reading a date-time and
/// finding its interval costs beside evaluating an inline expression.
fn algorithms(c: &mut Criterion) {
    let rule = common::rule(BY_MONTH);
    let router = Router::new(&rule, Dialect::MySql);
    let metadata = common::metadata();
    let prepare = |sql: &str| match router.prepare(sql, &metadata).unwrap() {
        Prepared::Insert(insert) => insert,
        _ => panic!("{sql} is an INSERT into a sharded table"),
    };
    let inline = prepare("INSERT INTO t_inline (month, created_at, note) VALUES (?, ?, ?)");
    let interval = prepare("INSERT INTO t_interval (month, created_at, note) VALUES (?, ?, ?)");
    let params = [
        Value::Int(6),
        Value::Text("2021-06-15 12:34:56".into()),
        Value::Text("OK".into()),
    ];
    assert_eq!(inline.bind(&params).unwrap().units[0].table, "t_inline_6");
    assert_eq!(
        interval.bind(&params).unwrap().units[0].table,
        "t_interval_202106"
    );

    let mut group = c.benchmark_group("prepared by algorithm");
    group.throughput(Throughput::Elements(1));
    group.bench_function("INLINE", |b| {
        b.iter(|| inline.bind(black_box(&params)).unwrap())
    });
    group.bench_function("INTERVAL", |b| {
        b.iter(|| interval.bind(black_box(&params)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, router, algorithms);
criterion_main!(benches);
