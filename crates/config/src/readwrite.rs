//! `!READWRITE_SPLITTING`: a data source name that stands for a primary and its replicas.
//!
//! A group's name is a data source like any other for the rest of the configuration
//! (`actualDataNodes: rw_ds_${0..1}.t_order`): it takes the primary's settings, and the
//! data sources it is made of stop being names of their own. Reads a replica may answer go
//! to one of its replicas (see the backend's `replicas` module); everything else to the
//! primary.
//!
//! Every ShardingSphere 5 spelling loads: 5.4+'s `dataSourceGroups` with the names inline,
//! 5.2–5.3's `dataSources` with a `staticStrategy`, 5.1's `type: Static` with `props`, and
//! 5.0's names inline under `dataSources`.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::datasource::{DataSource, DatabaseKind};
use crate::error::{ConfigError, Problem};
use crate::raw::{Names, RawGroup, RawReadwriteSplitting};

/// The read/write groups and how replicas are read.
#[derive(Debug, Clone, Default)]
pub struct ReadWriteSplitting {
    /// By group name.
    pub groups: BTreeMap<String, ReadWriteGroup>,
    /// What a session's reads see of its own writes.
    pub consistency: Consistency,
    /// `props.max-replication-delay-milliseconds`: a replica further behind its primary is
    /// taken out of rotation until it catches up.
    pub max_replication_delay: Duration,
    /// `props.readwrite-causal-wait-milliseconds`: how long a read waits for a replica to
    /// apply its session's last write before it goes to the primary instead.
    pub causal_wait: Duration,
    /// `props.replica-check-interval-milliseconds`: how often each replica's health and
    /// position, and each primary's position, are read.
    pub check_interval: Duration,
}

impl ReadWriteSplitting {
    /// The group data source `name` is a member of (its primary or a replica).
    pub fn group_of(&self, name: &str) -> Option<&ReadWriteGroup> {
        self.groups
            .values()
            .find(|g| g.primary == name || g.replicas.iter().any(|r| r.source.name == name))
    }
}

/// One `!READWRITE_SPLITTING` group.
#[derive(Debug, Clone)]
pub struct ReadWriteGroup {
    /// The group's name, the data source name other rules use.
    pub name: String,
    /// `writeDataSourceName`'s name (the primary).
    pub primary: String,
    /// `readDataSourceNames`, in order, each with its own settings (name and URL).
    pub replicas: Vec<Replica>,
    /// How a read picks one of them.
    pub balancer: LoadBalancer,
    /// `transactionalReadQueryStrategy`, as written.
    pub transactional_reads: TransactionalReads,
}

/// One replica of a group.
#[derive(Debug, Clone)]
pub struct Replica {
    /// The data source, under its own name.
    pub source: DataSource,
    /// Its share of reads under `WEIGHT` (1 otherwise).
    pub weight: f64,
}

/// A group's load balancer type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadBalancer {
    /// `ROUND_ROBIN` (ShardingSphere's default): each replica in turn.
    RoundRobin,
    /// `RANDOM`: any replica, uniformly.
    Random,
    /// `WEIGHT`: any replica, in proportion to its weight.
    Weight,
}

/// `transactionalReadQueryStrategy`: where reads inside a transaction go. Under `FIXED` and
/// `DYNAMIC` a read goes to a replica only while the transaction has not touched the group's
/// primary (once it wrote there, its reads must see the write), each as a statement of its
/// own: the transaction's reads then share no snapshot, as in ShardingSphere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransactionalReads {
    /// `PRIMARY`, and Keyshard's default: every read of a transaction on the primary, in the
    /// transaction.
    #[default]
    Primary,
    /// `FIXED`: one replica for all of a transaction's reads.
    Fixed,
    /// `DYNAMIC` (ShardingSphere's default when none is written): each read to any replica.
    Dynamic,
}

/// `props.readwrite-consistency`: what a session's reads see of its own writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Consistency {
    /// A read goes to a replica only once it has applied the session's last write there
    /// (its GTID or WAL position), waiting up to `causal_wait`, else to the primary.
    #[default]
    Causal,
    /// Reads go to any replica in rotation: a read right after a write may miss it.
    Eventual,
    /// Once a session has written to a group, its reads there go to the primary.
    Primary,
}

