//! What the shards remember of the fleets that generate keys into them.
//!
//! A repository is the authority on worker ids, but it cannot see a second repository beside
//! it, nor know that it was itself restored from a backup. The data sources the keys are
//! written to can: each keeps `keyshard_fleet`, one row per repository and worker id (who held
//! it last, its epoch, the highest time reserved with it, when it was last renewed and since
//! when its repository has been generating there without a pause). Every claim and renewal
//! checks those rows and then records its own, so:
//!
//! - a second repository over the same data sources is refused while the first one's fleet is
//!   live (the repository generating there longer wins; two starting at once are told apart by
//!   the check after recording), and once that fleet has stopped for its time to live, the new
//!   repository's keys start above every time it reserved;
//! - a repository that hands out a worker id the shards show held by another live instance, or
//!   an epoch already used, has lost claims (restored, or failed over to a lagging replica):
//!   the claim is refused;
//! - a repository whose time marks are behind what the shards remember starts above the
//!   shards' marks;
//! - a LEAF_SEGMENT segment is used only once it is recorded (`keyshard_fleet_segment`, the
//!   highest key each repository handed out per sequence) and no other repository's record
//!   reaches into it; otherwise the sequence moves above that record and takes another. Of two
//!   repositories taking overlapping segments at once, the later to record sees the other's.
//!
//! A data source that cannot be reached is skipped with a warning: the repository stays the
//! authority, and the data sources that answer still hold the record.

use std::time::Duration;

use futures_util::future::join_all;
use keyshard_config::DataSource;
use sqlx::Row;
use tokio::sync::OnceCell;

use crate::db::{Pool, on_pool};
use crate::{Claim, CoordinationError};

pub(crate) const FLEET: &str = "keyshard_fleet";
pub(crate) const SEGMENTS: &str = "keyshard_fleet_segment";
const COLUMNS: &str = "repository_id, worker_id, repository, instance_id, epoch, mark, since, \
                       renewed_at, ttl, layout";

/// The fleet records on the data sources a generator's keys are written to.
#[derive(Debug)]
pub struct FleetRecords {
    stores: Vec<Store>,
    timeout: Duration,
}

#[derive(Debug)]
struct Store {
    name: String,
    pool: Pool,
    created: OnceCell<()>,
}

/// Who is recording: this instance, its claim and its repository.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Recorder<'a> {
    pub repository_id: &'a str,
    pub repository: &'a str,
    pub instance_id: &'a str,
    pub ttl_millis: i64,
    /// The generators' key layout ("" without one): instances of one fleet must agree.
    pub layout: &'a str,
}

/// One remembered row.
#[derive(Debug)]
struct Remembered {
    repository_id: String,
    worker_id: i64,
    repository: String,
    instance_id: String,
    epoch: i64,
    mark: i64,
    since: i64,
    renewed_at: i64,
    ttl: i64,
    layout: String,
}

impl Remembered {
    fn live(&self, now: i64) -> bool {
        self.renewed_at.saturating_add(self.ttl) > now
    }
}

impl FleetRecords {
    /// Records on `sources` (one connection each, opened on first use); each call on a data
    /// source must finish within `timeout`.
    pub fn connect(sources: &[DataSource], timeout: Duration) -> Result<Self, CoordinationError> {
        let stores = sources
            .iter()
            .map(|source| {
                Ok(Store {
                    name: source.name.clone(),
                    pool: Pool::connect_lazy(source, 1, timeout, "data source")?,
                    created: OnceCell::new(),
                })
            })
            .collect::<Result<_, CoordinationError>>()?;
        Ok(Self { stores, timeout })
    }

    /// The data sources that hold the record, by name.
    pub fn data_sources(&self) -> impl Iterator<Item = &str> {
        self.stores.iter().map(|s| s.name.as_str())
    }

