//! Connects the configured coordination repository and starts the keeper that holds this
//! instance's worker id and segments while it serves.

use std::collections::BTreeSet;
use std::sync::Arc;

use keyshard_config::{Config, DataSource, Repository as RepositoryConfig, TransactionType};
use keyshard_coordination::{
    CoordinationError, FleetRecords, Instance, JdbcRepository, Keeper, KeeperSettings, Repository,
    ZooKeeperRepository, ZooKeeperSettings,
};
use keyshard_keygen::Built;

/// Starts the keeper when a configured generator needs the repository (SNOWFLAKE,
/// LEAF_SNOWFLAKE, LEAF_SEGMENT) or transactions are XA (named after the worker id, decided in
/// the repository); `None` otherwise (UUID keys only, LOCAL). `address` names the instance for
/// operators (`SHOW COMPUTE NODES`).
pub async fn start(config: &Config, address: String) -> Result<Option<Keeper>, CoordinationError> {
    let xa = config.transaction_type == TransactionType::Xa;
    if !config.key_generators.needs_repository() && !xa {
        return Ok(None);
    }
    let repository = connect(config).await?;
    let timing = config.mode.timing;
    let keyed = keyed_data_sources(config);
    let fleet = if keyed.is_empty() {
        None
    } else {
        Some(Arc::new(FleetRecords::connect(
            &keyed,
            timing.operation_timeout,
        )?))
    };
    let settings = KeeperSettings {
        instance: Instance::new(address),
        operation_timeout: timing.operation_timeout,
        retry_interval: timing.retry_interval,
        claim_worker_id: xa,
        fleet,
    };
    Keeper::start(repository, &config.key_generators, settings)
        .await
        .map(Some)
}

/// The data sources that keys of a generator drawing on the repository (SNOWFLAKE,
/// LEAF_SNOWFLAKE, LEAF_SEGMENT) are written to: they hold the fleet records that tell a second
/// repository, or one that lost claims, from the one in use.
pub fn keyed_data_sources(config: &Config) -> Vec<DataSource> {
    let leased: BTreeSet<&str> = config
        .key_generators
        .iter()
        .filter(|(_, configured)| {
            matches!(configured.built, Built::Snowflake(_) | Built::Segment(_))
        })
        .map(|(name, _)| name)
        .collect();
    let names: BTreeSet<&str> = config
        .sharding
        .tables
        .values()
        .filter(|table| {
            table
                .key_generate
                .as_ref()
                .is_some_and(|key| leased.contains(key.generator_name.as_str()))
        })
        .flat_map(|table| table.data_source_names())
        .collect();
    names
        .into_iter()
        .filter_map(|name| config.data_sources.get(name).cloned())
        .collect()
}

/// Connects the repository, trying `maxRetries` more times after a failure.
async fn connect(config: &Config) -> Result<Arc<dyn Repository>, CoordinationError> {
    let timing = config.mode.timing;
    let mut attempt = 0;
    loop {
        let connected: Result<Arc<dyn Repository>, CoordinationError> = match &config
            .mode
            .repository
        {
            RepositoryConfig::Jdbc { data_source } => {
                JdbcRepository::connect(data_source, timing.time_to_live, timing.operation_timeout)
                    .await
                    .map(|r| Arc::new(r) as Arc<dyn Repository>)
            }
            RepositoryConfig::ZooKeeper {
                server_lists,
                namespace,
                digest,
            } => ZooKeeperRepository::connect(ZooKeeperSettings {
                server_lists: server_lists.clone(),
                namespace: namespace.clone(),
                session_timeout: timing.time_to_live,
                operation_timeout: timing.operation_timeout,
                retry_interval: timing.retry_interval,
                max_retries: timing.max_retries,
                digest: digest.clone(),
            })
            .await
            .map(|r| Arc::new(r) as Arc<dyn Repository>),
        };
        match connected {
            Ok(repository) => return Ok(repository),
            Err(e) if attempt < timing.max_retries => {
                attempt += 1;
                tracing::warn!("coordination repository: {e}; retrying ({attempt})");
                tokio::time::sleep(timing.retry_interval).await;
            }
            Err(e) => return Err(e),
        }
    }
}
