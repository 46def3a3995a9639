use super::*;
use crate::Router;

fn column(schema: &str, relation: &str, name: &str, sql_type: &str) -> CatalogColumn {
    CatalogColumn {
        schema: schema.into(),
        relation: relation.into(),
        name: name.into(),
        sql_type: sql_type.into(),
    }
}

fn names() -> LogicalNames {
    LogicalNames {
        shard_database: "shard_0".into(),
        logic_database: "sharding_db".into(),
        renames: vec![("t_order_0".into(), "t_order".into())],
        hidden: vec!["t_order_1".into(), "keyshard_worker_id".into()],
    }
}

fn rewrite(views: &CatalogViews, dialect: Dialect, sql: &str) -> Option<String> {
    let statement = Router::new(&Default::default(), dialect)
        .parse(sql)
        .unwrap()
        .statement;
    views.rewrite(sql, &statement).unwrap()
}

#[test]
fn pg_class_is_renamed_and_filtered_where_it_is_named() {
    let columns = [
        column("pg_catalog", "pg_class", "oid", "oid"),
        column("pg_catalog", "pg_class", "relname", "name"),
    ];
    let views = CatalogViews::new(Dialect::Postgres, &columns, &names());
    let view = "(SELECT \"oid\", CAST(CASE \"relname\" WHEN 't_order_0' THEN 't_order' \
                ELSE \"relname\" END AS name) AS \"relname\" FROM \"pg_catalog\".\"pg_class\" \
                WHERE (\"relname\" IS NULL OR \"relname\" NOT IN ('t_order_1', 'keyshard_worker_id')) \
                AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class t \
                ON t.oid = i.indrelid WHERE i.indexrelid = \"pg_class\".\"oid\" \
                AND t.relname IN ('t_order_1', 'keyshard_worker_id')))";
    assert_eq!(
        rewrite(
            &views,
            Dialect::Postgres,
            "SELECT c.relname FROM pg_catalog.pg_class c"
        )
        .unwrap(),
        format!("SELECT c.relname FROM {view} c")
    );
    // Unaliased and unqualified (pg_catalog comes first in every search path), and columns
    // qualified with the schema, as SQLAlchemy writes them.
    assert_eq!(
        rewrite(
            &views,
            Dialect::Postgres,
            "SELECT pg_catalog.pg_class.relname FROM pg_class WHERE pg_catalog.pg_class.oid > 0"
        )
        .unwrap(),
        format!("SELECT pg_class.relname FROM {view} AS \"pg_class\" WHERE pg_class.oid > 0")
    );
    assert_eq!(
        rewrite(&views, Dialect::Postgres, "SELECT relname FROM t_order"),
        None
    );
    // A table of the application's named pg_class in another schema is its own.
    assert_eq!(
        rewrite(&views, Dialect::Postgres, "SELECT * FROM app.pg_class"),
        None
    );
}

#[test]
fn mysql_schemas_are_the_logical_database() {
    let columns = [
        column(
            "information_schema",
            "TABLES",
            "TABLE_SCHEMA",
            "varchar(64)",
        ),
        column("information_schema", "TABLES", "TABLE_NAME", "varchar(64)"),
    ];
    let views = CatalogViews::new(Dialect::MySql, &columns, &names());
    let sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()";
    assert_eq!(
        rewrite(&views, Dialect::MySql, sql).unwrap(),
        "SELECT table_name FROM (SELECT CASE WHEN `TABLE_SCHEMA` = 'shard_0' THEN 'sharding_db' \
         ELSE `TABLE_SCHEMA` END AS `TABLE_SCHEMA`, CASE `TABLE_NAME` WHEN 't_order_0' THEN \
         't_order' ELSE `TABLE_NAME` END AS `TABLE_NAME` FROM `information_schema`.`TABLES` \
         WHERE `TABLE_SCHEMA` = 'shard_0' AND (`TABLE_NAME` IS NULL OR `TABLE_NAME` NOT IN \
         ('t_order_1', 'keyshard_worker_id'))) AS `tables` WHERE table_schema = 'sharding_db'"
    );
    // An unaliased relation keeps its name as written: MySQL's aliases are case-sensitive.
    let upper = "SELECT information_schema.TABLES.TABLE_NAME FROM information_schema.TABLES";
    let rewritten = rewrite(&views, Dialect::MySql, upper).unwrap();
    assert!(
        rewritten.starts_with("SELECT TABLES.TABLE_NAME FROM (SELECT "),
        "{rewritten}"
    );
    assert!(rewritten.ends_with(") AS `TABLES`"), "{rewritten}");
    // DATABASE() elsewhere is the shard's business.
    assert_eq!(rewrite(&views, Dialect::MySql, "SELECT DATABASE()"), None);
}