    /// Checks `claim` against what every data source remembers, records `reserve` (when
    /// given) as this claim's mark, and checks again, so that of two fleets recording at
    /// once exactly one goes on. Returns the highest time the shards remember that this
    /// claim's keys must lie above.
    pub(crate) async fn check_and_record(
        &self,
        who: Recorder<'_>,
        claim: &Claim,
        reserve: Option<i64>,
    ) -> Result<i64, CoordinationError> {
        let outcomes = join_all(self.stores.iter().map(|store| async move {
            let work = async {
                let floor = store.check(who, claim).await?;
                if let Some(reserve) = reserve {
                    store.record(who, claim, reserve).await?;
                    store.check(who, claim).await?;
                }
                Ok::<_, CoordinationError>(floor)
            };
            match tokio::time::timeout(self.timeout, work).await {
                Ok(outcome) => (store, outcome),
                Err(_) => (store, Err(CoordinationError::Timeout(self.timeout))),
            }
        }))
        .await;
        let mut floor = 0;
        for (store, outcome) in outcomes {
            match outcome {
                Ok(mark) => floor = floor.max(mark),
                Err(
                    conflict @ (CoordinationError::Fleet { .. }
                    | CoordinationError::EpochBehind { .. }),
                ) => return Err(conflict),
                Err(e) => tracing::warn!(
                    "fleet record on data source '{}' not checked: {e}; the data sources that \
                     answer still hold it",
                    store.name
                ),
            }
        }
        Ok(floor)
    }

    /// Records segment `first..=last` of the sequence `key` and checks it against every other
    /// repository's record: `None` when it is clear to use, else the highest key another
    /// repository handed out of it, which the sequence must move above.
    pub(crate) async fn check_segment(
        &self,
        who: Recorder<'_>,
        key: &str,
        first: i64,
        last: i64,
    ) -> Option<i64> {
        let outcomes = join_all(self.stores.iter().map(|store| async move {
            let work = async {
                let overlap = |max: Option<i64>| max.filter(|max| *max >= first);
                if let Some(max) = overlap(store.others_segment_max(who, key).await?) {
                    return Ok(Some(max));
                }
                store.record_segment(who, key, last).await?;
                Ok::<_, CoordinationError>(overlap(store.others_segment_max(who, key).await?))
            };
            match tokio::time::timeout(self.timeout, work).await {
                Ok(outcome) => (store, outcome),
                Err(_) => (store, Err(CoordinationError::Timeout(self.timeout))),
            }
        }))
        .await;
        let mut above = None;
        for (store, outcome) in outcomes {
            match outcome {
                Ok(max) => above = above.max(max),
                Err(e) => tracing::warn!(
                    "segment record of '{key}' on data source '{}' not checked: {e}",
                    store.name
                ),
            }
        }
        above
    }

    /// Marks `claim` as no longer renewed, with `mark` (the last millisecond used, never below
    /// what the claim started above) replacing the reservation made ahead of use, so that a
    /// repository replacing this one need not wait out its time to live.
    pub(crate) async fn release(&self, who: Recorder<'_>, claim: &Claim, mark: i64) {
        for store in &self.stores {
            let released = tokio::time::timeout(self.timeout, store.release(who, claim, mark));
            match released.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!("fleet record on '{}' not released: {e}", store.name),
                Err(_) => {
                    tracing::warn!("fleet record on '{}' not released: timed out", store.name)
                }
            }
        }
    }
}

impl Store {
    async fn create(&self) -> Result<(), CoordinationError> {
        let tables = [
            format!(
                "CREATE TABLE IF NOT EXISTS {FLEET} (repository_id VARCHAR(64) NOT NULL, \
                 worker_id BIGINT NOT NULL, repository VARCHAR(255) NOT NULL, \
                 instance_id VARCHAR(64) NOT NULL, epoch BIGINT NOT NULL, mark BIGINT NOT NULL, \
                 since BIGINT NOT NULL, renewed_at BIGINT NOT NULL, ttl BIGINT NOT NULL, \
                 layout VARCHAR(255) NOT NULL, PRIMARY KEY (repository_id, worker_id))"
            ),
            format!(
                "CREATE TABLE IF NOT EXISTS {SEGMENTS} (repository_id VARCHAR(64) NOT NULL, \
                 leaf_key VARCHAR(255) NOT NULL, repository VARCHAR(255) NOT NULL, \
                 max_id BIGINT NOT NULL, PRIMARY KEY (repository_id, leaf_key))"
            ),
        ];
        self.created
            .get_or_try_init(|| async {
                on_pool!(&self.pool, pool => {
                    for sql in &tables {
                        sqlx::query(sql).execute(pool).await?;
                    }
                });
                Ok::<_, CoordinationError>(())
            })
            .await?;
        Ok(())
    }

