//! The server's life: bind, accept, serve each connection on its own task, and on shutdown
//! stop accepting, let running statements finish, then close the pools.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use keyshard_config::{Config, DatabaseKind};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use keyshard_coordination::{Keeper, WorkerIdStatus};

use crate::admission::{self, Admission};
use crate::engine::Databases;
use crate::engine::Engine;
use crate::instance::Instance;
use crate::tls::Tls;
use crate::{coordination, mysql, postgres};

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// No logical database was given to serve.
    #[error("no logical database to serve")]
    NoDatabase,
    /// The configuration has no frontend to serve.
    #[error("no frontend configured: set server.mysql.listen or server.postgres.listen")]
    NoFrontend,
    /// A frontend's SQL dialect cannot be forwarded to a data source's database.
    #[error(
        "{setting} is set, but data source '{data_source}' ({url}) is {database}: the {frontend} \
         frontend forwards {frontend} SQL, which {database} does not run; use {frontend} or \
         SQLite data sources with it"
    )]
    DialectMismatch {
        /// The frontend's setting (`server.postgres.listen`).
        setting: &'static str,
        /// The frontend's protocol.
        frontend: &'static str,
        /// The data source.
        data_source: String,
        /// Its URL, without the password.
        url: String,
        /// Its database.
        database: &'static str,
    },
    /// The listen address could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// `server.tls` could not be used.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    /// The data sources could not be set up.
    #[error(transparent)]
    Backend(#[from] keyshard_backend::BackendError),
    /// The coordination repository refused or could not be reached: without a worker id or
    /// segment the instance would hand out keys it cannot prove unique.
    #[error(transparent)]
    Coordination(#[from] keyshard_coordination::CoordinationError),
}

/// A bound, ready-to-run proxy.
#[derive(Debug)]
pub struct Server {
    databases: Arc<Databases>,
    tls: Option<Arc<Tls>>,
    mysql: Option<TcpListener>,
    postgres: Option<(TcpListener, Arc<postgres::Frontend>)>,
    metrics: Option<TcpListener>,
    /// Each database's keeper of its worker id and segments, where it needs one.
    keepers: Vec<Keeper>,
    admission: Arc<Admission>,
}

impl Server {
    /// Serves one logical database: [`Server::bind_databases`] of it alone.
    pub async fn bind(config: Config) -> Result<Self, ServerError> {
        Self::bind_databases(vec![config]).await
    }

    /// Checks that each frontend can forward to every data source, starts an engine per
    /// logical database (the first one's `server`, users and props serve them all, as they
    /// come from one proxy file) and binds the frontends' addresses (port 0 picks a free one).
    pub async fn bind_databases(configs: Vec<Config>) -> Result<Self, ServerError> {
        let Some(first) = configs.first() else {
            return Err(ServerError::NoDatabase);
        };
        if first.server.mysql.is_none() && first.server.postgres.is_none() {
            return Err(ServerError::NoFrontend);
        }
        for config in &configs {
            check_dialects(config, &first.server)?;
        }
        let tls = first
            .server
            .tls
            .as_ref()
            .map(Tls::load)
            .transpose()?
            .map(Arc::new);
        // A port the configuration fixes is known without binding it: the instance claims its
        // worker ids and starts its engines first and listens only then, so no client connects
        // to an instance that may still fail to start. Port 0 (any free port: tests,
        // embedding) is known only once bound.
        let addresses = [
            first.server.mysql,
            first.server.postgres,
            first.server.metrics,
        ];
        let early = match addresses.iter().flatten().any(|a| a.port() == 0) {
            true => Some(Listeners::bind(addresses).await?),
            false => None,
        };
        let address = match &early {
            Some(listeners) => listeners.address(),
            None => [first.server.mysql, first.server.postgres]
                .iter()
                .flatten()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(","),
        };
        let admission = Arc::new(Admission::new(&first.props));
        let instance = Arc::new(Instance::new(&configs));
        let mut keepers = Vec::new();
        let mut engines = Vec::new();
        let mut started: Result<(), ServerError> = Ok(());
        for config in configs {
            // Before the engine: no statement may run before the worker id is held.
            let keeper = match coordination::start(&config, address.clone()).await {
                Ok(keeper) => keeper,
                Err(e) => {
                    started = Err(e.into());
                    break;
                }
            };
            let repository = keeper.as_ref().map(|k| Arc::clone(k.repository()));
            keepers.extend(keeper);
            match Engine::start(config, repository, Arc::clone(&instance)).await {
                Ok(engine) => engines.push(Arc::new(engine)),
                Err(e) => {
                    started = Err(e.into());
                    break;
                }
            }
        }
        let listeners = match (started, early) {
            (Ok(()), Some(listeners)) => Ok(listeners),
            (Ok(()), None) => Listeners::bind(addresses).await,
            (Err(e), _) => Err(e),
        };
        let listeners = match listeners {
            Ok(listeners) => listeners,
            Err(e) => {
                // Give the worker ids back now rather than when their leases run out.
                for keeper in keepers {
                    keeper.stop().await;
                }
                return Err(e);
            }
        };
        let mut engines = engines.into_iter();
        let Some(first) = engines.next() else {
            return Err(ServerError::NoDatabase);
        };
        let databases = Arc::new(Databases::new(first, engines.collect()));
        for engine in databases.iter() {
            engine.attach(&databases);
        }
        let Listeners {
            mysql,
            postgres: postgres_listener,
            metrics,
        } = listeners;
        let postgres = postgres_listener.map(|listener| {
            (
                listener,
                Arc::new(postgres::Frontend::new(Arc::clone(&databases), tls.clone())),
            )
        });
        Ok(Self {
            databases,
            tls,
            mysql,
            postgres,
            metrics,
            keepers,
            admission,
        })
    }

    /// The worker id this instance holds, and where it came from (`None` when no generator
    /// needs one).
    pub async fn worker_id(&self) -> Option<WorkerIdStatus> {
        self.keepers.first()?.worker_id().await
    }

    /// The address the MySQL frontend listens on.
    pub fn mysql_address(&self) -> Option<SocketAddr> {
        self.mysql.as_ref()?.local_addr().ok()
    }

    /// The address the PostgreSQL frontend listens on.
    pub fn postgres_address(&self) -> Option<SocketAddr> {
        self.postgres.as_ref()?.0.local_addr().ok()
    }

    /// The address the metrics endpoint listens on.
    pub fn metrics_address(&self) -> Option<SocketAddr> {
        self.metrics.as_ref()?.local_addr().ok()
    }

    /// Serves until `shutdown` completes, then drains connections and closes the pools.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let (stop, stopping) = watch::channel(false);
        let mut connections = JoinSet::new();
        let mut recovery = JoinSet::new();
        for engine in self.databases.iter() {
            let (recovering, stop_recovering) = (Arc::clone(engine), stopping.clone());
            recovery.spawn(async move { recovering.keep_recovering(stop_recovering).await });
            let (refreshing, stop_refreshing) = (Arc::clone(engine), stopping.clone());
            tokio::spawn(async move { refreshing.keep_routines_fresh(stop_refreshing).await });
            let (engine, mut stopping) = (Arc::clone(engine), stopping.clone());
            tokio::spawn(async move {
                tokio::select! {
                    () = engine.backend().watch_replicas() => {}
                    _ = stopping.wait_for(|stop| *stop) => {}
                }
            });
        }
        if let Some(listener) = self.metrics {
            tokio::spawn(crate::scrape::serve(
                listener,
                Arc::clone(&self.databases),
                stopping.clone(),
            ));
        }
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = accept(self.mysql.as_ref()) => {
                    if let Some(stream) = accepted.await {
                        match self.admission.admit(peer_ip(&stream)) {
                            Ok(ticket) => {
                                connections.spawn(mysql::serve(
                                    stream,
                                    Arc::clone(&self.databases),
                                    self.tls.clone(),
                                    stopping.clone(),
                                    ticket,
                                ));
                            }
                            Err(refused) => refuse(stream, admission::mysql_refusal(refused)),
                        }
                    }
                }
                accepted = accept(self.postgres.as_ref().map(|(l, _)| l)) => {
                    if let (Some(stream), Some((_, frontend))) = (accepted.await, &self.postgres) {
                        match self.admission.admit(peer_ip(&stream)) {
                            Ok(ticket) => {
                                connections.spawn(postgres::serve(
                                    stream,
                                    Arc::clone(frontend),
                                    stopping.clone(),
                                    ticket,
                                ));
                            }
                            Err(refused) => refuse(stream, admission::postgres_refusal(refused)),
                        }
                    }
                }
                // Reap finished connections so the set does not grow without bound.
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                () = &mut shutdown => break,
            }
        }
        drop(self.postgres);
        drop(self.mysql);
        let _ = stop.send(true);
        let drain = self.databases.first().config().props.shutdown_drain_timeout;
        let drained = tokio::time::timeout(drain, async {
            while connections.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                "{} connections still busy after {drain:?}; closing",
                connections.len()
            );
            connections.abort_all();
        }
        while recovery.join_next().await.is_some() {}
        // After the last statement: the worker ids go back with the last millisecond used.
        for keeper in self.keepers {
            keeper.stop().await;
        }
        for engine in self.databases.iter() {
            engine.close().await;
        }
    }
}

