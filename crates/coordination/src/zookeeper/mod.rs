//! The ZooKeeper repository, laid out as ShardingSphere 5 lays out its registry so that Keyshard
//! and ShardingSphere proxies sharing a namespace never hold the same worker id.
//!
//! Under `/<namespace>`:
//!
//! - `reservation/worker_id/<id>`: EPHEMERAL, data = the holder's instance id. Creating it is
//!   claiming the id (ShardingSphere's exclusive reservation); its creation zxid is the epoch.
//! - `nodes/compute_nodes/worker_id/<instance id>`: EPHEMERAL, data = the worker id in decimal
//!   (what ShardingSphere writes, and reads to show compute nodes).
//! - `keyshard/worker_id_hwm/<id>`: persistent, the id's time high-water mark (decimal millis).
//! - `keyshard/segment/<key>`: persistent, the last value handed out of the sequence `key`.
//! - `keyshard/service_time/<service>`: persistent, the last time recorded for `service`.
//!
//! The ephemerals live exactly as long as the repository's session, so a holder that dies
//! loses its id when ZooKeeper expires the session: one session timeout after the server last
//! heard from it. That is why [`Repository::time_to_live`] is the negotiated session timeout.

use std::collections::HashSet;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::sync::Mutex;
use zookeeper_client as zk;

use crate::{Claim, ComputeNode, CoordinationError, Instance, Repository, WORKER_IDS};

mod decisions;
mod nodes;
mod session;

use nodes::{check_name, epoch_of, millis, parent_of, parse_number, parse_worker_id, zk_error};
pub use session::ZooKeeperSettings;
use session::{open_session, session_ended};

/// How often a compare-and-set loop may lose a race before giving up: only a storm of
/// concurrent writers to one node gets there, and the caller can retry later.
const CAS_ATTEMPTS: usize = 64;

/// ShardingSphere 5's registry on ZooKeeper.
#[derive(Debug)]
pub struct ZooKeeperRepository {
    settings: ZooKeeperSettings,
    /// `/<namespace>`.
    root: String,
    /// The session. Replaced only once it has ended for good (expired, closed, refused), so
    /// every ephemeral of a claim belongs to the session that renews it.
    client: Mutex<zk::Client>,
    /// The session timeout the server granted to the current session.
    session_timeout_millis: AtomicU64,
}

/// What happened to an attempt to reserve one worker id.
enum Reservation {
    /// Ours: the reservation node's stat.
    Reserved(zk::Stat),
    /// Someone else's: their instance id.
    Held(String),
}

/// A ZooKeeper answer, or a failure already turned into the caller's error (a timeout).
type Answer<T> = Result<Result<T, zk::Error>, CoordinationError>;

impl ZooKeeperRepository {
    /// Opens a session with the servers of `settings`.
    pub async fn connect(settings: ZooKeeperSettings) -> Result<Self, CoordinationError> {
        let namespace = settings.namespace.trim_matches('/');
        if namespace.is_empty() {
            return Err(CoordinationError::Config(
                "the ZooKeeper namespace must not be empty".to_owned(),
            ));
        }
        let root = format!("/{namespace}");
        let client = open_session(&settings).await?;
        let session_timeout_millis = AtomicU64::new(millis(client.session_timeout()));
        Ok(Self {
            settings,
            root,
            client: Mutex::new(client),
            session_timeout_millis,
        })
    }

    /// The current session, whatever its state: for a claim's renewal and release, which must
    /// use the session that holds the claim's ephemerals.
    async fn current_client(&self) -> zk::Client {
        self.client.lock().await.clone()
    }

    /// A session that can work: the current one unless it has ended for good, else a new one
    /// (the old one's ephemerals are gone with it, so its claims are lost anyway).
    async fn live_client(&self) -> Result<zk::Client, CoordinationError> {
        let mut current = self.client.lock().await;
        if session_ended(current.state()) {
            tracing::warn!(
                session = %current.session_id(),
                state = ?current.state(),
                "ZooKeeper session ended; opening a new one"
            );
            let fresh = open_session(&self.settings).await?;
            self.session_timeout_millis
                .store(millis(fresh.session_timeout()), Ordering::Relaxed);
            *current = fresh;
        }
        Ok(current.clone())
    }

