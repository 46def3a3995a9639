use keyshard_types::Dialect;

use super::parameters::Parameters;
use super::*;

fn session() -> Session {
    let mut startup = BTreeMap::new();
    startup.insert("application_name".into(), "psql".into());
    let mut session = Session::new(
        7,
        "root".into(),
        Some("sharding_db".into()),
        Dialect::Postgres,
        Default::default(),
    );
    session.postgres.parameters = Parameters::from_startup(&startup);
    session
}

fn ask(sql: &str, session: &mut Session) -> Result<Reply, Error> {
    let statement = recognise(sql).unwrap_or_else(|| panic!("{sql} not recognised"));
    answer(statement, session)
}

fn single(reply: Reply) -> (String, Value) {
    match reply {
        Reply::Rows { columns, mut rows } => (columns[0].name.clone(), rows.remove(0).remove(0)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn set_then_show() {
    let mut s = session();
    assert_eq!(
        ask("SET extra_float_digits = 3", &mut s).unwrap(),
        Reply::done()
    );
    ask("set application_name to 'PostgreSQL JDBC Driver'", &mut s).unwrap();
    let reply = ask("SHOW application_name", &mut s).unwrap();
    assert_eq!(
        single(reply).1,
        Value::Text("PostgreSQL JDBC Driver".into())
    );
    let reply = ask("SHOW extra_float_digits;", &mut s).unwrap();
    assert_eq!(single(reply).1, Value::Text("3".into()));
    let reply = ask("SHOW TRANSACTION ISOLATION LEVEL", &mut s).unwrap();
    assert_eq!(
        single(reply),
        (
            "transaction_isolation".into(),
            Value::Text("read committed".into())
        )
    );
    assert!(ask("SHOW no_such_thing", &mut s).is_err());
    assert!(ask("SET client_encoding = 'LATIN1'", &mut s).is_err());
    // RESET goes back to what the client started with.
    ask("RESET application_name", &mut s).unwrap();
    let reply = ask("SHOW application_name", &mut s).unwrap();
    assert_eq!(single(reply).1, Value::Text("psql".into()));
}

#[test]
fn session_functions() {
    let mut s = session();
    let reply = ask("select current_schema()", &mut s).unwrap();
    assert_eq!(
        single(reply),
        ("current_schema".into(), Value::Text("public".into()))
    );
    let reply = ask("SELECT version()", &mut s).unwrap();
    assert!(matches!(single(reply).1, Value::Text(v) if v.starts_with("PostgreSQL 16.0")));
    let reply = ask("SELECT 1", &mut s).unwrap();
    assert_eq!(single(reply), ("?column?".into(), Value::Int(1)));
    let reply = ask(
        "SELECT 'a' AS x, current_setting('application_name')",
        &mut s,
    )
    .unwrap();
    assert_eq!(single(reply), ("x".into(), Value::Text("a".into())));
    for sql in [
        "SELECT * FROM t_order",
        "INSERT INTO t VALUES (1)",
        // A query, not the constant 1 with a long column name.
        "select 1 as a\nfrom t_order where order_id = 1",
        "SELECT 1 AS a FROM t_order",
        "SELECT now()",
    ] {
        assert!(recognise(sql).is_none(), "{sql}");
    }
}

#[test]
fn dates_are_converted_only_under_the_settings_the_conversion_follows() {
    const DATE: u32 = 1082;
    const TIMESTAMPTZ: u32 = 1184;
    const INTERVAL: u32 = 1186;
    let shards = BTreeMap::new();
    let mut session = session();
    assert!(ProxyText::of(&session, &shards).writes(TIMESTAMPTZ));
    session.reported.insert("timezone".into(), "Etc/UTC".into());
    assert!(ProxyText::of(&session, &shards).writes(TIMESTAMPTZ));
    session
        .reported
        .insert("timezone".into(), "Asia/Tokyo".into());
    assert!(!ProxyText::of(&session, &shards).writes(TIMESTAMPTZ));
    assert!(ProxyText::of(&session, &shards).writes(DATE));
    session
        .reported
        .insert("datestyle".into(), "SQL, DMY".into());
    assert!(!ProxyText::of(&session, &shards).writes(DATE));
    assert!(ProxyText::of(&session, &shards).writes(INTERVAL));
    assert!(ProxyText::of(&session, &shards).writes(23));
    session
        .reported
        .insert("intervalstyle".into(), "iso_8601".into());
    assert!(!ProxyText::of(&session, &shards).writes(INTERVAL));
}

/// Money is written as a C locale writes it: for a session whose lc_monetary (its own, else
/// the shards') is one.
#[test]
fn money_is_converted_only_in_a_c_locale() {
    const MONEY: u32 = 790;
    let mut shards = BTreeMap::new();
    let mut session = session();
    assert!(!ProxyText::of(&session, &shards).writes(MONEY), "not known");
    shards.insert("lc_monetary".to_owned(), "C.UTF-8".to_owned());
    assert!(ProxyText::of(&session, &shards).writes(MONEY));
    shards.insert("lc_monetary".to_owned(), "en_US.UTF-8".to_owned());
    assert!(!ProxyText::of(&session, &shards).writes(MONEY));
    session.reported.insert("lc_monetary".into(), "C".into());
    assert!(ProxyText::of(&session, &shards).writes(MONEY));
    session
        .reported
        .insert("lc_monetary".into(), "de_DE.UTF-8".into());
    assert!(!ProxyText::of(&session, &shards).writes(MONEY));
}
