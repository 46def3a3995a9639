//! The JDBC repository: three small tables in a database reached through sqlx (MySQL/MariaDB,
//! PostgreSQL or SQLite). By default the first data source of the configuration, so every
//! instance that shares the shards shares the repository with no extra setting.
//!
//! Every lease time is the database's clock (`expires_at`, milliseconds since the Unix epoch),
//! never an instance's; a claim is one atomic UPDATE.

use std::time::Duration;

use futures_util::future::BoxFuture;
use keyshard_config::DataSource;
use sqlx::{Executor, Row};

use crate::db::{Dialect, Pool, on_pool};
use crate::{Claim, ComputeNode, CoordinationError, Instance, Repository, WORKER_IDS};

pub(crate) const WORKERS: &str = "keyshard_worker_id";
pub(crate) const SEGMENTS: &str = "keyshard_segment";
pub(crate) const SERVICE_TIMES: &str = "keyshard_service_time";
pub(crate) const DECISIONS: &str = "keyshard_xa_decision";
pub(crate) const IDENTITY: &str = "keyshard_repository";

/// A repository in a database.
#[derive(Debug)]
pub struct JdbcRepository {
    pool: Pool,
    describe: String,
    identity: String,
    time_to_live: Duration,
}

impl JdbcRepository {
    /// Connects to `source` (creating the tables on first use) with leases that hold for
    /// `time_to_live`; every statement must finish within `operation_timeout`.
    pub async fn connect(
        source: &DataSource,
        time_to_live: Duration,
        operation_timeout: Duration,
    ) -> Result<Self, CoordinationError> {
        // Leases and segments need one or two; every XA commit records its decision here,
        // and a handful of connections keeps those from queueing behind each other.
        let pool = Pool::connect_lazy(source, 8, operation_timeout, "repository")?;
        let mut repository = Self {
            pool,
            describe: format!("JDBC {}", source.redacted_url()),
            identity: String::new(),
            time_to_live,
        };
        repository.identity =
            tokio::time::timeout(operation_timeout * 4, repository.create_tables())
                .await
                .map_err(|_| CoordinationError::Timeout(operation_timeout * 4))??;
        Ok(repository)
    }

