//! Running one statement through the proxy and against a plain database, and writing down
//! what each answered, so that the two can be compared.

use sqlx::Row;
use tokio_postgres::SimpleQueryMessage;

/// What a statement gave: the first column of its rows, or its error code.
pub type Answer = Result<Vec<String>, String>;

pub async fn pg_answer(client: &tokio_postgres::Client, sql: &str, extended: bool) -> Answer {
    let code = |e: tokio_postgres::Error| match e.code() {
        Some(code) => code.code().to_owned(),
        None => e.to_string(),
    };
    if extended {
        let rows = client.query(sql, &[]).await.map_err(code)?;
        Ok(rows
            .iter()
            .map(|r| r.get::<_, i64>(0).to_string())
            .collect())
    } else {
        let messages = client.simple_query(sql).await.map_err(code)?;
        Ok(messages
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
                _ => None,
            })
            .collect())
    }
}

pub async fn mysql_answer(conn: &mut sqlx::MySqlConnection, sql: &str) -> Answer {
    match sqlx::raw_sql(sql).fetch_all(conn).await {
        Ok(rows) => Ok(rows
            .iter()
            .map(|r| {
                r.try_get::<i64, _>(0)
                    .map(|v| v.to_string())
                    .or_else(|_| r.try_get::<u64, _>(0).map(|v| v.to_string()))
                    .or_else(|_| r.try_get::<String, _>(0))
                    .unwrap_or_else(|e| e.to_string())
            })
            .collect()),
        Err(e) => Err(e
            .as_database_error()
            .and_then(|d| d.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
            .map_or_else(|| e.to_string(), |d| d.number().to_string())),
    }
}

/// Each statement with its answer, for a readable failure.
pub fn transcript(script: &[&str], answers: &[Answer]) -> Vec<String> {
    script
        .iter()
        .zip(answers)
        .map(|(sql, answer)| format!("{sql} -> {answer:?}"))
        .collect()
}

/// A proxy on two fresh MariaDB shards and one plain MariaDB database beside it, each with
/// one connection, to run the same statements on both.
pub struct MariaDbAlike {
    pub shards: super::Shards,
    pub proxy: super::Proxy,
    pub through: sqlx::MySqlConnection,
    plain_shards: super::Shards,
    pub plain: sqlx::MySqlConnection,
}

impl MariaDbAlike {
    /// Both sides, with `setup` (a CREATE TABLE) run on each.
    pub async fn start(setup: &str) -> Self {
        use sqlx::Connection;
        let shards = super::Shards::mariadb().await;
        let proxy = super::Proxy::start(&super::yaml(&shards.url(0), &shards.url(1))).await;
        let mut through = sqlx::MySqlConnection::connect(&proxy.url("root", "root"))
            .await
            .unwrap();
        let plain_shards = super::Shards::mariadb().await;
        let mut plain = sqlx::MySqlConnection::connect(&plain_shards.url(0))
            .await
            .unwrap();
        for conn in [&mut through, &mut plain] {
            sqlx::raw_sql(setup).execute(conn).await.unwrap();
        }
        Self {
            shards,
            proxy,
            through,
            plain_shards,
            plain,
        }
    }

    /// Runs every statement of `script` on both sides and asserts they answered alike.
    pub async fn compare(&mut self, script: &[&str]) {
        let (mut expected, mut got) = (Vec::new(), Vec::new());
        for sql in script {
            expected.push(mysql_answer(&mut self.plain, sql).await);
            got.push(mysql_answer(&mut self.through, sql).await);
        }
        assert_eq!(transcript(script, &got), transcript(script, &expected));
    }

    /// Closes both sides and drops their databases.
    pub async fn finish(self) {
        use sqlx::Connection;
        self.through.close().await.unwrap();
        self.plain.close().await.unwrap();
        self.proxy.stop().await;
        self.shards.cleanup().await;
        self.plain_shards.cleanup().await;
    }
}

/// A proxy on two fresh PostgreSQL shards and one plain PostgreSQL database beside it, each
/// with one client, to run the same statements on both.
pub struct PostgresAlike {
    pub shards: super::postgres::PgShards,
    pub proxy: super::postgres::PgProxy,
    pub through: tokio_postgres::Client,
    plain_shards: super::postgres::PgShards,
    pub plain: tokio_postgres::Client,
}

impl PostgresAlike {
    /// Both sides, with `setup` (a CREATE TABLE) run on each.
    pub async fn start(setup: &str) -> Self {
        use super::postgres::{PgProxy, PgShards, connect, yaml};
        let shards = PgShards::postgres().await;
        let proxy = PgProxy::start(&yaml(&shards.url(0), &shards.url(1), false)).await;
        let through = proxy.client().await;
        let plain_shards = PgShards::postgres().await;
        let plain = connect(&plain_shards.url(0).parse().unwrap())
            .await
            .unwrap();
        for client in [&through, &plain] {
            client.batch_execute(setup).await.unwrap();
        }
        Self {
            shards,
            proxy,
            through,
            plain_shards,
            plain,
        }
    }

    /// Runs every statement of `script` on both sides (in the extended protocol when
    /// `extended`) and asserts they answered alike.
    pub async fn compare(&self, script: &[&str], extended: bool) {
        let (mut expected, mut got) = (Vec::new(), Vec::new());
        for sql in script {
            expected.push(pg_answer(&self.plain, sql, extended).await);
            got.push(pg_answer(&self.through, sql, extended).await);
        }
        assert_eq!(
            transcript(script, &got),
            transcript(script, &expected),
            "extended protocol: {extended}"
        );
    }

    /// The plain database's URL.
    #[allow(dead_code)]
    pub fn plain_url(&self) -> String {
        self.plain_shards.url(0)
    }

    /// Stops the proxy and drops both sides' databases.
    pub async fn finish(self) {
        self.proxy.stop().await;
        self.shards.cleanup().await;
        self.plain_shards.cleanup().await;
    }
}

/// The stored rows `shaped_statements` spells its statements for.
#[allow(dead_code)]
pub const STORED_KEYS: &str = "SELECT order_id, user_id FROM t_order ORDER BY order_id";

/// Text statements of a few shapes, spelt for every third row `(order_id, user_id)` that
/// [`STORED_KEYS`] reads from `t_order (order_id, user_id, status, amount)`: the proxy parses
/// the first two statements of a shape and binds the rest through it, with literals that pick
/// other shards each time. The reads come first (two of them find no row); the writes change
/// the row they name.
#[allow(dead_code)]
pub fn shaped_statements(stored: &[Vec<Option<String>>]) -> (Vec<String>, Vec<String>) {
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    let keys = stored
        .iter()
        .step_by(3)
        .filter_map(|row| match row.as_slice() {
            [Some(key), Some(user)] => Some((key, user)),
            _ => None,
        });
    for (n, (key, user)) in keys.enumerate() {
        let other = user.parse::<i64>().unwrap_or(0) % 5 + 1;
        reads.extend([
            format!("SELECT order_id, status, amount FROM t_order WHERE order_id = {key} AND user_id = {user}"),
            format!("SELECT order_id, status FROM t_order WHERE user_id = {user} ORDER BY order_id DESC LIMIT 3"),
            format!("SELECT COUNT(*), SUM(amount) FROM t_order WHERE user_id IN ({user}, {other}) AND status <> 'x{n}'"),
            format!("SELECT order_id FROM t_order WHERE order_id = '{key}' OR user_id = -{user} ORDER BY order_id"),
            format!("SELECT o.order_id FROM t_order o WHERE (o.user_id = {other}) AND o.amount >= {n} ORDER BY 1 LIMIT 2"),
            // No rows: the columns come from the shard's description, kept per shape (one
            // node, and merged over all of them).
            format!("SELECT order_id, status, amount FROM t_order WHERE order_id = {key} AND user_id = {user} AND status = 'none'"),
            format!("SELECT user_id, amount AS a, order_id FROM t_order WHERE status = 'none {n}' ORDER BY order_id LIMIT 2"),
            // One statement shape on one node of ds_0, then on that node and one of ds_1: the
            // merged units carry the ORDER BY column besides `status`, the single node's not.
            format!("SELECT status FROM t_order WHERE order_id = {key} AND user_id IN (2, 2) AND status = 'none' ORDER BY order_id"),
            format!("SELECT status FROM t_order WHERE order_id = {key} AND user_id IN (2, 3) AND status = 'none' ORDER BY order_id"),
        ]);
        writes.extend([
            format!("UPDATE t_order SET amount = COALESCE(amount, 0) + {n} WHERE order_id = {key} AND user_id = {user}"),
            format!("UPDATE t_order SET status = 's{n}' WHERE order_id = {key}"),
        ]);
    }
    (reads, writes)
}

/// Multi-row INSERTs of rows alike but for their literals (a bulk load), of several row counts:
/// the proxy folds them into one shape, learned from the first statement's first row, and
/// binds every row of each through it. Each with its row count; the keys are given, so that a
/// plain database stores the same rows.
#[allow(dead_code)]
pub fn bulk_statements() -> Vec<(String, u64)> {
    [(900_001_i64, 25_i64), (900_101, 4), (900_201, 2)]
        .into_iter()
        .map(|(first, rows)| {
            let values: Vec<String> = (first..first + rows)
                .map(|key| format!("({key}, {}, 'bulk {key}', -{})", key % 7 + 1, key % 10))
                .collect();
            let sql = format!(
                "INSERT INTO t_order (order_id, user_id, status, amount) VALUES {}",
                values.join(", ")
            );
            (sql, rows as u64)
        })
        .collect()
}
