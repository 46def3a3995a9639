//! Reflection of a logic table as tools and ORMs read it (`SHOW CREATE TABLE`, `SHOW INDEX`,
//! `DESCRIBE`, `information_schema`, PostgreSQL's `pg_catalog`): what one plain database holding
//! the same table answers, under the logic table's name.

use crate::common;

use crate::common::compare::MariaDbAlike;
use sqlx::{Column as _, Row as _};

const CREATE: &str = "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
                      status VARCHAR(32), KEY idx_user (user_id, status))";

const SCRIPT: &[&str] = &[
    "SHOW CREATE TABLE t_order",
    "SHOW INDEX FROM t_order",
    "SHOW KEYS IN `t_order`",
    "DESCRIBE t_order",
    "SHOW CREATE TABLE t_nowhere",
    "SHOW TABLES LIKE 't\\_ord%'",
    "SHOW TABLES LIKE 'nothing%'",
    "SHOW COLUMNS FROM t_order LIKE 'st%'",
    "DESCRIBE t_order 'user%'",
    "SHOW TABLES FROM keyshard_no_such_db",
    "DESCRIBE keyshard_no_such_db.t_order",
    "SHOW INDEX FROM t_order IN keyshard_no_such_db",
    // information_schema, as Django's inspectdb, DBeaver and the like read it: the logic table
    // once, none of its actual tables nor Keyshard's own.
    "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()",
    "SELECT CONCAT_WS(',', TABLE_NAME, TABLE_TYPE) FROM information_schema.TABLES \
     WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME",
    "SELECT CONCAT_WS(',', COLUMN_NAME, DATA_TYPE, IS_NULLABLE, COLUMN_KEY) \
     FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = database() AND TABLE_NAME = 't_order' \
     ORDER BY ORDINAL_POSITION",
    "SELECT CONCAT_WS(',', s.INDEX_NAME, s.COLUMN_NAME, s.SEQ_IN_INDEX) \
     FROM information_schema.STATISTICS AS s \
     WHERE s.TABLE_SCHEMA = DATABASE ( ) AND s.TABLE_NAME = 't_order' \
     ORDER BY s.INDEX_NAME, s.SEQ_IN_INDEX",
    "SELECT CONCAT_WS(',', CONSTRAINT_NAME, COLUMN_NAME) FROM information_schema.KEY_COLUMN_USAGE \
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 't_order'",
    "SELECT information_schema.TABLES.TABLE_NAME FROM information_schema.TABLES \
     WHERE information_schema.TABLES.TABLE_SCHEMA = DATABASE()",
    "SELECT COUNT(*) FROM information_schema.TABLES t \
     JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = t.TABLE_SCHEMA \
     AND c.TABLE_NAME = t.TABLE_NAME WHERE t.TABLE_SCHEMA = DATABASE()",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn logic_tables_reflect_as_one_mariadb_table() {
    let mut both = MariaDbAlike::start(CREATE).await;
    both.compare(SCRIPT).await;
    // The definition itself, not only the first column.
    let sql = "SHOW CREATE TABLE t_order";
    let through: (String, String) = sqlx::query_as(sql)
        .fetch_one(&mut both.through)
        .await
        .unwrap();
    let plain: (String, String) = sqlx::query_as(sql)
        .fetch_one(&mut both.plain)
        .await
        .unwrap();
    assert_eq!(through, plain);
    // Qualified by the logic database, as SQLAlchemy's has_table() writes it.
    let qualified: Vec<(String, String)> = sqlx::query_as("DESCRIBE `sharding_db`.`t_order`")
        .fetch_all(&mut both.through)
        .await
        .unwrap();
    let plain: Vec<(String, String)> = sqlx::query_as("DESCRIBE t_order")
        .fetch_all(&mut both.plain)
        .await
        .unwrap();
    assert_eq!(qualified, plain);
    // The schema is the logical database, whichever database the shard's tables are in.
    let schemas: Vec<(String,)> = sqlx::query_as(
        "SELECT DISTINCT TABLE_SCHEMA FROM information_schema.COLUMNS WHERE TABLE_NAME = 't_order'",
    )
    .fetch_all(&mut both.through)
    .await
    .unwrap();
    assert_eq!(schemas, [("sharding_db".to_owned(),)]);
    // The list of databases is the logical one alone, not the shard server's.
    let databases: Vec<(String,)> =
        sqlx::query_as("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1")
            .fetch_all(&mut both.through)
            .await
            .unwrap();
    assert_eq!(databases, [("sharding_db".to_owned(),)]);
    // SHOW TABLE STATUS: one row per logic table, in the server's columns.
    let mut statuses = Vec::new();
    for conn in [&mut both.through, &mut both.plain] {
        let rows = sqlx::raw_sql("SHOW TABLE STATUS LIKE 't\\_%'")
            .fetch_all(&mut *conn)
            .await
            .unwrap();
        let columns: Vec<String> = rows[0].columns().iter().map(|c| c.name().into()).collect();
        let names: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        statuses.push((columns, names));
    }
    assert_eq!(statuses[0], statuses[1]);
    // SHOW CREATE DATABASE (mariadb-dump's --databases) as MariaDB words it.
    let (plain_name,): (String,) = sqlx::query_as("SELECT DATABASE()")
        .fetch_one(&mut both.plain)
        .await
        .unwrap();
    for if_not_exists in ["", "IF NOT EXISTS "] {
        let sql = |name: &str| format!("SHOW CREATE DATABASE {if_not_exists}{name}");
        let (name, definition): (String, String) = sqlx::query_as(&sql("sharding_db"))
            .fetch_one(&mut both.through)
            .await
            .unwrap();
        let (_, plain): (String, String) = sqlx::query_as(&sql(&plain_name))
            .fetch_one(&mut both.plain)
            .await
            .unwrap();
        assert_eq!(name, "sharding_db");
        assert_eq!(definition, plain.replace(&plain_name, "sharding_db"));
    }
    both.finish().await;
}

/// The catalog as psql's `\d`, SQLAlchemy's and Django's reflection read it on PostgreSQL.
const PG_CATALOG: &[&str] = &[
    // psql's \d t_order, first step.
    "SELECT n.nspname || '.' || c.relname FROM pg_catalog.pg_class c \
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
     WHERE c.relname OPERATOR(pg_catalog.~) '^(t_order)$' COLLATE pg_catalog.default \
     AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 1",
    // psql's \dt.
    "SELECT c.relname FROM pg_catalog.pg_class c \
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
     WHERE c.relkind IN ('r','p','') AND n.nspname <> 'pg_catalog' \
     AND n.nspname !~ '^pg_toast' AND n.nspname <> 'information_schema' \
     AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 1",
    // psql's \d t_order, columns by the table's oid.
    "SELECT a.attname || ' ' || pg_catalog.format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull \
     FROM pg_catalog.pg_attribute a WHERE a.attrelid = \
     (SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relname = 't_order' \
     AND pg_catalog.pg_table_is_visible(c.oid)) AND a.attnum > 0 AND NOT a.attisdropped \
     ORDER BY a.attnum",
    // SQLAlchemy writes every column qualified with the schema.
    "SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class \
     JOIN pg_catalog.pg_namespace ON pg_catalog.pg_namespace.oid = pg_catalog.pg_class.relnamespace \
     WHERE pg_catalog.pg_class.relkind = ANY (ARRAY['r', 'p']) \
     AND pg_catalog.pg_table_is_visible(pg_catalog.pg_class.oid) \
     AND pg_catalog.pg_namespace.nspname != 'pg_catalog' ORDER BY 1",
    // pg_dump reads the system column `tableoid` of pg_class.
    "SELECT c.relname, c.tableoid = 'pg_catalog.pg_class'::regclass FROM pg_catalog.pg_class c \
     WHERE c.relname = 't_order'",
    // Django names pg_class without its schema.
    "SELECT c.relname FROM pg_class c WHERE c.relname = 't_order' AND c.relkind = 'r'",
    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    "SELECT table_name || '.' || column_name || ' ' || data_type FROM information_schema.columns \
     WHERE table_schema = 'public' ORDER BY table_name, ordinal_position",
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn logic_tables_reflect_as_one_postgres_table() {
    use crate::common::postgres::{Reference, simple_rows};
    let (shards, proxy) = common::postgres::on_postgres().await;
    let through = proxy.client().await;
    let reference = Reference::create("keyshard_pg_reflection").await;
    let create = "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
                  status VARCHAR(32), flagged BOOLEAN NOT NULL DEFAULT false)";
    through.batch_execute(create).await.unwrap();
    reference.client.batch_execute(create).await.unwrap();
    for sql in PG_CATALOG {
        assert_eq!(
            simple_rows(&through, sql).await,
            simple_rows(&reference.client, sql).await,
            "{sql}"
        );
    }
    // psql's \\l: the logical database alone, as the shard's current one.
    let databases = simple_rows(&through, "SELECT datname FROM pg_catalog.pg_database").await;
    assert_eq!(databases, [[Some("sharding_db".to_owned())]]);
    // The extended protocol, with parameters as drivers bind them: a relation name as text and
    // a boolean (SQLAlchemy's reflection binds both).
    let sql = "SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class \
               WHERE pg_catalog.pg_class.relname = $1 AND pg_catalog.pg_class.relhasindex = $2";
    for client in [&through, &reference.client] {
        let rows = client.query(sql, &[&"t_order", &true]).await.unwrap();
        let names: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        assert_eq!(names, ["t_order"]);
    }
    proxy.stop().await;
    reference.drop_database().await;
    shards.cleanup().await;
}

/// A statement described before it runs, or run first with a NULL, has its parameters typed
/// by the shard (`$1::integer`: integer); a later value of another type (a BIGINT) must not be
/// sent in the first type's binary format.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn parameters_keep_their_types_after_a_describe_or_a_null() {
    let (shards, proxy) = common::postgres::on_postgres().await;
    let client = proxy.client().await;
    client
        .batch_execute("CREATE TABLE t_flags (id INT PRIMARY KEY, flagged BOOLEAN)")
        .await
        .unwrap();
    client
        .batch_execute("INSERT INTO t_flags VALUES (1, true), (2, false)")
        .await
        .unwrap();
    // A read on an unsharded table: its columns are asked of the shard, which types `$1`.
    let sql = "SELECT count(*) FROM t_flags WHERE id <= $1::integer";
    let none: Option<i32> = None;
    let row = client.query_one(sql, &[&none]).await.unwrap();
    assert_eq!(row.get::<_, i64>(0), 0);
    for n in [1i32, 2] {
        let row = client.query_one(sql, &[&n]).await.unwrap();
        assert_eq!(row.get::<_, i64>(0), i64::from(n));
    }
    let flagged = "SELECT id FROM t_flags WHERE flagged = $1 ORDER BY id";
    for (flag, id) in [(true, 1), (false, 2)] {
        let rows = client.query(flagged, &[&flag]).await.unwrap();
        let ids: Vec<i32> = rows.iter().map(|r| r.get(0)).collect();
        assert_eq!(ids, [id]);
    }
    let updated = client
        .execute(
            "UPDATE t_flags SET flagged = $1 WHERE id = $2",
            &[&true, &2i32],
        )
        .await
        .unwrap();
    assert_eq!(updated, 1);
    proxy.stop().await;
    shards.cleanup().await;
}