/// Sets up a client's socket for small request/response messages, which Nagle's algorithm
/// would hold back; returns the client's address, for logs and the login throttle.
pub(crate) fn accepted(stream: &TcpStream) -> String {
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!("TCP_NODELAY not set: {e}");
    }
    stream
        .peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_default()
}

/// The client's address, for the caps on connections still logging in.
fn peer_ip(stream: &TcpStream) -> IpAddr {
    stream
        .peer_addr()
        .map_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), |a| a.ip())
}

/// Tells a connection the caps refuse why, and closes it; a client that does not read within
/// a second is not waited for.
fn refuse(mut stream: TcpStream, refusal: Vec<u8>) {
    tracing::debug!(
        "connection from {} refused: too many connections",
        peer_ip(&stream)
    );
    tokio::spawn(async move {
        let told = async {
            stream.write_all(&refusal).await?;
            stream.shutdown().await
        };
        let _ = tokio::time::timeout(Duration::from_secs(1), told).await;
    });
}

/// The frontends' and the metrics endpoint's listeners.
struct Listeners {
    mysql: Option<TcpListener>,
    postgres: Option<TcpListener>,
    metrics: Option<TcpListener>,
}

impl Listeners {
    /// Listens on `[mysql, postgres, metrics]`, those that are configured.
    async fn bind(
        [mysql, postgres, metrics]: [Option<SocketAddr>; 3],
    ) -> Result<Self, ServerError> {
        let listen_on = async |address: Option<SocketAddr>| match address {
            Some(address) => listen(address).await.map(Some),
            None => Ok(None),
        };
        Ok(Self {
            mysql: listen_on(mysql).await?,
            postgres: listen_on(postgres).await?,
            metrics: listen_on(metrics).await?,
        })
    }