/// Keyshard's own settings of read/write splitting, from `props`.
#[derive(Debug, Default)]
pub(crate) struct RawSplittingProps {
    pub consistency: Option<String>,
    pub max_replication_delay_ms: Option<u64>,
    pub causal_wait_ms: Option<u64>,
    pub check_interval_ms: Option<u64>,
}

/// Resolves `raw` (the rule at `prefix`) over the configured data sources: the groups, and
/// the data sources as the other rules see them (each group under its own name, its members
/// gone).
pub(crate) fn resolve(
    raw: Option<(&str, &RawReadwriteSplitting)>,
    props: &RawSplittingProps,
    mut data_sources: BTreeMap<String, DataSource>,
    warnings: &mut Vec<String>,
) -> Result<(ReadWriteSplitting, BTreeMap<String, DataSource>), ConfigError> {
    let settings = settings(props)?;
    let Some((prefix, raw)) = raw else {
        return Ok((settings, data_sources));
    };
    let (key, entries) = match (
        raw.data_source_groups.0.is_empty(),
        raw.data_sources.0.is_empty(),
    ) {
        (false, false) => {
            return Err(ConfigError::at(
                prefix,
                Problem::InvalidValue {
                    value: "both dataSourceGroups and dataSources".into(),
                    expected: "one of them (dataSourceGroups since ShardingSphere 5.4)",
                },
            ));
        }
        (false, true) => ("dataSourceGroups", &raw.data_source_groups.0),
        _ => ("dataSources", &raw.data_sources.0),
    };
    let mut groups = BTreeMap::new();
    let mut members: Vec<String> = Vec::new();
    for (name, group) in entries {
        let path = format!("{prefix}.{key}.{name}");
        let (primary, replicas) = names(group, &path)?;
        if data_sources.contains_key(name) && !members.contains(name) {
            return Err(ConfigError::at(
                &path,
                Problem::InvalidValue {
                    value: name.clone(),
                    expected: "a group name that is not a data source's",
                },
            ));
        }
        let balancer_name = group.load_balancer_name.as_deref();
        let (balancer, weights) = balancer(raw, balancer_name, &path)?;
        let member = |member: &str, field: &str| {
            if members.iter().any(|m| m == member) {
                return Err(ConfigError::at(
                    format!("{path}.{field}"),
                    Problem::InvalidValue {
                        value: member.to_owned(),
                        expected: "a data source in no other read/write group",
                    },
                ));
            }
            data_sources.get(member).cloned().ok_or_else(|| {
                ConfigError::at(
                    format!("{path}.{field}"),
                    Problem::UnknownDataSource(member.to_owned()),
                )
            })
        };
        let mut write = member(&primary, "writeDataSourceName")?;
        let mut read = Vec::with_capacity(replicas.len());
        for replica in &replicas {
            if *replica == primary || replicas.iter().filter(|r| *r == replica).count() > 1 {
                return Err(ConfigError::at(
                    format!("{path}.readDataSourceNames"),
                    Problem::InvalidValue {
                        value: replica.clone(),
                        expected: "replicas named once, the primary not among them",
                    },
                ));
            }
            let source = member(replica, "readDataSourceNames")?;
            let weight = match &weights {
                None => 1.0,
                Some(weights) => *weights.get(replica.as_str()).ok_or_else(|| {
                    ConfigError::at(
                        format!("{path}.loadBalancerName"),
                        Problem::InvalidValue {
                            value: replica.clone(),
                            expected: "a weight for every replica in the WEIGHT balancer's props",
                        },
                    )
                })?,
            };
            if source.kind == DatabaseKind::Sqlite {
                return Err(ConfigError::at(
                    format!("{path}.readDataSourceNames"),
                    Problem::InvalidValue {
                        value: replica.clone(),
                        expected: "a MariaDB or PostgreSQL replica (SQLite has no replication)",
                    },
                ));
            }
            if source.kind != write.kind {
                return Err(ConfigError::at(
                    format!("{path}.readDataSourceNames"),
                    Problem::InvalidValue {
                        value: replica.clone(),
                        expected: "replicas of the same kind of database as the primary",
                    },
                ));
            }
            read.push(Replica { source, weight });
        }
        let transactional_reads = match group.transactional_read_query_strategy.as_deref() {
            None => TransactionalReads::Primary,
            Some(s) if s.eq_ignore_ascii_case("PRIMARY") => TransactionalReads::Primary,
            Some(s) if s.eq_ignore_ascii_case("FIXED") => TransactionalReads::Fixed,
            Some(s) if s.eq_ignore_ascii_case("DYNAMIC") => TransactionalReads::Dynamic,
            Some(other) => {
                return Err(ConfigError::at(
                    format!("{path}.transactionalReadQueryStrategy"),
                    Problem::InvalidValue {
                        value: other.to_owned(),
                        expected: "PRIMARY, FIXED or DYNAMIC",
                    },
                ));
            }
        };
        if group.transactional_read_query_strategy.is_none() && !read.is_empty() {
            warnings.push(format!(
                "{path}.transactionalReadQueryStrategy: not written, so reads inside a \
                 transaction go to the primary (ShardingSphere's default, DYNAMIC, sends them \
                 to replicas, where they share no snapshot: write it to choose it)"
            ));
        }
        members.push(primary.clone());
        members.extend(replicas);
        write.name = name.clone();
        groups.insert(
            name.clone(),
            ReadWriteGroup {
                name: name.clone(),
                primary,
                replicas: read,
                balancer,
                transactional_reads,
            },
        );
        data_sources.insert(name.clone(), write);
    }
    for member in &members {
        if !groups.contains_key(member) {
            data_sources.remove(member);
        }
    }
    Ok((ReadWriteSplitting { groups, ..settings }, data_sources))
}

