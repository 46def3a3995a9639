//! Keyshard configuration: the ShardingSphere 5 compatible YAML model, loading, validation and
//! the inline expression language.
//!
//! [`load`] and [`from_yaml_str`] return a [`Config`] in which every name is resolved and every
//! expression parsed, so the router does no string parsing per statement. Every error names the
//! YAML path and the offending value:
//! `rules[0].tables.t_order.keyGenerateStrategy.keyGeneratorName: no key generator named 'snowflak'`.

#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod algorithm;
mod datasource;
mod directory;
mod env;
mod error;
mod gene;
pub mod inline;
mod mode;
mod model;
mod raw;
mod readwrite;
mod remainder_nodes;
mod resolve;
mod sharding;
mod single;
#[cfg(test)]
mod ss_samples;
#[cfg(test)]
mod tests;

use std::path::Path;

pub use algorithm::Algorithm;
pub use datasource::{DataSource, DataSourceError, DatabaseKind, PoolSettings};
pub use error::{ConfigError, Problem};
pub use mode::{Mode, ModeType, Repository, Timing};
pub use model::{
    COMPLEX_COLUMNS, CacheBounds, Config, ConfiguredNodes, DataNode, Gene, HINT_DATABASE_VALUE,
    HINT_TABLE_VALUE, KeyGenerateStrategy, Props, Server, ShardingRule, SingleTable, Strategy,
    TableRule, Tls, TransactionType, User,
};
pub use readwrite::{
    Consistency, LoadBalancer, ReadWriteGroup, ReadWriteSplitting, Replica, TransactionalReads,
};
pub use remainder_nodes::RemainderNodes;

/// Reads and validates the configuration file at `path`, or ShardingSphere-Proxy's
/// configuration directory (see `directory`) of one logical database. Relative SQLite and TLS paths are resolved
/// against the file's directory, made absolute so a later change of working directory cannot
/// move the data.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let mut databases = load_databases(path)?;
    if databases.len() == 1
        && let Some(config) = databases.pop()
    {
        return Ok(config);
    }
    let names: Vec<&str> = databases.iter().map(|d| d.database_name.as_str()).collect();
    Err(ConfigError::at(
        path.display().to_string(),
        Problem::SeveralDatabases(names.join(", ")),
    ))
}

/// Loads every logical database of a configuration: the one of a file, or each of a
/// ShardingSphere-Proxy configuration directory's database files (see [`load`]).
pub fn load_databases(path: &Path) -> Result<Vec<Config>, ConfigError> {
    let read_error = |error| ConfigError::Read {
        path: path.to_owned(),
        error,
    };
    if path.is_dir() {
        let dir = std::path::absolute(path).map_err(read_error)?;
        let mut configs: Vec<Config> = Vec::new();
        for document in directory::databases(&dir)? {
            let raw: raw::RawConfig = serde_yaml_ng::from_value(document)?;
            let config = resolve::resolve(raw, &dir)?;
            if configs
                .iter()
                .any(|c| c.database_name.eq_ignore_ascii_case(&config.database_name))
            {
                return Err(ConfigError::at(
                    dir.display().to_string(),
                    Problem::InvalidValue {
                        value: format!("databaseName '{}' twice", config.database_name),
                        expected: "a name of its own for each logical database",
                    },
                ));
            }
            configs.push(config);
        }
        return Ok(configs);
    }
    let text = std::fs::read_to_string(path).map_err(read_error)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let dir = std::path::absolute(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    })
    .map_err(read_error)?;
    Ok(vec![from_yaml_str(&text, &dir)?])
}

/// Parses and validates configuration text; relative SQLite paths are resolved against
/// `base_dir`.
pub fn from_yaml_str(text: &str, base_dir: &Path) -> Result<Config, ConfigError> {
    let raw: raw::RawConfig = serde_yaml_ng::from_str(text)?;
    resolve::resolve(raw, base_dir)
}

/// The ready-to-run default configuration (two SQLite shards), so the binary runs without a
/// file. Its SQLite paths are relative to the `config/` directory of the repository: pass that
/// directory as `base_dir` to [`from_yaml_str`].
pub fn embedded_default() -> &'static str {
    include_str!("../../../config/keyshard.yaml")
}