    /// Where the frontends listen, for operators (`SHOW COMPUTE NODES`).
    fn address(&self) -> String {
        [&self.mysql, &self.postgres]
            .into_iter()
            .flatten()
            .filter_map(|l| l.local_addr().ok())
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }
}

async fn listen(address: SocketAddr) -> Result<TcpListener, ServerError> {
    TcpListener::bind(address)
        .await
        .map_err(|source| ServerError::Bind { address, source })
}

/// Accepts one connection on `listener`, never completing when there is none. The result is a
/// future so that a failed accept's back-off runs outside `select!`'s other branches.
async fn accept(listener: Option<&TcpListener>) -> impl Future<Output = Option<TcpStream>> {
    let accepted = match listener {
        Some(listener) => listener.accept().await,
        None => std::future::pending().await,
    };
    async move {
        match accepted {
            Ok((stream, _)) => Some(stream),
            // Out of file descriptors and the like: keep serving the others.
            Err(e) => {
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                None
            }
        }
    }
}

/// Refuses a frontend whose SQL a data source's database would not run: PostgreSQL SQL
/// (`$1` placeholders, `"quoted"` identifiers) to MySQL, or MySQL SQL to PostgreSQL. SQLite
/// takes either.
fn check_dialects(config: &Config, server: &keyshard_config::Server) -> Result<(), ServerError> {
    let frontends = [
        (
            server.mysql.is_some(),
            "server.mysql.listen",
            "MySQL",
            DatabaseKind::Postgres,
        ),
        (
            server.postgres.is_some(),
            "server.postgres.listen",
            "PostgreSQL",
            DatabaseKind::MySql,
        ),
    ];
    for (enabled, setting, frontend, refused) in frontends {
        if !enabled {
            continue;
        }
        if let Some(source) = config.data_sources.values().find(|s| s.kind == refused) {
            return Err(ServerError::DialectMismatch {
                setting,
                frontend,
                data_source: source.name.clone(),
                url: source.redacted_url(),
                database: match refused {
                    DatabaseKind::MySql => "MySQL",
                    DatabaseKind::Postgres => "PostgreSQL",
                    DatabaseKind::Sqlite => "SQLite",
                },
            });
        }
    }
    Ok(())
}