/// A group's primary and replicas, in whichever spelling it is written.
fn names(group: &RawGroup, path: &str) -> Result<(String, Vec<String>), ConfigError> {
    if group.dynamic_strategy.is_some() {
        return Err(ConfigError::at(
            format!("{path}.dynamicStrategy"),
            Problem::NotYetSupported("database discovery (dynamicStrategy)"),
        ));
    }
    let missing = || {
        ConfigError::at(
            path,
            Problem::InvalidValue {
                value: "no writeDataSourceName".into(),
                expected: "writeDataSourceName and readDataSourceNames",
            },
        )
    };
    if let Some(strategy) = &group.static_strategy {
        let reads = strategy.read_data_source_names.to_vec();
        return Ok((strategy.write_data_source_name.trim().to_owned(), reads));
    }
    if let Some(kind) = &group.kind {
        if !kind.eq_ignore_ascii_case("Static") {
            return Err(ConfigError::at(
                format!("{path}.type"),
                Problem::InvalidValue {
                    value: kind.clone(),
                    expected: "Static (Dynamic needs database discovery)",
                },
            ));
        }
        let props = group.props.as_ref().ok_or_else(missing)?;
        let prop = |key: &str| props.get(key).map(|v| v.0.clone());
        let write = prop("write-data-source-name").ok_or_else(missing)?;
        let reads = prop("read-data-source-names").unwrap_or_default();
        return Ok((write.trim().to_owned(), Names::Text(reads).to_vec()));
    }
    let write = group.write_data_source_name.as_ref().ok_or_else(missing)?;
    let reads = group
        .read_data_source_names
        .as_ref()
        .map_or_else(Vec::new, Names::to_vec);
    Ok((write.trim().to_owned(), reads))
}

