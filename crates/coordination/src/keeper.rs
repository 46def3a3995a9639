//! Drives one instance's generators from a repository: claims the worker id, renews it, revokes
//! it from the generators the moment the claim can no longer be proved, and fetches segments in
//! the background.

use std::sync::Arc;
use std::time::{Duration, Instant};

use keyshard_keygen::{Built, Clock, Grant, Registry, SystemClock, WorkerLease};
use tokio::sync::{Mutex, watch};
use tokio::task::JoinSet;

mod segments;
mod service_times;

use service_times::leaf_services;

use crate::fleet::Recorder;
use crate::{Claim, CoordinationError, FleetRecords, Instance, Repository, WORKER_IDS};

/// How many times in a row a claim is given back and taken again while the shards remember
/// its epoch as used (each claim raises the epoch by one).
const EPOCH_CATCH_UP: usize = 256;

/// How the keeper paces itself.
#[derive(Debug, Clone)]
pub struct KeeperSettings {
    /// Who this instance is.
    pub instance: Instance,
    /// How long one repository call may take.
    pub operation_timeout: Duration,
    /// Pause before retrying a failed call.
    pub retry_interval: Duration,
    /// Claim a worker id even when no generator needs one: XA transactions are named after it.
    pub claim_worker_id: bool,
    /// The records on the data sources the worker-id keys are written to, checked and kept
    /// current at every claim and renewal.
    pub fleet: Option<Arc<FleetRecords>>,
}

/// Keeps the instance's worker id and segments while it runs; [`Keeper::stop`] gives them back.
#[derive(Debug)]
pub struct Keeper {
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    tasks: JoinSet<()>,
}

#[derive(Debug)]
struct Shared {
    repository: Arc<dyn Repository>,
    settings: KeeperSettings,
    lease: Arc<WorkerLease>,
    /// The configured `worker-id`, which every claim asks for.
    preferred: Option<u16>,
    /// `worker-id-fallback: any`: while the configured id is held, any free one will do.
    any_when_held: bool,
    /// LEAF_SNOWFLAKE services and their tolerance, for the registry time check.
    services: Vec<(String, i64)>,
    /// The current claim, `None` while none is held.
    claim: Mutex<Option<Claim>>,
    /// The repository's [`Repository::describe`], for the fleet records.
    repository_description: String,
    /// The largest worker id the generators' key layout carries.
    max_worker_id: u16,
    /// The key layout as its properties write it, for the fleet records ("" without one).
    layout: String,
}

/// What an operator is told about the worker id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerIdStatus {
    /// The worker id.
    pub worker_id: u16,
    /// Its epoch.
    pub epoch: u64,
    /// Where it came from, for the start-up line.
    pub source: String,
}

impl Keeper {
    /// Takes what `registry`'s generators need before the instance serves: a worker id (when a
    /// SNOWFLAKE-style generator is configured; the configured `worker-id` if one is set), the
    /// LEAF_SNOWFLAKE registry time check, and each LEAF_SEGMENT's first segment. Then keeps
    /// them in the background.
    ///
    /// Fails when the instance must not start: the configured worker id is held by a live
    /// instance, all worker ids are held, the clock is behind a LEAF_SNOWFLAKE service's
    /// recorded time, or the repository does not answer.
    pub async fn start(
        repository: Arc<dyn Repository>,
        registry: &Registry,
        settings: KeeperSettings,
    ) -> Result<Self, CoordinationError> {
        let (stop, stopped) = watch::channel(false);
        let layout = registry.layout();
        let shared = Arc::new(Shared {
            max_worker_id: layout.map_or(WORKER_IDS - 1, |l| l.max_worker_id()),
            layout: layout.map(|l| l.to_string()).unwrap_or_default(),
            repository_description: repository.describe(),
            repository,
            preferred: preferred_worker_id(registry)?,
            any_when_held: registry.iter().any(
                |(_, c)| matches!(&c.built, Built::Snowflake(g) if g.any_worker_id_when_held()),
            ),
            services: leaf_services(registry),
            lease: Arc::clone(registry.lease()),
            settings,
            claim: Mutex::new(None),
        });
        let mut tasks = JoinSet::new();
        if registry.needs_worker_id() || shared.settings.claim_worker_id {
            shared.check_service_times().await?;
            shared.first_claim().await?;
            tasks.spawn(Arc::clone(&shared).keep_worker_id(stopped.clone()));
        }
        for (_, configured) in registry.iter() {
            if let Built::Segment(generator) = &configured.built {
                let (first, last) = shared.fetch_segment(generator, generator.step()).await?;
                generator.supply(first, last);
                tasks.spawn(
                    Arc::clone(&shared).keep_segments(Arc::clone(generator), stopped.clone()),
                );
            }
        }
        Ok(Self {
            shared,
            stop,
            tasks,
        })
    }

