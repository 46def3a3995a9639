//! A proxy started in-process for a test, and ways to look into its shards directly.

#![allow(dead_code)]

pub mod compare;
pub mod java;
// Shared with the workspace's own process-level tests.
#[path = "../../../../../tests/it/common/ports.rs"]
pub mod ports;
pub mod postgres;
pub mod random_select;
pub mod relay;
#[path = "../../../../../tests/it/common/t_order.rs"]
mod t_order;
pub mod throwaway;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use keyshard_proxy::Server;
use sqlx::Connection;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The MySQL error number of a failed statement, if the server (or the proxy) sent one.
pub fn mysql_code(error: &sqlx::Error) -> Option<u16> {
    error
        .as_database_error()
        .and_then(|d| d.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
        .map(|d| d.number())
}

/// The order the kept-description tests run their seven reads in: three, within the four a
/// shard connection keeps; all seven, each evicting another; the three again.
pub const KEPT_ORDER: [usize; 26] = [
    0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 2, 1, 0, 2, 1, 0,
];

pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The rule of the default configuration (t_order over ds_{0,1}.t_order_{0,1}) with the given
/// data source URLs, listening on a free port; without its `mode:`, so the repository is the
/// first data source unless a test prepends its own.
pub use t_order::yaml;

/// A proxy over two fresh MariaDB shards, with `create` (the logic table's DDL) run through it.
pub async fn on_mariadb(create: &str) -> (Shards, Proxy) {
    let shards = Shards::mariadb().await;
    let proxy = Proxy::start(&yaml(&shards.url(0), &shards.url(1))).await;
    let mut conn = sqlx::MySqlConnection::connect(&proxy.url("root", "root"))
        .await
        .unwrap();
    sqlx::raw_sql(create).execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    (shards, proxy)
}

/// A running proxy; dropping it does not stop it, `stop` does.
pub struct Proxy {
    pub address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl Proxy {
    pub async fn start(yaml: &str) -> Self {
        Self::try_start(yaml)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Starts a proxy, or says why it did not start.
    pub async fn try_start(yaml: &str) -> Result<Self, String> {
        let config =
            keyshard_config::from_yaml_str(yaml, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
        let server = Server::bind(config).await.map_err(|e| e.to_string())?;
        let address = server.mysql_address().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        Ok(Self {
            address,
            stop: Some(stop),
            task,
        })
    }

    pub fn url(&self, user: &str, password: &str) -> String {
        format!("mysql://{user}:{password}@{}/sharding_db", self.address)
    }

    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

/// Two shards, `ds_0` and `ds_1`: SQLite files in a fresh directory, or two fresh databases on
/// the MariaDB server of `KEYSHARD_TEST_MYSQL_URL`. `cleanup` removes them.
pub enum Shards {
    Sqlite(PathBuf),
    MariaDb {
        admin_url: String,
        names: [String; 2],
    },
}

impl Shards {
    pub fn sqlite() -> Self {
        let dir = std::env::temp_dir().join(unique("keyshard_proxy"));
        std::fs::create_dir_all(&dir).unwrap();
        Shards::Sqlite(dir)
    }

    pub async fn mariadb() -> Self {
        let admin_url =
            std::env::var("KEYSHARD_TEST_MYSQL_URL").expect("KEYSHARD_TEST_MYSQL_URL is not set");
        let base = unique("keyshard_proxy");
        let names = [format!("{base}_0"), format!("{base}_1")];
        let mut conn = sqlx::MySqlConnection::connect(&admin_url)
            .await
            .unwrap_or_else(|e| panic!("{admin_url}: {e}"));
        for name in &names {
            sqlx::raw_sql(&format!("CREATE DATABASE {name}"))
                .execute(&mut conn)
                .await
                .unwrap();
        }
        Shards::MariaDb { admin_url, names }
    }

    pub fn url(&self, i: usize) -> String {
        match self {
            Shards::Sqlite(dir) => format!("sqlite://{}", dir.join(format!("ds_{i}.db")).display()),
            Shards::MariaDb { admin_url, names } => {
                let (server, _) = admin_url.rsplit_once('/').expect("a URL with a database");
                format!("{server}/{}", names[i])
            }
        }
    }

    /// The order ids stored in `ds_<ds>.t_order_<table>`.
    pub async fn ids(&self, ds: usize, table: usize) -> Vec<i64> {
        let sql = format!("SELECT order_id FROM t_order_{table} ORDER BY order_id");
        match self {
            Shards::Sqlite(_) => {
                let mut conn = sqlx::SqliteConnection::connect(&self.url(ds))
                    .await
                    .unwrap();
                sqlx::query_scalar(&sql).fetch_all(&mut conn).await.unwrap()
            }
            Shards::MariaDb { .. } => {
                let mut conn = sqlx::MySqlConnection::connect(&self.url(ds)).await.unwrap();
                sqlx::query_scalar(&sql).fetch_all(&mut conn).await.unwrap()
            }
        }
    }

    pub async fn cleanup(self) {
        match self {
            Shards::Sqlite(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Shards::MariaDb { admin_url, names } => {
                let mut conn = sqlx::MySqlConnection::connect(&admin_url).await.unwrap();
                for name in names {
                    sqlx::raw_sql(&format!("DROP DATABASE IF EXISTS {name}"))
                        .execute(&mut conn)
                        .await
                        .unwrap();
                }
            }
        }
    }
}
