use super::*;

#[test]
fn both_dialects_commands() {
    let mysql = |sql| parse(sql, Dialect::MySql);
    let pg = |sql| parse(sql, Dialect::Postgres);
    assert_eq!(
        mysql("PREPARE Ins FROM 'INSERT INTO t VALUES (?, ''x'', \\'y\\')'"),
        Some(Command::Prepare {
            name: "ins".into(),
            text: Text::Sql("INSERT INTO t VALUES (?, 'x', 'y')".into())
        })
    );
    assert_eq!(
        mysql("prepare s from @Q;"),
        Some(Command::Prepare {
            name: "s".into(),
            text: Text::Variable("Q")
        })
    );
    assert_eq!(
        mysql("EXECUTE s USING @a, @b"),
        Some(Command::Execute {
            name: "s".into(),
            args: vec!["a", "b"]
        })
    );
    assert_eq!(
        mysql("DROP PREPARE s"),
        Some(Command::Deallocate {
            name: Some("s".into())
        })
    );
    assert_eq!(
        pg("PREPARE ins (bigint, text) AS INSERT INTO t VALUES ($1, $2)"),
        Some(Command::Prepare {
            name: "ins".into(),
            text: Text::Sql("INSERT INTO t VALUES ($1, $2)".into())
        })
    );
    assert_eq!(
        pg("EXECUTE ins(1, 'a,b', f(2, 3))"),
        Some(Command::Execute {
            name: "ins".into(),
            args: vec!["1", "'a,b'", "f(2, 3)"]
        })
    );
    assert_eq!(
        pg("DEALLOCATE ALL"),
        Some(Command::Deallocate { name: None })
    );
    for sql in [
        "EXECUTE s USING 1",
        "PREPARE s FROM SELECT 1",
        "DROP TABLE t",
        "EXECUTE",
    ] {
        assert_eq!(mysql(sql), None, "{sql}");
    }
    assert_eq!(pg("EXECUTE s USING @a"), None);
}