    fn dialect(&self) -> &'static Dialect {
        self.pool.dialect()
    }

    fn p(&self, n: usize) -> String {
        self.pool.p(n)
    }

    fn ttl_millis(&self) -> i64 {
        i64::try_from(self.time_to_live.as_millis()).unwrap_or(i64::MAX)
    }

    /// Creates the tables unless they exist, and returns the repository's identity (made on
    /// first use).
    async fn create_tables(&self) -> Result<String, CoordinationError> {
        let d = self.dialect();
        let tables = [
            format!(
                "CREATE TABLE IF NOT EXISTS {WORKERS} (worker_id BIGINT NOT NULL PRIMARY KEY, \
                 instance_id VARCHAR(64) NOT NULL, address VARCHAR(255) NOT NULL, \
                 epoch BIGINT NOT NULL, expires_at BIGINT NOT NULL, high_water BIGINT NOT NULL)"
            ),
            format!(
                "CREATE TABLE IF NOT EXISTS {SEGMENTS} (leaf_key VARCHAR(255) NOT NULL PRIMARY \
                 KEY, max_id BIGINT NOT NULL)"
            ),
            format!(
                "CREATE TABLE IF NOT EXISTS {SERVICE_TIMES} (service VARCHAR(255) NOT NULL \
                 PRIMARY KEY, millis BIGINT NOT NULL)"
            ),
            // The primary key is the arbiter between a coordinator deciding to commit and a
            // recovering instance deciding to abort: whichever row is inserted first stands.
            format!(
                "CREATE TABLE IF NOT EXISTS {DECISIONS} (gtrid VARCHAR(64) NOT NULL PRIMARY KEY, \
                 committed SMALLINT NOT NULL, decided_at BIGINT NOT NULL)"
            ),
            // One row: the primary key keeps the first instance's identity when several
            // start at once.
            format!(
                "CREATE TABLE IF NOT EXISTS {IDENTITY} (singleton SMALLINT NOT NULL PRIMARY KEY, \
                 repository_id VARCHAR(64) NOT NULL)"
            ),
        ];
        // Every worker id is a row from the start, so claiming is an UPDATE of an existing row
        // and two instances can never both insert one.
        let rows = (0..WORKER_IDS)
            .map(|id| format!("({id}, '', '', 0, 0, 0)"))
            .collect::<Vec<_>>()
            .join(", ");
        let fill = (d.insert_ignore)(
            WORKERS,
            "worker_id, instance_id, address, epoch, expires_at, high_water",
            &rows,
        );
        on_pool!(&self.pool, pool => {
            for sql in &tables {
                pool.execute(sql.as_str()).await?;
            }
            pool.execute(fill.as_str()).await?;
        });
        let identify = (d.insert_ignore)(
            IDENTITY,
            "singleton, repository_id",
            &format!("(1, '{}')", uuid::Uuid::new_v4()),
        );
        let read = format!("SELECT repository_id FROM {IDENTITY} WHERE singleton = 1");
        Ok(on_pool!(&self.pool, pool => {
            pool.execute(identify.as_str()).await?;
            sqlx::query_scalar(&read).fetch_one(pool).await?
        }))
    }

    async fn claim_impl(
        &self,
        instance: &Instance,
        preferred: Option<u16>,
    ) -> Result<Claim, CoordinationError> {
        let d = self.dialect();
        let now = d.now;
        let ttl = self.ttl_millis();
        let set = format!(
            "SET instance_id = {}, address = {}, epoch = epoch + 1, expires_at = {now} + {ttl}",
            self.p(1),
            self.p(2)
        );
        let free = format!("expires_at < {now}");
        let sql = match (preferred, &self.pool) {
            (Some(id), _) => format!("UPDATE {WORKERS} {set} WHERE worker_id = {id} AND {free}"),
            (None, Pool::MySql(_)) => {
                format!("UPDATE {WORKERS} {set} WHERE {free} ORDER BY worker_id LIMIT 1")
            }
            // SKIP LOCKED: concurrent claimers take different rows instead of queueing on one.
            (None, Pool::Postgres(_)) => format!(
                "UPDATE {WORKERS} {set} WHERE {free} AND worker_id = (SELECT worker_id FROM \
                 {WORKERS} WHERE {free} ORDER BY worker_id LIMIT 1 FOR UPDATE SKIP LOCKED)"
            ),
            // SQLite runs one writer at a time: the subquery and the update are one step.
            (None, Pool::Sqlite(_)) => format!(
                "UPDATE {WORKERS} {set} WHERE worker_id = (SELECT worker_id FROM {WORKERS} \
                 WHERE {free} ORDER BY worker_id LIMIT 1)"
            ),
        };
        let claimed = on_pool!(&self.pool, pool => sqlx::query(&sql)
            .bind(&instance.id)
            .bind(&instance.address)
            .execute(pool)
            .await?
            .rows_affected());
        if claimed == 0 {
            return Err(match preferred {
                Some(worker_id) => self.held(worker_id).await?,
                None => CoordinationError::NoFreeWorkerId,
            });
        }
        let select = format!(
            "SELECT worker_id, epoch, high_water FROM {WORKERS} WHERE instance_id = {} AND \
             expires_at > {now} ORDER BY epoch DESC",
            self.p(1)
        );
        let (worker_id, epoch, high_water): (i64, i64, i64) = on_pool!(&self.pool, pool => {
            let row = sqlx::query(&select).bind(&instance.id).fetch_one(pool).await?;
            (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)
        });
        Ok(Claim {
            worker_id: u16::try_from(worker_id)
                .ok()
                .filter(|id| *id < WORKER_IDS)
                .ok_or_else(|| CoordinationError::Corrupt(format!("worker id {worker_id}")))?,
            epoch: u64::try_from(epoch)
                .map_err(|_| CoordinationError::Corrupt(format!("epoch {epoch}")))?,
            high_water_millis: high_water,
        })
    }

    /// Why `worker_id` could not be claimed: who holds it, where, and for how long.
    async fn held(&self, worker_id: u16) -> Result<CoordinationError, CoordinationError> {
        let now = self.dialect().now;
        let sql = format!(
            "SELECT instance_id, address, expires_at - {now} FROM {WORKERS} \
             WHERE worker_id = {worker_id}"
        );
        let (instance, address, left): (String, String, i64) = on_pool!(&self.pool, pool => {
            let row = sqlx::query(&sql).fetch_one(pool).await?;
            (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)
        });
        Ok(CoordinationError::WorkerIdHeld {
            worker_id,
            holder: format!("{instance} ({address})"),
            address: Some(address),
            expires_in: Some(Duration::from_millis(u64::try_from(left).unwrap_or(0))),
        })
    }

    /// Runs an UPDATE of `claim`'s row; `LeaseLost` when the row is no longer this claim's.
    async fn update_claim(
        &self,
        instance: &Instance,
        claim: &Claim,
        set: &str,
        value: i64,
    ) -> Result<(), CoordinationError> {
        let sql = format!(
            "UPDATE {WORKERS} SET {set} WHERE worker_id = {} AND epoch = {} AND instance_id = {}",
            claim.worker_id,
            claim.epoch,
            self.p(2)
        );
        let updated = on_pool!(&self.pool, pool => sqlx::query(&sql)
            .bind(value)
            .bind(&instance.id)
            .execute(pool)
            .await?
            .rows_affected());
        if updated == 0 {
            return Err(CoordinationError::LeaseLost {
                worker_id: claim.worker_id,
                epoch: claim.epoch,
            });
        }
        Ok(())
    }

    async fn compute_nodes_impl(&self) -> Result<Vec<ComputeNode>, CoordinationError> {
        let sql = format!(
            "SELECT worker_id, instance_id, epoch, expires_at FROM {WORKERS} WHERE expires_at > \
             {} ORDER BY worker_id",
            self.dialect().now
        );
        let rows: Vec<(i64, String, i64, i64)> = on_pool!(&self.pool, pool => {
            let mut rows = Vec::new();
            for row in sqlx::query(&sql).fetch_all(pool).await? {
                rows.push((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?, row.try_get(3)?));
            }
            rows
        });
        Ok(rows
            .into_iter()
            .map(|(worker_id, instance_id, epoch, expires_at)| ComputeNode {
                instance_id,
                worker_id: u16::try_from(worker_id).unwrap_or(u16::MAX),
                epoch: u64::try_from(epoch).unwrap_or(0),
                expires_at_millis: Some(expires_at),
            })
            .collect())
    }

    async fn next_segment_impl(
        &self,
        key: &str,
        initial: i64,
        step: i64,
    ) -> Result<(i64, i64), CoordinationError> {
        let first_last = initial.checked_add(step - 1).ok_or_else(|| {
            CoordinationError::Config(format!("segment {key}: {initial} + {step} overflows"))
        })?;
        // PostgreSQL and SQLite: one upsert that returns the segment's end.
        macro_rules! upsert_returning {
            ($pool:expr) => {
                sqlx::query_scalar(&format!(
                    "INSERT INTO {SEGMENTS} (leaf_key, max_id) VALUES ($1, $2) ON CONFLICT \
                     (leaf_key) DO UPDATE SET max_id = {SEGMENTS}.max_id + $3 RETURNING max_id"
                ))
                .bind(key)
                .bind(first_last)
                .bind(step)
                .fetch_one($pool)
                .await?
            };
        }
        let last: i64 = match &self.pool {
            // MariaDB has no RETURNING on an upsert: the row lock taken by the upsert keeps the
            // value ours until the transaction ends.
            Pool::MySql(pool) => {
                let mut tx = pool.begin().await?;
                sqlx::query(&format!(
                    "INSERT INTO {SEGMENTS} (leaf_key, max_id) VALUES (?, ?) ON DUPLICATE KEY \
                     UPDATE max_id = max_id + ?"
                ))
                .bind(key)
                .bind(first_last)
                .bind(step)
                .execute(&mut *tx)
                .await?;
                let last = sqlx::query_scalar(&format!(
                    "SELECT max_id FROM {SEGMENTS} WHERE leaf_key = ?"
                ))
                .bind(key)
                .fetch_one(&mut *tx)
                .await?;
                tx.commit().await?;
                last
            }
            Pool::Postgres(pool) => upsert_returning!(pool),
            Pool::Sqlite(pool) => upsert_returning!(pool),
        };
        Ok((last - (step - 1), last))
    }

    async fn raise_segment_impl(&self, key: &str, at_least: i64) -> Result<(), CoordinationError> {
        let d = self.dialect();
        let sql = match self.pool {
            Pool::MySql(_) => format!(
                "INSERT INTO {SEGMENTS} (leaf_key, max_id) VALUES (?, ?) ON DUPLICATE KEY \
                 UPDATE max_id = GREATEST(max_id, VALUES(max_id))"
            ),
            _ => format!(
                "INSERT INTO {SEGMENTS} (leaf_key, max_id) VALUES ($1, $2) ON CONFLICT \
                 (leaf_key) DO UPDATE SET max_id = {}({SEGMENTS}.max_id, excluded.max_id)",
                d.greatest
            ),
        };
        on_pool!(&self.pool, pool => {
            sqlx::query(&sql).bind(key).bind(at_least).execute(pool).await?;
        });
        Ok(())
    }

    async fn service_time_impl(&self, service: &str) -> Result<Option<i64>, CoordinationError> {
        let sql = format!(
            "SELECT millis FROM {SERVICE_TIMES} WHERE service = {}",
            self.p(1)
        );
        Ok(on_pool!(&self.pool, pool => sqlx::query_scalar(&sql)
            .bind(service)
            .fetch_optional(pool)
            .await?))
    }

    async fn record_service_time_impl(
        &self,
        service: &str,
        millis: i64,
    ) -> Result<(), CoordinationError> {
        let d = self.dialect();
        let sql = match self.pool {
            Pool::MySql(_) => format!(
                "INSERT INTO {SERVICE_TIMES} (service, millis) VALUES (?, ?) ON DUPLICATE KEY \
                 UPDATE millis = GREATEST(millis, VALUES(millis))"
            ),
            _ => format!(
                "INSERT INTO {SERVICE_TIMES} (service, millis) VALUES ($1, $2) ON CONFLICT \
                 (service) DO UPDATE SET millis = {}({SERVICE_TIMES}.millis, excluded.millis)",
                d.greatest
            ),
        };
        on_pool!(&self.pool, pool => {
            sqlx::query(&sql).bind(service).bind(millis).execute(pool).await?;
        });
        Ok(())
    }

    async fn decide_impl(&self, gtrid: &str, commit: bool) -> Result<bool, CoordinationError> {
        let insert = format!(
            "INSERT INTO {DECISIONS} (gtrid, committed, decided_at) VALUES ({}, {}, {})",
            self.p(1),
            self.p(2),
            self.dialect().now
        );
        let select = format!(
            "SELECT committed FROM {DECISIONS} WHERE gtrid = {}",
            self.p(1)
        );
        let inserted = on_pool!(&self.pool, pool => sqlx::query(&insert)
            .bind(gtrid)
            .bind(i16::from(commit))
            .execute(pool)
            .await
            .map(|_| ()));
        match inserted {
            Ok(()) => Ok(commit),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                let stored: Option<i16> = on_pool!(&self.pool, pool => sqlx::query_scalar(&select)
                    .bind(gtrid)
                    .fetch_optional(pool)
                    .await?);
                // Forgotten between our insert and our read: only a finished transaction is
                // forgotten, and ours is not, so this is a corrupt repository.
                stored.map(|c| c != 0).ok_or_else(|| {
                    CoordinationError::Corrupt(format!("decision for {gtrid} vanished"))
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn forget_impl(&self, gtrids: &[String]) -> Result<(), CoordinationError> {
        if gtrids.is_empty() {
            return Ok(());
        }
        let placeholders = (1..=gtrids.len())
            .map(|n| self.p(n))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!("DELETE FROM {DECISIONS} WHERE gtrid IN ({placeholders})");
        on_pool!(&self.pool, pool => {
            let mut query = sqlx::query(&sql);
            for gtrid in gtrids {
                query = query.bind(gtrid);
            }
            query.execute(pool).await?;
        });
        Ok(())
    }
}

impl Repository for JdbcRepository {
    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn identity(&self) -> &str {
        &self.identity
    }

    fn time_to_live(&self) -> Duration {
        self.time_to_live
    }

    fn claim<'a>(
        &'a self,
        instance: &'a Instance,
        preferred: Option<u16>,
    ) -> BoxFuture<'a, Result<Claim, CoordinationError>> {
        Box::pin(self.claim_impl(instance, preferred))
    }

    fn renew<'a>(
        &'a self,
        instance: &'a Instance,
        claim: &'a Claim,
        reserve_millis: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>> {
        let d = self.dialect();
        Box::pin(async move {
            let set = format!(
                "expires_at = {} + {}, high_water = {}(high_water, {})",
                d.now,
                self.ttl_millis(),
                d.greatest,
                self.p(1)
            );
            self.update_claim(instance, claim, &set, reserve_millis)
                .await
        })
    }

    fn release<'a>(
        &'a self,
        instance: &'a Instance,
        claim: &'a Claim,
        high_water_millis: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>> {
        Box::pin(async move {
            // The holder has stopped: its real last millisecond replaces the reservation made
            // ahead of use, but never goes below what earlier holders left.
            let mark = high_water_millis.max(claim.high_water_millis);
            let set = format!("expires_at = 0, high_water = {}", self.p(1));
            self.update_claim(instance, claim, &set, mark).await
        })
    }

    fn compute_nodes(&self) -> BoxFuture<'_, Result<Vec<ComputeNode>, CoordinationError>> {
        Box::pin(self.compute_nodes_impl())
    }

    fn next_segment<'a>(
        &'a self,
        key: &'a str,
        initial: i64,
        step: i64,
    ) -> BoxFuture<'a, Result<(i64, i64), CoordinationError>> {
        Box::pin(self.next_segment_impl(key, initial, step))
    }

    fn raise_segment<'a>(
        &'a self,
        key: &'a str,
        at_least: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>> {
        Box::pin(self.raise_segment_impl(key, at_least))
    }

    fn clock_millis(&self) -> BoxFuture<'_, Result<i64, CoordinationError>> {
        Box::pin(async move {
            let sql = format!("SELECT {}", self.dialect().now);
            Ok(on_pool!(&self.pool, pool => sqlx::query_scalar(&sql)
                .fetch_one(pool)
                .await?))
        })
    }

    fn service_time<'a>(
        &'a self,
        service: &'a str,
    ) -> BoxFuture<'a, Result<Option<i64>, CoordinationError>> {
        Box::pin(self.service_time_impl(service))
    }

    fn record_service_time<'a>(
        &'a self,
        service: &'a str,
        millis: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>> {
        Box::pin(self.record_service_time_impl(service, millis))
    }

    fn decide<'a>(
        &'a self,
        gtrid: &'a str,
        commit: bool,
    ) -> BoxFuture<'a, Result<bool, CoordinationError>> {
        Box::pin(self.decide_impl(gtrid, commit))
    }

    fn decision_statement(&self, gtrid: &str) -> Option<String> {
        Some(format!(
            "INSERT INTO {DECISIONS} (gtrid, committed, decided_at) VALUES ('{}', 1, {})",
            gtrid.replace('\'', "''"),
            self.dialect().now
        ))
    }

    fn forget<'a>(&'a self, gtrids: &'a [String]) -> BoxFuture<'a, Result<(), CoordinationError>> {
        Box::pin(self.forget_impl(gtrids))
    }
}
