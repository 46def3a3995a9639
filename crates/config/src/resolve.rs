//! Turns the raw YAML into the validated [`Config`].

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

use keyshard_keygen::Registry;

use crate::datasource::{DataSource, DataSourceError, PoolSettings, normalize_url};
use crate::env::substitute_env;
use crate::error::{ConfigError, Problem, Problems};
use crate::model::{CacheBounds, Config, Props, Server, ShardingRule, Tls, TransactionType, User};
use crate::raw::{
    InOrder, RawAuthority, RawConfig, RawDataSource, RawListener, RawPrivilege, RawRule, RawServer,
    RawSingle,
};
use crate::readwrite::{self, ReadWriteSplitting};
use crate::{mode, sharding, single};

pub(crate) fn resolve(raw: RawConfig, base_dir: &Path) -> Result<Config, ConfigError> {
    // A rule Keyshard does not implement is named before anything else can fail on it
    // (`!READWRITE_SPLITTING`'s group names are not data sources).
    let mut unsupported = Problems::default();
    for (i, rule) in raw.rules.iter().enumerate() {
        if let RawRule::Unsupported(tag) = rule {
            unsupported.keep::<()>(Err(ConfigError::at(
                format!("rules[{i}]"),
                Problem::UnsupportedRule(tag.clone()),
            )));
        }
    }
    unsupported.check()?;
    let mut warnings = Vec::new();
    let data_sources = data_sources(&raw.data_sources, base_dir, &mut warnings)?;
    let (read_write, data_sources) = read_write(&raw, data_sources, &mut warnings)?;
    // In the order written, which auto tables are spread in: a group where its primary is.
    let configured: Vec<String> = raw
        .data_sources
        .0
        .iter()
        .filter_map(|(name, _)| match read_write.group_of(name) {
            None => Some(name.clone()),
            Some(group) if group.primary == *name => Some(group.name.clone()),
            Some(_) => None,
        })
        .collect();
    let mut sharding_rule: Option<sharding::Resolved> = None;
    let mut broadcast: Option<Vec<String>> = None;
    let mut single: Option<(usize, &RawSingle)> = None;
    let mut authority = raw.authority.as_ref().map(|a| ("authority".to_owned(), a));
    let mut transaction = raw
        .transaction
        .as_ref()
        .map(|t| ("transaction".to_owned(), t));
    for (i, rule) in raw.rules.iter().enumerate() {
        let prefix = format!("rules[{i}]");
        let once = |present: bool, name: &'static str| {
            if present {
                Err(ConfigError::at(&prefix, Problem::DuplicateRule(name)))
            } else {
                Ok(())
            }
        };
        match rule {
            RawRule::Sharding(raw) => {
                once(sharding_rule.is_some(), "SHARDING")?;
                sharding_rule = Some(sharding::resolve(raw, &prefix, &data_sources, &configured)?);
            }
            RawRule::Broadcast(raw) => {
                once(broadcast.is_some(), "BROADCAST")?;
                broadcast = Some(raw.tables.clone());
            }
            RawRule::Single(raw) => {
                once(single.is_some(), "SINGLE")?;
                single = Some((i, raw));
            }
            RawRule::Transaction(raw) => {
                once(transaction.is_some(), "TRANSACTION")?;
                transaction = Some((prefix.clone(), raw));
            }
            RawRule::Authority(raw) => {
                once(authority.is_some(), "AUTHORITY")?;
                authority = Some((prefix.clone(), raw));
            }
            RawRule::Ignored(tag) => warnings.push(format!(
                "{prefix}: !{tag} tunes ShardingSphere's own engine and changes nothing here"
            )),
            RawRule::Unsupported(_) | RawRule::ReadwriteSplitting(_) => {}
        }
    }
    for setting in raw.engine_settings() {
        warnings.push(format!(
            "{setting}: tunes ShardingSphere's own engine and changes nothing here"
        ));
    }
    let transaction_type = match transaction {
        None => TransactionType::Local,
        Some((path, raw)) => match raw.default_type.as_deref() {
            None => TransactionType::Local,
            Some(t) if t.eq_ignore_ascii_case("LOCAL") => TransactionType::Local,
            Some(t) if t.eq_ignore_ascii_case("XA") => TransactionType::Xa,
            Some(other) => {
                return Err(ConfigError::at(
                    format!("{path}.defaultType"),
                    Problem::InvalidValue {
                        value: other.to_owned(),
                        expected: "LOCAL or XA (BASE is not supported)",
                    },
                ));
            }
        },
    };
    let (mut sharding, key_generators) = match sharding_rule {
        Some(resolved) => {
            warnings.extend(resolved.warnings);
            (resolved.rule, resolved.key_generators)
        }
        None => (ShardingRule::default(), Registry::new()),
    };
    // SS 5.0–5.3 listed broadcast tables in the sharding rule; either place (not both) works.
    let broadcast_tables = match (broadcast, sharding.broadcast_tables.is_empty()) {
        (Some(_), false) => {
            return Err(ConfigError::at(
                "rules",
                Problem::DuplicateRule("BROADCAST (and !SHARDING's broadcastTables)"),
            ));
        }
        (Some(tables), true) => tables,
        (None, _) => std::mem::take(&mut sharding.broadcast_tables),
    };
    if let Some((index, raw)) = single {
        single::resolve(raw, index, &data_sources, &broadcast_tables, &mut sharding)?;
    }
    check_broadcast(&raw.rules, &broadcast_tables, &sharding)?;
    let defaults = Props::default();
    let max_connections = match (
        raw.props.max_connections,
        raw.props.proxy_frontend_max_connections,
    ) {
        (Some(n), _) => Some(n),
        // ShardingSphere's: 0 or less means no limit, which Keyshard's default stands for.
        (None, Some(n)) => u64::try_from(n).ok().filter(|n| *n > 0),
        (None, None) => None,
    };
    for key in raw.props.other.keys() {
        if !SHARDINGSPHERE_PROPS.contains(&key.as_str()) {
            return Err(ConfigError::at(
                format!("props.{key}"),
                Problem::UnknownSetting(key.clone()),
            ));
        }
        warnings.push(format!(
            "props.{key}: tunes ShardingSphere's own engine and changes nothing here"
        ));
    }
    let mode = mode::resolve(raw.mode.as_ref(), &data_sources, base_dir, &mut warnings)?;
    Ok(Config {
        warnings,
        mode,
        server: server(raw.server.as_ref(), base_dir)?,
        users: users(authority)?,
        props: Props {
            sql_show: raw.props.sql_show,
            idle_in_transaction_timeout: (raw.props.idle_in_transaction_timeout_ms > 0).then(
                || std::time::Duration::from_millis(raw.props.idle_in_transaction_timeout_ms),
            ),
            shutdown_drain_timeout: raw.props.shutdown_drain_timeout_ms.map_or(
                defaults.shutdown_drain_timeout,
                std::time::Duration::from_millis,
            ),
            statement_memory: amount(raw.props.statement_memory_bytes, defaults.statement_memory),
            memory_budget: amount(raw.props.memory_budget_bytes, defaults.memory_budget),
            session_memory: amount(raw.props.session_memory_bytes, defaults.session_memory),
            gather_max_rows: raw
                .props
                .gather_max_rows
                .unwrap_or(defaults.gather_max_rows),
            gather_max_bytes: raw
                .props
                .gather_max_bytes
                .unwrap_or(defaults.gather_max_bytes),
            result_memory: raw
                .props
                .result_memory_bytes
                .unwrap_or(defaults.result_memory),
            max_row_bytes: raw.props.max_row_bytes.unwrap_or(defaults.max_row_bytes),
            shape_cache: CacheBounds {
                entries: amount(raw.props.shape_cache_entries, defaults.shape_cache.entries),
                bytes: amount(raw.props.shape_cache_bytes, defaults.shape_cache.bytes),
            },
            column_cache: CacheBounds {
                entries: amount(
                    raw.props.column_cache_entries,
                    defaults.column_cache.entries,
                ),
                bytes: amount(raw.props.column_cache_bytes, defaults.column_cache.bytes),
            },
            collation_cache: CacheBounds {
                entries: amount(
                    raw.props.collation_cache_entries,
                    defaults.collation_cache.entries,
                ),
                bytes: amount(
                    raw.props.collation_cache_bytes,
                    defaults.collation_cache.bytes,
                ),
            },
            insert_batch_max_rows: amount(
                raw.props.insert_batch_max_rows,
                defaults.insert_batch_max_rows,
            ),
            max_connections: amount(max_connections, defaults.max_connections),
            max_unauthenticated_connections: amount(
                raw.props.max_unauthenticated_connections,
                defaults.max_unauthenticated_connections,
            ),
            max_unauthenticated_per_address: amount(
                raw.props.max_unauthenticated_per_address,
                defaults.max_unauthenticated_per_address,
            ),
            max_connections_per_query: match raw.props.max_connections_size_per_query {
                None => defaults.max_connections_per_query,
                Some(0) => {
                    return Err(ConfigError::at(
                        "props.max-connections-size-per-query",
                        Problem::InvalidValue {
                            value: "0".into(),
                            expected: "a number of connections, at least 1",
                        },
                    ));
                }
                Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
            },
        },
        database_name: raw.database_name,
        data_sources,
        read_write,
        sharding,
        broadcast_tables,
        key_generators,
        transaction_type,
    })
}

