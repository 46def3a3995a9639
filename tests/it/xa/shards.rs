//! The databases a test's data sources live in, and the configuration that serves them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sqlx::{Connection, Executor, MySqlConnection, PgConnection, Row};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Db {
    MariaDb,
    Postgres,
}

pub const TABLE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

/// Two databases, one per data source; `servers[i]` is the server (URL without database) of
/// data source i.
pub struct Shards {
    pub db: Db,
    pub servers: [String; 2],
    pub names: [String; 2],
    /// A database of its own on server 0, for a repository apart from the shards.
    pub repository: String,
}

pub fn admin_url(db: Db) -> String {
    let variable = match db {
        Db::MariaDb => "KEYSHARD_TEST_MYSQL_URL",
        Db::Postgres => "KEYSHARD_TEST_PG_URL",
    };
    std::env::var(variable).unwrap_or_else(|_| panic!("{variable}"))
}

/// Runs `sql` on `url` and gives the first column of each row, as text.
pub async fn query(db: Db, url: &str, sql: &str) -> Vec<String> {
    match db {
        Db::MariaDb => {
            let mut conn = MySqlConnection::connect(url).await.unwrap();
            let rows = conn.fetch_all(sqlx::raw_sql(sql)).await.unwrap();
            rows.iter()
                .map(|r| {
                    r.try_get::<String, _>(0)
                        .or_else(|_| r.try_get::<i64, _>(0).map(|n| n.to_string()))
                        .or_else(|_| {
                            r.try_get::<Vec<u8>, _>(0)
                                .map(|b| String::from_utf8_lossy(&b).into_owned())
                        })
                        .unwrap()
                })
                .collect()
        }
        Db::Postgres => {
            let mut conn = PgConnection::connect(url).await.unwrap();
            let rows = conn.fetch_all(sqlx::raw_sql(sql)).await.unwrap();
            rows.iter()
                .map(|r| {
                    r.try_get::<String, _>(0)
                        .or_else(|_| r.try_get::<i64, _>(0).map(|n| n.to_string()))
                        .unwrap()
                })
                .collect()
        }
    }
}

impl Shards {
    pub async fn new(db: Db, tag: &str, servers: [String; 2]) -> Self {
        let base = format!("keyshard_xa_{tag}_{}", std::process::id());
        let shards = Self {
            db,
            servers,
            names: [format!("{base}_0"), format!("{base}_1")],
            repository: format!("{base}_repo"),
        };
        for (i, name) in shards.databases() {
            let admin = shards.admin(i);
            query(db, &admin, &format!("DROP DATABASE IF EXISTS {name}")).await;
            query(db, &admin, &format!("CREATE DATABASE {name}")).await;
        }
        shards
    }

    /// On the machine's shared server.
    pub async fn shared(db: Db, tag: &str) -> Self {
        let admin = admin_url(db);
        let (server, _) = admin.rsplit_once('/').unwrap();
        Self::new(db, tag, [server.to_owned(), server.to_owned()]).await
    }

    pub fn admin(&self, i: usize) -> String {
        match self.db {
            Db::MariaDb => format!("{}/mysql", self.servers[i]),
            Db::Postgres => format!("{}/postgres", self.servers[i]),
        }
    }

    pub fn url(&self, i: usize) -> String {
        format!("{}/{}", self.servers[i], self.names[i])
    }

    /// Rows whose status is `tag`, over every table of both data sources.
    pub async fn count(&self, tag: &str) -> usize {
        let mut total = 0;
        for i in 0..2 {
            for table in 0..2 {
                let sql = format!("SELECT COUNT(*) FROM t_order_{table} WHERE status = '{tag}'");
                total += query(self.db, &self.url(i), &sql).await[0]
                    .parse::<usize>()
                    .unwrap();
            }
        }
        total
    }

    /// Every row's status, with how many rows have it.
    pub async fn statuses(&self) -> BTreeMap<String, usize> {
        let mut all = BTreeMap::new();
        for i in 0..2 {
            for table in 0..2 {
                let sql = format!("SELECT status FROM t_order_{table}");
                for status in query(self.db, &self.url(i), &sql).await {
                    *all.entry(status).or_insert(0) += 1;
                }
            }
        }
        all
    }

    /// Keyshard's prepared branches left in these databases.
    pub async fn prepared(&self) -> usize {
        let mut total = 0;
        for i in 0..2 {
            total += match self.db {
                Db::MariaDb => {
                    // Server-wide: only the branches qualified by these databases.
                    let mut conn = MySqlConnection::connect(&self.admin(i)).await.unwrap();
                    let rows = conn.fetch_all("XA RECOVER").await.unwrap();
                    rows.iter()
                        .filter(|r| {
                            let data: Vec<u8> = r.try_get(3).unwrap();
                            self.names.iter().any(|n| data.ends_with(n.as_bytes()))
                        })
                        .count()
                }
                Db::Postgres => {
                    let sql = format!(
                        "SELECT COUNT(*) FROM pg_prepared_xacts WHERE database IN ('{}', '{}')",
                        self.names[0], self.names[1]
                    );
                    query(self.db, &self.admin(i), &sql).await[0]
                        .parse::<usize>()
                        .unwrap()
                }
            };
            if self.servers[0] == self.servers[1] {
                break;
            }
        }
        total
    }

    pub async fn wait_until_no_prepared(&self) {
        let deadline = Instant::now() + Duration::from_secs(40);
        while self.prepared().await > 0 {
            assert!(Instant::now() < deadline, "prepared branches left behind");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    pub async fn drop_all(self) {
        for (i, name) in self.databases() {
            let sql = format!("DROP DATABASE IF EXISTS {name}");
            query(self.db, &self.admin(i), &sql).await;
        }
    }

    /// Every database of the test, with the index of its server.
    pub fn databases(&self) -> [(usize, &String); 3] {
        [
            (0, &self.names[0]),
            (1, &self.names[1]),
            (0, &self.repository),
        ]
    }
}

/// Where the coordination repository lives.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Repository {
    /// In ds_0's database (the default): decisions are written in ds_0's commits.
    OnFirstShard,
    /// In a database of its own: decisions are written apart from every branch.
    Apart,
}

/// The default configuration on `shards`, listening on `port`; XA when `xa`, with a 3 s
/// lease so that a crashed instance's transactions are recovered quickly.
pub fn config(dir: &Path, shards: &Shards, port: u16, xa: bool, repository: Repository) -> PathBuf {
    let listener = match shards.db {
        Db::MariaDb => format!("  mysql:\n    listen: 127.0.0.1:{port}"),
        Db::Postgres => format!("  postgres:\n    listen: 127.0.0.1:{port}"),
    };
    let mut yaml = crate::common::default_without_mode()
        .replace("sqlite://../data/ds_0.db", &shards.url(0))
        .replace("sqlite://../data/ds_1.db", &shards.url(1))
        .replace("  mysql:\n    listen: 127.0.0.1:3307", &listener);
    if xa {
        yaml.push_str("- !TRANSACTION\n  defaultType: XA\n  providerType: Atomikos\n");
    }
    let mut mode = "mode:\n  type: Standalone\n  repository:\n    type: JDBC\n    props:\n      \
                    timeToLiveSeconds: 3\n"
        .to_owned();
    if repository == Repository::Apart {
        mode += &format!(
            "      jdbc_url: {}/{}\n",
            shards.servers[0], shards.repository
        );
    }
    let path = dir.join(format!("keyshard_{port}.yaml"));
    std::fs::write(&path, format!("{mode}{yaml}")).unwrap();
    path
}
