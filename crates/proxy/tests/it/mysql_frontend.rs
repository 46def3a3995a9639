//! The MySQL frontend end to end: the proxy in-process, driven over TCP by sqlx's MySQL client
//! (text protocol for `raw_sql`, prepared statements for `query`), on SQLite shards in
//! `cargo test` and on MariaDB shards with `--include-ignored`.

use crate::common;

use std::future::Future;

use crate::common::mysql_code as number;
use crate::common::{Proxy, Shards};
use sqlx::mysql::MySqlConnection;
use sqlx::{Column, Connection, Row};

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

/// Runs `scenario` against a proxy over `shards` with `t_order` created through the proxy.
async fn with_proxy<F, Fut>(shards: Shards, scenario: F)
where
    F: FnOnce(Proxy, MySqlConnection, Shards) -> Fut,
    Fut: Future<Output = (Proxy, Shards)>,
{
    let proxy = Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let mut conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    sqlx::raw_sql(CREATE).execute(&mut conn).await.unwrap();
    let (proxy, shards) = scenario(proxy, conn, shards).await;
    proxy.stop().await;
    shards.cleanup().await;
}

/// Where the default rule puts a row: `ds_{user_id % 2}.t_order_{key % 2}`.
async fn assert_stored(shards: &Shards, user_id: i64, key: i64) {
    let ids = shards.ids((user_id % 2) as usize, (key % 2) as usize).await;
    assert!(
        ids.contains(&key),
        "key {key} of user {user_id} not in ds_{}.t_order_{}: {ids:?}",
        user_id % 2,
        key % 2
    );
}

async fn last_insert_id(conn: &mut MySqlConnection) -> i64 {
    let row = sqlx::raw_sql("SELECT LAST_INSERT_ID()")
        .fetch_one(&mut *conn)
        .await
        .unwrap();
    row.try_get::<u64, _>(0).unwrap() as i64
}

