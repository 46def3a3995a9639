use super::*;

#[test]
fn recognises_catalog_statements() {
    assert_eq!(
        request("SHOW TABLES"),
        Some(Request::Tables { full: false })
    );
    assert_eq!(
        request("show full tables from sharding_db"),
        Some(Request::Tables { full: true })
    );
    for sql in [
        "DESCRIBE t_order",
        "desc `t_order`;",
        "SHOW COLUMNS FROM t_order",
    ] {
        assert_eq!(
            request(sql),
            Some(Request::Columns {
                table: "t_order".into(),
                full: false
            }),
            "{sql}"
        );
    }
    assert_eq!(
        request("SHOW FULL FIELDS IN T_Order"),
        Some(Request::Columns {
            table: "T_Order".into(),
            full: true
        })
    );
    assert_eq!(
        request("SHOW CREATE TABLE `t_order`"),
        Some(Request::CreateTable {
            table: "t_order".into()
        })
    );
    assert_eq!(
        request("show keys in t_order"),
        Some(Request::Indexes {
            table: "t_order".into()
        })
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
