use super::*;

fn session() -> Session {
    Session::new(
        7,
        "root".into(),
        None,
        keyshard_types::Dialect::MySql,
        Default::default(),
    )
}

fn rows(reply: Reply) -> (Vec<String>, Vec<Vec<Value>>) {
    match reply {
        Reply::Rows { columns, rows } => (columns.into_iter().map(|c| c.name).collect(), rows),
        other => panic!("{other:?}"),
    }
}

fn ask(sql: &str, session: &mut Session) -> Result<Reply, Error> {
    let statement = recognise(sql).unwrap_or_else(|| panic!("{sql} not answered"));
    let databases = ["sharding_db", "other_db", "secret_db"].map(str::to_owned);
    answer(
        statement,
        session,
        &databases,
        &|d| d != "secret_db",
        "sharding_db",
    )
}

#[test]
fn connect_time_statements() {
    let mut s = session();
    assert_eq!(
        ask("SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci", &mut s).unwrap(),
        Reply::done()
    );
    s.autocommit = false;
    let (_, values) = rows(ask("SELECT @@autocommit", &mut s).unwrap());
    assert_eq!(values, [[Value::Int(0)]]);
    let (names, values) = rows(ask("select @@version_comment limit 1", &mut s).unwrap());
    assert_eq!(names, ["@@version_comment"]);
    assert_eq!(values, [[Value::Text("Keyshard sharding proxy".into())]]);
    let (names, values) = rows(
        ask("SELECT @@session.auto_increment_increment AS auto_increment_increment, @@max_allowed_packet", &mut s)
            .unwrap(),
    );
    assert_eq!(names, ["auto_increment_increment", "@@max_allowed_packet"]);
    assert_eq!(values, [[Value::Int(1), Value::Int(67108864)]]);
    let (_, values) = rows(ask("SHOW VARIABLES LIKE 'auto_increment%'", &mut s).unwrap());
    assert_eq!(values.len(), 2);
    let (_, values) = rows(
        ask(
            "SHOW SESSION VARIABLES WHERE Variable_name = 'max_allowed_packet'",
            &mut s,
        )
        .unwrap(),
    );
    assert_eq!(
        values,
        [[
            Value::Text("max_allowed_packet".into()),
            Value::Text("67108864".into())
        ]]
    );
}

#[test]
fn session_functions() {
    let mut s = session();
    s.last_insert_id = 42;
    let (names, values) = rows(ask("SELECT LAST_INSERT_ID()", &mut s).unwrap());
    assert_eq!(
        (names, values),
        (
            vec!["LAST_INSERT_ID()".to_owned()],
            vec![vec![Value::UInt(42)]]
        )
    );
    let (names, _) = rows(ask("SELECT 1 AS `one`, @@version v LIMIT 1", &mut s).unwrap());
    assert_eq!(names, ["one", "v"]);
    let (_, values) = rows(ask("select database(), 1", &mut s).unwrap());
    assert_eq!(values, [[Value::Null, Value::Int(1)]]);
    assert_eq!(ask("USE `sharding_db`", &mut s).unwrap(), Reply::done());
    assert_eq!(s.database.as_deref(), Some("sharding_db"));
    assert_eq!(ask("use other", &mut s).unwrap_err().mysql_code().0, 1049);
    // Another logical database of the instance: the connection follows the session there.
    assert_eq!(ask("USE OTHER_DB", &mut s).unwrap(), Reply::done());
    assert_eq!(s.database.as_deref(), Some("other_db"));
    let (_, listed) = rows(ask("SHOW DATABASES", &mut s).unwrap());
    assert_eq!(listed.len(), 2);
    // One the user may not use (DATABASE_PERMITTED): refused, and not listed above.
    assert_eq!(
        ask("USE secret_db", &mut s).unwrap_err().mysql_code().0,
        1044
    );
}

#[test]
fn other_statements_are_not_answered() {
    for sql in [
        "SELECT * FROM t_order",
        "INSERT INTO t_order VALUES (1)",
        "SELECT NOW()",
        "select",
        // Django's `.exists()`, Rails' `exists?`: a query, not the constant 1.
        "SELECT 1 AS a FROM t_order WHERE order_id = 1 LIMIT 1",
        "SELECT 1 AS `a` FROM t_order",
        "SELECT 1 a FROM t_order",
        "SELECT @@version FROM t_order",
        "SELECT @@version AS v FROM t_order",
        "SELECT 1 + 1 AS two",
    ] {
        assert!(recognise(sql).is_none(), "{sql}");
    }
}

#[test]
fn like_patterns() {
    assert!(like("auto_increment_increment", "auto%"));
    assert!(like("t_order", "t\\_ord%"));
    assert!(!like("txorder", "t\\_ord%"));
    assert!(like("100%", "100\\%"));
    assert!(like("tx_isolation", "tx\\_isolation") || like("tx_isolation", "tx_isolation"));
    assert!(!like("version", "ver"));
    assert!(like("version", "v_rs%"));
    assert!(like("", "%%"));
    assert!(!like("", "_"));
    assert!(like("character_set_client", "%set%client"));
    assert!(like("character_set_client", "%_%_%t"));
    assert!(!like("character_set_client", "%set%server"));
    assert!(like("aXbXc", "a%b%c"));
    assert!(!like("aXbXc", "a%c%b"));
}

/// Exponential backtracking made this take hours; it must simply not match.
#[test]
fn like_has_no_pathological_patterns() {
    let pattern = format!("{}z", "%".repeat(40));
    assert!(!like(&"a".repeat(10_000), &pattern));
    let mut s = session();
    let sql = format!("SHOW VARIABLES LIKE '{pattern}'");
    let (_, values) = rows(ask(&sql, &mut s).unwrap());
    assert!(values.is_empty());
}

/// As MariaDB 10.11 describes `SELECT n`: type code (3 INT, 8 BIGINT) and length.
#[test]
fn integer_literals_are_described_as_mariadb_describes_them() {
    for (n, code, length) in [
        (1, 3, 1),
        (-5, 3, 2),
        (123_456_789, 3, 9),
        (1_234_567_890, 8, 10),
        (-2_147_483_648, 8, 11),
        (i64::MAX, 8, 19),
        (i64::MIN, 8, 20),
    ] {
        let column = integer_literal(n);
        assert_eq!(
            (column.code, column.length, column.flags),
            (code, length, 129),
            "{n}"
        );
    }
}
