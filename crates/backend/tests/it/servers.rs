//! The backend against real MariaDB and PostgreSQL servers. Each test creates two databases
//! with unique names and drops them afterwards. Run with `--include-ignored` and
//! `KEYSHARD_TEST_MYSQL_URL` / `KEYSHARD_TEST_PG_URL` set (as `.ci/run` does).

use crate::common;

use std::future::Future;

use crate::common::ServerDatabases;
use keyshard_backend::{Backend, BackendError};
use keyshard_router::Router;
use keyshard_types::Dialect;

fn url(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| panic!("{var} is not set"))
}

/// Runs `scenario` on two fresh databases of the server at `var`'s URL, then drops them.
async fn on_server<F, Fut>(var: &str, dialect: Dialect, scenario: F)
where
    F: FnOnce(Backend, Router, keyshard_config::Config) -> Fut,
    Fut: Future<Output = Backend>,
{
    let admin = url(var);
    let databases = ServerDatabases::create(&admin, "keyshard_test").await;
    let config = common::config(&common::yaml(&databases.url(0), &databases.url(1)));
    let backend = Backend::new(&config).unwrap();
    let router = Router::new(&config.sharding, dialect);
    let backend = scenario(backend, router, config).await;
    backend.close().await;
    databases.drop_all().await;
}

const MYSQL: &str = "KEYSHARD_TEST_MYSQL_URL";
const PG: &str = "KEYSHARD_TEST_PG_URL";

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_rows_land_in_their_shards() {
    on_server(MYSQL, Dialect::MySql, |b, r, _| async move {
        common::scenario_rows_land_in_their_shards(&b, &r).await;
        b
    })
    .await;
}

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_failing_shard_rolls_back_every_shard() {
    on_server(MYSQL, Dialect::MySql, |b, r, _| async move {
        let error = common::scenario_failing_shard_rolls_back_all(&b, &r).await;
        let BackendError::Database {
            mysql_errno,
            sqlstate,
            ..
        } = &error
        else {
            panic!("{error}")
        };
        assert_eq!(
            (*mysql_errno, sqlstate.as_deref()),
            (Some(1062), Some("23000")),
            "{error}"
        );
        b
    })
    .await;
}

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_returning_rows_come_back_in_client_order() {
    on_server(MYSQL, Dialect::MySql, |b, r, _| async move {
        common::scenario_returning_in_client_order(&b, &r).await;
        b
    })
    .await;
}

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_metadata_leaves_out_invisible_columns() {
    on_server(MYSQL, Dialect::MySql, |b, r, config| async move {
        common::scenario_metadata(&b, &r, &config).await;
        for (ds, table) in common::NODES {
            b.execute_on(
                ds,
                &format!("ALTER TABLE {table} ADD COLUMN note VARCHAR(10) INVISIBLE"),
            )
            .await
            .unwrap();
        }
        b.refresh_metadata(config.sharding.table("t_order").unwrap())
            .await
            .unwrap();
        use keyshard_router::Metadata;
        assert_eq!(
            b.metadata().visible_columns("t_order").unwrap(),
            ["order_id", "user_id", "status"]
        );
        b
    })
    .await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgres_rows_land_in_their_shards() {
    on_server(PG, Dialect::Postgres, |b, r, _| async move {
        common::scenario_rows_land_in_their_shards(&b, &r).await;
        b
    })
    .await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgres_failing_shard_rolls_back_every_shard() {
    on_server(PG, Dialect::Postgres, |b, r, _| async move {
        let error = common::scenario_failing_shard_rolls_back_all(&b, &r).await;
        let BackendError::Database { sqlstate, .. } = &error else {
            panic!("{error}")
        };
        assert_eq!(sqlstate.as_deref(), Some("23505"), "{error}");
        b
    })
    .await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgres_returning_rows_come_back_in_client_order() {
    on_server(PG, Dialect::Postgres, |b, r, _| async move {
        common::scenario_returning_in_client_order(&b, &r).await;
        b
    })
    .await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgres_metadata_and_null_parameters() {
    on_server(PG, Dialect::Postgres, |b, r, config| async move {
        common::scenario_metadata(&b, &r, &config).await;
        // A NULL parameter for an INTEGER column must not be typed as TEXT.
        let plan = r
            .plan(
                "INSERT INTO t_order (user_id, status) VALUES ($1, $2)",
                &[keyshard_types::Value::Int(5), keyshard_types::Value::Null],
                b.metadata(),
            )
            .unwrap()
            .unwrap();
        b.execute(&plan).await.unwrap_or_else(|e| panic!("{e}"));
        b
    })
    .await;
}

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_combined_reads_answer_as_merged_ones() {
    on_server(MYSQL, Dialect::MySql, |b, r, config| async move {
        common::scenario_combined_reads(&b, &r, &config).await;
        b
    })
    .await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgres_combined_reads_answer_as_merged_ones() {
    on_server(PG, Dialect::Postgres, |b, r, config| async move {
        common::scenario_combined_reads(&b, &r, &config).await;
        b
    })
    .await;
}