/// The group's load balancer, and its weights under `WEIGHT`.
fn balancer(
    raw: &RawReadwriteSplitting,
    name: Option<&str>,
    path: &str,
) -> Result<(LoadBalancer, Option<BTreeMap<String, f64>>), ConfigError> {
    let Some(name) = name else {
        return Ok((LoadBalancer::RoundRobin, None));
    };
    let at = format!("{path}.loadBalancerName");
    let algorithm = raw.load_balancers.get(name).ok_or_else(|| {
        ConfigError::at(
            &at,
            Problem::InvalidValue {
                value: name.to_owned(),
                expected: "the name of one of the rule's loadBalancers",
            },
        )
    })?;
    let kind = algorithm.kind.to_ascii_uppercase();
    let balancer = match kind.trim_start_matches("TRANSACTION_") {
        "ROUND_ROBIN" => LoadBalancer::RoundRobin,
        "RANDOM" => LoadBalancer::Random,
        "WEIGHT" => LoadBalancer::Weight,
        _ => {
            return Err(ConfigError::at(
                format!("loadBalancers.{name}.type"),
                Problem::InvalidValue {
                    value: algorithm.kind.clone(),
                    expected: "ROUND_ROBIN, RANDOM or WEIGHT",
                },
            ));
        }
    };
    if balancer != LoadBalancer::Weight {
        return Ok((balancer, None));
    }
    let mut weights = BTreeMap::new();
    for (replica, weight) in algorithm.props() {
        match weight.trim().parse::<f64>() {
            Ok(w) if w.is_finite() && w > 0.0 => {
                weights.insert(replica, w);
            }
            _ => {
                return Err(ConfigError::at(
                    format!("loadBalancers.{name}.props.{replica}"),
                    Problem::InvalidValue {
                        value: weight,
                        expected: "a weight above 0",
                    },
                ));
            }
        }
    }
    Ok((balancer, Some(weights)))
}

