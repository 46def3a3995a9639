//! Transactions across data sources when something dies mid-commit: `keyshard serve` processes
//! crashed at each point of the XA commit protocol (`KEYSHARD_FAILPOINT`) with a second
//! instance recovering; a LOCAL commit that fails half-way; and a shard server killed with
//! SIGKILL under a load of two-row cross-shard INSERTs.

mod client;
mod shards;
mod throwaway;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::common::{TempDir, free_port, serve, serve_with};
use client::{Client, crash, pairs};
use shards::{Db, Repository, Shards, TABLE, admin_url, config, query};
use throwaway::Throwaway;

/// Crashes an instance at each point of the commit protocol, lets a second one recover, and
/// checks the statement is stored whole or not at all.
async fn a_crash_at_any_point_of_the_commit_keeps_all_or_nothing(db: Db, repository: Repository) {
    let tag = match (db, repository) {
        (Db::MariaDb, Repository::OnFirstShard) => "crash_my",
        (Db::MariaDb, Repository::Apart) => "crash_my_apart",
        (Db::Postgres, Repository::OnFirstShard) => "crash_pg",
        (Db::Postgres, Repository::Apart) => "crash_pg_apart",
    };
    let dir = TempDir::new(&format!("xa_{tag}"));
    let shards = Shards::shared(db, tag).await;
    let survivor_port = free_port();
    let survivor = serve(&config(&dir.0, &shards, survivor_port, true, repository));
    let mut client = Client::wait(db, survivor_port).await;
    client.execute(TABLE).await.unwrap();
    client.insert_pair("plain").await.unwrap();
    assert_eq!(shards.count("plain").await, 2);

    // Crash point, and whether the statement must end up committed.
    let cases = [
        ("xa-after-prepare", false),
        ("xa-after-decision", true),
        ("xa-after-first-commit", true),
    ];
    for (failpoint, committed) in cases {
        let port = free_port();
        let mut doomed = serve_with(
            &config(&dir.0, &shards, port, true, repository),
            &[("KEYSHARD_FAILPOINT", failpoint)],
        );
        let mut client = Client::wait(db, port).await;
        let tag = failpoint.replace('-', "_");
        crash(&mut doomed, async || client.insert_pair(&tag).await).await;
        // With the decisions on ds_0, its commit is the decision, and after the first
        // commit of the rest nothing of two data sources is left.
        let left = shards.prepared().await;
        let all_committed =
            failpoint == "xa-after-first-commit" && repository == Repository::OnFirstShard;
        assert!(
            left > 0 || all_committed,
            "{failpoint}: nothing was left prepared"
        );
        // The survivor finishes the branches once the crashed instance's lease expires.
        shards.wait_until_no_prepared().await;
        let expected = if committed { 2 } else { 0 };
        assert_eq!(shards.count(&tag).await, expected, "{failpoint}");
    }
    drop(survivor);
    shards.drop_all().await;
}

