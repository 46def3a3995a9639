use super::*;

#[test]
fn both_dialects_statements() {
    let none = Characteristics::default();
    let serializable = Characteristics {
        isolation: Some(Isolation::Serializable),
        read_only: None,
    };
    let read_only = Characteristics {
        isolation: None,
        read_only: Some(true),
    };
    let read_write = Characteristics {
        isolation: None,
        read_only: Some(false),
    };
    let serializable_read_only = serializable.or(read_only);
    let name = |sql: &str, key: &str| SavepointName {
        sql: sql.to_owned(),
        key: key.to_owned(),
    };
    for (sql, control) in [
        ("BEGIN", Control::Begin(none)),
        ("begin work;", Control::Begin(none)),
        ("START TRANSACTION READ WRITE", Control::Begin(read_write)),
        (
            "BEGIN ISOLATION LEVEL SERIALIZABLE",
            Control::Begin(serializable),
        ),
        (
            "begin transaction isolation level serializable, read only deferrable",
            Control::Begin(serializable_read_only),
        ),
        (
            "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
            Control::Begin(read_only),
        ),
        (
            "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            Control::SetTransaction(Scope::Transaction, serializable),
        ),
        (
            "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE READ ONLY",
            Control::SetTransaction(Scope::Session, serializable_read_only),
        ),
        (
            "SET SESSION TRANSACTION READ ONLY",
            Control::SetTransaction(Scope::Session, read_only),
        ),
        (
            "set session transaction_isolation = 'SERIALIZABLE'",
            Control::SetTransaction(Scope::Variable, serializable),
        ),
        (
            "SET @@transaction_isolation='serializable'",
            Control::SetTransaction(Scope::Transaction, serializable),
        ),
        (
            "SET default_transaction_isolation TO 'serializable'",
            Control::SetTransaction(Scope::Session, serializable),
        ),
        ("commit", Control::Commit { chain: false }),
        ("END", Control::Commit { chain: false }),
        ("COMMIT WORK AND CHAIN", Control::Commit { chain: true }),
        ("commit and no chain", Control::Commit { chain: false }),
        ("ROLLBACK WORK", Control::Rollback { chain: false }),
        ("rollback and chain", Control::Rollback { chain: true }),
        ("abort", Control::Rollback { chain: false }),
        ("SET autocommit = 0", Control::Autocommit(false)),
        ("set @@session.autocommit=ON", Control::Autocommit(true)),
        ("SET SESSION autocommit = 1", Control::Autocommit(true)),
        ("SAVEPOINT Sp1", Control::Savepoint(name("Sp1", "sp1"))),
        (
            "savepoint \"Sp 1\"",
            Control::Savepoint(name("\"Sp 1\"", "Sp 1")),
        ),
        (
            "ROLLBACK TO SAVEPOINT a",
            Control::RollbackTo(name("a", "a")),
        ),
        (
            "rollback work to `A`",
            Control::RollbackTo(name("`A`", "a")),
        ),
        (
            "RELEASE SAVEPOINT _pg3_1",
            Control::Release(name("_pg3_1", "_pg3_1")),
        ),
        ("release b;", Control::Release(name("b", "b"))),
    ] {
        assert_eq!(parse(sql), Some(control), "{sql}");
    }
    for sql in [
        "SET NAMES utf8",
        "SET autocommit_x = 1",
        "BEGIN ISOLATION LEVEL SNAPSHOT",
        "SET TRANSACTION ISOLATION LEVEL",
        "SET transaction_isolation = 'nonsense'",
        "begin_x",
        "SELECT 1",
        "COMMIT AND CHAIN RELEASE",
        "COMMIT PREPARED 'x'",
        "ROLLBACK PREPARED 'x'",
        "SAVEPOINT 1a",
        "SAVEPOINT a b",
        "SAVEPOINT \"a\"\"b\"",
        "ROLLBACK TO",
        "",
    ] {
        assert_eq!(parse(sql), None, "{sql}");
    }
}