async fn keys_reach_the_client_and_the_shards(
    proxy: Proxy,
    mut conn: MySqlConnection,
    shards: Shards,
) -> (Proxy, Shards) {
    // One row, text protocol.
    let done = sqlx::raw_sql("INSERT INTO t_order (user_id, status) VALUES (1, 'one')")
        .execute(&mut conn)
        .await
        .unwrap();
    assert_eq!(done.rows_affected(), 1);
    let key = done.last_insert_id() as i64;
    assert!(key > 0);
    assert_eq!(last_insert_id(&mut conn).await, key);
    assert_stored(&shards, 1, key).await;

    // Three rows: last_insert_id is the first key and the others follow it.
    let done =
        sqlx::raw_sql("INSERT INTO t_order (user_id, status) VALUES (2, 'a'), (3, 'b'), (4, 'c')")
            .execute(&mut conn)
            .await
            .unwrap();
    assert_eq!(done.rows_affected(), 3);
    let first = done.last_insert_id() as i64;
    for (i, user) in [2, 3, 4].into_iter().enumerate() {
        assert_stored(&shards, user, first + i as i64).await;
    }
    assert_eq!(last_insert_id(&mut conn).await, first);

    // Bulk loads: rows alike fold into one shape, learned from the first statement's first
    // row; statements of other row counts bind the same shape, and every key is told.
    for (from, rows) in [(100_i64, 40_i64), (140, 7), (147, 2)] {
        let values: Vec<String> = (from..from + rows)
            .map(|user| format!("({user}, 'bulk {user}')"))
            .collect();
        let sql = format!(
            "INSERT INTO t_order (user_id, status) VALUES {}",
            values.join(", ")
        );
        let done = sqlx::raw_sql(&sql).execute(&mut conn).await.unwrap();
        assert_eq!(done.rows_affected(), rows as u64);
        let first = done.last_insert_id() as i64;
        for (i, user) in (from..from + rows).enumerate() {
            assert_stored(&shards, user, first + i as i64).await;
        }
    }

    // Prepared statements: parsed once, fresh keys at each execution.
    let mut keys = Vec::new();
    for user in [5_i64, 6] {
        let done = sqlx::query("INSERT INTO t_order (user_id, status) VALUES (?, ?)")
            .bind(user)
            .bind("prepared")
            .execute(&mut conn)
            .await
            .unwrap();
        let key = done.last_insert_id() as i64;
        assert_stored(&shards, user, key).await;
        keys.push(key);
    }
    assert!(keys[1] > keys[0]);
    let done = sqlx::query("INSERT INTO t_order (user_id, status) VALUES (?, ?), (?, ?)")
        .bind(7_i64)
        .bind("x")
        .bind(8_i64)
        .bind("y")
        .execute(&mut conn)
        .await
        .unwrap();
    let first = done.last_insert_id() as i64;
    assert_stored(&shards, 7, first).await;
    assert_stored(&shards, 8, first + 1).await;
    // LAST_INSERT_ID() through a prepared statement too.
    let row = sqlx::query("SELECT LAST_INSERT_ID()")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(row.try_get::<u64, _>(0).unwrap() as i64, first);

    // RETURNING gives the rows back in the client's order, keys included.
    let rows = sqlx::raw_sql(
        "INSERT INTO t_order (user_id, status) VALUES (9, 'r1'), (10, 'r2'), (11, 'r3') RETURNING order_id, status",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let returned: Vec<(i64, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        returned.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>(),
        ["r1", "r2", "r3"]
    );
    for ((key, _), user) in returned.iter().zip([9, 10, 11]) {
        assert_stored(&shards, user, *key).await;
    }
    conn.close().await.unwrap();
    (proxy, shards)
}

async fn errors_leave_the_connection_usable(
    proxy: Proxy,
    mut conn: MySqlConnection,
    shards: Shards,
) -> (Proxy, Shards) {
    for (sql, expected) in [
        ("INSERT INTO t_order (user_id VALUES (1)", 1064),
        ("SELECT @x := 1", 1235),
        ("INSERT INTO t_order (status) VALUES ('no user')", 1105),
        ("USE nowhere", 1049),
        (
            "INSERT INTO t_order (order_id, user_id) VALUES (1, 1), (1, 1)",
            1062,
        ),
    ] {
        let error = sqlx::raw_sql(sql).execute(&mut conn).await.expect_err(sql);
        assert_eq!(number(&error), Some(expected), "{sql}: {error}");
        let row = sqlx::raw_sql("SELECT 1")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(row.get::<i64, _>(0), 1, "after {sql}");
    }
    let error = sqlx::query("INSERT INTO t_order (user_id VALUES (?)")
        .bind(1)
        .execute(&mut conn)
        .await
        .unwrap_err();
    assert_eq!(number(&error), Some(1064), "{error}");
    // A statement the parser cannot read is refused at PREPARE when it takes parameters,
    // rather than accepted with none (the client's bind then failing with 1210).
    let error = sqlx::query("SELECT INTERVAL(user_id, 1, 5) FROM t_order WHERE order_id = ?")
        .bind(1)
        .fetch_all(&mut conn)
        .await
        .unwrap_err();
    assert_eq!(number(&error), Some(1064), "{error}");
    conn.ping().await.unwrap();
    conn.close().await.unwrap();
    (proxy, shards)
}

async fn refused_connections(
    proxy: Proxy,
    conn: MySqlConnection,
    shards: Shards,
) -> (Proxy, Shards) {
    conn.close().await.unwrap();
    let error = MySqlConnection::connect(&proxy.url("root", "wrong"))
        .await
        .unwrap_err();
    assert_eq!(number(&error), Some(1045), "{error}");
    let error = MySqlConnection::connect(&proxy.url("nobody", "root"))
        .await
        .unwrap_err();
    assert_eq!(number(&error), Some(1045), "{error}");
    let url = proxy
        .url("root", "root")
        .replace("/sharding_db", "/other_db");
    let error = async { MySqlConnection::connect(&url).await?.ping().await }
        .await
        .unwrap_err();
    assert!(error.to_string().contains("Unknown database"), "{error}");
    (proxy, shards)
}

async fn preview_shows_the_actual_sql(
    proxy: Proxy,
    mut conn: MySqlConnection,
    shards: Shards,
) -> (Proxy, Shards) {
    let rows =
        sqlx::raw_sql("PREVIEW INSERT INTO t_order (user_id, status) VALUES (1, 'x'), (2, 'y')")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    let units: Vec<(String, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(units.len(), 2, "{units:?}");
    assert_eq!((units[0].0.as_str(), units[1].0.as_str()), ("ds_0", "ds_1"));
    assert!(
        units[1].1.starts_with("INSERT INTO t_order_") && units[1].1.contains("(1, 'x', "),
        "{units:?}"
    );
    // Nothing was executed.
    for (ds, table) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        assert!(shards.ids(ds, table).await.is_empty());
    }
    // EXPLAIN: each node's own plan of the statement it would run, labelled.
    let rows = sqlx::raw_sql("EXPLAIN SELECT status FROM t_order WHERE user_id = 1")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let names: Vec<&str> = rows[0].columns().iter().map(|c| c.name()).collect();
    assert_eq!(names[..2], ["data_source", "actual_sql"]);
    let mut nodes: Vec<(String, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    nodes.dedup();
    assert_eq!(
        nodes,
        [0, 1].map(|t| (
            "ds_1".to_owned(),
            format!("EXPLAIN SELECT status FROM t_order_{t} WHERE user_id = 1")
        ))
    );
    conn.close().await.unwrap();
    (proxy, shards)
}

/// Text INSERTs of one shape after the first two bind the shape's plan instead of being parsed
/// (`keyshard_router::Shape`); they must behave exactly as parsed ones.
async fn repeated_inserts_bind_their_shape(
    proxy: Proxy,
    mut conn: MySqlConnection,
    shards: Shards,
) -> (Proxy, Shards) {
    let mut previous = 0;
    for user in 1..=12_i64 {
        let sql = format!("INSERT INTO t_order (user_id, status) VALUES ({user}, 's {user}')");
        let key = sqlx::raw_sql(&sql)
            .execute(&mut conn)
            .await
            .unwrap()
            .last_insert_id() as i64;
        assert!(key > previous, "{sql}: {key}");
        assert_stored(&shards, user, key).await;
        previous = key;
    }

    // A given key is kept; MySQL's 0 is generated, whichever comes first.
    for (given, user) in [(0_i64, 13_i64), (1001, 14), (0, 15), (1003, 16)] {
        let sql = format!(
            "INSERT INTO t_order (order_id, user_id, status) VALUES ({given}, {user}, 'given')"
        );
        let id = sqlx::raw_sql(&sql)
            .execute(&mut conn)
            .await
            .unwrap()
            .last_insert_id() as i64;
        let key = if given == 0 { id } else { given };
        assert!(key > 0, "{sql}");
        assert_stored(&shards, user, key).await;
    }

    // A cast is an expression, not a value to route by, however often it comes.
    for user in [3, 3, 4] {
        let sql =
            format!("INSERT INTO t_order (user_id, status) VALUES (CAST({user} AS SIGNED), 'c')");
        let error = sqlx::raw_sql(&sql).execute(&mut conn).await.unwrap_err();
        assert!(error.to_string().contains("expression"), "{sql}: {error}");
    }

    // Without a column list the table's columns decide where the key goes; after DDL
    // through the proxy a shape learned before must not be used.
    for user in [21_i64, 22] {
        let sql = format!("INSERT INTO t_order VALUES ({user}, 'no list')");
        let key = sqlx::raw_sql(&sql)
            .execute(&mut conn)
            .await
            .unwrap()
            .last_insert_id() as i64;
        assert_stored(&shards, user, key).await;
    }
    sqlx::raw_sql("ALTER TABLE t_order ADD COLUMN note VARCHAR(8)")
        .execute(&mut conn)
        .await
        .unwrap();
    let stale = sqlx::raw_sql("INSERT INTO t_order VALUES (23, 'no list')")
        .execute(&mut conn)
        .await;
    assert!(stale.is_err(), "{stale:?}");
    let key = sqlx::raw_sql("INSERT INTO t_order VALUES (24, 'no list', 'n')")
        .execute(&mut conn)
        .await
        .unwrap()
        .last_insert_id() as i64;
    assert_stored(&shards, 24, key).await;
    conn.close().await.unwrap();
    (proxy, shards)
}

/// Each field of `sql`'s one row as text.
async fn row_texts(conn: &mut MySqlConnection, sql: &str) -> Vec<Option<String>> {
    let row = sqlx::raw_sql(sql).fetch_one(&mut *conn).await.unwrap();
    (0..row.len()).map(|i| row.try_get(i).unwrap()).collect()
}

fn error_number(error: &sqlx::Error) -> Option<u16> {
    error
        .as_database_error()
        .and_then(|e| e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
        .map(|e| e.number())
}

/// Text INSERTs of one shape, whose literals the proxy sends to MariaDB shards as parameters
/// wherever that reads them alike, store what MariaDB stores for the literals themselves (in
/// a reference table on one shard's database), and fail where those fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_shards_store_literals_as_mariadb_reads_them() {
    let shards = Shards::mariadb().await;
    let proxy = Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let mut conn = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    const COLUMNS: &str = "user_id INT NOT NULL, status VARCHAR(8), amount DECIMAL(10, 2), \
                           ratio DOUBLE, code CHAR(4), note TEXT";
    const NAMES: &str = "user_id, status, amount, ratio, code, note";
    sqlx::raw_sql(&format!(
        "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, {COLUMNS})"
    ))
    .execute(&mut conn)
    .await
    .unwrap();
    let mut reference = MySqlConnection::connect(&shards.url(0)).await.unwrap();
    sqlx::raw_sql(&format!(
        "CREATE TABLE reference (order_id BIGINT PRIMARY KEY, {COLUMNS})"
    ))
    .execute(&mut reference)
    .await
    .unwrap();
    let rows = [
        "7, 'a', 5, 1.5, 'ab', 42",
        "'8', '9', 12, 3, 'xyz ', -5",
        "9, 'b', 1.505, 0.1, 'c', 007",
        "-10, 'c', '3', '2.5', 'd', 'n'",
        "12, 'f', 2, 18446744073709551615, 'h', 18446744073709551615",
        "13, 'g', -4, -0.25, '', '+1'",
        "11, 'too long!', 1, 1, 'e', 'x'",
        "3000000000, 'd', 1, 1, 'f', 'x'",
        "1, 'e', 'x1', 1, 'g', 'x'",
        "14, 'h', ' 3', 1, 'abcde', 'x'",
    ];
    let select = "SELECT CAST(user_id AS CHAR), status, CAST(amount AS CHAR), \
                  CAST(ratio AS CHAR), code, note FROM";
    let mut stored = 0;
    // The first two statements of the shape are parsed (the second learns it); the others
    // bind it.
    for values in rows.iter().chain(&rows) {
        let sql = format!("INSERT INTO t_order ({NAMES}) VALUES ({values})");
        let proxied = sqlx::raw_sql(&sql).execute(&mut conn).await;
        let key = proxied.as_ref().map_or(0, |done| done.last_insert_id());
        let direct = sqlx::raw_sql(&format!(
            "INSERT INTO reference (order_id, {NAMES}) VALUES ({key}, {values})"
        ))
        .execute(&mut reference)
        .await;
        match (&proxied, &direct) {
            (Ok(_), Ok(_)) => stored += 1,
            (Err(a), Err(b)) => assert_eq!(error_number(a), error_number(b), "{values}: {a} / {b}"),
            _ => panic!("{values}: through the proxy {proxied:?}, straight {direct:?}"),
        }
        if proxied.is_ok() {
            let by_proxy = row_texts(
                &mut conn,
                &format!("{select} t_order WHERE order_id = {key}"),
            )
            .await;
            let by_mariadb = row_texts(
                &mut reference,
                &format!("{select} reference WHERE order_id = {key}"),
            )
            .await;
            assert_eq!(by_proxy, by_mariadb, "{values}");
        }
    }
    assert_eq!(stored, 12);
    conn.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

/// An ORM's existence check is a query of the table, never a constant the proxy makes up.
async fn exists_checks_read_the_table(
    proxy: Proxy,
    mut conn: MySqlConnection,
    shards: Shards,
) -> (Proxy, Shards) {
    let exists = "SELECT 1 AS a FROM t_order WHERE order_id = ? AND user_id = 3 LIMIT 1";
    let rows = sqlx::query(exists)
        .bind(42_i64)
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert!(rows.is_empty(), "a missing row exists");
    let text = "SELECT 1 AS a FROM t_order WHERE order_id = 42 AND user_id = 3 LIMIT 1";
    assert!(
        sqlx::raw_sql(text)
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .is_empty()
    );
    sqlx::raw_sql("INSERT INTO t_order (order_id, user_id, status) VALUES (42, 3, 'x')")
        .execute(&mut conn)
        .await
        .unwrap();
    let found = sqlx::query(exists)
        .bind(42_i64)
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].column(0).name(), "a");
    assert_eq!(found[0].try_get::<i64, _>(0).unwrap(), 1);
    conn.close().await.unwrap();
    (proxy, shards)
}

/// In a transaction, a statement whose rows go to two tables of one data source is undone
/// whole when one row fails, as MySQL undoes a failed statement.
async fn a_failed_statement_in_a_transaction_leaves_nothing(
    proxy: Proxy,
    mut conn: MySqlConnection,
    shards: Shards,
) -> (Proxy, Shards) {
    sqlx::raw_sql("INSERT INTO t_order (order_id, user_id, status) VALUES (3, 2, 'there')")
        .execute(&mut conn)
        .await
        .unwrap();
    sqlx::raw_sql("BEGIN").execute(&mut conn).await.unwrap();
    // user 2 → ds_0; order 2 → t_order_0 (runs first), order 3 → t_order_1 (a duplicate).
    let failed = sqlx::raw_sql(
        "INSERT INTO t_order (order_id, user_id, status) VALUES (2, 2, 'a'), (3, 2, 'b')",
    )
    .execute(&mut conn)
    .await;
    assert!(failed.is_err());
    sqlx::raw_sql("INSERT INTO t_order (order_id, user_id, status) VALUES (4, 2, 'c')")
        .execute(&mut conn)
        .await
        .unwrap();
    sqlx::raw_sql("COMMIT").execute(&mut conn).await.unwrap();
    assert_eq!(shards.ids(0, 0).await, [4]);
    assert_eq!(shards.ids(0, 1).await, [3]);
    conn.close().await.unwrap();
    (proxy, shards)
}

/// `LAST_INSERT_ID()` inside a statement is the session's key, not the shard's 0.
async fn last_insert_id_inside_statements_is_the_sessions(
    proxy: Proxy,
    mut conn: MySqlConnection,
    shards: Shards,
) -> (Proxy, Shards) {
    sqlx::raw_sql("INSERT INTO t_order (user_id, status) VALUES (5, 'parent')")
        .execute(&mut conn)
        .await
        .unwrap();
    let key = last_insert_id(&mut conn).await;
    sqlx::raw_sql("CREATE TABLE t_child (id INT PRIMARY KEY, parent_id BIGINT)")
        .execute(&mut conn)
        .await
        .unwrap();
    sqlx::raw_sql("INSERT INTO t_child (id, parent_id) VALUES (1, LAST_INSERT_ID())")
        .execute(&mut conn)
        .await
        .unwrap();
    let first = async |conn: &mut MySqlConnection, sql: &str| -> i64 {
        let row = sqlx::raw_sql(sql).fetch_one(&mut *conn).await.unwrap();
        row.try_get(0).unwrap()
    };
    assert_eq!(first(&mut conn, "SELECT parent_id FROM t_child").await, key);
    let sql = "SELECT order_id FROM t_order WHERE order_id = last_insert_id() AND user_id = 5";
    assert_eq!(first(&mut conn, sql).await, key);
    // Prepared, its value could not follow the session: a clear error, not a wrong row.
    let error = sqlx::query("SELECT order_id FROM t_order WHERE order_id = LAST_INSERT_ID()")
        .fetch_all(&mut conn)
        .await
        .unwrap_err();
    let code = error
        .as_database_error()
        .and_then(|d| d.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
        .map(|d| d.number());
    assert_eq!(code, Some(1235), "{error}");
    conn.close().await.unwrap();
    (proxy, shards)
}

/// node mysql2's execute() binds JavaScript numbers as DOUBLE and many drivers bind strings:
/// a sharding value that is an integer routes as that integer, as MySQL would store it.
async fn integral_doubles_and_integer_strings_route_as_integers(
    proxy: Proxy,
    mut conn: MySqlConnection,
    shards: Shards,
) -> (Proxy, Shards) {
    let insert = "INSERT INTO t_order (user_id, status) VALUES (?, 'bound')";
    sqlx::query(insert)
        .bind(402.0_f64)
        .execute(&mut conn)
        .await
        .unwrap();
    assert_stored(&shards, 402, last_insert_id(&mut conn).await).await;
    sqlx::query(insert)
        .bind("403")
        .execute(&mut conn)
        .await
        .unwrap();
    assert_stored(&shards, 403, last_insert_id(&mut conn).await).await;
    // What MySQL would round or could not read as an integer is refused, not guessed.
    for bad in [
        sqlx::query(insert).bind(402.5_f64),
        sqlx::query(insert).bind("40x"),
    ] {
        assert!(bad.execute(&mut conn).await.is_err());
    }
    conn.close().await.unwrap();
    (proxy, shards)
}

/// Django's save() and Hibernate write every column: setting a sharding column to the value
/// the WHERE clause pins it to updates the row in place; a real move is still refused.
async fn updates_that_keep_the_sharding_value_run(
    proxy: Proxy,
    mut conn: MySqlConnection,
    shards: Shards,
) -> (Proxy, Shards) {
    sqlx::raw_sql("INSERT INTO t_order (user_id, status) VALUES (21, 'new')")
        .execute(&mut conn)
        .await
        .unwrap();
    let key = last_insert_id(&mut conn).await;
    let done = sqlx::query(
        "UPDATE t_order SET user_id = ?, status = ? WHERE order_id = ? AND user_id = ?",
    )
    .bind(21)
    .bind("saved")
    .bind(key)
    .bind(21)
    .execute(&mut conn)
    .await
    .unwrap();
    assert_eq!(done.rows_affected(), 1);
    let status: String = sqlx::query_scalar("SELECT status FROM t_order WHERE order_id = ?")
        .bind(key)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(status, "saved");
    let moved = format!("UPDATE t_order SET user_id = 22 WHERE order_id = {key} AND user_id = 21");
    let error = sqlx::raw_sql(&moved).execute(&mut conn).await.unwrap_err();
    assert_eq!(error_number(&error), Some(1235), "{error}");
    assert_stored(&shards, 21, key).await;
    conn.close().await.unwrap();
    (proxy, shards)
}

/// INSERT … SELECT whose SELECT reads no sharded table: its rows get keys and go to their
/// shards as a VALUES list would; copying rows out of a sharded table is still refused.
async fn insert_select_of_constants_gets_keys(
    proxy: Proxy,
    mut conn: MySqlConnection,
    shards: Shards,
) -> (Proxy, Shards) {
    let done = sqlx::raw_sql(
        "INSERT INTO t_order (user_id, status) SELECT 1, 'a' UNION ALL SELECT 2, 'b' \
         UNION ALL SELECT 3, 'c'",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    assert_eq!(done.rows_affected(), 3);
    let first = last_insert_id(&mut conn).await;
    assert!(first > 0);
    for (i, user_id) in (1..=3).enumerate() {
        assert_stored(&shards, user_id, first + i as i64).await;
    }
    // Nothing selected, nothing inserted.
    let done =
        sqlx::raw_sql("INSERT INTO t_order (user_id, status) SELECT * FROM (SELECT 1 AS u, 'a' AS s) AS x WHERE u = 0")
            .execute(&mut conn)
            .await
            .unwrap();
    assert_eq!(done.rows_affected(), 0);
    let error =
        sqlx::raw_sql("INSERT INTO t_order (user_id, status) SELECT user_id, status FROM t_order")
            .execute(&mut conn)
            .await
            .unwrap_err();
    assert!(
        error.to_string().contains("absent generate key column"),
        "{error}"
    );
    conn.close().await.unwrap();
    (proxy, shards)
}

/// `LOAD DATA LOCAL INFILE` from the mariadb command-line client: the file's rows get keys on
/// their shards; a client that does not send files gets MySQL's error.
async fn load_data_local_infile_gets_keys(
    proxy: Proxy,
    mut conn: MySqlConnection,
    shards: Shards,
) -> (Proxy, Shards) {
    let file = std::env::temp_dir().join(common::unique("keyshard_load"));
    std::fs::write(&file, "1\tloaded\n2\tloaded\n3\t\\N\n").unwrap();
    let load = format!(
        "LOAD DATA LOCAL INFILE '{}' INTO TABLE t_order (user_id, status)",
        file.display()
    );
    let port = proxy.address.port().to_string();
    let mariadb = move |local: &str| {
        std::process::Command::new("mariadb")
            .args(["--protocol=tcp", "-h", "127.0.0.1", "-P", &port])
            .args(["-uroot", "-proot", local, "sharding_db", "-e", &load])
            .output()
            .expect("the mariadb client")
    };
    let (loaded, refused) = tokio::task::spawn_blocking(move || {
        (mariadb("--local-infile=1"), mariadb("--local-infile=0"))
    })
    .await
    .unwrap();
    std::fs::remove_file(&file).ok();
    assert!(
        loaded.status.success(),
        "{}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && stderr.contains("3948"),
        "{stderr}"
    );
    let rows = sqlx::raw_sql("SELECT order_id, user_id, status FROM t_order ORDER BY user_id")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let rows: Vec<(i64, i64, Option<String>)> = rows
        .iter()
        .map(|r| (r.get(0), i64::from(r.get::<i32, _>(1)), r.get(2)))
        .collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    for (key, user_id, _) in &rows {
        assert_stored(&shards, *user_id, *key).await;
    }
    assert_eq!(rows[0].2.as_deref(), Some("loaded"));
    assert_eq!(rows[2].2, None);
    // Prepared, as MySQL has it: refused, and the next statement is not taken for a load.
    let error = sqlx::query("LOAD DATA LOCAL INFILE '/tmp/x' INTO TABLE t_order (user_id)")
        .execute(&mut conn)
        .await
        .unwrap_err();
    assert_eq!(error_number(&error), Some(1235), "{error}");
    let count = sqlx::raw_sql("SELECT COUNT(*) FROM t_order")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(count.get::<i64, _>(0), 3);
    conn.close().await.unwrap();
    (proxy, shards)
}

/// `SHOW [FULL] PROCESSLIST` lists the proxy's sessions, not the shards' pooled connections;
/// `KILL` takes the proxy's session ids: `KILL QUERY` of an idle session leaves it be, `KILL`
/// ends it, and an id no session has is refused as MariaDB refuses it (1094).
async fn processlist_shows_the_proxys_sessions(
    proxy: Proxy,
    mut conn: MySqlConnection,
    shards: Shards,
) -> (Proxy, Shards) {
    let mut other = MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    let id = |row: &sqlx::mysql::MySqlRow| row.get::<i64, _>(0);
    let mine = sqlx::raw_sql("SELECT CONNECTION_ID()")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    let theirs = sqlx::raw_sql("SELECT CONNECTION_ID()")
        .fetch_one(&mut other)
        .await
        .unwrap();
    let (mine, theirs) = (
        i64::try_from(mine.get::<u64, _>(0)).unwrap(),
        i64::try_from(theirs.get::<u64, _>(0)).unwrap(),
    );
    let rows = sqlx::raw_sql("SHOW FULL PROCESSLIST")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let names: Vec<&str> = rows[0].columns().iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        [
            "Id", "User", "Host", "db", "Command", "Time", "State", "Info", "Progress"
        ]
    );
    let listed: Vec<(i64, String, Option<String>)> =
        rows.iter().map(|r| (id(r), r.get(4), r.get(7))).collect();
    assert_eq!(
        listed,
        [
            (
                mine,
                "Query".to_owned(),
                Some("SHOW FULL PROCESSLIST".to_owned())
            ),
            (theirs, "Sleep".to_owned(), None),
        ]
    );
    assert_eq!(rows[0].get::<String, _>(1), "root");
    // COM_STATISTICS (mariadb-admin status, the client's \\s): the proxy's own figures, its
    // sessions counting mariadb-admin's.
    let port = proxy.address.port().to_string();
    let status = tokio::task::spawn_blocking(move || {
        std::process::Command::new("mariadb-admin")
            .args(["-h", "127.0.0.1", "-P", &port, "-uroot", "-proot", "status"])
            .output()
            .expect("mariadb-admin")
    })
    .await
    .unwrap();
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(
        status.starts_with("Uptime: ") && status.contains("Threads: 3  Questions: "),
        "{status}"
    );
    // SHOW GLOBAL STATUS: the proxy's counters, filtered as MySQL's LIKE filters.
    let status = sqlx::raw_sql("SHOW GLOBAL STATUS")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let names: Vec<String> = status.iter().map(|r| r.get(0)).collect();
    assert!(names.iter().any(|n| n == "Uptime"), "{names:?}");
    let threads = sqlx::raw_sql("SHOW GLOBAL STATUS LIKE 'threads\\_%'")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let threads: Vec<(String, String)> = threads.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(threads, [("Threads_connected".to_owned(), "2".to_owned())]);
    let selects = sqlx::raw_sql("show global status like 'Com_select';")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert!(selects.get::<String, _>(1).parse::<u64>().unwrap() >= 2);
    // SHOW [SESSION] STATUS: this session's statements, the proxy's sessions.
    let session_status = async |conn: &mut MySqlConnection, sql: &str| -> Vec<(String, String)> {
        let rows = sqlx::raw_sql(sql).fetch_all(conn).await.unwrap();
        rows.iter().map(|r| (r.get(0), r.get(1))).collect()
    };
    let before = session_status(&mut other, "SHOW SESSION STATUS LIKE 'Com_select'").await;
    sqlx::raw_sql("SELECT 1; SELECT 2")
        .execute(&mut other)
        .await
        .unwrap();
    let after = session_status(&mut other, "SHOW STATUS LIKE 'Com_select'").await;
    let count = |rows: &[(String, String)]| rows[0].1.parse::<u64>().unwrap();
    assert_eq!(count(&after), count(&before) + 2, "{before:?} {after:?}");
    assert_eq!(
        session_status(&mut other, "SHOW LOCAL STATUS LIKE 'Threads_connected'").await,
        [("Threads_connected".to_owned(), "2".to_owned())]
    );
    // SHOW GRANTS answers from `authority` (everything, for a configured user).
    let grants = sqlx::raw_sql("SHOW GRANTS")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(grants.columns()[0].name(), "Grants for root@%");
    let grant: String = grants.get(0);
    assert_eq!(
        grant,
        "GRANT ALL PRIVILEGES ON *.* TO `root`@`%` WITH GRANT OPTION"
    );
    let error = sqlx::raw_sql("SHOW GRANTS FOR nobody")
        .execute(&mut conn)
        .await
        .unwrap_err();
    assert_eq!(error_number(&error), Some(1141), "{error}");
    let error = sqlx::raw_sql("KILL 4000000000")
        .execute(&mut conn)
        .await
        .unwrap_err();
    assert_eq!(error_number(&error), Some(1094), "{error}");
    for kill in [
        format!("KILL QUERY {theirs}"),
        format!("KILL SOFT {theirs}"),
    ] {
        sqlx::raw_sql(&kill).execute(&mut conn).await.unwrap();
    }
    // Killed while idle: its connection is closed, as MariaDB closes it.
    let gone = sqlx::raw_sql("SELECT 1").execute(&mut other).await;
    assert!(gone.is_err(), "{gone:?}");
    // A session leaves the list when the proxy has seen its client go, a moment later.
    let mut listed = Vec::new();
    for _ in 0..100 {
        let rows = sqlx::raw_sql("SHOW PROCESSLIST")
            .fetch_all(&mut conn)
            .await
            .unwrap();
        listed = rows.iter().map(id).collect::<Vec<_>>();
        if listed == [mine] {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(listed, [mine]);
    conn.close().await.unwrap();
    (proxy, shards)
}

macro_rules! on_both {
    ($($name:ident),+) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::with_proxy(super::Shards::sqlite(), super::$name).await;
                }
            )+
        }
        mod mariadb {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
                async fn $name() {
                    super::with_proxy(super::Shards::mariadb().await, super::$name).await;
                }
            )+
        }
    };
}

