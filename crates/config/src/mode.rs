//! `mode:`: where instances coordinate (worker-id leases, high-water marks, segments), in
//! ShardingSphere 5's vocabulary. Without it, the first data source (by name) is the
//! repository, with a warning when there are several: a data source added whose name sorts
//! first would move it. `mode.repository.props.data-source` (Keyshard's own) names it.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::datasource::{DataSource, PoolSettings, normalize_url};
use crate::env::substitute_env;
use crate::error::{ConfigError, Problem};
use crate::raw::RawMode;

/// The resolved `mode:` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mode {
    /// `Standalone` or `Cluster`, as written; both coordinate through the repository.
    pub kind: ModeType,
    /// Where instances coordinate.
    pub repository: Repository,
    /// Timing shared by both repository types.
    pub timing: Timing,
}

/// ShardingSphere's mode types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeType {
    /// One instance (or several sharing a JDBC repository).
    Standalone,
    /// Several instances.
    Cluster,
}

/// A coordination repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repository {
    /// Tables in a database; `data_source` is `jdbc_url` (or the first data source).
    Jdbc {
        /// The database.
        data_source: DataSource,
    },
    /// A ZooKeeper ensemble.
    ZooKeeper {
        /// `server-lists`: `host:port[,host:port…]`.
        server_lists: String,
        /// `namespace`: the root node (ShardingSphere's default `governance_ds`).
        namespace: String,
        /// `digest`: `user:password` for ZooKeeper's digest scheme.
        digest: Option<String>,
    },
}

/// How leases and calls are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// `timeToLiveSeconds`: how long a worker-id claim holds without renewal (for ZooKeeper,
    /// the session timeout). Default 30 s.
    pub time_to_live: Duration,
    /// `operationTimeoutMilliseconds`: how long one repository call may take. Default 3 s.
    pub operation_timeout: Duration,
    /// `retryIntervalMilliseconds`: pause before retrying a failed call. Default 500 ms.
    pub retry_interval: Duration,
    /// `maxRetries`: connection attempts at start-up. Default 3.
    pub max_retries: u32,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            time_to_live: Duration::from_secs(30),
            operation_timeout: Duration::from_secs(3),
            retry_interval: Duration::from_millis(500),
            max_retries: 3,
        }
    }
}

const JDBC_PROPS: &[&str] = &[
    "jdbc_url",
    "data-source",
    "username",
    "password",
    "provider",
];
const ZOOKEEPER_PROPS: &[&str] = &["server-lists", "namespace", "digest"];
const TIMING_PROPS: &[&str] = &[
    "timeToLiveSeconds",
    "operationTimeoutMilliseconds",
    "retryIntervalMilliseconds",
    "maxRetries",
];

