use keyshard_backend::Column;
use keyshard_router::{Prepared, Router};
use keyshard_types::Dialect;

use super::*;

/// A backend over two data sources of `scheme` (never connected: pools connect lazily)
/// whose `t_order` has the given columns, and a PostgreSQL router over it.
fn over(scheme: &str, columns: &[(&str, &str)]) -> (Backend, Router) {
    let kind = match scheme {
        "postgres" => DatabaseKind::Postgres,
        "mysql" => DatabaseKind::MySql,
        _ => DatabaseKind::Sqlite,
    };
    let url = |db: &str| match scheme {
        "postgres" => format!("postgres://postgres@127.0.0.1:1/{db}"),
        "mysql" => format!("mysql://root@127.0.0.1:1/{db}"),
        _ => format!("sqlite://{}", std::env::temp_dir().join(db).display()),
    };
    let yaml = format!(
        r#"
databaseName: sharding_db
dataSources:
  ds_0:
    url: "{}"
  ds_1:
    url: "{}"
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${{0..1}}.t_order
      databaseStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: ds_mod
      keyGenerateStrategy:
        column: order_id
        keyGeneratorName: snowflake
  shardingAlgorithms:
    ds_mod:
      type: MOD
      props:
        sharding-count: 2
  keyGenerators:
    snowflake:
      type: SNOWFLAKE
"#,
        url("keyshard_typed_0"),
        url("keyshard_typed_1")
    );
    let config = keyshard_config::from_yaml_str(&yaml, std::path::Path::new("."))
        .unwrap_or_else(|e| panic!("{e}"));
    let backend = Backend::new(&config).unwrap_or_else(|e| panic!("{e}"));
    let columns = columns
        .iter()
        .map(|(name, type_name)| Column::new(*name, SqlType::of(type_name, kind)))
        .collect();
    backend.metadata().set("t_order", Some(columns));
    let dialect = match scheme {
        "mysql" => Dialect::MySql,
        _ => Dialect::Postgres,
    };
    (backend, Router::new(&config.sharding, dialect))
}

fn slots_of(backend: &Backend, router: &Router, sql: &str) -> Option<Box<[Slot]>> {
    match router.prepare(sql, backend.metadata()) {
        Ok(Prepared::Insert(insert)) => slots(&insert, backend),
        other => panic!("{sql}: {other:?}"),
    }
}

#[tokio::test]
async fn a_one_row_insert_of_plain_columns_goes_as_parameters() {
    let columns = [
        ("order_id", "int8"),
        ("user_id", "int4"),
        ("status", "varchar"),
        ("made", "date"),
    ];
    let (backend, router) = over("postgres", &columns);
    let one_row = "INSERT INTO t_order (user_id, status) VALUES ($1, $2)";
    assert_eq!(
        slots_of(&backend, &router, one_row).as_deref(),
        Some(&[Slot::Integer, Slot::Text][..])
    );
    for stays_text in [
        "INSERT INTO t_order (user_id, made) VALUES ($1, $2)",
        "INSERT INTO t_order (user_id, status) VALUES ($1, $2), ($3, $4)",
        "INSERT INTO t_order (user_id, status) VALUES ($1, upper($2))",
        "INSERT INTO t_order (user_id, missing) VALUES ($1, $2)",
    ] {
        assert_eq!(
            slots_of(&backend, &router, stays_text),
            None,
            "{stays_text}"
        );
    }
    let (backend, router) = over("sqlite", &columns);
    assert_eq!(slots_of(&backend, &router, one_row), None, "SQLite shards");
    let untyped_key = [("order_id", "uuid"), ("user_id", "int4")];
    let (backend, router) = over("postgres", &untyped_key);
    let sql = "INSERT INTO t_order (user_id) VALUES ($1)";
    assert_eq!(slots_of(&backend, &router, sql), None, "a UUID key column");

    let mysql_columns = [
        ("order_id", "bigint"),
        ("user_id", "int"),
        ("status", "varchar"),
        ("made", "date"),
    ];
    let (backend, router) = over("mysql", &mysql_columns);
    let sql = "INSERT INTO t_order (user_id, status) VALUES (?, ?)";
    assert_eq!(
        slots_of(&backend, &router, sql).as_deref(),
        Some(&[Slot::Integer, Slot::Text][..])
    );
    let sql = "INSERT INTO t_order (user_id, made) VALUES (?, ?)";
    assert_eq!(slots_of(&backend, &router, sql), None, "a MySQL DATE");
}

#[test]
fn literals_become_parameters_only_where_the_server_reads_them_alike() {
    let cases = [
        ("int4", Value::Int(-5), Some(Value::Int(-5))),
        ("int8", Value::Text("+42".into()), Some(Value::Int(42))),
        ("int4", Value::Text(" 42".into()), None),
        ("int4", Value::Text("1_000".into()), None),
        ("int4", Value::Double(5.0), None),
        ("int8", Value::UInt(u64::MAX), None),
        ("numeric", Value::Int(7), Some(Value::Int(7))),
        ("numeric", Value::Text("7.5".into()), None),
        ("float8", Value::Double(1.5), Some(Value::Double(1.5))),
        ("float8", Value::Int(3), Some(Value::Double(3.0))),
        ("float8", Value::Text("1.5".into()), None),
        (
            "varchar",
            Value::Text("it".into()),
            Some(Value::Text("it".into())),
        ),
        ("text", Value::Int(7), Some(Value::Text("7".into()))),
        ("bpchar", Value::Double(1.5), None),
        ("date", Value::Text("2026-11-30".into()), None),
        ("float4", Value::Double(0.1), None),
        ("bool", Value::Text("t".into()), None),
    ];
    let mysql_cases = [
        ("INT", Value::Text("7".into()), Some(Value::Int(7))),
        ("decimal", Value::Double(1.5), None),
        ("double", Value::Int(2), Some(Value::Double(2.0))),
        ("longtext", Value::Int(2), Some(Value::Text("2".into()))),
        ("float", Value::Double(0.1), None),
        ("datetime", Value::Text("2026-11-30".into()), None),
    ];
    for (data_type, literal, expected) in mysql_cases {
        let got = Slot::of(SqlType::of(data_type, DatabaseKind::MySql))
            .and_then(|slot| slot.bind(&literal));
        assert_eq!(got, expected, "{literal:?} into MySQL {data_type}");
    }
    for (udt_name, literal, expected) in cases {
        let got = Slot::of(SqlType::of(udt_name, DatabaseKind::Postgres))
            .and_then(|slot| slot.bind(&literal));
        assert_eq!(got, expected, "{literal:?} into {udt_name}");
    }
}

#[test]
fn a_statement_binds_only_when_every_literal_does() {
    let slots = [Slot::Integer, Slot::Text];
    let shape = |sql: &str| Shape::of(sql, Dialect::Postgres).unwrap();
    assert_eq!(
        bind(&shape("INSERT INTO t (a, b) VALUES (1, 'a')"), &slots),
        Some(vec![Value::Int(1), Value::Text("a".into())])
    );
    assert_eq!(
        bind(&shape("INSERT INTO t (a, b) VALUES ('x', 'a')"), &slots),
        None
    );
    assert_eq!(bind(&shape("INSERT INTO t (a) VALUES (1)"), &slots), None);
    // Rows folded into one: the slots are one row's.
    assert_eq!(
        bind(
            &shape("INSERT INTO t (a, b) VALUES (1, 'a'), (2, 'b')"),
            &slots
        ),
        None
    );
    assert_eq!(
        bind(&shape("INSERT INTO t VALUES (DEFAULT), (DEFAULT)"), &[]),
        None
    );
}