on_both!(
    keys_reach_the_client_and_the_shards,
    errors_leave_the_connection_usable,
    refused_connections,
    preview_shows_the_actual_sql,
    repeated_inserts_bind_their_shape,
    exists_checks_read_the_table,
    a_failed_statement_in_a_transaction_leaves_nothing,
    last_insert_id_inside_statements_is_the_sessions,
    integral_doubles_and_integer_strings_route_as_integers,
    updates_that_keep_the_sharding_value_run,
    insert_select_of_constants_gets_keys,
    load_data_local_infile_gets_keys,
    processlist_shows_the_proxys_sessions
);

/// `KILL QUERY` of a session running a statement on both shards stops it there: the client
/// gets the shards' own 1317, no shard runs it any more, and the session goes on; `KILL`
/// does the same and ends the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn kill_stops_a_statement_on_every_shard() {
    use std::time::{Duration, Instant};
    let shards = Shards::mariadb().await;
    let proxy = Proxy::start(&common::yaml(&shards.url(0), &shards.url(1))).await;
    let url = proxy.url("root", "root");
    let mut killer = MySqlConnection::connect(&url).await.unwrap();
    sqlx::raw_sql(CREATE).execute(&mut killer).await.unwrap();
    // A row in each actual table of each data source.
    sqlx::raw_sql(
        "INSERT INTO t_order VALUES (10, 10, 'a'), (11, 10, 'b'), (20, 11, 'c'), (21, 11, 'd')",
    )
    .execute(&mut killer)
    .await
    .unwrap();
    let sleeping = "SELECT SLEEP(30) FROM t_order";
    for end in [false, true] {
        let mut victim = MySqlConnection::connect(&url).await.unwrap();
        let id: u64 = sqlx::raw_sql("SELECT CONNECTION_ID()")
            .fetch_one(&mut victim)
            .await
            .unwrap()
            .get(0);
        let started = Instant::now();
        let running = sqlx::raw_sql(sleeping).fetch_all(&mut victim);
        let kill = async {
            // Once it runs on both data sources.
            while shard_statements(&shards, sleeping).await < 2 {
                assert!(started.elapsed() < Duration::from_secs(10), "never ran");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // information_schema.PROCESSLIST lists the proxy's sessions: the victim, running it.
            let listed: Vec<(u64, String)> = sqlx::raw_sql(
                "SELECT ID, COMMAND FROM information_schema.PROCESSLIST \
                 WHERE INFO LIKE 'SELECT SLEEP%'",
            )
            .fetch_all(&mut killer)
            .await
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
            assert_eq!(listed, [(id, "Query".to_owned())]);
            let kill = match end {
                false => format!("KILL QUERY {id}"),
                true => format!("KILL CONNECTION {id}"),
            };
            sqlx::raw_sql(&kill).execute(&mut killer).await.unwrap();
        };
        let (answer, ()) = tokio::join!(running, kill);
        let error = answer.unwrap_err();
        assert_eq!(error_number(&error), Some(1317), "{error}");
        assert!(started.elapsed() < Duration::from_secs(20));
        assert_eq!(shard_statements(&shards, sleeping).await, 0);
        let after = sqlx::raw_sql("SELECT COUNT(*) FROM t_order")
            .fetch_one(&mut victim)
            .await;
        match end {
            false => assert_eq!(after.unwrap().get::<i64, _>(0), 4),
            true => assert!(after.is_err(), "{after:?}"),
        }
    }
    // Other sessions' statements on the connections a cancel went to are not stopped.
    let counted = sqlx::raw_sql("SELECT COUNT(*) FROM t_order")
        .fetch_one(&mut killer)
        .await
        .unwrap();
    assert_eq!(counted.get::<i64, _>(0), 4);
    killer.close().await.unwrap();
    proxy.stop().await;
    shards.cleanup().await;
}

