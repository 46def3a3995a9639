//! The server's life: bind, accept, serve each connection on its own task, and on shutdown
//! stop accepting, let running statements finish, then close the pools.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use keyshard_config::Config;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::engine::Engine;
use crate::mysql;

/// How long shutdown waits for running statements before closing the pools anyway.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The configuration has no frontend to serve.
    #[error("no frontend configured: set server.mysql.listen")]
    NoFrontend,
    /// The listen address could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The data sources could not be set up.
    #[error(transparent)]
    Backend(#[from] keyshard_backend::BackendError),
}

/// A bound, ready-to-run proxy.
#[derive(Debug)]
pub struct Server {
    engine: Arc<Engine>,
    listener: TcpListener,
}

impl Server {
    /// Starts the engine and binds the MySQL frontend's address (port 0 picks a free one).
    pub async fn bind(config: Config) -> Result<Self, ServerError> {
        let address = config.server.mysql.ok_or(ServerError::NoFrontend)?;
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| ServerError::Bind { address, source })?;
        let engine = Arc::new(Engine::start(config).await?);
        Ok(Self { engine, listener })
    }

    /// The address the MySQL frontend listens on.
    pub fn mysql_address(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// Serves until `shutdown` completes, then drains connections and closes the pools.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let (stop, stopping) = watch::channel(false);
        let mut connections = JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        connections.spawn(mysql::serve(stream, Arc::clone(&self.engine), stopping.clone()));
                    }
                    // Out of file descriptors and the like: keep serving the others.
                    Err(e) => {
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                // Reap finished connections so the set does not grow without bound.
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                () = &mut shutdown => break,
            }
        }
        drop(self.listener);
        let _ = stop.send(true);
        let drained = tokio::time::timeout(DRAIN_TIMEOUT, async {
            while connections.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                "{} connections still busy after {DRAIN_TIMEOUT:?}; closing",
                connections.len()
            );
            connections.abort_all();
        }
        self.engine.close().await;
    }
}
