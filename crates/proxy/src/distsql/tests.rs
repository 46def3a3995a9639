use keyshard_coordination::{Claim, CoordinationError, Instance};

use super::*;

fn scratch_session() -> Session {
    Session::new(
        1,
        "root".into(),
        None,
        keyshard_types::Dialect::MySql,
        Default::default(),
    )
}

#[test]
fn transaction_type_statements_are_recognised() {
    use TransactionType::{Local, Xa};
    for (sql, expected) in [
        (
            "SET DIST VARIABLE transaction_type = 'XA'",
            Some(DistSql::SetTransactionType(Xa)),
        ),
        (
            "set variable transaction_type=local;",
            Some(DistSql::SetTransactionType(Local)),
        ),
        (
            "SET DIST VARIABLE transaction_type = \"xa\"",
            Some(DistSql::SetTransactionType(Xa)),
        ),
        ("SET DIST VARIABLE transaction_type = 'BASE'", None),
        ("SET DIST VARIABLE sql_show = true", None),
        ("SET transaction_type = 'XA'", None),
        (
            "SHOW DIST VARIABLE WHERE NAME = transaction_type",
            Some(DistSql::ShowTransactionType),
        ),
        (
            "show variable transaction_type",
            Some(DistSql::ShowTransactionType),
        ),
        ("SHOW DIST VARIABLE WHERE NAME = sql_show", None),
        ("SHOW DIST VARIABLES", None),
    ] {
        assert_eq!(parse(sql), expected, "{sql}");
    }
}

#[test]
fn recognises_exactly_the_two_statements() {
    for sql in [
        "SHOW COMPUTE NODES",
        "show compute nodes;",
        "  Show\tCOMPUTE \n nodes ; ",
        "SHOW COMPUTE NODES;",
    ] {
        assert_eq!(parse(sql), Some(DistSql::ComputeNodes), "{sql:?}");
    }
    for sql in [
        "SHOW SHARDING KEY GENERATORS",
        "show sharding  key generators;",
    ] {
        assert_eq!(parse(sql), Some(DistSql::KeyGenerators), "{sql:?}");
    }
    for sql in [
        "SHOW COMPUTE NODES WHERE 1",
        "SHOW COMPUTE NODES;;",
        "SHOW COMPUTE",
        "SHOW COMPUTE NODESX",
        "SHOW SHARDING KEY GENERATORS FROM db",
        "SHOW SHARDING KEY GENERATOR",
        "SHOW TABLES",
        "INSERT INTO t VALUES (1)",
        "",
    ] {
        assert_eq!(parse(sql), None, "{sql:?}");
    }
}

#[test]
fn the_read_write_splitting_hint_statements_are_recognised() {
    for (sql, expected) in [
        ("SET READWRITE_SPLITTING HINT SOURCE = write", Some(true)),
        ("set readwrite_splitting hint source=WRITE;", Some(true)),
        ("SET READWRITE_SPLITTING HINT SOURCE = auto", Some(false)),
        ("CLEAR READWRITE_SPLITTING HINT", Some(false)),
        ("CLEAR HINT", Some(false)),
    ] {
        assert_eq!(parse(sql), Some(DistSql::ReadwriteHint(expected)), "{sql}");
    }
    assert_eq!(
        parse("SHOW READWRITE_SPLITTING HINT STATUS"),
        Some(DistSql::ReadwriteHint(None))
    );
    for sql in [
        "SET READWRITE_SPLITTING HINT SOURCE = read",
        "CLEAR HINTS",
        "SHOW READWRITE_SPLITTING HINT",
    ] {
        assert_eq!(parse(sql), None, "{sql}");
    }
}

#[tokio::test]
async fn the_read_write_splitting_hint_is_the_sessions() {
    let mut session = scratch_session();
    let config = default_config();
    let run = async |session: &mut Session, statement| {
        answer(
            statement,
            session,
            &config,
            &[],
            &[],
            None,
            Duration::from_secs(1),
        )
        .await
        .unwrap()
    };
    run(&mut session, DistSql::ReadwriteHint(Some(true))).await;
    assert!(session.shard.primary_only());
    let Reply::Rows { rows, .. } = run(&mut session, DistSql::ReadwriteHint(None)).await else {
        panic!("no rows");
    };
    assert_eq!(rows, vec![vec![Value::Text("write".into())]]);
    run(&mut session, DistSql::ReadwriteHint(Some(false))).await;
    assert!(!session.shard.primary_only());
}

#[test]
fn props_render_in_key_order() {
    let props: Props = [("worker-id", "3"), ("max-vibration-offset", "1")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(
        render_props(&props),
        r#"{"max-vibration-offset":1,"worker-id":3}"#
    );
    let expression: Props = [(
        "algorithm-expression".to_owned(),
        "t_\"${id % 2}".to_owned(),
    )]
    .into_iter()
    .collect();
    assert_eq!(
        render_props(&expression),
        r#"{"algorithm-expression":"t_\"${id % 2}"}"#
    );
    assert_eq!(render_props(&Props::new()), "");
}

#[test]
fn expiry_is_rfc3339_utc_with_milliseconds() {
    assert_eq!(
        rfc3339_millis(1_700_000_000_123).as_deref(),
        Some("2023-11-14T22:13:20.123Z")
    );
    assert_eq!(rfc3339_millis(-1), None);
    assert_eq!(rfc3339_millis(i64::MAX), None);
}

/// A repository that never answers.
#[derive(Debug)]
struct Silent;

type Pending<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, CoordinationError>> + Send + 'a>>;

fn pending<'a, T: 'a>() -> Pending<'a, T> {
    Box::pin(std::future::pending())
}