fn settings(props: &RawSplittingProps) -> Result<ReadWriteSplitting, ConfigError> {
    let consistency = match props.consistency.as_deref() {
        None => Consistency::Causal,
        Some(s) if s.eq_ignore_ascii_case("causal") => Consistency::Causal,
        Some(s) if s.eq_ignore_ascii_case("eventual") => Consistency::Eventual,
        Some(s) if s.eq_ignore_ascii_case("primary") => Consistency::Primary,
        Some(other) => {
            return Err(ConfigError::at(
                "props.readwrite-consistency",
                Problem::InvalidValue {
                    value: other.to_owned(),
                    expected: "causal, eventual or primary",
                },
            ));
        }
    };
    if props.check_interval_ms == Some(0) {
        return Err(ConfigError::at(
            "props.replica-check-interval-milliseconds",
            Problem::InvalidValue {
                value: "0".into(),
                expected: "milliseconds, at least 1",
            },
        ));
    }
    Ok(ReadWriteSplitting {
        groups: BTreeMap::new(),
        consistency,
        max_replication_delay: Duration::from_millis(
            props.max_replication_delay_ms.unwrap_or(5_000),
        ),
        causal_wait: Duration::from_millis(props.causal_wait_ms.unwrap_or(200)),
        check_interval: Duration::from_millis(props.check_interval_ms.unwrap_or(200)),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::{Config, from_yaml_str};

    fn load(rules: &str) -> Result<Config, String> {
        let yaml = format!(
            "databaseName: sharding_db
mode:
  type: Cluster
  repository: {{type: JDBC, props: {{data-source: readwrite_ds_0}}}}
dataSources:
  write_ds_0: {{url: 'mysql://root@127.0.0.1:3316/db'}}
  read_ds_0: {{url: 'mysql://root@127.0.0.1:3317/db'}}
  read_ds_1: {{url: 'mysql://root@127.0.0.1:3318/db'}}
  ds_1: {{url: 'mysql://root@127.0.0.1:3306/db'}}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ${{['readwrite_ds_0','ds_1']}}.t_order
      databaseStrategy:
        standard: {{shardingColumn: user_id, shardingAlgorithmName: by_user}}
  shardingAlgorithms:
    by_user:
      type: MOD
      props: {{sharding-count: 2}}
{rules}"
        );
        from_yaml_str(&yaml, Path::new("/tmp")).map_err(|e| e.to_string())
    }

    const GROUPS_5_4: &str = "- !READWRITE_SPLITTING
  dataSourceGroups:
    readwrite_ds_0:
      writeDataSourceName: write_ds_0
      readDataSourceNames:
        - read_ds_0
        - read_ds_1
      transactionalReadQueryStrategy: PRIMARY
      loadBalancerName: weighted
  loadBalancers:
    weighted:
      type: WEIGHT
      props:
        read_ds_0: 2
        read_ds_1: 1.5
";

    #[test]
    fn a_group_is_a_data_source_of_the_sharding_rule_and_its_members_are_not() {
        let config = load(GROUPS_5_4).unwrap();
        let names: Vec<&str> = config.data_sources.keys().map(String::as_str).collect();
        assert_eq!(names, ["ds_1", "readwrite_ds_0"]);
        let primary = &config.data_sources["readwrite_ds_0"];
        assert_eq!(primary.name, "readwrite_ds_0");
        assert!(primary.url.contains(":3316/"), "{}", primary.url);
        let group = &config.read_write.groups["readwrite_ds_0"];
        assert_eq!(group.primary, "write_ds_0");
        let replicas: Vec<(&str, f64)> = group
            .replicas
            .iter()
            .map(|r| (r.source.name.as_str(), r.weight))
            .collect();
        assert_eq!(replicas, [("read_ds_0", 2.0), ("read_ds_1", 1.5)]);
        assert_eq!(group.balancer, LoadBalancer::Weight);
        assert_eq!(group.transactional_reads, TransactionalReads::Primary);
        assert_eq!(config.read_write.consistency, Consistency::Causal);
        let nodes = &config.sharding.tables["t_order"].data_nodes;
        assert_eq!(nodes[0].data_source, "readwrite_ds_0");
        assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    }

    #[test]
    fn every_shardingsphere_5_spelling_loads() {
        let spellings = [
            // 5.2–5.3: a static strategy.
            "- !READWRITE_SPLITTING
  dataSources:
    readwrite_ds_0:
      staticStrategy:
        writeDataSourceName: write_ds_0
        readDataSourceNames: [read_ds_0, read_ds_1]
      loadBalancerName: random
  loadBalancers:
    random: {type: RANDOM}
",
            // 5.1: `type: Static` and the names in props.
            "- !READWRITE_SPLITTING
  dataSources:
    readwrite_ds_0:
      type: Static
      props:
        write-data-source-name: write_ds_0
        read-data-source-names: read_ds_0,read_ds_1
      loadBalancerName: random
  loadBalancers:
    random: {type: RANDOM}
",
            // 5.0: the names inline.
            "- !READWRITE_SPLITTING
  dataSources:
    readwrite_ds_0:
      writeDataSourceName: write_ds_0
      readDataSourceNames: [read_ds_0, read_ds_1]
      loadBalancerName: random
  loadBalancers:
    random: {type: RANDOM}
",
        ];
        for rules in spellings {
            let config = load(rules).unwrap_or_else(|e| panic!("{e}\n{rules}"));
            let group = &config.read_write.groups["readwrite_ds_0"];
            assert_eq!(group.primary, "write_ds_0");
            assert_eq!(group.replicas.len(), 2);
            assert_eq!(group.balancer, LoadBalancer::Random);
            // Not ShardingSphere's default strategy, DYNAMIC, but the primary; said.
            assert_eq!(group.transactional_reads, TransactionalReads::Primary);
            assert_eq!(config.warnings.len(), 1, "{:?}", config.warnings);
        }
    }

    #[test]
    fn mistakes_are_named_with_their_path() {
        let with = |from: &str, to: &str| {
            assert!(GROUPS_5_4.contains(from), "{from}");
            load(&GROUPS_5_4.replacen(from, to, 1)).unwrap_err()
        };
        assert_eq!(
            with("- read_ds_1", "- read_ds_9"),
            "rules[1].dataSourceGroups.readwrite_ds_0.readDataSourceNames: no data source named \
             'read_ds_9'"
        );
        let weight = with("read_ds_1: 1.5", "read_ds_1: 0");
        assert!(
            weight.starts_with("loadBalancers.weighted.props.read_ds_1:"),
            "{weight}"
        );
        assert!(with("read_ds_1: 1.5\n", "").contains("a weight for every replica"));
        assert!(with("type: WEIGHT", "type: FASTEST").contains("ROUND_ROBIN, RANDOM or WEIGHT"));
        assert!(with("PRIMARY", "SOMETIMES").contains("PRIMARY, FIXED or DYNAMIC"));
        assert!(with("- read_ds_1", "- write_ds_0").contains("the primary not among them"));
        // A member is no longer a data source of its own.
        let member = load(&GROUPS_5_4.replace("readwrite_ds_0:", "readwrite_ds_9:")).unwrap_err();
        assert!(member.contains("'readwrite_ds_0'"), "{member}");
        let props = load(&format!(
            "{GROUPS_5_4}props:\n  readwrite-consistency: strong\n"
        ));
        assert!(props.unwrap_err().contains("causal, eventual or primary"));
    }
}
