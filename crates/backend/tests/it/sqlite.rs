//! The backend against real SQLite files.

use crate::common;

use crate::common::TempDir;
use keyshard_backend::{Backend, BackendError};
use keyshard_router::Router;
use keyshard_types::Dialect;

fn setup(dir: &TempDir) -> (keyshard_config::Config, Backend, Router) {
    let config = common::config(&common::yaml(
        &dir.sqlite_url("ds_0.db"),
        &dir.sqlite_url("ds_1.db"),
    ));
    let backend = Backend::new(&config).unwrap();
    let router = Router::new(&config.sharding, Dialect::MySql);
    (config, backend, router)
}

#[tokio::test]
async fn rows_land_in_their_shards() {
    let dir = TempDir::new();
    let (_, backend, router) = setup(&dir);
    common::scenario_rows_land_in_their_shards(&backend, &router).await;
    backend.close().await;
}

#[tokio::test]
async fn a_failing_shard_rolls_back_every_shard() {
    let dir = TempDir::new();
    let (_, backend, router) = setup(&dir);
    let error = common::scenario_failing_shard_rolls_back_all(&backend, &router).await;
    assert!(
        error.to_string().contains("UNIQUE constraint failed"),
        "{error}"
    );
    backend.close().await;
}

#[tokio::test]
async fn returning_rows_come_back_in_client_order() {
    let dir = TempDir::new();
    let (_, backend, router) = setup(&dir);
    common::scenario_returning_in_client_order(&backend, &router).await;
    backend.close().await;
}

#[tokio::test]
async fn metadata_is_loaded_from_the_first_actual_table() {
    let dir = TempDir::new();
    let (config, backend, router) = setup(&dir);
    common::scenario_metadata(&backend, &router, &config).await;
    backend.close().await;
}

#[tokio::test]
async fn sqlite_files_and_their_directory_are_created_on_first_use() {
    let dir = TempDir::new();
    let nested = TempDir(dir.0.join("nested").join("deeper"));
    let config = common::config(&common::yaml(
        &nested.sqlite_url("a.db"),
        &nested.sqlite_url("b.db"),
    ));
    let backend = Backend::new(&config).unwrap();
    let checks = backend.check().await;
    assert!(checks.iter().all(|(_, r)| r.is_ok()), "{checks:?}");
    assert!(nested.0.join("a.db").exists());
    backend.close().await;
}

#[tokio::test]
async fn an_unreachable_data_source_is_named_and_does_not_stall_the_others() {
    let dir = TempDir::new();
    // Nothing listens on port 1.
    let config = common::config(&common::yaml(
        &dir.sqlite_url("ds_0.db"),
        "mysql://root@127.0.0.1:1/nowhere",
    ));
    let backend = Backend::new(&config).unwrap();
    let checks = backend.check().await;
    assert!(checks[0].1.is_ok(), "{checks:?}");
    let Err(BackendError::Connect { data_source, .. }) = &checks[1].1 else {
        panic!("{checks:?}")
    };
    assert_eq!(data_source, "ds_1");
    assert!(
        checks[1]
            .1
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("refused"),
        "{checks:?}"
    );
    backend.close().await;
}