    /// The worker id held now, if any.
    pub async fn worker_id(&self) -> Option<WorkerIdStatus> {
        let claim = self.shared.claim.lock().await.clone()?;
        Some(WorkerIdStatus {
            worker_id: claim.worker_id,
            epoch: claim.epoch,
            source: format!(
                "{} from {}",
                if self.shared.preferred.is_some() {
                    "configured, leased"
                } else {
                    "leased"
                },
                self.shared.repository.describe()
            ),
        })
    }

    /// The repository, for statements that list what it holds.
    pub fn repository(&self) -> &Arc<dyn Repository> {
        &self.shared.repository
    }

    /// Stops the background tasks, stops generation and gives the worker id back with the
    /// last millisecond actually used, so the next holder can start right above it.
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        while self.tasks.join_next().await.is_some() {}
        self.shared.give_back().await;
    }
}

/// The worker id the configuration asks for; all SNOWFLAKE generators that set one must agree,
/// since one instance holds one worker id.
fn preferred_worker_id(registry: &Registry) -> Result<Option<u16>, CoordinationError> {
    let mut preferred: Option<(&str, u16)> = None;
    for (name, configured) in registry.iter() {
        let Built::Snowflake(generator) = &configured.built else {
            continue;
        };
        let Some(id) = generator.preferred_worker_id() else {
            continue;
        };
        match preferred {
            Some((first, other)) if other != id => {
                return Err(CoordinationError::Config(format!(
                    "key generators '{first}' and '{name}' set different worker-id values ({other} \
                     and {id}); an instance holds one worker id: set the same value, or none"
                )));
            }
            _ => preferred = Some((name, id)),
        }
    }
    Ok(preferred.map(|(_, id)| id))
}

fn wall_millis() -> i64 {
    SystemClock.now_millis()
}

impl Shared {
    fn ttl(&self) -> Duration {
        self.repository.time_to_live()
    }

    /// How long before the repository's expiry the instance stops generating: covers the
    /// difference in clock rates and the time a statement takes to use its keys.
    fn margin(&self) -> Duration {
        (self.ttl() / 10).min(Duration::from_secs(5))
    }

    /// How far ahead of generator time the high-water mark is persisted: one time to live, so
    /// whoever takes the id after it expired starts at the wall clock.
    fn window_millis(&self) -> i64 {
        i64::try_from(self.ttl().as_millis()).unwrap_or(i64::MAX)
    }

    async fn call<T>(
        &self,
        future: impl Future<Output = Result<T, CoordinationError>>,
    ) -> Result<T, CoordinationError> {
        let timeout = self.settings.operation_timeout;
        tokio::time::timeout(timeout, future)
            .await
            .map_err(|_| CoordinationError::Timeout(timeout))?
    }

    /// Claims a worker id, persists the first reservation, and only then lets the generators
    /// use it.
    /// The claim at start. A configured worker id may still be held by this instance's own
    /// previous run, killed before it could give the id back: when the holder served at this
    /// instance's address (or the repository does not record where it served), the claim
    /// waits for that lease to run out, at most one time to live, saying so, and tries once
    /// more. A holder still renewing is a live instance, and the start fails.
    async fn first_claim(&self) -> Result<(), CoordinationError> {
        let held = match self.claim_and_grant().await {
            Err(held @ CoordinationError::WorkerIdHeld { .. }) => held,
            other => return other,
        };
        let CoordinationError::WorkerIdHeld {
            worker_id,
            holder,
            address,
            expires_in,
        } = &held
        else {
            return Err(held);
        };
        let ours = &self.settings.instance.address;
        if address.as_ref().is_some_and(|address| address != ours) {
            return Err(held);
        }
        let wait = expires_in.unwrap_or(self.ttl()).min(self.ttl()) + self.settings.retry_interval;
        let seconds = wait.as_secs_f64();
        match address {
            Some(_) => tracing::warn!(
                worker_id,
                "worker id {worker_id} is held by {holder}, which served at this instance's \
                 address: a previous run stopped without giving it back (killed). Its lease \
                 runs out unless renewed; waiting {seconds:.1} s for that"
            ),
            None => tracing::warn!(
                worker_id,
                "worker id {worker_id} is held by {holder}; if that is a previous run of this \
                 instance that stopped without giving it back (killed), its lease runs out \
                 within the time to live; waiting {seconds:.1} s for that"
            ),
        }
        tokio::time::sleep(wait).await;
        self.claim_and_grant().await
    }