/// ShardingSphere 5.x's `props` that tune its own engine (threads, Netty, metadata checks,
/// logging): accepted with a warning so its files load unchanged.
const SHARDINGSPHERE_PROPS: [&str; 34] = [
    "system-log-level",
    "sql-simple",
    "kernel-executor-size",
    "check-table-metadata-enabled",
    "check-duplicate-table-enabled",
    "load-table-metadata-batch-size",
    "sql-federation-type",
    "sql-federation-enabled",
    "sql-comment-parse-enabled",
    "proxy-frontend-database-protocol-type",
    "proxy-frontend-flush-threshold",
    "proxy-hint-enabled",
    "proxy-backend-query-fetch-size",
    "proxy-frontend-executor-size",
    "proxy-backend-executor-suitable",
    "proxy-backend-driver-type",
    "proxy-default-port",
    "proxy-netty-backlog",
    "proxy-instance-type",
    "proxy-mysql-default-version",
    "proxy-frontend-ssl-enabled",
    "proxy-frontend-ssl-version",
    "proxy-frontend-ssl-cipher",
    "proxy-frontend-connection-limit",
    "proxy-opentracing-enabled",
    "proxy-meta-data-collector-enabled",
    "proxy-meta-data-collector-cron",
    "cdc-server-port",
    "show-process-list-enabled",
    "executor-size",
    "persist-schemas-to-repository-enabled",
    "system-schema-metadata-enabled",
    "system-schema-metadata-assembly-enabled",
    "agent-plugins-enabled",
];

