//! Read/write splitting: the replicas behind a data source (`!READWRITE_SPLITTING`), which of
//! them may answer a read now, and read-your-writes.
//!
//! A group's name is a data source like any other: its pool is the primary's, and everything
//! runs there except a read the router marks [`Plan::replica_safe`], in autocommit, of a
//! session that keeps no connection of its own. Such a read goes to a replica the balancer
//! picks among those in rotation.
//!
//! **Read-your-writes.** Each time a session's statement ends on a group's primary (a write,
//! a commit), the session notes the moment (see `SessionState::wrote`). Under
//! `consistency: causal`, its next read there needs the primary's position at or after that
//! moment, the position of a check that started after it, or one read right then, and goes
//! to a replica that has applied it: known from the background checks, or asked, for up to
//! `causal_wait`, else the read goes to the primary. Positions are GTIDs on MariaDB and WAL
//! locations on PostgreSQL ([`Position`]).
//!
//! **Health.** Every `check_interval` a background task reads each primary's position and each
//! replica's applied position and replication state. A replica that does not answer, does not
//! replicate, or lags more than `max_replication_delay` behind (the age of the newest primary
//! position it has applied) leaves the rotation until a check finds it well again. A read whose
//! replica fails before any of its rows went out runs again on the primary, and the replica
//! leaves the rotation at once.

pub(crate) mod position;
mod probe;
mod reads;

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use keyshard_config::{Config, Consistency, LoadBalancer, TransactionalReads};
use keyshard_router::Plan;

pub(crate) use position::{Position, Written};

use crate::BackendError;
use crate::pool::Pool;
use crate::session_state;

/// Primary positions kept per group, newest last: enough to date a lagging replica's
/// position over a few seconds of checks.
const SAMPLES: usize = 64;

/// Every group with replicas, by its data source name.
#[derive(Debug, Default)]
pub(crate) struct Replicas {
    groups: BTreeMap<String, Group>,
    consistency: Consistency,
    causal_wait: Duration,
    max_delay: Duration,
    interval: Duration,
}

#[derive(Debug)]
struct Group {
    balancer: LoadBalancer,
    /// `transactionalReadQueryStrategy`.
    transactional: TransactionalReads,
    replicas: Vec<Replica>,
    /// The next turn of the balancer.
    turn: AtomicUsize,
    /// The primary's positions, each with when it was asked for, oldest first.
    samples: Mutex<VecDeque<(Instant, Position)>>,
}

/// One replica and what the checks know of it.
#[derive(Debug)]
pub(crate) struct Replica {
    name: String,
    pool: Pool,
    weight: f64,
    health: Mutex<Health>,
    reads: AtomicU64,
}

#[derive(Debug, Clone, Default)]
struct Health {
    /// In rotation; `why` says otherwise.
    usable: bool,
    why: String,
    applied: Option<Position>,
    lag: Option<Duration>,
}

/// A replica as `SHOW STATUS FROM READWRITE_SPLITTING RULES` and `/metrics` show it.
#[derive(Debug, Clone)]
pub struct ReplicaStatus {
    /// The group's (data source's) name.
    pub group: String,
    /// The replica's data source name.
    pub replica: String,
    /// In rotation.
    pub enabled: bool,
    /// Why not, when not.
    pub reason: String,
    /// How far behind its primary, as of the last check; `None`: unknown.
    pub lag: Option<Duration>,
    /// Its applied position, as the database writes it.
    pub position: Option<String>,
    /// Reads it answered.
    pub reads: u64,
}

impl Replicas {
    /// The replicas of `config`'s groups, with pools that connect on first use. A replica's
    /// connections wait at most a second for a connection: a replica that does not give one
    /// sends its reads to the primary rather than keep them waiting.
    pub(crate) fn new(config: &Config) -> Result<Self, BackendError> {
        let splitting = &config.read_write;
        let mut groups = BTreeMap::new();
        for (name, group) in &splitting.groups {
            if group.replicas.is_empty() {
                continue;
            }
            let replicas = group
                .replicas
                .iter()
                .map(|replica| {
                    let mut source = replica.source.clone();
                    let timeout = source
                        .pool
                        .connection_timeout_ms
                        .unwrap_or(1_000)
                        .min(1_000);
                    source.pool.connection_timeout_ms = Some(timeout);
                    Ok(Replica {
                        name: source.name.clone(),
                        pool: Pool::connect_replica(&source)?,
                        weight: replica.weight,
                        health: Mutex::new(Health {
                            why: "not checked yet".into(),
                            ..Health::default()
                        }),
                        reads: AtomicU64::new(0),
                    })
                })
                .collect::<Result<_, BackendError>>()?;
            groups.insert(
                name.clone(),
                Group {
                    balancer: group.balancer,
                    transactional: group.transactional_reads,
                    replicas,
                    turn: AtomicUsize::new(0),
                    samples: Mutex::new(VecDeque::new()),
                },
            );
        }
        Ok(Self {
            groups,
            consistency: splitting.consistency,
            causal_wait: splitting.causal_wait,
            max_delay: splitting.max_replication_delay,
            interval: splitting.check_interval,
        })
    }