impl Repository for Silent {
    fn describe(&self) -> String {
        "silent".to_owned()
    }
    fn identity(&self) -> &str {
        "silent"
    }
    fn time_to_live(&self) -> Duration {
        Duration::from_secs(30)
    }
    fn claim<'a>(&'a self, _: &'a Instance, _: Option<u16>) -> Pending<'a, Claim> {
        pending()
    }
    fn renew<'a>(&'a self, _: &'a Instance, _: &'a Claim, _: i64) -> Pending<'a, ()> {
        pending()
    }
    fn release<'a>(&'a self, _: &'a Instance, _: &'a Claim, _: i64) -> Pending<'a, ()> {
        pending()
    }
    fn compute_nodes(&self) -> Pending<'_, Vec<ComputeNode>> {
        pending()
    }
    fn next_segment<'a>(&'a self, _: &'a str, _: i64, _: i64) -> Pending<'a, (i64, i64)> {
        pending()
    }
    fn raise_segment<'a>(&'a self, _: &'a str, _: i64) -> Pending<'a, ()> {
        pending()
    }
    fn clock_millis(&self) -> Pending<'_, i64> {
        pending()
    }
    fn service_time<'a>(&'a self, _: &'a str) -> Pending<'a, Option<i64>> {
        pending()
    }
    fn record_service_time<'a>(&'a self, _: &'a str, _: i64) -> Pending<'a, ()> {
        pending()
    }
    fn decide<'a>(&'a self, _: &'a str, _: bool) -> Pending<'a, bool> {
        pending()
    }
    fn forget<'a>(&'a self, _: &'a [String]) -> Pending<'a, ()> {
        pending()
    }
}

/// The embedded default configuration (LOCAL transactions).
fn default_config() -> keyshard_config::Config {
    keyshard_config::from_yaml_str(
        keyshard_config::embedded_default(),
        std::path::Path::new("/tmp"),
    )
    .unwrap()
}

#[tokio::test]
async fn a_repository_that_does_not_answer_is_an_error_in_time() {
    let repository: Arc<dyn Repository> = Arc::new(Silent);
    let mut session = scratch_session();
    let config = default_config();
    let answer = answer(
        DistSql::ComputeNodes,
        &mut session,
        &config,
        &[],
        &[],
        Some(&repository),
        Duration::from_millis(20),
    );
    let error = tokio::time::timeout(Duration::from_secs(5), answer)
        .await
        .expect("bounded by its own timeout")
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Internal);
    assert_eq!(
        error.message,
        "coordination repository: silent did not answer within 20ms"
    );
}

#[tokio::test]
async fn without_a_repository_there_are_no_compute_nodes() {
    let mut session = scratch_session();
    let reply = answer(
        DistSql::ComputeNodes,
        &mut session,
        &default_config(),
        &[],
        &[],
        None,
        Duration::from_secs(1),
    )
    .await
    .unwrap();
    assert_eq!(
        reply,
        Reply::Rows {
            columns: columns(DistSql::ComputeNodes),
            rows: Vec::new()
        }
    );
}

#[test]
fn rows_match_columns() {
    let node = ComputeNode {
        instance_id: "a".into(),
        worker_id: 7,
        epoch: 2,
        expires_at_millis: None,
    };
    let row = compute_node_row(&node);
    assert_eq!(row.len(), columns(DistSql::ComputeNodes).len());
    assert_eq!(row[1], Value::Int(7));
    assert_eq!(row[3], Value::Null);
}

#[test]
fn next_keys_is_recognised_with_an_optional_count() {
    let next = |source: &str, count| {
        Some(DistSql::NextKeys {
            source: source.to_owned(),
            count,
        })
    };
    assert_eq!(parse("SHOW NEXT KEYS FROM t_order"), next("t_order", 1));
    assert_eq!(
        parse("show next keys from `t_order` count 10;"),
        next("t_order", 10)
    );
    assert_eq!(
        parse("SHOW NEXT KEYS FROM snowflake COUNT 0"),
        next("snowflake", 0)
    );
    for other in [
        "SHOW NEXT KEYS FROM t_order COUNT",
        "SHOW NEXT KEYS FROM t_order COUNT -1",
        "SHOW NEXT KEYS t_order",
        "SHOW NEXT KEYS FROM t_order LIMIT 3",
    ] {
        assert_eq!(parse(other), None, "{other}");
    }
}

#[test]
fn refresh_table_metadata_is_recognised_in_every_form() {
    for sql in [
        "REFRESH TABLE METADATA",
        "refresh table metadata t_order;",
        "REFRESH TABLE METADATA t_order FROM STORAGE UNIT ds_1 SCHEMA public",
    ] {
        assert_eq!(parse(sql), Some(DistSql::RefreshMetadata), "{sql}");
    }
    assert_eq!(parse("REFRESH TABLE"), None);
}
