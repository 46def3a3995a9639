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
//! - `keyshard/clock`: persistent, written to read the servers' clock (its modification time).
//! - `keyshard/repository_id`: persistent, the repository's identity (a UUID, made by the first
//!   instance to connect).
//!
//! The ephemerals live exactly as long as the repository's session, so a holder that dies
//! loses its id when ZooKeeper expires the session: one session timeout after the server last
//! heard from it. That is why [`Repository::time_to_live`] is the negotiated session timeout.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::sync::Mutex;
use zookeeper_client as zk;

use crate::{Claim, ComputeNode, CoordinationError, Instance, Repository};

mod compute_nodes;
mod decisions;
mod leases;
mod nodes;
mod numbers;
mod session;
mod store;

use leases::lost_if_session_ended;
use nodes::millis;
pub use session::ZooKeeperSettings;
use session::{open_session, session_ended};

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
    /// What `keyshard/repository_id` holds.
    identity: String,
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
        let mut repository = Self {
            settings,
            root,
            client: Mutex::new(client),
            session_timeout_millis,
            identity: String::new(),
        };
        repository.identity = repository.read_identity().await?;
        Ok(repository)
    }

    /// The repository's identity, made unless another instance made it first.
    async fn read_identity(&self) -> Result<String, CoordinationError> {
        let client = self.current_client().await;
        let path = self.identity_path();
        let fresh = uuid::Uuid::new_v4().to_string();
        match self
            .create(&client, &path, fresh.as_bytes(), zk::CreateMode::Persistent)
            .await?
        {
            Ok(_) | Err(zk::Error::NodeExists) => {}
            Err(err) => return Err(nodes::zk_error(&path, err)),
        }
        let (data, _) = self
            .call(client.get_data(&path))
            .await?
            .map_err(|err| nodes::zk_error(&path, err))?;
        String::from_utf8(data).map_err(|_| CoordinationError::Corrupt(path))
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
}

impl Repository for ZooKeeperRepository {
    fn describe(&self) -> String {
        format!(
            "ZooKeeper {} (namespace {})",
            self.settings.server_lists,
            self.root.trim_start_matches('/')
        )
    }

    fn identity(&self) -> &str {
        &self.identity
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

    fn raise_segment<'a>(
        &'a self,
        key: &'a str,
        at_least: i64,
    ) -> BoxFuture<'a, Result<(), CoordinationError>> {
        self.raise_sequence(key, at_least).boxed()
    }

    fn clock_millis(&self) -> BoxFuture<'_, Result<i64, CoordinationError>> {
        self.server_clock().boxed()
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
