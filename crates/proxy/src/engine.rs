//! What every connection shares: the configuration, the routers, the backend; and how a
//! statement is answered, whichever protocol it came in by.

use std::sync::{Arc, OnceLock, Weak};
use std::time::Instant;

use keyshard_backend::Backend;
use keyshard_config::Config;
use keyshard_coordination::Repository;
use keyshard_router::{Router, SingleTables};
use keyshard_types::Dialect;

use crate::identity::Identity;
use crate::instance::Instance;
use crate::metrics::Metrics;
use crate::reflection;
use crate::routines::{self, Routines};
use crate::shapes::Shapes;

mod accounting;
mod copy_in;
mod copy_out;
mod databases;
mod distsql;
mod explain;
mod insert_select;
mod logical;
mod pinned;
mod planning;
mod prepared;
mod query;
mod running;
mod session_lifetime;
mod session_sql;
mod session_values;
mod settings;
mod shaped;
mod status;
mod stopping;
mod table_locks;
mod transactions;

pub(crate) use databases::Databases;
pub(crate) use settings::{mysql_startup_settings, startup_parameters, startup_settings};

/// The proxy's shared state.
#[derive(Debug)]
pub struct Engine {
    config: Config,
    mysql: Router,
    pub(crate) postgres: Router,
    backend: Backend,
    shapes: Shapes,
    coordination: Option<Arc<dyn Repository>>,
    /// What this engine shares with the other logical databases of the instance.
    instance: Arc<Instance>,
    identity: Arc<Identity>,
    /// The functions and procedures the shards define: calling one pins a session.
    routines: Routines,
    /// When the proxy started serving, for its uptime.
    started: Instant,
    /// `!SINGLE`'s tables and where they were found, shared with the routers.
    single_tables: Arc<SingleTables>,
    /// The instance's engines, once all have started: a statement naming another logical
    /// database (`SHOW TABLES FROM`, RQL's `FROM`) is answered by that database's. Weak: the
    /// engines hold each other through it.
    siblings: OnceLock<Weak<Databases>>,
}

impl Engine {
    /// Builds the routers and the data source pools (inside a Tokio runtime) and loads the
    /// logic tables' metadata. A data source that is down is logged, not fatal: its
    /// statements fail until it is back.
    pub(crate) async fn start(
        config: Config,
        coordination: Option<Arc<dyn Repository>>,
        instance: Arc<Instance>,
    ) -> Result<Self, keyshard_backend::BackendError> {
        let mut backend = Backend::new(&config)?;
        crate::xa::enable(&mut backend, &config, coordination.as_ref()).await?;
        if let Err(e) = backend.load_metadata(&config.sharding).await {
            tracing::warn!("table metadata not loaded: {e}");
        }
        let single = Arc::new(SingleTables::new(
            crate::single_tables::discover(&backend, &config).await.0,
        ));
        let router = async |dialect| {
            let router = Router::new(&config.sharding, dialect)
                .with_data_sources(
                    config.data_sources.keys().cloned().collect(),
                    config.broadcast_tables.clone(),
                )
                .with_single_tables(Arc::clone(&single));
            reflection::with_catalog(router, &backend, &config).await
        };
        let identity = Arc::new(Identity::of(&backend, &config).await);
        let routines = Routines::default();
        routines.load(&backend, &config).await;
        Ok(Self {
            mysql: router(Dialect::MySql).await,
            postgres: router(Dialect::Postgres).await,
            shapes: Shapes::new(config.props.shape_cache),
            config,
            backend,
            coordination,
            instance,
            identity,
            routines,
            single_tables: single,
            started: Instant::now(),
            siblings: OnceLock::new(),
        })
    }

    /// MySQL's COM_STATISTICS line (the mariadb client's `\s`), from what the proxy counts:
    /// its uptime, sessions and statements.
    pub(crate) fn statistics(&self) -> String {
        let uptime = self.started.elapsed().as_secs();
        let questions = self.instance.metrics.statements_answered();
        let per_second = questions as f64 / uptime.max(1) as f64;
        format!(
            "Uptime: {uptime}  Threads: {}  Questions: {questions}  Slow queries: 0  Opens: 0  \
             Open tables: 0  Queries per second avg: {per_second:.3}",
            self.instance.sessions.count()
        )
    }

    /// The versions the proxy reports, its shards'.
    pub(crate) fn identity(&self) -> &Arc<Identity> {
        &self.identity
    }

    /// The configuration the proxy runs.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Failed logins, shared by both frontends.
    pub(crate) fn logins(&self) -> &crate::throttle::LoginThrottle {
        &self.instance.logins
    }

    /// Each of its caches (the statement shapes per frontend, the reads' result columns, the
    /// text columns' collations), as it is now.
    pub(crate) fn caches(&self) -> Vec<(&'static str, keyshard_backend::cache::CacheStats)> {
        let mut caches = self.shapes.stats().to_vec();
        caches.push(("columns", self.backend.column_cache()));
        caches.push(("collations", self.backend.collation_cache()));
        caches
    }

    /// The backend (pools and metadata).
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The account of what a new session keeps between its statements.
    pub(crate) fn session_memory(&self) -> Arc<crate::memory::SessionMemory> {
        self.instance.memory.session()
    }

    /// A new connection id.
    pub fn connection_id(&self) -> u32 {
        self.instance.connection_id()
    }

    /// The configured password of `user` (`root` and `root@%` alike), if the user exists.
    pub fn password(&self, user: &str) -> Option<String> {
        self.config
            .users
            .iter()
            .find(|u| u.name == user)
            .map(|u| u.password.clone())
    }

    /// Closes the data source pools.
    pub async fn close(&self) {
        self.backend.close().await;
    }

    /// Finishes prepared XA branches left by instances that are gone, until `stop` turns
    /// true (at once when transactions are not XA).
    pub async fn keep_recovering(&self, stop: tokio::sync::watch::Receiver<bool>) {
        crate::xa::keep_recovering(&self.backend, &self.config, stop).await;
    }

    /// Reads the shards' routines again every 30 s until `stop` turns true: an application's
    /// migrations create functions beside the proxy, and a call of one must pin its session.
    pub async fn keep_routines_fresh(&self, mut stop: tokio::sync::watch::Receiver<bool>) {
        loop {
            tokio::select! {
                () = tokio::time::sleep(routines::REFRESH) => {
                    self.routines.load(&self.backend, &self.config).await;
                }
                changed = stop.changed() => if changed.is_err() || *stop.borrow() { return },
            }
        }
    }

    /// What the proxy has counted.
    pub(crate) fn metrics(&self) -> &Metrics {
        &self.instance.metrics
    }
}