    async fn claim_and_grant(&self) -> Result<(), CoordinationError> {
        let mut attempts = 0;
        loop {
            match self.claim_checked().await {
                Err(behind @ CoordinationError::EpochBehind { .. }) => {
                    attempts += 1;
                    if attempts == EPOCH_CATCH_UP {
                        return Err(behind);
                    }
                    if attempts == 1 {
                        tracing::warn!("{behind}");
                    }
                }
                other => return other,
            }
        }
    }

    /// Claims a worker id, checks it against what the shards remember, persists the first
    /// reservation, and only then lets the generators use it. A claim the shards refuse is
    /// given back.
    async fn claim_checked(&self) -> Result<(), CoordinationError> {
        let instance = &self.settings.instance;
        let claim = match self
            .call(self.repository.claim(instance, self.preferred))
            .await
        {
            Err(CoordinationError::WorkerIdHeld {
                worker_id, holder, ..
            }) if self.any_when_held => {
                tracing::warn!(
                    "the configured worker id {worker_id} is held by {holder}: taking a free \
                     one (worker-id-fallback: any)"
                );
                self.call(self.repository.claim(instance, None)).await?
            }
            claimed => claimed?,
        };
        // The repository gives the lowest free id: one beyond the layout means every id it
        // carries is held.
        let granted = if claim.worker_id > self.max_worker_id {
            Err(CoordinationError::NoFreeWorkerIdInLayout {
                max: self.max_worker_id,
            })
        } else {
            self.check_and_grant(&claim).await
        };
        if let Err(
            CoordinationError::Fleet { .. }
            | CoordinationError::EpochBehind { .. }
            | CoordinationError::NoFreeWorkerIdInLayout { .. },
        ) = &granted
        {
            let release = self
                .repository
                .release(instance, &claim, claim.high_water_millis);
            if let Err(e) = self.call(release).await {
                tracing::warn!("worker id {} not given back: {e}", claim.worker_id);
            }
        }
        granted
    }

    async fn check_and_grant(&self, claim: &Claim) -> Result<(), CoordinationError> {
        let instance = &self.settings.instance;
        let remembered = match &self.settings.fleet {
            Some(fleet) => fleet.check_and_record(self.recorder(), claim, None).await?,
            None => 0,
        };
        // Generator time starts above every key ever generated with this id, above every
        // time the shards remember for it or for a repository that generated there before,
        // and above this instance's own keys under an earlier id: the generators' time never
        // goes back, so a new claim that started below it would refuse every key.
        let own = self.lease.highest_issued().unwrap_or(0);
        let high_water = claim.high_water_millis.max(remembered).max(own);
        let offset_millis = (high_water + 1 - wall_millis()).max(0);
        if offset_millis > 0 {
            tracing::warn!(
                worker_id = claim.worker_id,
                "the clock is {offset_millis} ms behind the high-water mark of worker id {}{}; \
                 keys run ahead of the clock by that much",
                claim.worker_id,
                if remembered > claim.high_water_millis {
                    " the data sources remember (above the repository's)"
                } else {
                    ""
                }
            );
        }
        let sent = Instant::now();
        let reserve = wall_millis() + offset_millis + self.window_millis();
        self.call(self.repository.renew(instance, claim, reserve))
            .await?;
        if let Some(fleet) = &self.settings.fleet {
            fleet
                .check_and_record(self.recorder(), claim, Some(reserve))
                .await?;
        }
        self.lease.grant(Grant {
            worker_id: claim.worker_id,
            epoch: claim.epoch,
            valid_until: sent + self.ttl().saturating_sub(self.margin()),
            reserved_until_millis: reserve,
            offset_millis,
        });
        tracing::info!(
            worker_id = claim.worker_id,
            epoch = claim.epoch,
            "worker id claimed from {}",
            self.repository.describe()
        );
        // Kept with the mark it started above, which its release never goes below.
        *self.claim.lock().await = Some(Claim {
            high_water_millis: high_water,
            ..claim.clone()
        });
        Ok(())
    }

