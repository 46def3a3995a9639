//! Shards for the backend tests and the scenarios every database must pass.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use keyshard_backend::{Backend, BackendError, Outcome};
use keyshard_config::Config;
use keyshard_keygen::Key;
use keyshard_router::{Metadata, Plan, Router};
use keyshard_types::{Dialect, Value};
use sqlx::Connection;

#[path = "../../../../../tests/it/common/t_order.rs"]
mod t_order;

/// A rule over two data sources `ds_0`, `ds_1`, two tables each: `user_id % 2` picks the data
/// source, `order_id % 2` the table (the embedded default's). Each data source gives up
/// connecting after 3 s, so a test of an unreachable shard does not wait out the default 30.
pub fn yaml(url_0: &str, url_1: &str) -> String {
    let mut yaml = String::new();
    let quoted = |url: &str| format!("\"{url}\"");
    for line in t_order::yaml(&quoted(url_0), &quoted(url_1)).lines() {
        yaml.push_str(line);
        yaml.push('\n');
        if line.starts_with("    url: ") {
            yaml.push_str("    connectionTimeoutMilliseconds: 3000\n");
        }
    }
    yaml
}

/// The configuration, with its worker id granted locally: these tests run the backend without
/// the proxy's coordination layer, and no two of them share shards.
pub fn config(yaml: &str) -> Config {
    let config =
        keyshard_config::from_yaml_str(yaml, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
    config
        .key_generators
        .lease()
        .grant(keyshard_keygen::Grant::unchecked(0));
    config
}

/// A unique name for this test's databases or files.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A fresh directory for SQLite shards, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> Self {
        let dir = std::env::temp_dir().join(unique("keyshard_backend"));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    pub fn sqlite_url(&self, file: &str) -> String {
        format!("sqlite://{}", self.0.join(file).display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Databases `<name>_0` and `<name>_1` on a MariaDB or PostgreSQL server, dropped on `drop_all`.
pub struct ServerDatabases {
    pub admin_url: String,
    pub names: [String; 2],
}

impl ServerDatabases {
    pub async fn create(admin_url: &str, prefix: &str) -> Self {
        let base = unique(prefix);
        let names = [format!("{base}_0"), format!("{base}_1")];
        for name in &names {
            admin(admin_url, &format!("CREATE DATABASE {name}")).await;
        }
        Self {
            admin_url: admin_url.to_owned(),
            names,
        }
    }

    /// The URL of database `i` on the same server.
    pub fn url(&self, i: usize) -> String {
        let (base, _) = self
            .admin_url
            .rsplit_once('/')
            .expect("URL with a database path");
        format!("{base}/{}", self.names[i])
    }

    pub async fn drop_all(self) {
        for name in &self.names {
            let force = if self.admin_url.starts_with("postgres") {
                " WITH (FORCE)"
            } else {
                ""
            };
            admin(
                &self.admin_url,
                &format!("DROP DATABASE IF EXISTS {name}{force}"),
            )
            .await;
        }
    }
}

async fn admin(url: &str, sql: &str) {
    if url.starts_with("mysql") || url.starts_with("mariadb") {
        let mut conn = sqlx::MySqlConnection::connect(url)
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        sqlx::raw_sql(sql)
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    } else {
        let mut conn = sqlx::PgConnection::connect(url)
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        sqlx::raw_sql(sql)
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

pub const NODES: [(&str, &str); 4] = [
    ("ds_0", "t_order_0"),
    ("ds_0", "t_order_1"),
    ("ds_1", "t_order_0"),
    ("ds_1", "t_order_1"),
];

/// Creates the four actual tables.
pub async fn create_tables(backend: &Backend) {
    for (ds, table) in NODES {
        backend
            .execute_on(ds, &format!("CREATE TABLE {table} (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32) UNIQUE)"))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

fn placeholder(dialect: Dialect, n: usize) -> String {
    match dialect {
        Dialect::MySql => "?".to_owned(),
        Dialect::Postgres => format!("${n}"),
    }
}

fn plan(router: &Router, sql: &str, params: &[Value], metadata: &dyn Metadata) -> Plan {
    router
        .plan(sql, params, metadata)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap_or_else(|o| panic!("{o:?}"))
}

/// All order ids on one node, sorted.
pub async fn ids(backend: &Backend, ds: &str, table: &str) -> Vec<i64> {
    let outcome = backend
        .execute_on(
            ds,
            &format!("SELECT order_id FROM {table} ORDER BY order_id"),
        )
        .await
        .unwrap();
    outcome
        .rows
        .iter()
        .map(|r| match r[0] {
            Value::Int(v) => v,
            ref other => panic!("{other:?}"),
        })
        .collect()
}

/// Inserts rows through the router and backend; each generated key is stored exactly where
/// the plan sent it, and nowhere else.
pub async fn scenario_rows_land_in_their_shards(backend: &Backend, router: &Router) {
    create_tables(backend).await;
    let d = router.dialect();
    let sql = format!(
        "INSERT INTO t_order (user_id, status) VALUES (1, 'a'), (1, 'b'), (2, 'c'), (2, 'd'), ({}, {})",
        placeholder(d, 1),
        placeholder(d, 2)
    );
    let plan = plan(
        router,
        &sql,
        &[Value::Int(3), Value::Text("e".into())],
        backend.metadata(),
    );
    let outcome = backend
        .execute(&plan)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome.affected_rows, 5);
    assert_eq!(outcome.generated_keys.len(), 5);
    assert!(plan.units.len() >= 2, "{plan:?}");
    for (ds, table) in NODES {
        let mut expected: Vec<i64> = plan
            .generated_keys
            .iter()
            .enumerate()
            .filter(|(row, _)| {
                let unit = &plan.units[plan.row_units[*row]];
                unit.data_source == ds && unit.table == table
            })
            .map(|(_, k)| k.as_i64().unwrap())
            .collect();
        expected.sort_unstable();
        assert_eq!(ids(backend, ds, table).await, expected, "{ds}.{table}");
    }
}

/// A unique-key violation on one shard after another shard inserted its rows: no shard keeps
/// any row of the statement, and the client sees the database's error naming the shard.
pub async fn scenario_failing_shard_rolls_back_all(
    backend: &Backend,
    router: &Router,
) -> BackendError {
    create_tables(backend).await;
    // Occupy status 'taken' in both tables of ds_1.
    for table in ["t_order_0", "t_order_1"] {
        let id = if table == "t_order_0" { 2 } else { 3 };
        backend
            .execute_on(
                "ds_1",
                &format!(
                    "INSERT INTO {table} (order_id, user_id, status) VALUES ({id}, 1, 'taken')"
                ),
            )
            .await
            .unwrap();
    }
    let sql =
        "INSERT INTO t_order (user_id, status) VALUES (2, 'fine'), (4, 'also fine'), (1, 'taken')";
    let plan = plan(router, sql, &[], backend.metadata());
    let error = backend
        .execute(&plan)
        .await
        .expect_err("the duplicate must fail");
    assert_eq!(error.data_source(), Some("ds_1"), "{error}");
    for table in ["t_order_0", "t_order_1"] {
        assert_eq!(
            ids(backend, "ds_0", table).await,
            Vec::<i64>::new(),
            "ds_0.{table} kept rows"
        );
    }
    let mut left: Vec<i64> = Vec::new();
    for table in ["t_order_0", "t_order_1"] {
        left.extend(ids(backend, "ds_1", table).await);
    }
    left.sort_unstable();
    assert_eq!(left, [2, 3]);
    error
}

/// `RETURNING` rows come back in the client's row order, generated keys included.
pub async fn scenario_returning_in_client_order(backend: &Backend, router: &Router) {
    create_tables(backend).await;
    let sql = "INSERT INTO t_order (user_id, status) VALUES (1, 'r1'), (2, 'r2'), (3, 'r3'), (4, 'r4') RETURNING order_id, status";
    let plan = plan(router, sql, &[], backend.metadata());
    let outcome = backend
        .execute(&plan)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let returned: Vec<(Value, Value)> = outcome
        .rows
        .iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    let expected: Vec<(Value, Value)> = plan
        .generated_keys
        .iter()
        .zip(["r1", "r2", "r3", "r4"])
        .map(|(k, s)| (Value::from(k), Value::Text(s.into())))
        .collect();
    assert_eq!(returned, expected);
    assert_eq!(
        outcome
            .columns
            .iter()
            .map(|c| c.name.to_ascii_lowercase())
            .collect::<Vec<_>>(),
        ["order_id", "status"]
    );
}

/// Metadata: a missing table is no error; once created, its columns are known and a
/// column-less INSERT works.
pub async fn scenario_metadata(backend: &Backend, router: &Router, config: &Config) {
    let rule = config.sharding.table("t_order").unwrap();
    backend.load_metadata(&config.sharding).await.unwrap();
    assert_eq!(backend.metadata().visible_columns("t_order"), None);
    create_tables(backend).await;
    backend.refresh_metadata(rule).await.unwrap();
    assert_eq!(
        backend
            .metadata()
            .visible_columns("t_order")
            .unwrap()
            .iter()
            .map(|c| c.to_ascii_lowercase())
            .collect::<Vec<_>>(),
        ["order_id", "user_id", "status"]
    );
    let plan = plan(
        router,
        "INSERT INTO t_order VALUES (1, 'no columns')",
        &[],
        backend.metadata(),
    );
    let outcome = backend.execute(&plan).await.unwrap();
    assert_eq!(outcome.affected_rows, 1);
    let Key::Int(key) = plan.generated_keys[0] else {
        panic!()
    };
    let unit = &plan.units[0];
    assert_eq!(ids(backend, &unit.data_source, &unit.table).await, [key]);
}

/// An ordered read over the two tables of one data source: its first run reads each table
/// and merges, later runs send one `UNION ALL` statement (see the backend's `combined`), and
/// both answer the same rows with the same columns, down to what a MySQL column's flags and a
/// PostgreSQL column's table say. A read ordered by text is never combined; a table changed
/// beside the proxy is described anew.
pub async fn scenario_combined_reads(backend: &Backend, router: &Router, config: &Config) {
    let mysql = router.dialect() == Dialect::MySql;
    let (kind, at) = match mysql {
        true => ("ENUM('a','b','c')", "DATETIME(3)"),
        false => ("VARCHAR(1)", "TIMESTAMPTZ"),
    };
    for (ds, table) in NODES {
        let create = format!(
            "CREATE TABLE {table} (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, \
             status VARCHAR(32), kind {kind}, price DECIMAL(10,2), created_at {at} NULL)"
        );
        backend.execute_on(ds, &create).await.unwrap();
    }
    backend.load_metadata(&config.sharding).await.unwrap();
    let rows: Vec<String> = (1..=24)
        .map(|i| {
            let price = if i % 5 == 0 {
                "NULL".to_owned()
            } else {
                format!("{}.{:02}", i % 7, i)
            };
            let created = if i % 6 == 0 {
                "NULL".to_owned()
            } else {
                format!("'2026-03-{:02} 10:{:02}:00'", 1 + i % 4, i)
            };
            let kind = ["'a'", "'b'", "'c'"][i % 3];
            format!(
                "({i}, {}, 's{}', {kind}, {price}, {created})",
                1 + i % 2 * 2,
                i % 4
            )
        })
        .collect();
    let insert = format!(
        "INSERT INTO t_order (order_id, user_id, status, kind, price, created_at) VALUES {}",
        rows.join(", ")
    );
    backend
        .execute(&plan(router, &insert, &[], backend.metadata()))
        .await
        .unwrap();
    let read = |sql: &str| plan(router, sql, &[], backend.metadata());
    /// Runs `plan` twice, the same answer each time, `combined` of the runs combined.
    async fn twice(backend: &Backend, plan: &Plan, combined: u64) -> Outcome {
        let before = backend.combined_reads();
        let alone = backend
            .execute(plan)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let again = backend
            .execute(plan)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let sql = &plan.units[0].sql;
        assert_eq!(again.rows, alone.rows, "{sql}");
        assert_eq!(again.columns, alone.columns, "{sql}");
        assert_eq!(backend.combined_reads() - before, combined, "{sql}");
        again
    }
    // user_id 1's rows are all on ds_1, in both of its tables.
    for sql in [
        "SELECT * FROM t_order WHERE user_id = 1 ORDER BY order_id DESC LIMIT 5",
        "SELECT order_id, price, created_at FROM t_order WHERE user_id = 1 \
         ORDER BY created_at DESC, order_id LIMIT 4 OFFSET 2",
        "SELECT kind, status, order_id FROM t_order WHERE user_id = 1 ORDER BY price, order_id",
        "SELECT status, price + 1 AS p FROM t_order WHERE user_id = 1 ORDER BY p DESC, order_id LIMIT 3",
    ] {
        let plan = read(sql);
        assert_eq!(plan.units.len(), 2, "{sql}");
        let outcome = twice(backend, &plan, 1).await;
        assert!(!outcome.rows.is_empty(), "{sql}");
    }
    // With parameters, and read in the binary format (a prepared statement's): the combined
    // statement is prepared, the units' parameters one after the other.
    let d = router.dialect();
    for (sql, params) in [
        (
            format!(
                "SELECT * FROM t_order WHERE user_id = {} ORDER BY order_id DESC LIMIT 5",
                placeholder(d, 1)
            ),
            vec![Value::Int(1)],
        ),
        (
            format!(
                "SELECT order_id, price, created_at FROM t_order WHERE user_id = {} \
                 AND order_id > {} ORDER BY created_at DESC, order_id LIMIT 4",
                placeholder(d, 1),
                placeholder(d, 2)
            ),
            vec![Value::Int(1), Value::Int(3)],
        ),
    ] {
        // With parameters, text and binary results are kept alike: the second pair of runs
        // is combined from its first.
        for (binary, combined) in [(false, 1), (true, 2)] {
            let mut plan = plan(router, &sql, &params, backend.metadata());
            assert_eq!(plan.units.len(), 2, "{sql}");
            for unit in &mut plan.units {
                unit.binary_results = binary;
            }
            let outcome = twice(backend, &plan, combined).await;
            assert!(!outcome.rows.is_empty(), "{sql}");
        }
    }
    // Without parameters, read in the binary format: kept apart from the text format's.
    let mut binary = read(
        "SELECT order_id, kind, created_at FROM t_order WHERE user_id = 1 ORDER BY order_id LIMIT 6",
    );
    for unit in &mut binary.units {
        unit.binary_results = true;
    }
    twice(backend, &binary, 1).await;
    let by_text =
        "SELECT order_id FROM t_order WHERE user_id = 1 ORDER BY status, order_id LIMIT 3";
    twice(backend, &read(by_text), 0).await;
    // MariaDB refuses SQL_NO_CACHE in a union's branch: read table by table, and from then on.
    if mysql {
        let plan = read(
            "SELECT SQL_NO_CACHE order_id FROM t_order WHERE user_id = 1 ORDER BY order_id LIMIT 3",
        );
        let outcome = twice(backend, &plan, 0).await;
        assert_eq!(outcome.rows.len(), 3);
        twice(backend, &plan, 0).await;
    }
    // No row, so no columns to keep: read table by table, with the same empty answer.
    let none = "SELECT * FROM t_order WHERE user_id = 3 AND price > 100 ORDER BY order_id LIMIT 2";
    assert!(twice(backend, &read(none), 0).await.rows.is_empty());

    // A column added beside the proxy: the combined read's columns no longer match what was
    // kept, and the read is described anew.
    let star = read("SELECT * FROM t_order WHERE user_id = 1 ORDER BY order_id DESC LIMIT 5");
    let url = &config.data_sources["ds_1"].url;
    let alter = |table| format!("ALTER TABLE {table} ADD COLUMN note VARCHAR(5)");
    match mysql {
        true => {
            let mut conn = sqlx::MySqlConnection::connect(url).await.unwrap();
            for table in ["t_order_0", "t_order_1"] {
                sqlx::raw_sql(&alter(table))
                    .execute(&mut conn)
                    .await
                    .unwrap();
            }
        }
        false => {
            let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
            for table in ["t_order_0", "t_order_1"] {
                sqlx::raw_sql(&alter(table))
                    .execute(&mut conn)
                    .await
                    .unwrap();
            }
        }
    }
    let outcome = backend.execute(&star).await.unwrap();
    assert_eq!(
        outcome.columns.last().map(|c| c.name.as_str()),
        Some("note")
    );
    assert_eq!(outcome.rows.len(), 5);
    twice(backend, &star, 1).await;
}
