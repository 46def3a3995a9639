//! `!TRANSACTION defaultType: XA`: two-phase commit set up at start, and recovery of prepared
//! branches at start and then periodically, for as long as the instance serves.

use std::sync::Arc;
use std::time::Duration;

use keyshard_backend::{Backend, BackendError, XaCoordinator};
use keyshard_config::{Config, Repository as RepositoryConfig, TransactionType};
use keyshard_coordination::{CoordinationError, Repository};
use tokio::sync::watch;

/// Recovery never waits longer than this between passes.
const MAX_RECOVERY_INTERVAL: Duration = Duration::from_secs(10);

/// Turns two-phase commit on when the configuration asks for it: refuses data sources that
/// cannot take part, then finishes what earlier instances left prepared.
pub(crate) async fn enable(
    backend: &mut Backend,
    config: &Config,
    repository: Option<&Arc<dyn Repository>>,
) -> Result<(), BackendError> {
    if config.transaction_type != TransactionType::Xa {
        return Ok(());
    }
    let repository = repository.ok_or_else(|| {
        BackendError::Coordination(CoordinationError::Config(
            "XA needs the coordination repository".to_owned(),
        ))
    })?;
    // A JDBC repository in a data source's own database can take decisions in that data
    // source's commits.
    let holder = match &config.mode.repository {
        RepositoryConfig::Jdbc { data_source } => config
            .data_sources
            .values()
            .find(|source| source.url == data_source.url)
            .map(|source| source.name.as_str()),
        RepositoryConfig::ZooKeeper { .. } => None,
    };
    backend.enable_xa(XaCoordinator::new(
        Arc::clone(repository),
        Arc::clone(config.key_generators.lease()),
        &config.data_sources,
        holder,
        config.mode.timing.operation_timeout,
    )?);
    backend.check_xa().await?;
    recover(backend).await;
    Ok(())
}

/// Runs a recovery pass every third of the lease time (the pace at which a dead coordinator's
/// lease is seen to expire) until `stop` turns true.
pub(crate) async fn keep_recovering(
    backend: &Backend,
    config: &Config,
    mut stop: watch::Receiver<bool>,
) {
    if config.transaction_type != TransactionType::Xa {
        return;
    }
    let every = (config.mode.timing.time_to_live / 3).min(MAX_RECOVERY_INTERVAL);
    loop {
        tokio::select! {
            () = tokio::time::sleep(every) => recover(backend).await,
            changed = stop.changed() => if changed.is_err() || *stop.borrow() { return },
        }
    }
}

async fn recover(backend: &Backend) {
    match backend.recover().await {
        Ok(report) => {
            if report.committed + report.rolled_back > 0 {
                tracing::warn!(
                    "XA recovery: {} branches committed, {} rolled back",
                    report.committed,
                    report.rolled_back
                );
            }
            for problem in report.unreachable {
                tracing::warn!("XA recovery: {problem}");
            }
        }
        Err(e) => tracing::warn!("XA recovery skipped: {e}"),
    }
}
