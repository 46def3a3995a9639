//! The PostgreSQL frontend's test helpers: a proxy serving PostgreSQL clients, and two shards
//! as SQLite files or as two fresh databases on the PostgreSQL server of `KEYSHARD_TEST_PG_URL`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use keyshard_proxy::Server;
use sqlx::Connection;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_postgres::NoTls;

use super::unique;

/// The default configuration's rule over the given data sources, with the PostgreSQL frontend
/// (and, with `mysql`, the MySQL one too) on free ports.
pub fn yaml(url_0: &str, url_1: &str, mysql: bool) -> String {
    let listeners = if mysql {
        "  mysql:\n    listen: 127.0.0.1:0\n  postgres:\n    listen: 127.0.0.1:0"
    } else {
        "  postgres:\n    listen: 127.0.0.1:0"
    };
    super::yaml(url_0, url_1).replace("  mysql:\n    listen: 127.0.0.1:0", listeners)
}

/// A proxy with the PostgreSQL frontend (and, with `mysql`, the MySQL one) on two fresh
/// SQLite shards.
pub async fn on_sqlite(mysql: bool) -> (PgShards, PgProxy) {
    let shards = PgShards::sqlite();
    let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), mysql)).await;
    (shards, proxy)
}

/// A proxy with the PostgreSQL frontend on two fresh databases of the PostgreSQL server of
/// `KEYSHARD_TEST_PG_URL`.
pub async fn on_postgres() -> (PgShards, PgProxy) {
    let shards = PgShards::postgres().await;
    let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), false)).await;
    (shards, proxy)
}

/// A running proxy with its PostgreSQL frontend.
pub struct PgProxy {
    pub address: SocketAddr,
    /// The MySQL frontend's address, when the configuration has one.
    pub mysql_address: Option<SocketAddr>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl PgProxy {
    pub async fn start(yaml: &str) -> Self {
        let config =
            keyshard_config::from_yaml_str(yaml, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
        let server = Server::bind(config).await.unwrap_or_else(|e| panic!("{e}"));
        let address = server.postgres_address().expect("a PostgreSQL listener");
        let mysql_address = server.mysql_address();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        Self {
            address,
            mysql_address,
            stop: Some(stop),
            task,
        }
    }

    /// A tokio-postgres configuration for `user` with `password`.
    pub fn config(&self, user: &str, password: &str) -> tokio_postgres::Config {
        let mut config = tokio_postgres::Config::new();
        config
            .host(self.address.ip().to_string())
            .port(self.address.port())
            .user(user)
            .password(password)
            .dbname("sharding_db");
        config
    }

    /// A client connected as root, its connection driven on a task.
    pub async fn client(&self) -> tokio_postgres::Client {
        connect(&self.config("root", "root")).await.unwrap()
    }

    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

/// Connects and drives the connection on a task.
pub async fn connect(
    config: &tokio_postgres::Config,
) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let (client, connection) = config.connect(NoTls).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// Two shards, `ds_0` and `ds_1`.
pub enum PgShards {
    Sqlite(PathBuf),
    Postgres {
        admin_url: String,
        names: [String; 2],
    },
}

impl PgShards {
    pub fn sqlite() -> Self {
        let dir = std::env::temp_dir().join(unique("keyshard_pg"));
        std::fs::create_dir_all(&dir).unwrap();
        PgShards::Sqlite(dir)
    }

    pub async fn postgres() -> Self {
        Self::postgres_with("").await
    }

    /// Two databases created with `options` (`LOCALE_PROVIDER icu …`).
    pub async fn postgres_with(options: &str) -> Self {
        let admin_url =
            std::env::var("KEYSHARD_TEST_PG_URL").expect("KEYSHARD_TEST_PG_URL is not set");
        let base = unique("keyshard_pg");
        let names = [format!("{base}_0"), format!("{base}_1")];
        let admin = admin(&admin_url).await;
        for name in &names {
            admin
                .batch_execute(&format!("CREATE DATABASE {name} {options}"))
                .await
                .unwrap();
        }
        PgShards::Postgres { admin_url, names }
    }

    pub fn url(&self, i: usize) -> String {
        match self {
            PgShards::Sqlite(dir) => {
                format!("sqlite://{}", dir.join(format!("ds_{i}.db")).display())
            }
            PgShards::Postgres { admin_url, names } => {
                let (server, _) = admin_url.rsplit_once('/').expect("a URL with a database");
                format!("{server}/{}", names[i])
            }
        }
    }

    /// The order ids stored in `ds_<ds>.t_order_<table>`.
    pub async fn ids(&self, ds: usize, table: usize) -> Vec<i64> {
        let sql = format!("SELECT order_id FROM t_order_{table} ORDER BY order_id");
        match self {
            PgShards::Sqlite(_) => {
                let mut conn = sqlx::SqliteConnection::connect(&self.url(ds))
                    .await
                    .unwrap();
                sqlx::query_scalar(&sql).fetch_all(&mut conn).await.unwrap()
            }
            PgShards::Postgres { .. } => {
                let client = admin(&self.url(ds)).await;
                let rows = client.query(&sql, &[]).await.unwrap();
                rows.iter().map(|r| r.get(0)).collect()
            }
        }
    }

    /// Every stored order id, sorted.
    pub async fn all_ids(&self) -> Vec<i64> {
        let mut ids = Vec::new();
        for (ds, table) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            ids.extend(self.ids(ds, table).await);
        }
        ids.sort_unstable();
        ids
    }

    pub async fn cleanup(self) {
        match self {
            PgShards::Sqlite(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            PgShards::Postgres { admin_url, names } => {
                let admin = admin(&admin_url).await;
                for name in names {
                    admin
                        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .await
                        .unwrap();
                }
            }
        }
    }
}

/// A client of the server at `url`, for setting up and cleaning up databases.
pub async fn admin(url: &str) -> tokio_postgres::Client {
    let config: tokio_postgres::Config = url.parse().unwrap_or_else(|e| panic!("{url}: {e}"));
    connect(&config)
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// The rows of simple-protocol messages as text, NULL as `None`.
pub fn texts(messages: &[tokio_postgres::SimpleQueryMessage]) -> Vec<Vec<Option<String>>> {
    messages
        .iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(row) => Some(
                (0..row.len())
                    .map(|i| row.get(i).map(str::to_owned))
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// `sql` sent in the simple protocol: its rows as text.
pub async fn simple_rows(client: &tokio_postgres::Client, sql: &str) -> Vec<Vec<Option<String>>> {
    let messages = client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    texts(&messages)
}

/// A fresh plain database on the PostgreSQL server of `KEYSHARD_TEST_PG_URL`: what a test
/// compares the proxy's answers with. `drop_database` removes it.
pub struct Reference {
    admin: tokio_postgres::Client,
    name: String,
    pub client: tokio_postgres::Client,
}

impl Reference {
    pub async fn create(prefix: &str) -> Self {
        let admin_url = std::env::var("KEYSHARD_TEST_PG_URL").expect("KEYSHARD_TEST_PG_URL");
        let admin = connect(&admin_url.parse().unwrap()).await.unwrap();
        let name = unique(prefix);
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap();
        let (server, _) = admin_url.rsplit_once('/').expect("a URL with a database");
        let client = connect(&format!("{server}/{name}").parse().unwrap())
            .await
            .unwrap();
        Self {
            admin,
            name,
            client,
        }
    }

    pub async fn drop_database(self) {
        drop(self.client);
        self.admin
            .batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
            .await
            .unwrap();
    }
}
