use keyshard_backend::Column;
use keyshard_types::SqlType;
use sqlparser::ast::SetExpr;

use super::param_types::walk;
use super::projection::projection;
use super::*;

#[test]
fn placeholders_are_counted_by_their_highest_number() {
    assert_eq!(highest_placeholder("INSERT INTO t VALUES ($1, $3)"), 3);
    assert_eq!(highest_placeholder("SELECT '$1'"), 0);
    assert_eq!(highest_placeholder("SELECT 1"), 0);
}

#[test]
fn statements_that_return_rows_are_told_apart() {
    assert_eq!(guess_fields(Sql::new("select x")), Fields::Unknown);
    assert_eq!(
        guess_fields(Sql::new("UPDATE t SET a = 1 RETURNING a")),
        Fields::Unknown
    );
    assert_eq!(
        guess_fields(Sql::new("CREATE TABLE t (a INT)")),
        Fields::None
    );
}

/// What the proxy answers without rows is described as PostgreSQL describes it: NoData.
#[test]
fn proxy_answered_statements_without_rows_have_no_fields() {
    let fields = |sql| proxy_answered::fields(Sql::new(sql));
    assert_eq!(fields("SET application_name = 'x'"), Some(Fields::None));
    assert_eq!(fields("DISCARD ALL"), Some(Fields::None));
    let Some(Fields::Known(show)) = fields("SHOW application_name") else {
        panic!("SHOW has a column")
    };
    assert_eq!(show.len(), 1);
}

#[test]
fn columns_type_their_placeholders() {
    let columns = vec![
        Column::new(
            "order_id",
            SqlType::Int {
                bytes: 8,
                unsigned: false,
            },
        ),
        Column::new("status", SqlType::VarChar),
    ];
    let sql = "SELECT * FROM t WHERE order_id IN ($1, $2) AND status = $3::text";
    let Statement::Query(query) = &Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap()[0] else {
        panic!()
    };
    let SetExpr::Select(select) = &*query.body else {
        panic!()
    };
    let mut params = vec![oid::TEXT; 3];
    walk(select.selection.as_ref().unwrap(), &columns, &mut params);
    assert_eq!(params, [oid::INT8, oid::INT8, oid::TEXT]);
    let fields = projection(&select.projection, &columns).unwrap();
    assert_eq!(fields.len(), 2);
    assert_eq!(fields[0].oid, oid::INT8);
}

/// As PostgreSQL names and types a cast's column: after what it casts where that has a
/// name, else after the type; a type the application created is left to a shard.
#[test]
fn casts_are_named_and_typed_as_postgres_does() {
    let columns = vec![Column::new("status", SqlType::VarChar)];
    let fields = |sql: &str| {
        let Statement::Query(query) = &Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap()[0]
        else {
            panic!()
        };
        let SetExpr::Select(select) = &*query.body else {
            panic!()
        };
        projection(&select.projection, &columns).map(|f| {
            f.iter()
                .map(|f| (f.name.clone(), f.oid))
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(
        fields(
            "SELECT count(*)::int, status::text, 1.5::numeric, 'x'::bpchar, 1::integer, now()::date"
        )
        .unwrap(),
        [
            ("count".to_owned(), oid::INT4),
            ("status".to_owned(), oid::TEXT),
            ("numeric".to_owned(), oid::NUMERIC),
            ("bpchar".to_owned(), oid::BPCHAR),
            ("int4".to_owned(), oid::INT4),
            ("now".to_owned(), 1082),
        ]
    );
    assert_eq!(fields("SELECT 'happy'::mood"), None);
    assert_eq!(
        fields("SELECT 1.5::numeric(10,3)"),
        None,
        "its modifier: the shard's"
    );
}
