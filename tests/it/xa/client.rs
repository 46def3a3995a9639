//! Clients of the proxy under test, and what they run.

use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sqlx::{Connection, Executor, MySqlConnection, PgConnection, Row};

use crate::xa::shards::Db;

/// A client of the proxy on `port`.
pub enum Client {
    MySql(MySqlConnection),
    Postgres(PgConnection),
}

impl Client {
    pub async fn connect(db: Db, port: u16) -> Result<Self, sqlx::Error> {
        Ok(match db {
            Db::MariaDb => Client::MySql(
                MySqlConnection::connect(&format!(
                    "mysql://root:root@127.0.0.1:{port}/sharding_db"
                ))
                .await?,
            ),
            Db::Postgres => Client::Postgres(
                PgConnection::connect(&format!(
                    "postgres://root:root@127.0.0.1:{port}/sharding_db?sslmode=disable"
                ))
                .await?,
            ),
        })
    }

    /// Connects, waiting up to 30 s for the proxy to come up.
    pub async fn wait(db: Db, port: u16) -> Self {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match Self::connect(db, port).await {
                Ok(client) => return client,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("proxy on {port}: {e}"),
            }
        }
    }

    pub async fn execute(&mut self, sql: &str) -> Result<(), sqlx::Error> {
        match self {
            Client::MySql(c) => c.execute(sql).await.map(|_| ()),
            Client::Postgres(c) => c.execute(sql).await.map(|_| ()),
        }
    }

    /// The session's transaction type, as `SHOW DIST VARIABLE` reports it.
    pub async fn transaction_type(&mut self) -> String {
        let sql = "SHOW DIST VARIABLE WHERE NAME = transaction_type";
        match self {
            Client::MySql(c) => c.fetch_one(sqlx::raw_sql(sql)).await.unwrap().get(1),
            Client::Postgres(c) => c.fetch_one(sqlx::raw_sql(sql)).await.unwrap().get(1),
        }
    }

    /// A two-row INSERT whose rows go to ds_1 and ds_0.
    pub async fn insert_pair(&mut self, tag: &str) -> Result<(), sqlx::Error> {
        self.execute(&format!(
            "INSERT INTO t_order (user_id, status) VALUES (1, '{tag}'), (2, '{tag}')"
        ))
        .await
    }
}

/// Runs `statement` on an instance armed with a failpoint until the instance dies of it.
/// An error that is not the crash (this loaded machine let the instance's 3 s lease lapse, so
/// XA refused before writing anything) is retried a few times.
pub async fn crash(
    doomed: &mut Child,
    mut statement: impl AsyncFnMut() -> Result<(), sqlx::Error>,
) {
    for _ in 0..5 {
        let error = statement()
            .await
            .expect_err("the client was told it worked");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Some(status) = doomed.try_wait().unwrap() {
                assert!(!status.success(), "the instance exited cleanly");
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        eprintln!("the instance is still running after: {error}");
    }
    panic!("the instance never reached its failpoint");
}

/// Two-row INSERTs from `clients` connections until `done`; the tags acknowledged and the
/// number of statements that failed.
pub async fn pairs(
    db: Db,
    port: u16,
    client: usize,
    done: Arc<AtomicBool>,
) -> (Vec<String>, usize) {
    let mut acknowledged = Vec::new();
    let mut failed = 0;
    let mut conn = Client::wait(db, port).await;
    for n in 0.. {
        if done.load(Ordering::Relaxed) {
            break;
        }
        let tag = format!("c{client}_{n}");
        match conn.insert_pair(&tag).await {
            Ok(()) => acknowledged.push(tag),
            Err(_) => {
                failed += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    (acknowledged, failed)
}