/// How many of the shards' server connections run `sql` now.
async fn shard_statements(shards: &Shards, sql: &str) -> i64 {
    let mut direct = MySqlConnection::connect(&shards.url(0)).await.unwrap();
    let row = sqlx::query(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE CONCAT(?, '%') \
         AND COMMAND = 'Query'",
    )
    .bind(sql.replace("t_order", ""))
    .fetch_one(&mut direct)
    .await
    .unwrap();
    direct.close().await.unwrap();
    row.get(0)
}

/// `FOUND_ROWS()` answers for the session's own last SELECT, over every shard, as one MariaDB
/// holding all the rows does: the rows it returned, or with `SQL_CALC_FOUND_ROWS` the rows it
/// would have returned without its LIMIT. A shard would answer for whichever client used its
/// pooled connection last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn found_rows_answers_for_the_sessions_last_select() {
    let mut both = common::compare::MariaDbAlike::start(CREATE).await;
    both.compare(&[
        "INSERT INTO t_order VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'a'), (4, 4, 'c'), \
         (5, 5, 'a'), (6, 6, NULL)",
        "SELECT SQL_CALC_FOUND_ROWS order_id FROM t_order ORDER BY order_id LIMIT 2",
        "SELECT FOUND_ROWS()",
        "SELECT order_id FROM t_order WHERE user_id > 2 ORDER BY order_id",
        "SELECT FOUND_ROWS() AS found",
        "SELECT SQL_CALC_FOUND_ROWS status, COUNT(*) FROM t_order GROUP BY status \
         ORDER BY status LIMIT 1, 1",
        "SELECT FOUND_ROWS(), ROW_COUNT()",
        "SELECT SQL_CALC_FOUND_ROWS DISTINCT status FROM t_order ORDER BY status LIMIT 1",
        "SELECT FOUND_ROWS()",
        "SELECT SQL_CALC_FOUND_ROWS * FROM t_order WHERE order_id = 1 LIMIT 0",
        "SELECT FOUND_ROWS()",
        "SELECT SQL_CALC_FOUND_ROWS order_id FROM t_order WHERE user_id < 3 \
         UNION SELECT order_id FROM t_order WHERE user_id > 4 ORDER BY order_id LIMIT 1",
        "SELECT FOUND_ROWS()",
    ])
    .await;
    // MariaDB's ANALYZE of a SELECT (its EXPLAIN ANALYZE): each node's, run there.
    let rows = sqlx::raw_sql("ANALYZE SELECT status FROM t_order WHERE user_id = 1")
        .fetch_all(&mut both.through)
        .await
        .unwrap();
    let names: Vec<&str> = rows[0].columns().iter().map(|c| c.name()).collect();
    assert_eq!(names[..2], ["data_source", "actual_sql"]);
    assert!(names.contains(&"r_rows"), "{names:?}");
    let sent: Vec<String> = rows.iter().map(|r| r.get(1)).collect();
    assert_eq!(
        sent,
        [0, 1].map(|t| format!("ANALYZE SELECT status FROM t_order_{t} WHERE user_id = 1"))
    );
    both.finish().await;
}