    /// Whether data source `name` has replicas (its primary's statements are then noted).
    pub(crate) fn has(&self, name: &str) -> bool {
        self.groups.contains_key(name)
    }

    /// The replica that answers `plan`'s read on `data_source`, if one may: `None` sends it
    /// to the primary.
    pub(crate) async fn for_read(
        &self,
        plan: &Plan,
        data_source: &str,
        primary: &Pool,
    ) -> Option<&Replica> {
        self.choose(plan, data_source, primary, None).await
    }

    /// The replica that answers `plan`'s read on `data_source` inside a transaction that has
    /// not touched that primary, if the group's `transactionalReadQueryStrategy` sends it to
    /// one (see [`TransactionalReads`]); `fixed` holds the transaction's FIXED choices, by
    /// group.
    pub(crate) async fn for_transactional_read(
        &self,
        plan: &Plan,
        data_source: &str,
        primary: &Pool,
        fixed: &mut Vec<(String, String)>,
    ) -> Option<&Replica> {
        match self.groups.get(data_source)?.transactional {
            TransactionalReads::Primary => None,
            TransactionalReads::Dynamic => self.for_read(plan, data_source, primary).await,
            TransactionalReads::Fixed => {
                let chosen = fixed
                    .iter()
                    .find(|(group, _)| group == data_source)
                    .map(|(_, replica)| replica.as_str());
                let replica = self.choose(plan, data_source, primary, chosen).await?;
                fixed.retain(|(group, _)| group != data_source);
                fixed.push((data_source.to_owned(), replica.name.clone()));
                Some(replica)
            }
        }
    }