#[test]
fn logic_tables_stand_for_their_first_node_on_the_default_data_source() {
    // The embedded default: t_order over ds_${0..1}.t_order_${0..1}.
    let config = keyshard_config::from_yaml_str(
        keyshard_config::embedded_default(),
        std::path::Path::new("."),
    )
    .unwrap();
    let router = Router::new(&config.sharding, Dialect::MySql)
        .with_data_sources(vec!["ds_0".into(), "ds_1".into()], Vec::new());
    let names = router.logical_names("shard_0", "sharding_db", &["keyshard_worker_id"]);
    assert_eq!(
        names.renames,
        [("t_order_0".to_owned(), "t_order".to_owned())]
    );
    assert_eq!(names.hidden, ["keyshard_worker_id", "t_order", "t_order_1"]);
}

#[test]
fn database_lists_show_the_logical_database_alone() {
    let columns = [
        column("pg_catalog", "pg_database", "oid", "oid"),
        column("pg_catalog", "pg_database", "datname", "name"),
    ];
    let views = CatalogViews::new(Dialect::Postgres, &columns, &names());
    assert_eq!(
        rewrite(
            &views,
            Dialect::Postgres,
            "SELECT d.datname FROM pg_database d"
        )
        .unwrap(),
        "SELECT d.datname FROM (SELECT \"oid\", CAST('sharding_db' AS name) AS \"datname\" \
         FROM \"pg_catalog\".\"pg_database\" WHERE datname = current_database()) d"
    );
    let columns = [
        column(
            "information_schema",
            "SCHEMATA",
            "SCHEMA_NAME",
            "varchar(64)",
        ),
        column(
            "information_schema",
            "SCHEMATA",
            "DEFAULT_CHARACTER_SET_NAME",
            "varchar(32)",
        ),
    ];
    let views = CatalogViews::new(Dialect::MySql, &columns, &names());
    assert_eq!(
        rewrite(
            &views,
            Dialect::MySql,
            "SELECT schema_name FROM information_schema.schemata s"
        )
        .unwrap(),
        "SELECT schema_name FROM (SELECT CASE WHEN `SCHEMA_NAME` = 'shard_0' THEN 'sharding_db' \
         ELSE `SCHEMA_NAME` END AS `SCHEMA_NAME`, `DEFAULT_CHARACTER_SET_NAME` FROM \
         `information_schema`.`SCHEMATA` WHERE `SCHEMA_NAME` = 'shard_0') s"
    );
}

#[test]
fn current_database_in_a_catalog_read_is_the_logical_one() {
    let columns = [column("pg_catalog", "pg_database", "datname", "name")];
    let views = CatalogViews::new(Dialect::Postgres, &columns, &names());
    let rewritten = rewrite(
        &views,
        Dialect::Postgres,
        "SELECT datname FROM pg_database WHERE datname = current_database() \
         OR datname = pg_catalog.current_database ( )",
    )
    .unwrap();
    assert!(
        rewritten.ends_with("WHERE datname = 'sharding_db' OR datname = 'sharding_db'"),
        "{rewritten}"
    );
}

/// ActiveRecord reads a table's columns from `pg_attribute` by `'"t_order"'::regclass`: a
/// regclass literal naming a logic table names the actual table the views show as it.
#[test]
fn regclass_literals_of_logic_tables_name_their_actual_table() {
    let columns = [column("pg_catalog", "pg_class", "relname", "name")];
    let views = CatalogViews::new(Dialect::Postgres, &columns, &names());
    let pg = |sql| rewrite(&views, Dialect::Postgres, sql);
    assert_eq!(
        pg("SELECT a.attname FROM pg_attribute a WHERE a.attrelid = '\"t_order\"'::regclass")
            .unwrap(),
        "SELECT a.attname FROM pg_attribute a WHERE a.attrelid = '\"t_order_0\"'::regclass"
    );
    assert_eq!(
        pg("SELECT * FROM pg_index WHERE indrelid = 'public.T_Order'::regclass").unwrap(),
        "SELECT * FROM pg_index WHERE indrelid = 'public.t_order_0'::regclass"
    );
    assert_eq!(
        pg("SELECT to_regclass('t_order') IS NOT NULL, CAST('t_order' AS regclass)").unwrap(),
        "SELECT to_regclass('t_order_0') IS NOT NULL, CAST('t_order_0' AS regclass)"
    );
    // Another table, a quoted name of another case, a relation that is no logic table.
    assert_eq!(pg("SELECT 't_user'::regclass"), None);
    assert_eq!(
        pg("SELECT '\"T_order\"'::regclass, 'pg_class'::regclass"),
        None
    );
}