/// Resolves `mode:`; without it, a JDBC repository on the first data source (by name),
/// with a warning in `warnings` when there are several.
pub(crate) fn resolve(
    raw: Option<&RawMode>,
    data_sources: &BTreeMap<String, DataSource>,
    base_dir: &Path,
    warnings: &mut Vec<String>,
) -> Result<Mode, ConfigError> {
    let mut first = || -> Result<DataSource, ConfigError> {
        let first = data_sources
            .values()
            .next()
            .cloned()
            .ok_or_else(|| ConfigError::at("dataSources", Problem::NoDataSources))?;
        if data_sources.len() > 1 {
            warnings.push(format!(
                "mode.repository: none is named, so the JDBC repository is data source '{0}', \
                 the first by name; a data source added whose name sorts before it would move \
                 the repository (the shards then refuse to generate keys until the old fleet \
                 stops). Name it: mode.repository.props.data-source: {0}",
                first.name
            ));
        }
        Ok(first)
    };
    let Some(raw) = raw else {
        return Ok(Mode {
            kind: ModeType::Standalone,
            repository: Repository::Jdbc {
                data_source: first()?,
            },
            timing: Timing::default(),
        });
    };
    let kind = match raw.kind.to_ascii_lowercase().as_str() {
        "standalone" => ModeType::Standalone,
        "cluster" => ModeType::Cluster,
        _ => {
            return Err(ConfigError::at(
                "mode.type",
                Problem::InvalidValue {
                    value: raw.kind.clone(),
                    expected: "Standalone or Cluster",
                },
            ));
        }
    };
    let Some(repository) = &raw.repository else {
        return Ok(Mode {
            kind,
            repository: Repository::Jdbc {
                data_source: first()?,
            },
            timing: Timing::default(),
        });
    };
    let props = repository.props();
    let prop = |name: &str| -> Result<Option<String>, ConfigError> {
        props
            .get(name)
            .map(|v| {
                substitute_env(v)
                    .map_err(|e| ConfigError::at(format!("mode.repository.props.{name}"), e))
            })
            .transpose()
    };
    let (repository, allowed) = match repository.kind.to_ascii_lowercase().as_str() {
        "jdbc" => {
            let named = prop("data-source")?;
            let data_source = match prop("jdbc_url")? {
                Some(_) if named.is_some() => {
                    return Err(ConfigError::at(
                        "mode.repository.props.data-source",
                        Problem::InvalidValue {
                            value: named.unwrap_or_default(),
                            expected: "either data-source or jdbc_url, not both",
                        },
                    ));
                }
                None => match named {
                    Some(name) => data_sources.get(name.trim()).cloned().ok_or_else(|| {
                        ConfigError::at(
                            "mode.repository.props.data-source",
                            Problem::InvalidValue {
                                value: name.clone(),
                                expected: "the name of a data source under dataSources",
                            },
                        )
                    })?,
                    None => first()?,
                },
                Some(url) => {
                    let (kind, url) = normalize_url(
                        &url,
                        prop("username")?.as_deref(),
                        prop("password")?.as_deref(),
                        base_dir,
                    )
                    .map_err(|e| ConfigError::at("mode.repository.props.jdbc_url", e))?;
                    DataSource {
                        name: "repository".to_owned(),
                        kind,
                        url,
                        pool: PoolSettings::default(),
                    }
                }
            };
            (Repository::Jdbc { data_source }, JDBC_PROPS)
        }
        "zookeeper" => (
            Repository::ZooKeeper {
                server_lists: prop("server-lists")?.ok_or_else(|| {
                    ConfigError::at(
                        "mode.repository.props",
                        Problem::MissingProperty("server-lists"),
                    )
                })?,
                namespace: prop("namespace")?.unwrap_or_else(|| "governance_ds".to_owned()),
                digest: prop("digest")?,
            },
            ZOOKEEPER_PROPS,
        ),
        _ => {
            return Err(ConfigError::at(
                "mode.repository.type",
                Problem::InvalidValue {
                    value: repository.kind.clone(),
                    expected: "JDBC or ZooKeeper",
                },
            ));
        }
    };
    if let Some(name) = props
        .keys()
        .find(|k| !allowed.contains(&k.as_str()) && !TIMING_PROPS.contains(&k.as_str()))
    {
        return Err(ConfigError::at(
            format!("mode.repository.props.{name}"),
            Problem::InvalidValue {
                value: name.clone(),
                expected: "a property of this repository type (JDBC: jdbc_url or \
                           data-source, username, password, provider; ZooKeeper: server-lists, namespace, digest; \
                           both: timeToLiveSeconds, operationTimeoutMilliseconds, \
                           retryIntervalMilliseconds, maxRetries)",
            },
        ));
    }
    let number = |name: &str, default: u64, min: u64| -> Result<u64, ConfigError> {
        match prop(name)? {
            None => Ok(default),
            Some(raw) => raw
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|v| *v >= min)
                .ok_or_else(|| {
                    ConfigError::at(
                        format!("mode.repository.props.{name}"),
                        Problem::InvalidValue {
                            value: raw,
                            expected: "a positive integer",
                        },
                    )
                }),
        }
    };
    let defaults = Timing::default();
    let timing = Timing {
        time_to_live: Duration::from_secs(number(
            "timeToLiveSeconds",
            defaults.time_to_live.as_secs(),
            2,
        )?),
        operation_timeout: Duration::from_millis(number("operationTimeoutMilliseconds", 3_000, 1)?),
        retry_interval: Duration::from_millis(number("retryIntervalMilliseconds", 500, 1)?),
        max_retries: u32::try_from(number("maxRetries", 3, 0)?).unwrap_or(u32::MAX),
    };
    Ok(Mode {
        kind,
        repository,
        timing,
    })
}