    /// [`Replicas::for_read`], taking replica `preferred` when it may answer.
    async fn choose(
        &self,
        plan: &Plan,
        data_source: &str,
        primary: &Pool,
        preferred: Option<&str>,
    ) -> Option<&Replica> {
        if !plan.replica_safe {
            return None;
        }
        let group = self.groups.get(data_source)?;
        let session = session_state::current();
        if session
            .as_ref()
            .is_some_and(|s| s.is_pinned() || s.primary_only())
        {
            return None;
        }
        let since = session.as_ref().and_then(|s| s.written(data_source));
        let required = match (self.consistency, since) {
            (_, None) | (Consistency::Eventual, _) => None,
            (Consistency::Primary, Some(_)) => return None,
            (Consistency::Causal, Some(Written::At(position))) => Some(position),
            (Consistency::Causal, Some(Written::Since(moment))) => {
                let position = match group.sample_since(moment) {
                    Some(position) => position,
                    None => group.sample(primary).await.ok()?,
                };
                if let Some(session) = &session {
                    session.written_at(data_source, moment, position.clone());
                }
                Some(position)
            }
        };
        let fits = |h: &Health| {
            required
                .as_ref()
                .is_none_or(|r| h.applied.as_ref().is_some_and(|a| a.covers(r)))
        };
        if let Some(replica) = preferred
            .and_then(|name| group.replicas.iter().find(|r| r.name == name))
            .filter(|r| {
                let health = lock(&r.health);
                health.usable && fits(&health)
            })
        {
            return Some(replica);
        }
        let Some(required) = &required else {
            return group.pick(|_| true);
        };
        if let Some(replica) = group.pick(fits) {
            return Some(replica);
        }
        // None known to have applied it: ask one, until it has or the wait is over; not one
        // the checks find further behind than the wait is long.
        let replica = group.pick(|h| h.lag.is_some_and(|lag| lag <= self.causal_wait))?;
        let deadline = Instant::now() + self.causal_wait;
        loop {
            let applied = replica.applied().await.ok()?;
            if applied.covers(required) {
                return Some(replica);
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Checks every group's primary and replicas every `interval`, until the backend goes.
    pub(crate) async fn watch(&self, primaries: &BTreeMap<String, std::sync::Arc<Pool>>) {
        if self.groups.is_empty() {
            return;
        }
        let mut ticks = tokio::time::interval(self.interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let checks = self.groups.iter().filter_map(|(name, group)| {
                let primary = primaries.get(name)?;
                Some(self.check(group, primary))
            });
            futures_util::future::join_all(checks).await;
        }
    }

    /// One check of `group`: the primary's position first, then each replica against it.
    async fn check(&self, group: &Group, primary: &Pool) {
        let limit = self.interval.max(Duration::from_secs(1));
        if let Err(e) = tokio::time::timeout(limit, group.sample(primary)).await {
            tracing::debug!("primary position not read: {e}");
        }
        let replicas = group.replicas.iter().map(|replica| async move {
            let status = tokio::time::timeout(limit, probe::replica(&replica.pool)).await;
            let mut health = lock(&replica.health);
            match status {
                Err(_) => health.out("no answer within the check's time"),
                Ok(Err(e)) => health.out(&format!("unreachable: {e}")),
                Ok(Ok(status)) if !status.replicating => {
                    health.applied = status.applied;
                    health.out("not replicating");
                }
                Ok(Ok(status)) => {
                    let lag = status.applied.as_ref().map(|a| group.lag(a));
                    health.applied = status.applied;
                    health.lag = lag;
                    match lag {
                        Some(lag) if lag > self.max_delay => health.out(&format!(
                            "{} ms behind its primary, more than {} ms",
                            lag.as_millis(),
                            self.max_delay.as_millis()
                        )),
                        Some(_) => {
                            if !health.usable {
                                tracing::info!("replica {} back in rotation", replica.name);
                            }
                            health.usable = true;
                            health.why.clear();
                        }
                        None => health.out("position unknown"),
                    }
                }
            }
        });
        futures_util::future::join_all(replicas).await;
    }

    /// Every replica's state.
    pub(crate) fn status(&self) -> Vec<ReplicaStatus> {
        self.groups
            .iter()
            .flat_map(|(name, group)| {
                group.replicas.iter().map(|replica| {
                    let health = lock(&replica.health).clone();
                    ReplicaStatus {
                        group: name.clone(),
                        replica: replica.name.clone(),
                        enabled: health.usable,
                        reason: health.why,
                        lag: health.lag,
                        position: health.applied.map(|p| p.to_string()),
                        reads: replica.reads.load(Ordering::Relaxed),
                    }
                })
            })
            .collect()
    }

    /// Each replica's name and pool.
    pub(crate) fn pools(&self) -> impl Iterator<Item = (&str, &Pool)> {
        self.groups
            .values()
            .flat_map(|g| g.replicas.iter().map(|r| (r.name.as_str(), &r.pool)))
    }

    /// Closes every replica's pool.
    pub(crate) async fn close(&self) {
        futures_util::future::join_all(self.pools().map(|(_, pool)| pool.close())).await;
    }
}

impl Group {
    /// A replica in rotation that `fits`, by the group's balancer.
    fn pick(&self, fits: impl Fn(&Health) -> bool) -> Option<&Replica> {
        let eligible = |r: &&Replica| {
            let health = lock(&r.health);
            health.usable && fits(&health)
        };
        let count = self.replicas.iter().filter(eligible).count();
        if count == 0 {
            return None;
        }
        let turn = self.turn.fetch_add(1, Ordering::Relaxed);
        let chosen = match self.balancer {
            LoadBalancer::RoundRobin => turn % count,
            LoadBalancer::Random => spread(turn) as usize % count,
            LoadBalancer::Weight => {
                let total: f64 = self
                    .replicas
                    .iter()
                    .filter(eligible)
                    .map(|r| r.weight)
                    .sum();
                // A point in [0, total), then the replica whose share holds it.
                let mut point = (spread(turn) >> 11) as f64 / (1u64 << 53) as f64 * total;
                let mut chosen = count - 1;
                for (i, replica) in self.replicas.iter().filter(eligible).enumerate() {
                    if point < replica.weight {
                        chosen = i;
                        break;
                    }
                    point -= replica.weight;
                }
                chosen
            }
        };
        self.replicas.iter().filter(eligible).nth(chosen)
    }

    /// The primary's position now, kept as the newest sample.
    async fn sample(&self, primary: &Pool) -> Result<Position, sqlx::Error> {
        let asked = Instant::now();
        let position = probe::primary(primary).await?;
        let mut samples = lock(&self.samples);
        if samples.back().is_none_or(|(at, _)| *at <= asked) {
            if samples.len() == SAMPLES {
                samples.pop_front();
            }
            samples.push_back((asked, position.clone()));
        }
        Ok(position)
    }

    /// The position of a sample asked for at or after `moment`: it holds everything
    /// committed before then.
    fn sample_since(&self, moment: Instant) -> Option<Position> {
        let samples = lock(&self.samples);
        samples
            .iter()
            .find(|(asked, _)| *asked >= moment)
            .map(|(_, position)| position.clone())
    }

    /// How far `applied` is behind the primary: the age of the newest sample it covers (or
    /// of the oldest kept, when it covers none).
    fn lag(&self, applied: &Position) -> Duration {
        let samples = lock(&self.samples);
        let dated = samples
            .iter()
            .rev()
            .find(|(_, position)| applied.covers(position))
            .or(samples.front());
        dated.map_or(Duration::MAX, |(asked, _)| asked.elapsed())
    }
}

impl Replica {
    /// Its data source name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Its pool.
    pub(crate) fn pool(&self) -> &Pool {
        &self.pool
    }

    /// It answered a read.
    pub(crate) fn served(&self) {
        self.reads.fetch_add(1, Ordering::Relaxed);
    }

    /// A read failed to reach it: out of rotation until a check finds it well.
    pub(crate) fn failed(&self, error: &sqlx::Error) {
        lock(&self.health).out(&format!("a read failed: {error}"));
    }

    /// Its applied position, asked now; kept for the next read.
    async fn applied(&self) -> Result<Position, sqlx::Error> {
        let applied = probe::applied(&self.pool).await?;
        lock(&self.health).applied = Some(applied.clone());
        Ok(applied)
    }
}

impl Health {
    fn out(&mut self, why: &str) {
        if self.usable {
            tracing::warn!("replica out of rotation: {why}");
        }
        self.usable = false;
        self.why = why.to_owned();
    }
}

/// SplitMix64's output function: turns consecutive turns into well-spread numbers.
fn spread(turn: usize) -> u64 {
    let mut z = (turn as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use keyshard_config::{DataSource, DatabaseKind, PoolSettings};

    use super::*;

    fn group(balancer: LoadBalancer, weights: &[f64]) -> Group {
        let replicas = weights
            .iter()
            .enumerate()
            .map(|(i, weight)| {
                let source = DataSource {
                    name: format!("read_{i}"),
                    kind: DatabaseKind::Sqlite,
                    url: "sqlite::memory:".into(),
                    pool: PoolSettings::default(),
                };
                Replica {
                    name: source.name.clone(),
                    pool: Pool::connect_lazy(&source).unwrap(),
                    weight: *weight,
                    health: Mutex::new(Health {
                        usable: true,
                        ..Health::default()
                    }),
                    reads: AtomicU64::new(0),
                }
            })
            .collect();
        Group {
            balancer,
            transactional: TransactionalReads::Primary,
            replicas,
            turn: AtomicUsize::new(0),
            samples: Mutex::new(VecDeque::new()),
        }
    }

    /// How many of `picks` reads each replica gets.
    fn spread_of(group: &Group, picks: usize) -> Vec<usize> {
        let mut counts = vec![0; group.replicas.len()];
        for _ in 0..picks {
            let chosen = group.pick(|_| true).unwrap();
            let at = group.replicas.iter().position(|r| r.name == chosen.name);
            counts[at.unwrap()] += 1;
        }
        counts
    }

    #[tokio::test]
    async fn balancers_spread_reads_over_the_replicas_in_rotation() {
        assert_eq!(
            spread_of(&group(LoadBalancer::RoundRobin, &[1.0; 3]), 300),
            [100; 3]
        );
        let random = spread_of(&group(LoadBalancer::Random, &[1.0; 2]), 10_000);
        assert!(
            random.iter().all(|&n| (4_500..5_500).contains(&n)),
            "{random:?}"
        );
        let weighted = spread_of(&group(LoadBalancer::Weight, &[3.0, 1.0]), 10_000);
        assert!((7_000..8_000).contains(&weighted[0]), "{weighted:?}");

        // A replica out of rotation gets nothing; none in rotation sends reads to the primary.
        let group = group(LoadBalancer::RoundRobin, &[1.0, 1.0]);
        lock(&group.replicas[0].health).out("down");
        assert_eq!(spread_of(&group, 10), [0, 10]);
        lock(&group.replicas[1].health).out("down");
        assert!(group.pick(|_| true).is_none());
    }

    #[tokio::test]
    async fn lag_is_the_age_of_the_newest_primary_position_a_replica_has() {
        let group = group(LoadBalancer::RoundRobin, &[1.0]);
        let now = Instant::now();
        let at = |lsn| Position::Lsn(lsn);
        for (ago, lsn) in [(3_000, 10), (2_000, 20), (1_000, 30)] {
            let asked = now - Duration::from_millis(ago);
            lock(&group.samples).push_back((asked, at(lsn)));
        }
        let lag = |lsn| group.lag(&at(lsn)).as_millis();
        assert!((2_000..2_500).contains(&lag(25)), "{}", lag(25));
        assert!((1_000..1_500).contains(&lag(30)), "{}", lag(30));
        // Behind every sample kept: at least as old as the oldest.
        assert!(lag(5) >= 3_000);
        // A write noted 1.5 s ago is covered by the sample asked 1 s ago.
        let written = now - Duration::from_millis(1_500);
        assert_eq!(group.sample_since(written), Some(at(30)));
        assert_eq!(group.sample_since(now), None);
    }
}