fn check_broadcast(
    rules: &[RawRule],
    tables: &[String],
    sharding: &ShardingRule,
) -> Result<(), ConfigError> {
    let index = rules
        .iter()
        .position(|r| matches!(r, RawRule::Broadcast(_)))
        .unwrap_or(0);
    for (i, table) in tables.iter().enumerate() {
        let path = format!("rules[{index}].tables[{i}]");
        if sharding.table(table).is_some() {
            return Err(ConfigError::at(
                path,
                Problem::ShardedAndBroadcast(table.clone()),
            ));
        }
        if tables[..i].iter().any(|t| t.eq_ignore_ascii_case(table)) {
            return Err(ConfigError::at(
                path,
                Problem::DuplicateTable(table.clone()),
            ));
        }
    }
    Ok(())
}

/// A byte count or a count from the YAML, `default` when absent; beyond the address space,
/// all of it.
fn amount(raw: Option<u64>, default: usize) -> usize {
    raw.map_or(default, |b| usize::try_from(b).unwrap_or(usize::MAX))
}

/// The most worker threads `server.workerThreads` may ask for.
const MAX_WORKER_THREADS: u64 = 1024;

fn server(raw: Option<&RawServer>, base_dir: &Path) -> Result<Server, ConfigError> {
    let Some(raw) = raw else {
        return Ok(Server::default());
    };
    let listen = |listener: Option<&RawListener>, path: &str| {
        listener.map(|l| listen_addr(&l.listen, path)).transpose()
    };
    let server = Server {
        mysql: listen(raw.mysql.as_ref(), "server.mysql.listen")?,
        postgres: listen(raw.postgres.as_ref(), "server.postgres.listen")?,
        metrics: listen(raw.metrics.as_ref(), "server.metrics.listen")?,
        tls: raw.tls.as_ref().map(|tls| Tls {
            certificate: base_dir.join(&tls.certificate),
            key: base_dir.join(&tls.key),
            required: tls.required,
        }),
        worker_threads: match raw.worker_threads {
            None => 1,
            Some(n) if n <= MAX_WORKER_THREADS => n as usize,
            Some(n) => {
                return Err(ConfigError::at(
                    "server.workerThreads",
                    Problem::InvalidValue {
                        value: n.to_string(),
                        expected: "0 (one per core) or 1 to 1024 threads",
                    },
                ));
            }
        },
    };
    if server.mysql.is_none() && server.postgres.is_none() {
        return Err(ConfigError::at("server", Problem::NoFrontend));
    }
    Ok(server)
}

