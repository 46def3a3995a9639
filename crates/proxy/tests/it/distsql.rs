//! ShardingSphere's DistSQL statements the proxy answers itself, end to end on SQLite shards:
//! `SHOW COMPUTE NODES` (read from the coordination repository, here the first data source)
//! and `SHOW SHARDING KEY GENERATORS`, through the MySQL frontend (sqlx) and the PostgreSQL
//! frontend (tokio-postgres), as text and as prepared statements.

use crate::common;

use std::time::SystemTime;

use crate::common::postgres::{PgProxy, PgShards, simple_rows};
use crate::common::{Proxy, Shards};
use keyshard_keygen::Snowflake;
use sqlx::mysql::{MySqlConnection, MySqlDatabaseError, MySqlRow};
use sqlx::{Column, Connection, Row};

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

/// The default configuration with a UUID generator only: nothing needs a worker id, so no
/// coordination repository is used.
fn uuid_only(yaml: &str) -> String {
    let (rules, _) = yaml
        .split_once("  keyGenerators:")
        .expect("the default configuration has key generators");
    format!("{rules}  keyGenerators:\n    snowflake:\n      type: UUID\n")
}

async fn mysql(proxy: &Proxy) -> MySqlConnection {
    MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap()
}

/// Inserts a row without its key and returns the worker id the key carries.
async fn mysql_key_worker_id(conn: &mut MySqlConnection) -> u16 {
    sqlx::raw_sql("INSERT INTO t_order (user_id, status) VALUES (1, 'distsql')")
        .execute(&mut *conn)
        .await
        .unwrap();
    let row = sqlx::raw_sql("SELECT LAST_INSERT_ID()")
        .fetch_one(&mut *conn)
        .await
        .unwrap();
    let key = row.try_get::<u64, _>(0).unwrap();
    Snowflake::decode(i64::try_from(key).unwrap())
        .unwrap()
        .worker_id
}

fn column_names(row: &MySqlRow) -> Vec<String> {
    row.columns().iter().map(|c| c.name().to_owned()).collect()
}

/// The worker ids of a `SHOW COMPUTE NODES` answer, checking each row's other columns.
fn worker_ids(rows: &[MySqlRow]) -> Vec<u16> {
    rows.iter()
        .map(|row| {
            assert_eq!(
                column_names(row),
                ["instance_id", "worker_id", "epoch", "lease_expires_at"]
            );
            assert!(!row.get::<String, _>("instance_id").is_empty());
            assert!(row.get::<i64, _>("epoch") >= 1);
            assert_lease_is_live(row.get::<Option<String>, _>("lease_expires_at").as_deref());
            u16::try_from(row.get::<i64, _>("worker_id")).unwrap()
        })
        .collect()
}

/// The JDBC repository gives an expiry: RFC 3339 UTC with milliseconds, in the future.
fn assert_lease_is_live(expires_at: Option<&str>) {
    let expires_at = expires_at.expect("a JDBC lease has an expiry");
    assert!(
        expires_at.ends_with('Z') && expires_at.len() == "2024-01-01T00:00:00.000Z".len(),
        "{expires_at}"
    );
    let time = humantime::parse_rfc3339(expires_at).unwrap();
    assert!(time > SystemTime::now(), "{expires_at} has passed");
}

