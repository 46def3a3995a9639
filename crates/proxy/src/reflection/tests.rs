use super::*;

fn name(database: Option<&str>, table: &str) -> Name {
    Name {
        database: database.map(Into::into),
        table: table.into(),
    }
}

#[test]
fn recognises_catalog_statements() {
    assert_eq!(
        request("SHOW TABLES"),
        Some(Request::Tables {
            full: false,
            database: None,
            like: None
        })
    );
    assert_eq!(
        request("show full tables from sharding_db like 't\\_%'"),
        Some(Request::Tables {
            full: true,
            database: Some("sharding_db".into()),
            like: Some("t\\_%".into())
        })
    );
    for sql in [
        "DESCRIBE t_order",
        "desc `t_order`;",
        "SHOW COLUMNS FROM t_order",
    ] {
        assert_eq!(
            request(sql),
            Some(Request::Columns {
                table: name(None, "t_order"),
                full: false,
                like: None
            }),
            "{sql}"
        );
    }
    // Qualified the ways MySQL allows, and SQLAlchemy's `DESCRIBE `db`.`t``.
    for sql in [
        "DESCRIBE `sharding_db`.`t_order`",
        "SHOW COLUMNS FROM t_order IN sharding_db",
        "show columns from sharding_db.t_order",
    ] {
        assert_eq!(
            request(sql),
            Some(Request::Columns {
                table: name(Some("sharding_db"), "t_order"),
                full: false,
                like: None
            }),
            "{sql}"
        );
    }
    assert_eq!(
        request("DESCRIBE t_order 'stat%'"),
        Some(Request::Columns {
            table: name(None, "t_order"),
            full: false,
            like: Some("stat%".into())
        })
    );
    assert_eq!(
        request("SHOW FULL FIELDS IN T_Order"),
        Some(Request::Columns {
            table: name(None, "T_Order"),
            full: true,
            like: None
        })
    );
    assert_eq!(
        request("SHOW CREATE TABLE `t_order`"),
        Some(Request::CreateTable {
            table: name(None, "t_order")
        })
    );
    assert_eq!(
        request("show keys in t_order from sharding_db"),
        Some(Request::Indexes {
            table: name(Some("sharding_db"), "t_order")
        })
    );
    // A filter the proxy cannot evaluate is refused, not answered unfiltered.
    assert_eq!(
        request("SHOW TABLES WHERE Tables_in_sharding_db = 'x'"),
        Some(Request::Refused)
    );
    assert_eq!(
        rename_definition(
            "CREATE TABLE `t_order_0` (\n  `t_order_0x` int)",
            "t_order_0",
            "t_order"
        ),
        "CREATE TABLE `t_order` (\n  `t_order_0x` int)"
    );
    assert_eq!(request("SHOW VARIABLES"), None);
    assert_eq!(request("SELECT 1"), None);
}

#[test]
fn recognises_operator_catalog_statements() {
    let grants = |user: Option<&str>| {
        Some(Request::Grants {
            user: user.map(Into::into),
        })
    };
    assert_eq!(request("SHOW GRANTS"), grants(None));
    assert_eq!(request("show grants for current_user()"), grants(None));
    assert_eq!(request("SHOW GRANTS FOR CURRENT_USER;"), grants(None));
    assert_eq!(request("SHOW GRANTS FOR root@'%'"), grants(Some("root")));
    assert_eq!(
        request("SHOW GRANTS FOR 'app'@'localhost'"),
        grants(Some("app"))
    );
    assert_eq!(
        request("SHOW TABLE STATUS FROM sharding_db LIKE 't%'"),
        Some(Request::TableStatus {
            database: Some("sharding_db".into()),
            like: Some("t%".into())
        })
    );
    assert_eq!(
        request("SHOW TABLE STATUS WHERE Rows > 1"),
        Some(Request::Refused)
    );
    assert_eq!(
        request("SHOW CREATE SCHEMA IF NOT EXISTS sharding_db"),
        Some(Request::CreateDatabase {
            name: "sharding_db".into(),
            if_not_exists: true
        })
    );
    assert_eq!(request("SHOW CREATE VIEW v"), None);
}