#[tokio::test]
async fn a_statement_on_an_unreachable_shard_fails_naming_it_while_other_shards_serve() {
    let dir = TempDir::new();
    // Only the unreachable shard gives up quickly: ds_0's timeout is also SQLite's busy
    // timeout, and the statement for ds_0 alone must outwait the failing one's write lock.
    let unreachable = "mysql://root@127.0.0.1:1/nowhere";
    let yaml = common::yaml(&dir.sqlite_url("ds_0.db"), unreachable).replace(
        &format!("{unreachable}\"\n    connectionTimeoutMilliseconds: 3000"),
        &format!("{unreachable}\"\n    connectionTimeoutMilliseconds: 300"),
    );
    assert!(
        yaml.contains("connectionTimeoutMilliseconds: 300\n"),
        "{yaml}"
    );
    let config = common::config(&yaml);
    let backend = Backend::new(&config).unwrap();
    let router = Router::new(&config.sharding, Dialect::MySql);
    for table in ["t_order_0", "t_order_1"] {
        backend
            .execute_on(
                "ds_0",
                &format!(
                    "CREATE TABLE {table} (order_id BIGINT PRIMARY KEY, user_id INT, status TEXT)"
                ),
            )
            .await
            .unwrap();
    }
    let both = router
        .plan(
            "INSERT INTO t_order (user_id) VALUES (2), (1)",
            &[],
            backend.metadata(),
        )
        .unwrap()
        .unwrap();
    let only_ds_0 = router
        .plan(
            "INSERT INTO t_order (user_id) VALUES (4)",
            &[],
            backend.metadata(),
        )
        .unwrap()
        .unwrap();
    // The statement for ds_0 alone runs while the other one waits for the unreachable shard.
    let (failed, served) = tokio::join!(backend.execute(&both), backend.execute(&only_ds_0));
    let error = failed.expect_err("ds_1 is unreachable");
    assert_eq!(error.data_source(), Some("ds_1"), "{error}");
    assert_eq!(served.unwrap().affected_rows, 1);
    // ds_0's part of the failed statement was rolled back; the other statement's row stays.
    let mut stored = Vec::new();
    for table in ["t_order_0", "t_order_1"] {
        stored.extend(common::ids(&backend, "ds_0", table).await);
    }
    assert_eq!(stored, [only_ds_0.generated_keys[0].as_i64().unwrap()]);
    backend.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_concurrent_statements_than_connections_wait_their_turn() {
    let dir = TempDir::new();
    let yaml = common::yaml(&dir.sqlite_url("ds_0.db"), &dir.sqlite_url("ds_1.db")).replace(
        "connectionTimeoutMilliseconds: 3000",
        "connectionTimeoutMilliseconds: 5000\n    maxPoolSize: 1",
    );
    let config = common::config(&yaml);
    let backend = std::sync::Arc::new(Backend::new(&config).unwrap());
    let router = std::sync::Arc::new(Router::new(&config.sharding, Dialect::MySql));
    common::create_tables(&backend).await;
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let (backend, router) = (backend.clone(), router.clone());
            tokio::spawn(async move {
                for _ in 0..20 {
                    let plan = router
                        .plan(
                            &format!("INSERT INTO t_order (user_id) VALUES ({i})"),
                            &[],
                            backend.metadata(),
                        )
                        .unwrap()
                        .unwrap();
                    backend
                        .execute(&plan)
                        .await
                        .unwrap_or_else(|e| panic!("{e}"));
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let mut stored = 0;
    for (ds, table) in common::NODES {
        stored += common::ids(&backend, ds, table).await.len();
    }
    assert_eq!(stored, 160);
    backend.close().await;
}

#[tokio::test]
async fn metadata_reads_share_the_kept_connections() {
    // With one connection per shard kept after a statement, a metadata read that went to sqlx's
    // pool directly would wait for it until the time-out.
    let dir = TempDir::new();
    let yaml = common::yaml(&dir.sqlite_url("ds_0.db"), &dir.sqlite_url("ds_1.db")).replace(
        "connectionTimeoutMilliseconds: 3000",
        "connectionTimeoutMilliseconds: 300\n    maxPoolSize: 1",
    );
    let config = common::config(&yaml);
    let backend = Backend::new(&config).unwrap();
    common::create_tables(&backend).await;
    let router = Router::new(&config.sharding, Dialect::MySql);
    let plan = router
        .plan(
            "INSERT INTO t_order (user_id, status) VALUES (1, 'a'), (2, 'b')",
            &[],
            backend.metadata(),
        )
        .unwrap()
        .unwrap();
    assert_eq!(plan.units.len(), 2);
    backend.execute(&plan).await.unwrap();
    backend
        .refresh_metadata(config.sharding.table("t_order").unwrap())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    backend.close().await;
}

#[tokio::test]
async fn an_empty_read_still_has_its_columns_but_not_the_hidden_ones() {
    let dir = TempDir::new();
    let (_, backend, router) = setup(&dir);
    common::create_tables(&backend).await;
    let plan = router
        .plan(
            "SELECT order_id FROM t_order WHERE status = 'none' ORDER BY user_id",
            &[],
            backend.metadata(),
        )
        .unwrap()
        .unwrap();
    assert_eq!(plan.units.len(), 4);
    let outcome = backend.execute(&plan).await.unwrap();
    assert!(outcome.rows.is_empty());
    let (columns, _) = backend.result_columns(&plan).await.unwrap();
    let names: Vec<_> = columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["order_id"]);
    backend.close().await;
}