fn mysql_errno(error: &sqlx::Error) -> Option<u16> {
    error
        .as_database_error()
        .and_then(|d| d.try_downcast_ref::<MySqlDatabaseError>())
        .map(|d| d.number())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compute_nodes_list_this_proxy_with_the_worker_id_of_its_keys() {
    let shards = Shards::sqlite();
    let proxy = Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let mut conn = mysql(&proxy).await;
    sqlx::raw_sql(CREATE).execute(&mut conn).await.unwrap();
    let worker_id = mysql_key_worker_id(&mut conn).await;

    // Text protocol, then prepared (COM_STMT_PREPARE), in other spellings.
    let rows = sqlx::raw_sql("SHOW COMPUTE NODES")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(worker_ids(&rows), [worker_id]);
    let rows = sqlx::query("  show\tcompute \n nodes ;")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(worker_ids(&rows), [worker_id]);
    let rows = sqlx::query("SHOW COMPUTE NODES;")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(worker_ids(&rows), [worker_id]);

    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_proxies_on_the_same_shards_list_two_worker_ids() {
    let shards = Shards::sqlite();
    let yaml = common::yaml(&shards.url(0), &shards.url(1));
    let first = Proxy::start(&yaml).await;
    let mut a = mysql(&first).await;
    sqlx::raw_sql(CREATE).execute(&mut a).await.unwrap();
    let second = Proxy::start(&yaml).await;
    let mut b = mysql(&second).await;
    let keys = [
        mysql_key_worker_id(&mut a).await,
        mysql_key_worker_id(&mut b).await,
    ];
    assert_ne!(keys[0], keys[1]);

    for conn in [&mut a, &mut b] {
        let rows = sqlx::raw_sql("SHOW COMPUTE NODES")
            .fetch_all(&mut *conn)
            .await
            .unwrap();
        let mut listed = worker_ids(&rows);
        listed.sort_unstable();
        let mut expected = keys;
        expected.sort_unstable();
        assert_eq!(listed, expected);
        let instances: Vec<String> = rows.iter().map(|r| r.get("instance_id")).collect();
        assert_ne!(instances[0], instances[1]);
    }

    first.stop().await;
    second.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_generators_are_listed_with_their_type_and_props() {
    let shards = Shards::sqlite();
    let proxy = Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let mut conn = mysql(&proxy).await;
    for sql in [
        "SHOW SHARDING KEY GENERATORS",
        "show sharding key generators;",
    ] {
        for rows in [
            sqlx::raw_sql(sql).fetch_all(&mut conn).await.unwrap(),
            sqlx::query(sql).fetch_all(&mut conn).await.unwrap(),
        ] {
            assert_eq!(rows.len(), 1, "{sql}");
            assert_eq!(column_names(&rows[0]), ["name", "type", "props"]);
            let row: (String, String, String) = (rows[0].get(0), rows[0].get(1), rows[0].get(2));
            assert_eq!(
                row,
                (
                    "snowflake".to_owned(),
                    "SNOWFLAKE".to_owned(),
                    r#"{"max-vibration-offset":3}"#.to_owned()
                )
            );
        }
    }
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn longer_statements_are_not_answered_by_the_proxy() {
    let shards = Shards::sqlite();
    let proxy = Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let mut conn = mysql(&proxy).await;
    for sql in [
        "SHOW COMPUTE NODES WHERE 1",
        "SHOW SHARDING KEY GENERATORS FROM sharding_db",
    ] {
        let answer = sqlx::raw_sql(sql).fetch_all(&mut conn).await;
        // The proxy would have answered with rows; the router refuses it as before.
        let error = answer.expect_err(sql);
        assert!(
            !error.to_string().contains("coordination repository"),
            "{sql}: {error}"
        );
    }
    // The connection is still usable.
    let rows = sqlx::raw_sql("SHOW COMPUTE NODES")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_repository_compute_nodes_are_empty() {
    let shards = Shards::sqlite();
    let proxy = Proxy::start(&uuid_only(&common::yaml(&shards.url(0), &shards.url(1)))).await;
    let mut conn = mysql(&proxy).await;
    for rows in [
        sqlx::raw_sql("SHOW COMPUTE NODES")
            .fetch_all(&mut conn)
            .await
            .unwrap(),
        sqlx::query("SHOW COMPUTE NODES")
            .fetch_all(&mut conn)
            .await
            .unwrap(),
    ] {
        assert!(rows.is_empty(), "{} rows", rows.len());
    }
    let row = sqlx::raw_sql("SHOW SHARDING KEY GENERATORS")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(row.get::<String, _>("type"), "UUID");
    assert_eq!(row.get::<String, _>("props"), "");
    proxy.stop().await;
    shards.cleanup().await;
}

/// Makes the JDBC repository fail: its worker-id table is gone from the first data source.
async fn break_repository(url: &str) {
    let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
    sqlx::raw_sql("DROP TABLE keyshard_worker_id")
        .execute(&mut conn)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_error_reaches_the_client_and_the_connection_stays_usable() {
    let shards = Shards::sqlite();
    let proxy = Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let mut conn = mysql(&proxy).await;
    break_repository(&shards.url(0)).await;
    let error = sqlx::raw_sql("SHOW COMPUTE NODES")
        .fetch_all(&mut conn)
        .await
        .unwrap_err();
    assert_eq!(mysql_errno(&error), Some(1105), "{error}");
    let message = error.as_database_error().unwrap().message().to_owned();
    assert!(
        message.starts_with("coordination repository: "),
        "{message}"
    );
    let rows = sqlx::raw_sql("SHOW SHARDING KEY GENERATORS")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    proxy.stop().await;
    shards.cleanup().await;
}

/// A PostgreSQL proxy on SQLite shards with `t_order` created, and a client.
async fn pg_start(yaml: &str) -> (PgProxy, tokio_postgres::Client) {
    let proxy = PgProxy::start(yaml).await;
    let client = proxy.client().await;
    client.batch_execute(CREATE).await.unwrap();
    (proxy, client)
}

fn pg_yaml(shards: &PgShards) -> String {
    common::postgres::yaml(&shards.url(0), &shards.url(1), false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_compute_nodes_and_key_generators() {
    let shards = PgShards::sqlite();
    let (proxy, client) = pg_start(&pg_yaml(&shards)).await;
    let key: i64 = client
        .query_one(
            "INSERT INTO t_order (user_id, status) VALUES (1, 'distsql') RETURNING order_id",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let worker_id = i64::from(Snowflake::decode(key).unwrap().worker_id);

    // Extended protocol: described before it runs, so the rows decode by name and type.
    for sql in ["SHOW COMPUTE NODES", "show  compute\nnodes;"] {
        let rows = client.query(sql, &[]).await.unwrap();
        assert_eq!(rows.len(), 1, "{sql}");
        let names: Vec<&str> = rows[0].columns().iter().map(|c| c.name()).collect();
        assert_eq!(
            names,
            ["instance_id", "worker_id", "epoch", "lease_expires_at"]
        );
        assert_eq!(rows[0].get::<_, i64>("worker_id"), worker_id);
        assert!(rows[0].get::<_, i64>("epoch") >= 1);
        assert_lease_is_live(rows[0].get::<_, Option<&str>>("lease_expires_at"));
    }
    // Simple protocol.
    let rows = simple_rows(&client, "SHOW COMPUTE NODES;").await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][1], Some(worker_id.to_string()));

    let expected = [
        Some("snowflake"),
        Some("SNOWFLAKE"),
        Some(r#"{"max-vibration-offset":3}"#),
    ]
    .map(|v| v.map(str::to_owned));
    assert_eq!(
        simple_rows(&client, "show sharding key generators").await,
        [expected.to_vec()]
    );
    let rows = client
        .query("SHOW SHARDING KEY GENERATORS;", &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<_, &str>("type"), "SNOWFLAKE");

    // Longer statements are not the proxy's: refused as before, and the session goes on.
    let error = client
        .simple_query("SHOW COMPUTE NODES WHERE 1")
        .await
        .unwrap_err();
    assert!(!error.to_string().contains("coordination"), "{error:?}");
    assert_eq!(simple_rows(&client, "SHOW COMPUTE NODES").await.len(), 1);

    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_two_proxies_list_two_worker_ids() {
    let shards = PgShards::sqlite();
    let yaml = pg_yaml(&shards);
    let (first, a) = pg_start(&yaml).await;
    let second = PgProxy::start(&yaml).await;
    let b = second.client().await;
    let rows = a.query("SHOW COMPUTE NODES", &[]).await.unwrap();
    let mut ids: Vec<i64> = rows.iter().map(|r| r.get("worker_id")).collect();
    ids.dedup();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert_eq!(b.query("SHOW COMPUTE NODES", &[]).await.unwrap().len(), 2);
    first.stop().await;
    second.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_without_a_repository_compute_nodes_are_empty_with_their_columns() {
    let shards = PgShards::sqlite();
    let proxy = PgProxy::start(&uuid_only(&pg_yaml(&shards))).await;
    let client = proxy.client().await;
    let statement = client.prepare("SHOW COMPUTE NODES").await.unwrap();
    let names: Vec<&str> = statement.columns().iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        ["instance_id", "worker_id", "epoch", "lease_expires_at"]
    );
    assert!(client.query(&statement, &[]).await.unwrap().is_empty());
    assert!(simple_rows(&client, "SHOW COMPUTE NODES").await.is_empty());
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pg_a_repository_error_reaches_the_client() {
    let shards = PgShards::sqlite();
    let (proxy, client) = pg_start(&pg_yaml(&shards)).await;
    break_repository(&shards.url(0)).await;
    let error = client.query("SHOW COMPUTE NODES", &[]).await.unwrap_err();
    let db = error.as_db_error().expect("an error from the server");
    assert_eq!(db.code().code(), "XX000");
    assert!(
        db.message().starts_with("coordination repository: "),
        "{}",
        db.message()
    );
    assert_eq!(
        simple_rows(&client, "SHOW SHARDING KEY GENERATORS")
            .await
            .len(),
        1
    );
    proxy.stop().await;
    shards.cleanup().await;
}

/// ShardingSphere's RQL over the default configuration: its table rule, nodes, algorithms,
/// storage units, in SS 5.4's column layout, as text and prepared, on both frontends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_are_shown_as_shardingsphere_shows_them() {
    let shards = PgShards::sqlite();
    let proxy = PgProxy::start(&common::postgres::yaml(
        &shards.url(0),
        &shards.url(1),
        true,
    ))
    .await;
    let mysql_address = proxy.mysql_address.unwrap();
    let mut conn =
        MySqlConnection::connect(&format!("mysql://root:root@{mysql_address}/sharding_db"))
            .await
            .unwrap();
    let rows = sqlx::raw_sql("SHOW SHARDING TABLE RULES FROM sharding_db")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let names = column_names(&rows[0]);
    assert_eq!(names.len(), 16);
    assert_eq!(
        &names[..4],
        [
            "table",
            "actual_data_nodes",
            "actual_data_sources",
            "database_strategy_type"
        ]
    );
    let text = |name: &str| rows[0].get::<String, _>(name);
    assert_eq!(text("table"), "t_order");
    // As configured, and properties as JSON, as SS 5.4+ shows them.
    assert_eq!(text("actual_data_nodes"), "ds_${0..1}.t_order_${0..1}");
    assert_eq!(text("actual_data_sources"), "");
    assert_eq!(text("allow_hint_disable"), "");
    assert_eq!(text("table_sharding_algorithm_type"), "INLINE");
    assert_eq!(
        text("table_sharding_algorithm_props"),
        r#"{"algorithm-expression":"t_order_${order_id % 2}"}"#
    );
    assert_eq!(text("key_generator_type"), "SNOWFLAKE");
    let used = sqlx::raw_sql("SHOW SHARDING TABLE RULES USED ALGORITHM t_order_inline")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(used.len(), 1);
    let defaults = sqlx::raw_sql("SHOW DEFAULT SHARDING STRATEGY")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let kinds: Vec<(String, String)> = defaults
        .iter()
        .map(|r| (r.get("name"), r.get("type")))
        .collect();
    assert_eq!(
        kinds,
        [
            // The default configuration sets the strategies on its table.
            ("DATABASE".to_owned(), "NONE".to_owned()),
            ("TABLE".to_owned(), "NONE".to_owned())
        ]
    );
    let nodes = sqlx::query("SHOW SHARDING TABLE NODES t_order")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(nodes.get::<String, _>("name"), "t_order");
    let algorithms = sqlx::raw_sql("SHOW SHARDING ALGORITHMS")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let types: Vec<String> = algorithms.iter().map(|r| r.get("type")).collect();
    assert!(types.iter().all(|t| t == "INLINE"), "{types:?}");
    let units = sqlx::raw_sql("SHOW STORAGE UNITS")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let names: Vec<String> = units.iter().map(|r| r.get("name")).collect();
    assert_eq!(names, ["ds_0", "ds_1"]);
    assert_eq!(units[0].get::<String, _>("type"), "Sqlite");
    for empty in [
        "SHOW BROADCAST TABLE RULES",
        "SHOW SHARDING AUDITORS",
        "SHOW SINGLE TABLES",
    ] {
        let rows = sqlx::raw_sql(empty).fetch_all(&mut conn).await.unwrap();
        assert!(rows.is_empty(), "{empty}");
    }
    let error = sqlx::raw_sql("SHOW SHARDING TABLE RULES FROM other_db")
        .fetch_all(&mut conn)
        .await
        .unwrap_err();
    assert_eq!(common::mysql_code(&error), Some(1049), "{error}");

    let client = proxy.client().await;
    let rows = client
        .query("SHOW SHARDING TABLE RULES", &[])
        .await
        .unwrap();
    assert_eq!(rows[0].get::<_, String>("table"), "t_order");
    let simple = simple_rows(&client, "SHOW SHARDING TABLE NODES").await;
    assert_eq!(simple.len(), 1);
    proxy.stop().await;
    shards.cleanup().await;
}

/// `SHOW NEXT KEYS` hands out keys of a table's generator (or a named one) on both frontends,
/// as text and prepared, none of them ever handed out again by INSERTs running at the same
/// time; a wrong count, an unknown name or a UUID generator get a clear error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_keys_are_handed_out_on_demand_and_never_again() {
    let shards = Shards::sqlite();
    let yaml = common::yaml(&shards.url(0), &shards.url(1));
    let proxy = Proxy::start(&yaml).await;
    let mut conn = mysql(&proxy).await;
    sqlx::raw_sql(CREATE).execute(&mut conn).await.unwrap();

    let inserts = (0..2)
        .map(|_| {
            let url = proxy.url("root", "root");
            tokio::spawn(async move {
                let mut conn = MySqlConnection::connect(&url).await.unwrap();
                let mut keys = Vec::new();
                for _ in 0..200 {
                    // One data source: SQLite writers over two would wait on each other.
                    let done = sqlx::query("INSERT INTO t_order (user_id) VALUES (1), (3)")
                        .execute(&mut conn)
                        .await
                        .unwrap();
                    let first = i64::try_from(done.last_insert_id()).unwrap();
                    keys.extend([first, first + 1]);
                }
                keys
            })
        })
        .collect::<Vec<_>>();
    let mut keys = Vec::new();
    for _ in 0..100 {
        let rows = sqlx::raw_sql("SHOW NEXT KEYS FROM t_order COUNT 3")
            .fetch_all(&mut conn)
            .await
            .unwrap();
        assert_eq!(column_names(&rows[0]), ["key"]);
        keys.extend(rows.iter().map(|r| r.get::<i64, _>(0)));
        let prepared: Vec<i64> = sqlx::query_scalar("SHOW NEXT KEYS FROM snowflake")
            .fetch_all(&mut conn)
            .await
            .unwrap();
        keys.extend(prepared);
    }
    assert_eq!(keys.len(), 400);
    for insert in inserts {
        keys.extend(insert.await.unwrap());
    }
    let distinct: std::collections::HashSet<i64> = keys.iter().copied().collect();
    assert_eq!(distinct.len(), keys.len(), "a key was handed out twice");

    for (sql, errno) in [
        ("SHOW NEXT KEYS FROM t_order COUNT 0", 1210),
        ("SHOW NEXT KEYS FROM t_order COUNT 5000", 1210),
        ("SHOW NEXT KEYS FROM nowhere", 1146),
    ] {
        let error = sqlx::raw_sql(sql).execute(&mut conn).await.unwrap_err();
        assert_eq!(mysql_errno(&error), Some(errno), "{sql}: {error}");
    }
    let rows = sqlx::raw_sql("SHOW NEXT KEYS FROM t_order")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    proxy.stop().await;

    let pg = PgShards::sqlite();
    let (proxy, client) = pg_start(&uuid_only(&pg_yaml(&pg))).await;
    let error = client
        .simple_query("SHOW NEXT KEYS FROM t_order")
        .await
        .unwrap_err();
    assert!(format!("{error:?}").contains("UUIDs"), "{error:?}");
    proxy.stop().await;
    let proxy = PgProxy::start(&pg_yaml(&pg)).await;
    let client = proxy.client().await;
    let error = client
        .simple_query("SHOW NEXT KEYS FROM t_order COUNT 5000")
        .await
        .unwrap_err();
    assert_eq!(
        error.code(),
        Some(&tokio_postgres::error::SqlState::INVALID_PARAMETER_VALUE)
    );
    let rows = client
        .query("SHOW NEXT KEYS FROM t_order COUNT 4", &[])
        .await
        .unwrap();
    let pg_keys: Vec<i64> = rows.iter().map(|r| r.get("key")).collect();
    assert_eq!(pg_keys.len(), 4);
    assert!(pg_keys.windows(2).all(|w| w[1] == w[0] + 1), "{pg_keys:?}");
    assert_eq!(
        simple_rows(&client, "show next keys from t_order")
            .await
            .len(),
        1
    );
    proxy.stop().await;
    shards.cleanup().await;
    pg.cleanup().await;
}

/// Gene keys end to end over MariaDB shards (`gene-bits: 4`, the tables chosen by the key's
/// bits above the gene): keys of rows inserted one at a time and with RETURNING carry their
/// user id's low 4 bits, each row is stored on the node its user picks, and a read by the key
/// alone is previewed on that one node and finds its row. A multi-row INSERT without RETURNING
/// is refused (its keys are not LAST_INSERT_ID() + i), and nothing of it is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn gene_keys_route_a_read_by_key_to_one_node() {
    let shards = Shards::mariadb().await;
    let yaml = common::yaml(&shards.url(0), &shards.url(1))
        .replace(
            "max-vibration-offset: 3",
            "max-vibration-offset: 3\n        gene-bits: 4",
        )
        .replace("t_order_${order_id % 2}", "t_order_${order_id / 16 % 2}");
    assert!(
        yaml.contains("order_id / 16"),
        "the default table algorithm changed"
    );
    let proxy = Proxy::start(&yaml).await;
    let mut conn = mysql(&proxy).await;
    sqlx::raw_sql(CREATE).execute(&mut conn).await.unwrap();
    let mut rows = Vec::new();
    // Users in the order 1, 3, 2, 4, 5, 7, 6, 8 …: when every INSERT lands in a new
    // millisecond, the sequence's parity alternates with each one (the vibration offset), and
    // users taken in plain order would alternate their data source in step with it, leaving
    // each data source one table.
    for i in 0..40_i64 {
        let user_id = i / 4 * 4 + [1, 3, 2, 4][(i % 4) as usize];
        let done = sqlx::query("INSERT INTO t_order (user_id, status) VALUES (?, 'one')")
            .bind(user_id)
            .execute(&mut conn)
            .await
            .unwrap();
        rows.push((i64::try_from(done.last_insert_id()).unwrap(), user_id));
    }
    let returned: Vec<i64> = sqlx::query_scalar(
        "INSERT INTO t_order (user_id, status) VALUES (41, 'two'), (42, 'two') RETURNING order_id",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    rows.extend(returned.into_iter().zip([41, 42]));
    let refused = sqlx::raw_sql("INSERT INTO t_order (user_id) VALUES (43), (44)")
        .execute(&mut conn)
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("RETURNING"), "{refused}");

    let mut tables = std::collections::HashSet::new();
    for &(key, user_id) in &rows {
        assert_eq!(key & 15, user_id & 15, "key {key:#x} of user {user_id}");
        let ds = usize::try_from(user_id % 2).unwrap();
        let table = usize::try_from(key / 16 % 2).unwrap();
        assert!(
            shards.ids(ds, table).await.contains(&key),
            "{key} not on ds_{ds}"
        );
        tables.insert((ds, table));
        let preview = sqlx::raw_sql(&format!(
            "PREVIEW SELECT user_id FROM t_order WHERE order_id = {key}"
        ))
        .fetch_all(&mut conn)
        .await
        .unwrap();
        let units: Vec<(String, String)> = preview.iter().map(|r| (r.get(0), r.get(1))).collect();
        assert_eq!(units.len(), 1, "{units:?}");
        assert_eq!(units[0].0, format!("ds_{ds}"));
        assert!(
            units[0].1.contains(&format!("t_order_{table}")),
            "{units:?}"
        );
        let found: i32 = sqlx::query_scalar("SELECT user_id FROM t_order WHERE order_id = ?")
            .bind(key)
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(i64::from(found), user_id);
    }
    // The bits above the gene spread each data source's rows over both its tables.
    assert_eq!(tables.len(), 4, "{tables:?}");
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t_order")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(stored, 42);
    conn.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

/// A table routed by hint strategies, end to end over SQLite shards: rows go where each
/// INSERT's hint says, a read with a hint reads that node alone (PREVIEW, and the rows it
/// answers), one without reads every node, an INSERT without one is refused, and SHOW SHARDING
/// TABLE RULES shows the strategies as ShardingSphere does (type HINT, no column).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hint_strategy_table_goes_where_the_hint_says() {
    let shards = Shards::sqlite();
    let yaml = common::yaml(&shards.url(0), &shards.url(1))
        .replacen(
            "  tables:\n",
            "  tables:\n    t_hint:\n      actualDataNodes: ds_${0..1}.t_hint_${0..1}\n      \
             databaseStrategy:\n        hint:\n          shardingAlgorithmName: db_hint\n      \
             tableStrategy:\n        hint:\n          shardingAlgorithmName: t_hint\n",
            1,
        )
        .replacen(
            "  shardingAlgorithms:\n",
            "  shardingAlgorithms:\n    db_hint:\n      type: HINT_INLINE\n      props:\n        \
             algorithm-expression: ds_${value % 2}\n    t_hint:\n      type: HINT_INLINE\n      \
             props:\n        algorithm-expression: t_hint_${value % 2}\n",
            1,
        );
    let proxy = Proxy::start(&yaml).await;
    let mut conn = mysql(&proxy).await;
    sqlx::raw_sql("CREATE TABLE t_hint (id INT PRIMARY KEY, note VARCHAR(20))")
        .execute(&mut conn)
        .await
        .unwrap();
    let hint = |db: u8, table: u8| {
        format!(
            "/* SHARDINGSPHERE_HINT: t_hint.SHARDING_DATABASE_VALUE={db}, \
             t_hint.SHARDING_TABLE_VALUE={table} */ "
        )
    };
    for (id, db, table) in [(1, 0, 0), (2, 0, 1), (3, 1, 0), (4, 1, 1), (5, 1, 1)] {
        let insert = format!(
            "{}INSERT INTO t_hint (id, note) VALUES ({id}, 'n{id}')",
            hint(db, table)
        );
        sqlx::raw_sql(&insert).execute(&mut conn).await.unwrap();
    }
    let refused = sqlx::raw_sql("INSERT INTO t_hint (id) VALUES (9)")
        .execute(&mut conn)
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("SHARDING_DATABASE_VALUE"),
        "{refused}"
    );
    // Each node holds what its hint sent there.
    for (ds, table, ids) in [
        (0, 0, vec![1]),
        (0, 1, vec![2]),
        (1, 0, vec![3]),
        (1, 1, vec![4, 5]),
    ] {
        let mut direct = sqlx::SqliteConnection::connect(&shards.url(ds))
            .await
            .unwrap();
        let stored: Vec<i64> =
            sqlx::query_scalar(&format!("SELECT id FROM t_hint_{table} ORDER BY id"))
                .fetch_all(&mut direct)
                .await
                .unwrap();
        assert_eq!(stored, ids, "ds_{ds}.t_hint_{table}");
    }
    let read = format!("{}SELECT id FROM t_hint ORDER BY id", hint(1, 1));
    let ids: Vec<i32> = sqlx::query_scalar(&read)
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(ids, [4, 5]);
    let preview = sqlx::raw_sql(&format!("PREVIEW {read}"))
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(preview.len(), 1);
    assert_eq!(preview[0].get::<String, _>(0), "ds_1");
    let all: Vec<i32> = sqlx::query_scalar("SELECT id FROM t_hint ORDER BY id")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(all, [1, 2, 3, 4, 5]);
    let rules = sqlx::raw_sql("SHOW SHARDING TABLE RULE t_hint")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let text = |name: &str| rules[0].get::<String, _>(name);
    assert_eq!(text("database_strategy_type"), "HINT");
    assert_eq!(text("database_sharding_column"), "");
    assert_eq!(text("table_sharding_algorithm_type"), "HINT_INLINE");
    conn.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

/// A table whose data source a complex strategy picks from two columns at once, end to end over
/// SQLite shards: each row is stored where `(user_id + order_id) % 2` says, a read giving both
/// columns reads that one node (PREVIEW, and its rows), and RQL shows the strategy as SS does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_complex_strategy_table_goes_where_its_columns_say() {
    let shards = Shards::sqlite();
    let yaml = common::yaml(&shards.url(0), &shards.url(1))
        .replacen(
            "  tables:\n",
            "  tables:\n    t_pair:\n      actualDataNodes: ds_${0..1}.t_pair\n      \
             databaseStrategy:\n        complex:\n          shardingColumns: user_id,order_id\n          \
             shardingAlgorithmName: pair\n",
            1,
        )
        .replacen(
            "  shardingAlgorithms:\n",
            "  shardingAlgorithms:\n    pair:\n      type: COMPLEX_INLINE\n      props:\n        \
             algorithm-expression: ds_${(user_id + order_id) % 2}\n",
            1,
        );
    let proxy = Proxy::start(&yaml).await;
    let mut conn = mysql(&proxy).await;
    sqlx::raw_sql("CREATE TABLE t_pair (order_id INT PRIMARY KEY, user_id INT, note VARCHAR(20))")
        .execute(&mut conn)
        .await
        .unwrap();
    sqlx::raw_sql("INSERT INTO t_pair (order_id, user_id, note) VALUES (1, 1, 'a'), (1, 2, 'b'), (2, 2, 'c'), (3, 4, 'd')")
        .execute(&mut conn)
        .await
        .unwrap();
    // order_id is the primary key on each node only: (1, 1) and (1, 2) go to different nodes.
    for (ds, notes) in [(0, vec!["a", "c"]), (1, vec!["b", "d"])] {
        let mut direct = sqlx::SqliteConnection::connect(&shards.url(ds))
            .await
            .unwrap();
        let stored: Vec<String> = sqlx::query_scalar("SELECT note FROM t_pair ORDER BY note")
            .fetch_all(&mut direct)
            .await
            .unwrap();
        assert_eq!(stored, notes, "ds_{ds}");
    }
    let read = "SELECT note FROM t_pair WHERE user_id = ? AND order_id = ?";
    let note: String = sqlx::query_scalar(read)
        .bind(4)
        .bind(3)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(note, "d");
    let preview =
        sqlx::raw_sql("PREVIEW SELECT note FROM t_pair WHERE user_id = 4 AND order_id = 3")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    assert_eq!(preview.len(), 1);
    assert_eq!(preview[0].get::<String, _>(0), "ds_1");
    let rules = sqlx::raw_sql("SHOW SHARDING TABLE RULE t_pair")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        rules[0].get::<String, _>("database_strategy_type"),
        "COMPLEX"
    );
    assert_eq!(
        rules[0].get::<String, _>("database_sharding_column"),
        "user_id,order_id"
    );
    conn.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

/// One proxy serving two logical databases: a statement naming the other one (`SHOW TABLES
/// FROM`, RQL's `FROM`) is answered by that database's engine, from a session of this one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_naming_another_logical_database_is_answered_by_it() {
    let (orders, invoices) = (Shards::sqlite(), Shards::sqlite());
    let config =
        |yaml: String| keyshard_config::from_yaml_str(&yaml, std::path::Path::new(".")).unwrap();
    let first = config(common::yaml(&orders.url(0), &orders.url(1)));
    let second = config(
        common::yaml(&invoices.url(0), &invoices.url(1))
            .replace("databaseName: sharding_db", "databaseName: invoices_db")
            .replace("t_order", "t_invoice"),
    );
    let server = keyshard_proxy::Server::bind_databases(vec![first, second])
        .await
        .unwrap();
    let address = server.mysql_address().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    let mut conn = MySqlConnection::connect(&format!("mysql://root:root@{address}/sharding_db"))
        .await
        .unwrap();
    let tables =
        |rows: &[MySqlRow]| -> Vec<String> { rows.iter().map(|r| r.get::<String, _>(0)).collect() };
    for (database, table) in [("invoices_db", "t_invoice"), ("sharding_db", "t_order")] {
        let rules = sqlx::raw_sql(&format!("SHOW SHARDING TABLE RULES FROM {database}"))
            .fetch_all(&mut conn)
            .await
            .unwrap();
        assert_eq!(tables(&rules), [table], "the rules of {database}");
    }
    let mut invoices_conn =
        MySqlConnection::connect(&format!("mysql://root:root@{address}/invoices_db"))
            .await
            .unwrap();
    sqlx::raw_sql("CREATE TABLE t_invoice (order_id BIGINT PRIMARY KEY, user_id INT, status TEXT)")
        .execute(&mut invoices_conn)
        .await
        .unwrap();
    invoices_conn.close().await.unwrap();
    let listed = sqlx::raw_sql("SHOW TABLES FROM invoices_db")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(tables(&listed), ["t_invoice"]);
    // The session stays in its own database.
    let own = sqlx::raw_sql("SHOW SHARDING TABLE RULES")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(tables(&own), ["t_order"]);
    conn.close().await.unwrap();
    let _ = stop.send(());
    task.await.unwrap();
    orders.cleanup().await;
    invoices.cleanup().await;
}