/// Parses `host:port`; `localhost` is accepted as 127.0.0.1, other names are not resolved
/// (a proxy should not depend on DNS to start).
fn listen_addr(text: &str, path: &str) -> Result<SocketAddr, ConfigError> {
    let invalid = || {
        ConfigError::at(
            path,
            Problem::InvalidValue {
                value: text.to_owned(),
                expected: "an address such as 127.0.0.1:3307",
            },
        )
    };
    if let Ok(addr) = text.trim().parse::<SocketAddr>() {
        return Ok(addr);
    }
    match text.trim().rsplit_once(':') {
        Some((host, port)) if host.eq_ignore_ascii_case("localhost") => {
            let port = port.parse::<u16>().map_err(|_| invalid())?;
            Ok(SocketAddr::from(([127, 0, 0, 1], port)))
        }
        _ => Err(invalid()),
    }
}

/// The users of `authority:` or of a `!AUTHORITY` rule (`raw`, at its path).
fn users(raw: Option<(String, &RawAuthority)>) -> Result<Vec<User>, ConfigError> {
    let Some((path, raw)) = raw else {
        return Ok(Vec::new());
    };
    let mappings = match &raw.privilege {
        Some(p) if p.kind.eq_ignore_ascii_case("DATABASE_PERMITTED") => {
            Some(database_mappings(p, &format!("{path}.privilege.props"))?)
        }
        Some(p) if !p.kind.eq_ignore_ascii_case("ALL_PERMITTED") => {
            return Err(ConfigError::at(
                format!("{path}.privilege.type"),
                Problem::UnsupportedPrivilege(p.kind.clone()),
            ));
        }
        _ => None,
    };
    let mut users: Vec<User> = raw
        .users
        .iter()
        .enumerate()
        .map(|(i, user)| {
            let (name, host) = match user.user.split_once('@') {
                Some((name, host)) => (name, Some(host.to_owned())),
                None => (user.user.as_str(), None),
            };
            if name.is_empty() {
                return Err(ConfigError::at(
                    format!("{path}.users[{i}].user"),
                    Problem::InvalidValue {
                        value: user.user.clone(),
                        expected: "a user name",
                    },
                ));
            }
            let password = match &user.password {
                Some(p) => substitute_env(&p.0)
                    .map_err(|e| ConfigError::at(format!("{path}.users[{i}].password"), e))?,
                None => String::new(),
            };
            Ok(User {
                name: name.to_owned(),
                host,
                password,
                databases: None,
            })
        })
        .collect::<Result<_, _>>()?;
    if let Some(mappings) = mappings {
        for user in &mut users {
            // Keyshard does not match hosts: a user may use what any of its entries may.
            let mut databases = Vec::new();
            for (name, database) in &mappings {
                if name == &user.name {
                    databases.push(database.clone());
                }
            }
            user.databases = (!databases.iter().any(|d| d == "*")).then_some(databases);
        }
    }
    Ok(users)
}

/// `DATABASE_PERMITTED`'s `user-database-mappings`: `user@host=database, …` as (user,
/// database) pairs, `*` for every database.
fn database_mappings(
    privilege: &RawPrivilege,
    path: &str,
) -> Result<Vec<(String, String)>, ConfigError> {
    let Some(text) = privilege.props.get("user-database-mappings") else {
        return Err(ConfigError::at(
            path,
            Problem::InvalidValue {
                value: "no user-database-mappings".into(),
                expected: "user-database-mappings: user@host=database, …",
            },
        ));
    };
    text.0
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            let parsed = entry.split_once('=').and_then(|(user, database)| {
                let name = user.split_once('@').map_or(user, |(name, _)| name).trim();
                let database = database.trim();
                (!name.is_empty() && !database.is_empty())
                    .then(|| (name.to_owned(), database.to_owned()))
            });
            parsed.ok_or_else(|| {
                ConfigError::at(
                    format!("{path}.user-database-mappings"),
                    Problem::InvalidValue {
                        value: entry.to_owned(),
                        expected: "user@host=database",
                    },
                )
            })
        })
        .collect()
}