/// Text merged from several shards orders and groups as its column's collation does, compared
/// with one plain MariaDB: utf8mb4_general_ci weighs an ASCII character by its upper case ('_'
/// after the letters) and ignores case and trailing spaces, utf8mb4_bin compares bytes. Text
/// Keyshard does not compare as the collation does (accents, which general_ci folds) is
/// gathered and ordered or grouped by the database itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn merged_text_follows_its_columns_collation() {
    let mut both = common::compare::MariaDbAlike::start(
        "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
         status VARCHAR(32), code VARCHAR(32) COLLATE utf8mb4_bin)",
    )
    .await;
    both.compare(&[
        "INSERT INTO t_order VALUES (1, 1, '_x', 'b'), (2, 2, 'abc', 'B'), (3, 3, 'ABD', 'a'), \
         (4, 4, 'abc ', '_'), (5, 1, 'Zed', 'Z'), (6, 2, 'a-b', 'a b')",
        "SELECT status FROM t_order ORDER BY status, order_id",
        "SELECT status FROM t_order ORDER BY status DESC, order_id",
        "SELECT code FROM t_order ORDER BY code",
        "SELECT MIN(status) FROM t_order",
        "SELECT MAX(status) FROM t_order",
        "SELECT MIN(code) FROM t_order",
        "SELECT COUNT(*) FROM t_order GROUP BY status ORDER BY status",
        "SELECT COUNT(*) FROM t_order GROUP BY code ORDER BY code",
    ])
    .await;
    // 'e' and 'é' are one under general_ci: their rows are gathered and the database orders
    // and groups them. Which of the two names a group is the database's choice, so only counts
    // and ties broken by key are compared.
    both.compare(&[
        "INSERT INTO t_order VALUES (7, 3, 'e', 'e'), (8, 4, 'é', 'é'), (9, 1, 'Ë', 'Ë')",
        "SELECT COUNT(*), MIN(order_id) FROM t_order GROUP BY status ORDER BY MIN(order_id)",
        "SELECT order_id FROM t_order ORDER BY status, order_id",
        "SELECT order_id FROM t_order ORDER BY status DESC, order_id LIMIT 4",
        "SELECT COUNT(DISTINCT status) FROM t_order",
    ])
    .await;
    // utf8mb4_bin compares them as bytes, as Keyshard does.
    both.compare(&["SELECT HEX(code) FROM t_order WHERE order_id > 6 ORDER BY code DESC"])
        .await;
    both.finish().await;
}