    /// The highest key of sequence `key` any other repository recorded here.
    async fn others_segment_max(
        &self,
        who: Recorder<'_>,
        key: &str,
    ) -> Result<Option<i64>, CoordinationError> {
        self.create().await?;
        let p = |n| self.pool.p(n);
        let sql = format!(
            "SELECT MAX(max_id) FROM {SEGMENTS} WHERE leaf_key = {} AND repository_id <> {}",
            p(1),
            p(2)
        );
        Ok(on_pool!(&self.pool, pool => sqlx::query_scalar(&sql)
            .bind(key)
            .bind(who.repository_id)
            .fetch_one(pool)
            .await?))
    }

    async fn record_segment(
        &self,
        who: Recorder<'_>,
        key: &str,
        last: i64,
    ) -> Result<(), CoordinationError> {
        let d = self.pool.dialect();
        let p = |n| self.pool.p(n);
        let insert = (d.insert_ignore)(
            SEGMENTS,
            "repository_id, leaf_key, repository, max_id",
            &format!("({}, {}, {}, {})", p(1), p(2), p(3), p(4)),
        );
        let update = format!(
            "UPDATE {SEGMENTS} SET max_id = {}(max_id, {}) WHERE repository_id = {} AND \
             leaf_key = {}",
            d.greatest,
            p(1),
            p(2),
            p(3)
        );
        on_pool!(&self.pool, pool => {
            sqlx::query(&insert)
                .bind(who.repository_id)
                .bind(key)
                .bind(who.repository)
                .bind(last)
                .execute(pool)
                .await?;
            sqlx::query(&update)
                .bind(last)
                .bind(who.repository_id)
                .bind(key)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// Every remembered row, and the database's clock.
    async fn read(&self) -> Result<(Vec<Remembered>, i64), CoordinationError> {
        self.create().await?;
        let now = self.pool.dialect().now;
        let sql = format!("SELECT {COLUMNS}, {now} FROM {FLEET}");
        let clock = format!("SELECT {now}");
        on_pool!(&self.pool, pool => {
            let mut rows = Vec::new();
            let mut now = None;
            for row in sqlx::query(&sql).fetch_all(pool).await? {
                now = Some(row.try_get(10)?);
                rows.push(Remembered {
                    repository_id: row.try_get(0)?,
                    worker_id: row.try_get(1)?,
                    repository: row.try_get(2)?,
                    instance_id: row.try_get(3)?,
                    epoch: row.try_get(4)?,
                    mark: row.try_get(5)?,
                    since: row.try_get(6)?,
                    renewed_at: row.try_get(7)?,
                    ttl: row.try_get(8)?,
                    layout: row.try_get(9)?,
                });
            }
            let now = match now {
                Some(now) => now,
                None => sqlx::query_scalar(&clock).fetch_one(pool).await?,
            };
            Ok((rows, now))
        })
    }

    async fn check(&self, who: Recorder<'_>, claim: &Claim) -> Result<i64, CoordinationError> {
        let (rows, now) = self.read().await?;
        judge(&self.name, who, claim, &rows, now)
    }

    async fn record(
        &self,
        who: Recorder<'_>,
        claim: &Claim,
        reserve: i64,
    ) -> Result<(), CoordinationError> {
        let d = self.pool.dialect();
        let now = d.now;
        let p = |n| self.pool.p(n);
        let insert = (d.insert_ignore)(
            FLEET,
            COLUMNS,
            &format!(
                "({}, {}, {}, {}, {}, 0, {now}, {now}, {}, {})",
                p(1),
                p(2),
                p(3),
                p(4),
                p(5),
                p(6),
                p(7)
            ),
        );
        // `since` first: MySQL assigns left to right, and it must see the old `renewed_at`.
        let update = format!(
            "UPDATE {FLEET} SET since = CASE WHEN renewed_at + ttl < {now} THEN {now} ELSE \
             since END, renewed_at = {now}, mark = {}(mark, {}), repository = {}, \
             instance_id = {}, epoch = {}, ttl = {}, layout = {} WHERE repository_id = {} AND \
             worker_id = {}",
            d.greatest,
            p(1),
            p(2),
            p(3),
            p(4),
            p(5),
            p(6),
            p(7),
            p(8)
        );
        let epoch = i64::try_from(claim.epoch).unwrap_or(i64::MAX);
        let worker_id = i64::from(claim.worker_id);
        on_pool!(&self.pool, pool => {
            sqlx::query(&insert)
                .bind(who.repository_id)
                .bind(worker_id)
                .bind(who.repository)
                .bind(who.instance_id)
                .bind(epoch)
                .bind(who.ttl_millis)
                .bind(who.layout)
                .execute(pool)
                .await?;
            sqlx::query(&update)
                .bind(reserve)
                .bind(who.repository)
                .bind(who.instance_id)
                .bind(epoch)
                .bind(who.ttl_millis)
                .bind(who.layout)
                .bind(who.repository_id)
                .bind(worker_id)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    async fn release(
        &self,
        who: Recorder<'_>,
        claim: &Claim,
        mark: i64,
    ) -> Result<(), CoordinationError> {
        let p = |n| self.pool.p(n);
        let sql = format!(
            "UPDATE {FLEET} SET renewed_at = 0, mark = {} WHERE repository_id = {} \
             AND worker_id = {} AND instance_id = {}",
            p(1),
            p(2),
            p(3),
            p(4)
        );
        on_pool!(&self.pool, pool => {
            sqlx::query(&sql)
                .bind(mark)
                .bind(who.repository_id)
                .bind(i64::from(claim.worker_id))
                .bind(who.instance_id)
                .execute(pool)
                .await?;
        });
        Ok(())
    }
}

/// What `rows` (read at database time `now` on `data_source`) say about `claim`: the time its
/// keys must start above, or why it must not generate.
fn judge(
    data_source: &str,
    who: Recorder<'_>,
    claim: &Claim,
    rows: &[Remembered],
    now: i64,
) -> Result<i64, CoordinationError> {
    let conflict = |found: String| CoordinationError::Fleet {
        data_source: data_source.to_owned(),
        found,
    };
    // How long each repository has been generating here without a pause: the one that has
    // been longer goes on. A repository with no live row here is new (it starts now).
    let since = |repository_id: &str| {
        rows.iter()
            .filter(|r| r.repository_id == repository_id && r.live(now))
            .map(|r| r.since)
            .min()
    };
    let ours = since(who.repository_id).unwrap_or(now);
    let mut floor = 0;
    for row in rows {
        if row.repository_id != who.repository_id {
            let theirs = since(&row.repository_id).unwrap_or(now);
            let older = (theirs, row.repository_id.as_str()) < (ours, who.repository_id);
            if row.live(now) && older {
                return Err(conflict(format!(
                    "keys are generated into it through another repository too: {} (identity \
                     {}; instance {} renewed worker id {} there {} ms ago). Two repositories \
                     hand out the same worker ids, so their keys collide. Point every instance \
                     at one repository (`mode.repository`); this instance generates no keys \
                     until that fleet has stopped for its time to live ({} ms), and then starts \
                     above its keys",
                    row.repository,
                    row.repository_id,
                    row.instance_id,
                    row.worker_id,
                    now - row.renewed_at,
                    row.ttl
                )));
            }
            // A stopped fleet, or one that started after this one and refuses to generate:
            // either way this claim's keys lie above every time it reserved.
            floor = floor.max(row.mark);
            continue;
        }
        let other = row.instance_id != who.instance_id;
        if other && row.live(now) && row.layout != who.layout {
            return Err(conflict(format!(
                "instance {} generates keys with another key layout ({}) than this instance \
                 ({}): keys of two layouts can be equal. Give every instance's SNOWFLAKE \
                 generators the same epoch, worker-id-bits and sequence-bits",
                row.instance_id, row.layout, who.layout
            )));
        }
        if row.worker_id != i64::from(claim.worker_id) {
            continue;
        }
        floor = floor.max(row.mark);
        let epoch = i64::try_from(claim.epoch).unwrap_or(i64::MAX);
        if other && row.live(now) {
            return Err(conflict(format!(
                "the repository ({}) gave worker id {} (epoch {}) to this instance, but \
                 instance {} renewed it here {} ms ago (epoch {}): the repository has lost \
                 claims (restored from a backup, or failed over to a replica that lags). No \
                 keys are generated with this worker id; that instance loses it at its next \
                 renewal, and the claim is tried again",
                who.repository,
                claim.worker_id,
                claim.epoch,
                row.instance_id,
                now - row.renewed_at,
                row.epoch
            )));
        }
        if (other && row.epoch >= epoch) || row.epoch > epoch {
            return Err(CoordinationError::EpochBehind {
                data_source: data_source.to_owned(),
                worker_id: claim.worker_id,
                epoch: claim.epoch,
                remembered: u64::try_from(row.epoch).unwrap_or(0),
            });
        }
    }
    Ok(floor)
}

#[cfg(test)]
mod tests;