    /// Bounds `request` by the operation timeout.
    async fn call<T>(&self, request: impl Future<Output = Result<T, zk::Error>>) -> Answer<T> {
        let limit = self.settings.operation_timeout;
        tokio::time::timeout(limit, request)
            .await
            .map_err(|_| CoordinationError::Timeout(limit))
    }

    fn acls(&self) -> zk::Acls<'static> {
        // ShardingSphere creates nodes with CREATOR_ALL_ACL when a digest is configured.
        if self.settings.digest.is_some() {
            zk::Acls::creator_all()
        } else {
            zk::Acls::anyone_all()
        }
    }

    fn reservation_dir(&self) -> String {
        format!("{}/reservation/worker_id", self.root)
    }

    fn reservation_path(&self, worker_id: u16) -> String {
        format!("{}/{worker_id}", self.reservation_dir())
    }

    fn compute_node_path(&self, instance_id: &str) -> String {
        format!("{}/nodes/compute_nodes/worker_id/{instance_id}", self.root)
    }

    fn high_water_path(&self, worker_id: u16) -> String {
        format!("{}/keyshard/worker_id_hwm/{worker_id}", self.root)
    }

    fn segment_path(&self, key: &str) -> String {
        format!("{}/keyshard/segment/{key}", self.root)
    }

    fn service_time_path(&self, service: &str) -> String {
        format!("{}/keyshard/service_time/{service}", self.root)
    }

    /// Creates `path`, creating missing parents as persistent nodes first.
    async fn create(
        &self,
        client: &zk::Client,
        path: &str,
        data: &[u8],
        mode: zk::CreateMode,
    ) -> Answer<zk::Stat> {
        let options = mode.with_acls(self.acls());
        match self.call(client.create(path, data, &options)).await? {
            Err(zk::Error::NoNode) => {}
            other => return Ok(other.map(|(stat, _)| stat)),
        }
        let parent = parent_of(path);
        let directory = zk::CreateMode::Persistent.with_acls(self.acls());
        self.call(client.mkdir(parent, &directory))
            .await?
            .map_err(|err| zk_error(parent, err))?;
        Ok(self
            .call(client.create(path, data, &options))
            .await?
            .map(|(stat, _)| stat))
    }

    /// The decimal number stored at `path` with the node's stat, `None` if there is no node.
    async fn read_number(
        &self,
        client: &zk::Client,
        path: &str,
    ) -> Result<Option<(i64, zk::Stat)>, CoordinationError> {
        match self.call(client.get_data(path)).await? {
            Ok((data, stat)) => Ok(Some((parse_number(path, &data)?, stat))),
            Err(zk::Error::NoNode) => Ok(None),
            Err(err) => Err(zk_error(path, err)),
        }
    }

    /// Replaces the number at `path` (`None`: no node yet) with `next(stored)` atomically:
    /// a versioned set that starts over when another writer got in between. Returns the
    /// number it replaced and the one now stored.
    async fn update_number(
        &self,
        client: &zk::Client,
        path: &str,
        mut next: impl FnMut(Option<i64>) -> Result<i64, CoordinationError>,
    ) -> Result<(Option<i64>, i64), CoordinationError> {
        for _ in 0..CAS_ATTEMPTS {
            let stored = self.read_number(client, path).await?;
            let value = next(stored.as_ref().map(|(value, _)| *value))?;
            let text = value.to_string();
            let written = match stored {
                Some((old, _)) if old == value => return Ok((Some(old), value)),
                Some((_, stat)) => self
                    .call(client.set_data(path, text.as_bytes(), Some(stat.version)))
                    .await?
                    .map(|_| ()),
                None => self
                    .create(client, path, text.as_bytes(), zk::CreateMode::Persistent)
                    .await?
                    .map(|_| ()),
            };
            match written {
                Ok(()) => return Ok((stored.map(|(old, _)| old), value)),
                // Another writer changed, created or removed the node since we read it.
                Err(zk::Error::BadVersion | zk::Error::NodeExists | zk::Error::NoNode) => {}
                Err(err) => return Err(zk_error(path, err)),
            }
        }
        Err(CoordinationError::ZooKeeper(format!(
            "{path}: still contended after {CAS_ATTEMPTS} attempts"
        )))
    }

    /// Tries to reserve `worker_id` for `instance` by creating its ephemeral reservation node.
    async fn reserve(
        &self,
        client: &zk::Client,
        instance: &Instance,
        worker_id: u16,
    ) -> Result<Reservation, CoordinationError> {
        let path = self.reservation_path(worker_id);
        for _ in 0..CAS_ATTEMPTS {
            let created = self
                .create(
                    client,
                    &path,
                    instance.id.as_bytes(),
                    zk::CreateMode::Ephemeral,
                )
                .await?;
            match created {
                Ok(stat) => return Ok(Reservation::Reserved(stat)),
                Err(zk::Error::NodeExists) => {}
                Err(err) => return Err(zk_error(&path, err)),
            }
            let (holder, stat) = match self.call(client.get_data(&path)).await? {
                Ok(found) => found,
                // The holder let go in between: try again.
                Err(zk::Error::NoNode) => continue,
                Err(err) => return Err(zk_error(&path, err)),
            };
            if stat.ephemeral_owner != client.session_id().0 || holder != instance.id.as_bytes() {
                return Ok(Reservation::Held(
                    String::from_utf8_lossy(&holder).into_owned(),
                ));
            }
            // This very instance and session hold it already (an earlier claim never released,
            // or a create whose answer timed out): make a new node so the new claim gets a new
            // epoch and the earlier one is lost, as it would be with any other repository.
            match self.call(client.delete(&path, Some(stat.version))).await? {
                Ok(()) | Err(zk::Error::NoNode | zk::Error::BadVersion) => {}
                Err(err) => return Err(zk_error(&path, err)),
            }
        }
        Err(CoordinationError::ZooKeeper(format!(
            "{path}: still contended after {CAS_ATTEMPTS} attempts"
        )))
    }

    /// Reserves the lowest id not listed as reserved.
    async fn reserve_lowest_free(
        &self,
        client: &zk::Client,
        instance: &Instance,
    ) -> Result<(u16, zk::Stat), CoordinationError> {
        let dir = self.reservation_dir();
        // Listing first spares a failed create per held id.
        let taken: HashSet<u16> = match self.call(client.list_children(&dir)).await? {
            Ok(children) => children.iter().filter_map(|c| parse_worker_id(c)).collect(),
            Err(zk::Error::NoNode) => HashSet::new(),
            Err(err) => return Err(zk_error(&dir, err)),
        };
        for worker_id in (0..WORKER_IDS).filter(|id| !taken.contains(id)) {
            if let Reservation::Reserved(stat) = self.reserve(client, instance, worker_id).await? {
                return Ok((worker_id, stat));
            }
        }
        Err(CoordinationError::NoFreeWorkerId)
    }

    async fn claim_id(
        &self,
        instance: &Instance,
        preferred: Option<u16>,
    ) -> Result<Claim, CoordinationError> {
        check_name("instance id", &instance.id)?;
        let client = self.live_client().await?;
        let (worker_id, stat) = match preferred {
            Some(worker_id) if worker_id >= WORKER_IDS => {
                return Err(CoordinationError::Config(format!(
                    "worker id {worker_id} is out of range 0..{WORKER_IDS}"
                )));
            }
            Some(worker_id) => match self.reserve(&client, instance, worker_id).await? {
                Reservation::Reserved(stat) => (worker_id, stat),
                Reservation::Held(holder) => {
                    return Err(CoordinationError::WorkerIdHeld { worker_id, holder });
                }
            },
            None => self.reserve_lowest_free(&client, instance).await?,
        };
        match self
            .complete_claim(&client, instance, worker_id, &stat)
            .await
        {
            Ok(claim) => Ok(claim),
            Err(err) => {
                // Our session outlives this failure: left alone, the reservation would keep
                // the id from everyone for as long as the process runs.
                self.abandon(&client, worker_id, &stat).await;
                Err(err)
            }
        }
    }

    /// Reads the high-water mark and publishes the compute node of a fresh reservation.
    async fn complete_claim(
        &self,
        client: &zk::Client,
        instance: &Instance,
        worker_id: u16,
        stat: &zk::Stat,
    ) -> Result<Claim, CoordinationError> {
        let epoch = epoch_of(&self.reservation_path(worker_id), stat)?;
        // Read after reserving: a previous holder writes its mark before it lets go, and a
        // dead one's session can no longer write, so the mark is final now.
        let high_water_millis = self
            .read_number(client, &self.high_water_path(worker_id))
            .await?
            .map_or(0, |(value, _)| value);
        self.publish_compute_node(client, instance, worker_id)
            .await?;
        Ok(Claim {
            worker_id,
            epoch,
            high_water_millis,
        })
    }

    /// Writes ShardingSphere's compute node: the instance's worker id, ephemeral.
    async fn publish_compute_node(
        &self,
        client: &zk::Client,
        instance: &Instance,
        worker_id: u16,
    ) -> Result<(), CoordinationError> {
        let path = self.compute_node_path(&instance.id);
        let data = worker_id.to_string();
        let mode = zk::CreateMode::Ephemeral;
        match self.create(client, &path, data.as_bytes(), mode).await? {
            Ok(_) => return Ok(()),
            Err(zk::Error::NodeExists) => {}
            Err(err) => return Err(zk_error(&path, err)),
        }
        // Left by an earlier claim of this instance: replace it rather than set it, so that it
        // belongs to the session holding the reservation.
        match self.call(client.delete(&path, None)).await? {
            Ok(()) | Err(zk::Error::NoNode) => {}
            Err(err) => return Err(zk_error(&path, err)),
        }
        self.create(client, &path, data.as_bytes(), mode)
            .await?
            .map(|_| ())
            .map_err(|err| zk_error(&path, err))
    }

    /// Best-effort removal of a reservation this session just made.
    async fn abandon(&self, client: &zk::Client, worker_id: u16, stat: &zk::Stat) {
        let path = self.reservation_path(worker_id);
        let deleted = match self.call(client.delete(&path, Some(stat.version))).await {
            Ok(answer) => answer.map_err(|err| zk_error(&path, err)),
            Err(err) => Err(err),
        };
        if let Err(err) = deleted {
            tracing::warn!(%err, "could not give back worker id {worker_id} after a failed claim");
        }
    }

    /// The stat of `claim`'s reservation node if this session still holds it, else
    /// [`CoordinationError::LeaseLost`]. The answer also proves the session alive.
    async fn verify_holding(
        &self,
        client: &zk::Client,
        claim: &Claim,
    ) -> Result<zk::Stat, CoordinationError> {
        let path = self.reservation_path(claim.worker_id);
        match self.call(client.check_stat(&path)).await? {
            // The node is ours only if both its creation (the epoch) and its owner (our
            // session) match: a new session's node, even this instance's, is another claim.
            Ok(Some(stat))
                if epoch_of(&path, &stat).ok() == Some(claim.epoch)
                    && stat.ephemeral_owner == client.session_id().0 =>
            {
                Ok(stat)
            }
            Ok(_) | Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => Err(lost(claim)),
            Err(err) => Err(zk_error(&path, err)),
        }
    }

    async fn renew_claim(
        &self,
        client: &zk::Client,
        claim: &Claim,
        reserve_millis: i64,
    ) -> Result<(), CoordinationError> {
        self.verify_holding(client, claim).await?;
        // Writes of this session succeed only while it lives, and while it lives its
        // reservation does too: nobody else can have claimed the id in between.
        let path = self.high_water_path(claim.worker_id);
        self.update_number(client, &path, |stored| {
            Ok(stored.map_or(reserve_millis, |stored| stored.max(reserve_millis)))
        })
        .await?;
        Ok(())
    }

    async fn release_claim(
        &self,
        client: &zk::Client,
        instance: &Instance,
        claim: &Claim,
        high_water_millis: i64,
    ) -> Result<(), CoordinationError> {
        // A lost claim leaves the compute node alone: it went with the session that held the
        // claim, or it belongs to a newer claim of this instance.
        let stat = self.verify_holding(client, claim).await?;
        // The caller has stopped generating, so the mark may drop back from what renewals
        // reserved ahead, but never below what the id had before this claim.
        let mark = claim.high_water_millis.max(high_water_millis);
        let path = self.high_water_path(claim.worker_id);
        self.update_number(client, &path, |_| Ok(mark)).await?;
        self.delete_compute_node(client, instance).await?;
        let path = self.reservation_path(claim.worker_id);
        match self.call(client.delete(&path, Some(stat.version))).await? {
            Ok(()) => Ok(()),
            Err(zk::Error::NoNode | zk::Error::BadVersion) => Err(lost(claim)),
            Err(err) => Err(zk_error(&path, err)),
        }
    }

    async fn delete_compute_node(
        &self,
        client: &zk::Client,
        instance: &Instance,
    ) -> Result<(), CoordinationError> {
        let path = self.compute_node_path(&instance.id);
        match self.call(client.delete(&path, None)).await? {
            Ok(()) | Err(zk::Error::NoNode) => Ok(()),
            Err(err) => Err(zk_error(&path, err)),
        }
    }

    async fn list_compute_nodes(&self) -> Result<Vec<ComputeNode>, CoordinationError> {
        let client = self.live_client().await?;
        let dir = self.reservation_dir();
        let children = match self.call(client.list_children(&dir)).await? {
            Ok(children) => children,
            Err(zk::Error::NoNode) => return Ok(Vec::new()),
            Err(err) => return Err(zk_error(&dir, err)),
        };
        let ids: Vec<u16> = children.iter().filter_map(|c| parse_worker_id(c)).collect();
        // One round trip for all holders rather than one per id.
        let mut reader = client.new_multi_reader();
        for &worker_id in &ids {
            let path = self.reservation_path(worker_id);
            reader
                .add_get_data(&path)
                .map_err(|err| zk_error(&path, err))?;
        }
        let results = self
            .call(reader.commit())
            .await?
            .map_err(|err| zk_error(&dir, err))?;
        let mut nodes = Vec::with_capacity(ids.len());
        for (worker_id, result) in ids.into_iter().zip(results) {
            let path = self.reservation_path(worker_id);
            match result {
                zk::MultiReadResult::Data { data, stat } => nodes.push(ComputeNode {
                    instance_id: String::from_utf8_lossy(&data).into_owned(),
                    worker_id,
                    epoch: epoch_of(&path, &stat)?,
                    expires_at_millis: None,
                }),
                // Released since the listing.
                zk::MultiReadResult::Error {
                    err: zk::Error::NoNode,
                } => {}
                zk::MultiReadResult::Error { err } => return Err(zk_error(&path, err)),
                other => {
                    return Err(CoordinationError::ZooKeeper(format!(
                        "{path}: unexpected answer {other:?}"
                    )));
                }
            }
        }
        nodes.sort_by_key(|node| node.worker_id);
        Ok(nodes)
    }

    async fn take_segment(
        &self,
        key: &str,
        initial: i64,
        step: i64,
    ) -> Result<(i64, i64), CoordinationError> {
        check_name("segment key", key)?;
        if step < 1 {
            return Err(CoordinationError::Config(format!(
                "segment step must be positive, not {step}"
            )));
        }
        let client = self.live_client().await?;
        let path = self.segment_path(key);
        let (previous, last) = self
            .update_number(&client, &path, |stored| {
                match stored {
                    None => initial.checked_add(step - 1),
                    Some(last) => last.checked_add(step),
                }
                .ok_or_else(|| {
                    CoordinationError::Corrupt(format!("{path}: sequence '{key}' is exhausted"))
                })
            })
            .await?;
        // `last` did not overflow, and it is at least `previous + 1`.
        let first = previous.map_or(initial, |previous| previous + 1);
        Ok((first, last))
    }

    async fn read_service_time(&self, service: &str) -> Result<Option<i64>, CoordinationError> {
        check_name("service id", service)?;
        let client = self.live_client().await?;
        let path = self.service_time_path(service);
        Ok(self
            .read_number(&client, &path)
            .await?
            .map(|(value, _)| value))
    }

    async fn write_service_time(
        &self,
        service: &str,
        millis: i64,
    ) -> Result<(), CoordinationError> {
        check_name("service id", service)?;
        let client = self.live_client().await?;
        let path = self.service_time_path(service);
        self.update_number(&client, &path, |stored| {
            Ok(stored.map_or(millis, |stored| stored.max(millis)))
        })
        .await?;
        Ok(())
    }
}