/// The `!READWRITE_SPLITTING` rule (at most one), and the data sources as the other rules see
/// them.
fn read_write(
    raw: &RawConfig,
    data_sources: BTreeMap<String, DataSource>,
    warnings: &mut Vec<String>,
) -> Result<(ReadWriteSplitting, BTreeMap<String, DataSource>), ConfigError> {
    let mut rule = None;
    for (i, raw) in raw.rules.iter().enumerate() {
        if let RawRule::ReadwriteSplitting(raw) = raw {
            if rule.is_some() {
                return Err(ConfigError::at(
                    format!("rules[{i}]"),
                    Problem::DuplicateRule("READWRITE_SPLITTING"),
                ));
            }
            rule = Some((format!("rules[{i}]"), raw));
        }
    }
    let props = readwrite::RawSplittingProps {
        consistency: raw.props.readwrite_consistency.clone(),
        max_replication_delay_ms: raw.props.max_replication_delay_ms,
        causal_wait_ms: raw.props.readwrite_causal_wait_ms,
        check_interval_ms: raw.props.replica_check_interval_ms,
    };
    let rule = rule
        .as_ref()
        .map(|(prefix, raw)| (prefix.as_str(), &***raw));
    readwrite::resolve(rule, &props, data_sources, warnings)
}

fn data_sources(
    raw: &InOrder<RawDataSource>,
    base_dir: &Path,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, DataSource>, ConfigError> {
    let raw = &raw.0;
    if raw.is_empty() {
        return Err(ConfigError::at("dataSources", Problem::NoDataSources));
    }
    for (name, ds) in raw {
        for (field, present) in [
            ("readOnly", ds.read_only.is_some()),
            ("customPoolProps", ds.custom_pool_props.is_some()),
            ("poolName", ds.pool_name.is_some()),
        ] {
            if present {
                warnings.push(format!(
                    "dataSources.{name}.{field}: a setting of ShardingSphere's pool, which \
                     changes nothing here"
                ));
            }
        }
    }
    let mut problems = Problems::default();
    let resolved = raw
        .iter()
        .filter_map(|(name, ds)| {
            problems
                .keep(data_source(name, ds, base_dir))
                .map(|ds| (name.clone(), ds))
        })
        .collect();
    problems.check()?;
    Ok(resolved)
}

fn data_source(
    name: &str,
    raw: &RawDataSource,
    base_dir: &Path,
) -> Result<DataSource, ConfigError> {
    let path = format!("dataSources.{name}");
    let (key, url) = match (&raw.url, &raw.jdbc_url) {
        (Some(url), None) => ("url", url),
        (None, Some(url)) => ("jdbcUrl", url),
        (None, None) => return Err(ConfigError::at(path, DataSourceError::MissingUrl)),
        (Some(_), Some(_)) => return Err(ConfigError::at(path, DataSourceError::BothUrls)),
    };
    let env = |field: &str, value: Option<&String>| {
        value
            .map(|v| substitute_env(v).map_err(|e| ConfigError::at(format!("{path}.{field}"), e)))
            .transpose()
    };
    let url = env(key, Some(url))?.unwrap_or_default();
    let username = env("username", raw.username.as_ref().map(|s| &s.0))?;
    let password = env("password", raw.password.as_ref().map(|s| &s.0))?;
    let (kind, url) = normalize_url(&url, username.as_deref(), password.as_deref(), base_dir)
        .map_err(|e| ConfigError::at(format!("{path}.{key}"), e))?;
    let strict_session_state = match raw.session_state.as_deref() {
        None => false,
        Some(s) if s.eq_ignore_ascii_case("pin") => false,
        Some(s) if s.eq_ignore_ascii_case("strict") => true,
        Some(other) => {
            return Err(ConfigError::at(
                format!("{path}.sessionState"),
                Problem::InvalidValue {
                    value: other.to_owned(),
                    expected: "pin or strict",
                },
            ));
        }
    };
    Ok(DataSource {
        name: name.to_owned(),
        kind,
        url,
        pool: PoolSettings {
            max_size: raw.max_pool_size,
            min_size: raw.min_pool_size,
            connection_timeout_ms: raw.connection_timeout_milliseconds,
            idle_timeout_ms: raw.idle_timeout_milliseconds,
            max_lifetime_ms: raw.max_lifetime_milliseconds,
            strict_session_state,
        },
    })
}