    fn recorder(&self) -> Recorder<'_> {
        Recorder {
            repository_id: self.repository.identity(),
            repository: self.repository_description.as_str(),
            instance_id: &self.settings.instance.id,
            ttl_millis: self.window_millis(),
            layout: &self.layout,
        }
    }

    /// Renews the claim a few times per time to live; on loss, stops generation and claims
    /// again until it succeeds.
    async fn keep_worker_id(self: Arc<Self>, mut stopped: watch::Receiver<bool>) {
        let mut pause = self.ttl() / 3;
        // What keeps failing, and since when: said once, not at every retry.
        let mut failing: Option<(String, Instant)> = None;
        loop {
            tokio::select! {
                _ = stopped.changed() => return,
                () = tokio::time::sleep(pause) => {}
            }
            let claim = self.claim.lock().await.clone();
            let outcome = match claim {
                Some(claim) => self.renew(&claim).await,
                None => self.claim_and_grant().await,
            };
            pause = match outcome {
                Ok(()) => {
                    if let Some((_, since)) = failing.take() {
                        tracing::info!(
                            "coordination: working again after {:.1} s",
                            since.elapsed().as_secs_f64()
                        );
                    }
                    self.ttl() / 3
                }
                Err(e) => {
                    let text = match &e {
                        CoordinationError::WorkerIdHeld {
                            worker_id, holder, ..
                        } => format!(
                            "the configured worker id {worker_id} is held by {holder}; no keys \
                             are generated until it is free, claimed again every {:?} \
                             (worker-id-fallback: any takes a free id instead)",
                            self.settings.retry_interval
                        ),
                        other => format!("coordination: {other}"),
                    };
                    if failing.as_ref().is_none_or(|(said, _)| *said != text) {
                        tracing::error!("{text}");
                        failing = Some((text, Instant::now()));
                    }
                    self.settings.retry_interval
                }
            };
        }
    }

    /// Stops generation and gives the claim back, to the repository and in the fleet
    /// records, with the last millisecond actually used.
    async fn give_back(&self) {
        let issued = self.lease.revoke().and_then(|(_, issued)| issued);
        let Some(claim) = self.claim.lock().await.take() else {
            return;
        };
        let mark = issued
            .unwrap_or(claim.high_water_millis)
            .max(claim.high_water_millis);
        // The shards' records first: released in the repository first, the id could go to
        // another instance that then finds this one's record still live on the shards, and
        // refuses it as a repository that lost claims.
        if let Some(fleet) = &self.settings.fleet {
            fleet.release(self.recorder(), &claim, mark).await;
        }
        let release = self
            .repository
            .release(&self.settings.instance, &claim, mark);
        match tokio::time::timeout(self.settings.operation_timeout, release).await {
            Ok(Ok(())) => tracing::info!(worker_id = claim.worker_id, "worker id released"),
            Ok(Err(e)) => tracing::warn!("worker id {} not released: {e}", claim.worker_id),
            Err(_) => tracing::warn!("worker id {} not released: timed out", claim.worker_id),
        }
    }

    async fn renew(&self, claim: &Claim) -> Result<(), CoordinationError> {
        let Some(grant) = self.lease.current() else {
            return Ok(());
        };
        let sent = Instant::now();
        let reserve = wall_millis() + grant.offset_millis + self.window_millis();
        let renewed = self
            .call(
                self.repository
                    .renew(&self.settings.instance, claim, reserve),
            )
            .await;
        let renewed = match (renewed, &self.settings.fleet) {
            (Ok(()), Some(fleet)) => fleet
                .check_and_record(self.recorder(), claim, Some(reserve))
                .await
                .map(|_| ()),
            (renewed, _) => renewed,
        };
        match renewed {
            Ok(()) => {
                self.lease.extend(
                    claim.epoch,
                    sent + self.ttl().saturating_sub(self.margin()),
                    reserve,
                );
                self.record_service_times().await;
                Ok(())
            }
            Err(CoordinationError::LeaseLost { worker_id, epoch }) => {
                self.lease.revoke();
                *self.claim.lock().await = None;
                tracing::error!(
                    "worker id {worker_id} (epoch {epoch}) was taken over after its lease ran \
                     out; no keys are generated until another worker id is claimed"
                );
                self.claim_and_grant().await
            }
            Err(e @ (CoordinationError::Fleet { .. } | CoordinationError::EpochBehind { .. })) => {
                tracing::error!(
                    "{e}; worker id {} stops generating keys now",
                    claim.worker_id
                );
                self.give_back().await;
                Err(e)
            }
            Err(e) => {
                if Instant::now() >= grant.valid_until {
                    tracing::error!(
                        "the lease of worker id {} has run out: statements that need keys fail \
                         until the repository answers",
                        grant.worker_id
                    );
                }
                Err(e)
            }
        }
    }
}