/// LOCAL: a commit that fails after another data source committed is reported as such.
async fn a_local_partial_commit_gets_its_own_error(db: Db) {
    let tag = match db {
        Db::MariaDb => "partial_my",
        Db::Postgres => "partial_pg",
    };
    let dir = TempDir::new(&format!("xa_{tag}"));
    let shards = Shards::shared(db, tag).await;
    let port = free_port();
    // Every statement with two data sources to commit fails half-way: CREATE TABLE too.
    for i in 0..2 {
        for table in 0..2 {
            let sql = TABLE.replace("t_order", &format!("t_order_{table}"));
            query(db, &shards.url(i), &sql).await;
        }
    }
    let proxy = serve_with(
        &config(&dir.0, &shards, port, false, Repository::OnFirstShard),
        &[("KEYSHARD_FAILPOINT", "local-commit-fails-after-first")],
    );
    let mut client = Client::wait(db, port).await;
    let error = client.insert_pair("half").await.unwrap_err();
    let database = error.as_database_error().expect("a database error");
    match db {
        Db::MariaDb => {
            let mysql = database.downcast_ref::<sqlx::mysql::MySqlDatabaseError>();
            assert_eq!((mysql.number(), mysql.code()), (20_101, Some("XAKS1")));
        }
        Db::Postgres => assert_eq!(database.code().as_deref(), Some("XAKS1")),
    }
    let message = database.message();
    assert!(
        message.contains("partially committed: committed on ds_"),
        "{message}"
    );
    assert_eq!(shards.count("half").await, 1);
    // The connection goes on; XA is not there to choose.
    assert_eq!(client.transaction_type().await, "LOCAL");
    let refused = client
        .execute("SET DIST VARIABLE transaction_type = 'XA'")
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("XA is not enabled"),
        "{refused}"
    );
    client.execute("SELECT 1").await.unwrap();
    drop(proxy);
    shards.drop_all().await;
}

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_crash_at_any_point_of_the_commit_keeps_all_or_nothing() {
    a_crash_at_any_point_of_the_commit_keeps_all_or_nothing(Db::MariaDb, Repository::OnFirstShard)
        .await;
}

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_crash_with_the_repository_apart_keeps_all_or_nothing() {
    a_crash_at_any_point_of_the_commit_keeps_all_or_nothing(Db::MariaDb, Repository::Apart).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL with max_prepared_transactions > 0 (KEYSHARD_TEST_PG_URL)"]
async fn postgres_crash_at_any_point_of_the_commit_keeps_all_or_nothing() {
    a_crash_at_any_point_of_the_commit_keeps_all_or_nothing(Db::Postgres, Repository::OnFirstShard)
        .await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL with max_prepared_transactions > 0 (KEYSHARD_TEST_PG_URL)"]
async fn postgres_crash_with_the_repository_apart_keeps_all_or_nothing() {
    a_crash_at_any_point_of_the_commit_keeps_all_or_nothing(Db::Postgres, Repository::Apart).await;
}

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_local_partial_commit_gets_its_own_error() {
    a_local_partial_commit_gets_its_own_error(Db::MariaDb).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL)"]
async fn postgres_local_partial_commit_gets_its_own_error() {
    a_local_partial_commit_gets_its_own_error(Db::Postgres).await;
}

/// Kills one shard server with SIGKILL three times under a load of two-row cross-shard
/// INSERTs, restarting it each time; recovery must leave every statement whole or absent.
async fn a_shard_killed_under_load_never_leaves_half_a_statement(db: Db) {
    let tag = match db {
        Db::MariaDb => "kill_my",
        Db::Postgres => "kill_pg",
    };
    let dir = TempDir::new(&format!("xa_{tag}"));
    let mut killed = Throwaway::install(db, &dir.0);
    killed.start().await;
    let admin = admin_url(db);
    let (shared, _) = admin.rsplit_once('/').unwrap();
    // ds_0 (the coordination repository) on the machine's server, ds_1 on the one killed.
    let shards = Shards::new(db, tag, [shared.to_owned(), killed.server_url()]).await;
    let port = free_port();
    let proxy = serve(&config(
        &dir.0,
        &shards,
        port,
        true,
        Repository::OnFirstShard,
    ));
    Client::wait(db, port).await.execute(TABLE).await.unwrap();

    let done = Arc::new(AtomicBool::new(false));
    let load: Vec<_> = (0..4)
        .map(|client| tokio::spawn(pairs(db, port, client, Arc::clone(&done))))
        .collect();
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        killed.kill();
        tokio::time::sleep(Duration::from_millis(500)).await;
        killed.start().await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    done.store(true, Ordering::Relaxed);
    let mut acknowledged = HashSet::new();
    let mut failed = 0;
    for client in load {
        let (acked, failures) = client.await.unwrap();
        acknowledged.extend(acked);
        failed += failures;
    }
    shards.wait_until_no_prepared().await;

    let stored = shards.statuses().await;
    let halves: Vec<_> = stored.iter().filter(|(_, n)| **n != 2).collect();
    let missing: Vec<_> = acknowledged
        .iter()
        .filter(|tag| !stored.contains_key(*tag))
        .collect();
    let failed_but_stored = stored
        .keys()
        .filter(|tag| !acknowledged.contains(*tag))
        .count();
    eprintln!(
        "{} statements acknowledged, {failed} failed ({failed_but_stored} of them stored whole)",
        acknowledged.len()
    );
    assert!(halves.is_empty(), "statements stored in part: {halves:?}");
    assert!(
        missing.is_empty(),
        "acknowledged but not stored: {missing:?}"
    );
    assert!(failed > 0, "the kills did not fail a single statement");
    assert!(acknowledged.len() > 20, "too little load got through");
    drop(proxy);
    shards.drop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL) and mariadbd to start one of its own"]
async fn a_mariadb_shard_killed_under_load_never_leaves_half_a_statement() {
    a_shard_killed_under_load_never_leaves_half_a_statement(Db::MariaDb).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (KEYSHARD_TEST_PG_URL) and its server binaries to start one of its own"]
async fn a_postgres_shard_killed_under_load_never_leaves_half_a_statement() {
    a_shard_killed_under_load_never_leaves_half_a_statement(Db::Postgres).await;
}

/// An explicit transaction over both data sources: COMMIT stores both rows, ROLLBACK none, and
/// a crash between prepare and decision leaves none once recovered.
async fn explicit_transactions_are_all_or_nothing(db: Db) {
    let tag = match db {
        Db::MariaDb => "explicit_my",
        Db::Postgres => "explicit_pg",
    };
    let dir = TempDir::new(&format!("xa_{tag}"));
    let shards = Shards::shared(db, tag).await;
    let port = free_port();
    let survivor = serve(&config(
        &dir.0,
        &shards,
        port,
        true,
        Repository::OnFirstShard,
    ));
    let mut client = Client::wait(db, port).await;
    client.execute(TABLE).await.unwrap();
    async fn transaction(client: &mut Client, tag: &str, end: &str) -> Result<(), sqlx::Error> {
        client.execute("BEGIN").await?;
        for user in [1, 2] {
            let sql = format!("INSERT INTO t_order (user_id, status) VALUES ({user}, '{tag}')");
            client.execute(&sql).await?;
        }
        client.execute(end).await
    }
    transaction(&mut client, "committed", "COMMIT")
        .await
        .unwrap();
    transaction(&mut client, "rolled_back", "ROLLBACK")
        .await
        .unwrap();
    assert_eq!(shards.count("committed").await, 2);
    assert_eq!(shards.count("rolled_back").await, 0);

    let doomed_port = free_port();
    let mut doomed = serve_with(
        &config(&dir.0, &shards, doomed_port, true, Repository::OnFirstShard),
        &[("KEYSHARD_FAILPOINT", "xa-after-prepare")],
    );
    let mut doomed_client = Client::wait(db, doomed_port).await;
    // A session that chose LOCAL never reaches the failpoint; back on XA it does.
    assert_eq!(doomed_client.transaction_type().await, "XA");
    doomed_client
        .execute("SET DIST VARIABLE transaction_type = 'LOCAL'")
        .await
        .unwrap();
    assert_eq!(doomed_client.transaction_type().await, "LOCAL");
    transaction(&mut doomed_client, "local", "COMMIT")
        .await
        .unwrap();
    doomed_client.insert_pair("local").await.unwrap();
    assert_eq!(shards.count("local").await, 4);
    doomed_client
        .execute("SET VARIABLE transaction_type = XA")
        .await
        .unwrap();
    crash(&mut doomed, async || {
        transaction(&mut doomed_client, "crashed", "COMMIT").await
    })
    .await;
    assert!(shards.prepared().await > 0);
    shards.wait_until_no_prepared().await;
    assert_eq!(shards.count("crashed").await, 0);
    drop(survivor);
    shards.drop_all().await;
}

#[tokio::test]
#[ignore = "needs MariaDB (KEYSHARD_TEST_MYSQL_URL)"]
async fn mariadb_explicit_transactions_are_all_or_nothing() {
    explicit_transactions_are_all_or_nothing(Db::MariaDb).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL with max_prepared_transactions > 0 (KEYSHARD_TEST_PG_URL)"]
async fn postgres_explicit_transactions_are_all_or_nothing() {
    explicit_transactions_are_all_or_nothing(Db::Postgres).await;
}