impl Repository for ZooKeeperRepository {
    fn describe(&self) -> String {
        format!(
            "ZooKeeper {} (namespace {})",
            self.settings.server_lists,
            self.root.trim_start_matches('/')
        )
    }

    fn time_to_live(&self) -> Duration {
        Duration::from_millis(self.session_timeout_millis.load(Ordering::Relaxed))
    }

    fn claim<'a>(
        &'a self,
        instance: &'a Instance,
        preferred: Option<u16>,
    ) -> BoxFuture<'a, Result<Claim, CoordinationError>> {
        self.claim_id(instance, preferred).boxed()
    }

    fn renew<'a>(
        &'a self,
        _instance: &'a Instance,
        claim: &'a Claim,
        reserve_millis: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>> {
        async move {
            let client = self.current_client().await;
            let renewed = self.renew_claim(&client, claim, reserve_millis).await;
            lost_if_session_ended(&client, claim, renewed)
        }
        .boxed()
    }

    fn release<'a>(
        &'a self,
        instance: &'a Instance,
        claim: &'a Claim,
        high_water_millis: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>> {
        async move {
            let client = self.current_client().await;
            let released = self
                .release_claim(&client, instance, claim, high_water_millis)
                .await;
            lost_if_session_ended(&client, claim, released)
        }
        .boxed()
    }

    fn compute_nodes(&self) -> BoxFuture<'_, Result<Vec<ComputeNode>, CoordinationError>> {
        self.list_compute_nodes().boxed()
    }

    fn next_segment<'a>(
        &'a self,
        key: &'a str,
        initial: i64,
        step: i64,
    ) -> BoxFuture<'a, Result<(i64, i64), CoordinationError>> {
        self.take_segment(key, initial, step).boxed()
    }

    fn service_time<'a>(
        &'a self,
        service: &'a str,
    ) -> BoxFuture<'a, Result<Option<i64>, CoordinationError>> {
        self.read_service_time(service).boxed()
    }

    fn record_service_time<'a>(
        &'a self,
        service: &'a str,
        millis: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>> {
        self.write_service_time(service, millis).boxed()
    }

    fn decide<'a>(
        &'a self,
        gtrid: &'a str,
        commit: bool,
    ) -> BoxFuture<'a, Result<bool, CoordinationError>> {
        self.decide_outcome(gtrid, commit).boxed()
    }

    fn forget<'a>(&'a self, gtrids: &'a [String]) -> BoxFuture<'a, Result<(), CoordinationError>> {
        self.forget_decisions(gtrids).boxed()
    }
}

/// Turns a failure into [`CoordinationError::LeaseLost`] when the session holding `claim` has
/// ended: its ephemerals, the reservation among them, are gone with it.
fn lost_if_session_ended(
    client: &zk::Client,
    claim: &Claim,
    result: Result<(), CoordinationError>,
) -> Result<(), CoordinationError> {
    match result {
        Err(CoordinationError::ZooKeeper(_)) if session_ended(client.state()) => Err(lost(claim)),
        other => other,
    }
}

fn lost(claim: &Claim) -> CoordinationError {
    CoordinationError::LeaseLost {
        worker_id: claim.worker_id,
        epoch: claim.epoch,
    }
}
