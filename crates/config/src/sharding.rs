//! Resolves a `!SHARDING` rule: algorithms and key generators by name, data nodes expanded,
//! strategies merged with the rule's defaults.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use keyshard_keygen::Registry;

use crate::algorithm::Algorithm;
use crate::algorithm::algorithm_from;
use crate::datasource::DataSource;
use crate::env::substitute_env;
use crate::error::{ConfigError, Problem, Problems};
use crate::inline::expand;
use crate::model::{
    ConfiguredNodes, DataNode, HINT_DATABASE_VALUE, HINT_TABLE_VALUE, ShardingRule, Strategy,
    TableRule,
};
use crate::raw::{RawAuditStrategy, RawAutoTable, RawKeyGenerateStrategy, RawSharding, RawTable};
use crate::remainder_nodes::RemainderNodes;

mod context;

use context::Context;

/// What a `!SHARDING` rule resolves to.
pub(crate) struct Resolved {
    pub rule: ShardingRule,
    pub key_generators: Registry,
    /// What loads but may not be what was meant.
    pub warnings: Vec<String>,
}

/// Resolves `raw`, the rule at `prefix` (`rules[0]`), against the configured data sources.
/// `configured`: the data source names in the order they are written.
pub(crate) fn resolve(
    raw: &RawSharding,
    prefix: &str,
    data_sources: &BTreeMap<String, DataSource>,
    configured: &[String],
) -> Result<Resolved, ConfigError> {
    // Every bad algorithm, generator, table, binding group … is reported in one run; what
    // names a bad one is not reported again.
    let mut problems = Problems::default();
    let mut broken = HashSet::new();
    let algorithms: BTreeMap<_, _> = raw
        .sharding_algorithms
        .iter()
        .filter_map(|(name, algorithm)| {
            let path = format!("{prefix}.shardingAlgorithms.{name}");
            let built = problems.keep(algorithm_from(algorithm, &path));
            if built.is_none() {
                broken.insert(name.as_str());
            }
            Some((name.clone(), Arc::new(built?)))
        })
        .collect();

    let auditors = auditors(raw, prefix)?;
    // A table's own `auditStrategy`, else the rule's default: the auditors' names, and
    // whether a hint may switch them off.
    let audited = |own: Option<&RawAuditStrategy>, path: &str| {
        let (strategy, path) = match own {
            Some(own) => (Some(own), format!("{path}.auditStrategy")),
            None => (
                raw.default_audit_strategy.as_ref(),
                format!("{prefix}.defaultAuditStrategy"),
            ),
        };
        let names = strategy
            .iter()
            .flat_map(|s| &s.auditor_names)
            .map(|name| match auditors.contains(name) {
                true => Ok(name.clone()),
                false => Err(ConfigError::at(
                    format!("{path}.auditorNames"),
                    Problem::UnknownAuditor(name.clone()),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok::<_, ConfigError>((
            names,
            strategy.is_some_and(|s| s.allow_hint_disable == Some(true)),
        ))
    };

    let mut key_generators = Registry::new();
    for (name, generator) in &raw.key_generators {
        let path = format!("{prefix}.keyGenerators.{name}");
        // `worker-id: ${KS_WORKER_ID}`: one file for a fleet, the id from each host's environment.
        let mut props = generator.props();
        for (key, value) in props.iter_mut() {
            *value = substitute_env(value)
                .map_err(|problem| ConfigError::at(format!("{path}.props.{key}"), problem))?;
        }
        let built = key_generators
            .build(name.clone(), &generator.kind, props)
            .map_err(|e| ConfigError::at(&path, e));
        if problems.keep(built).is_none() {
            broken.insert(name.as_str());
        }
    }

    let ctx = Context {
        raw,
        algorithms: &algorithms,
        key_generators: &key_generators,
        broken: &broken,
    };
    let default_database = problems
        .keep(ctx.strategy(
            raw.default_database_strategy.as_ref(),
            &format!("{prefix}.defaultDatabaseStrategy"),
            HINT_DATABASE_VALUE,
        ))
        .flatten();
    let default_table = problems
        .keep(ctx.strategy(
            raw.default_table_strategy.as_ref(),
            &format!("{prefix}.defaultTableStrategy"),
            HINT_TABLE_VALUE,
        ))
        .flatten();
    let default_key = problems
        .keep(ctx.key_generate(
            raw.default_key_generate_strategy.as_ref(),
            &format!("{prefix}.defaultKeyGenerateStrategy"),
        ))
        .flatten();

    let ordinary = raw.tables.iter().map(|(name, table)| {
        let path = format!("{prefix}.tables.{name}");
        let rule = || -> Result<TableRule, ConfigError> {
            let own_database = ctx.strategy(
                table.database_strategy.as_ref(),
                &format!("{path}.databaseStrategy"),
                HINT_DATABASE_VALUE,
            )?;
            let own_table = ctx.strategy(
                table.table_strategy.as_ref(),
                &format!("{path}.tableStrategy"),
                HINT_TABLE_VALUE,
            )?;
            let own_key = ctx.key_generate(
                table.key_generate_strategy.as_ref(),
                &format!("{path}.keyGenerateStrategy"),
            )?;
            let (auditors, audit_hint_disable) = audited(table.audit_strategy.as_ref(), &path)?;
            Ok(TableRule {
                logic_table: name.clone(),
                data_nodes: data_nodes(name, table, &path, data_sources)?,
                configured_nodes: ConfiguredNodes::DataNodes(
                    table.actual_data_nodes.clone().unwrap_or_default(),
                ),
                // An explicit `none` on the table overrides the default; absence inherits it.
                database_strategy: own_database
                    .unwrap_or_else(|| default_database.clone().flatten()),
                table_strategy: own_table.unwrap_or_else(|| default_table.clone().flatten()),
                key_generate: own_key.or_else(|| default_key.clone()),
                auditors,
                audit_hint_disable,
                gene: None,
                remainder_nodes: RemainderNodes::default(),
            })
        };
        (name, rule(), path)
    });
    let auto = raw.auto_tables.iter().map(|(name, table)| {
        let path = format!("{prefix}.autoTables.{name}");
        let rule = || -> Result<TableRule, ConfigError> {
            let strategy_path = format!("{path}.shardingStrategy");
            let Some(Some(strategy)) = ctx.strategy(
                table.sharding_strategy.as_ref(),
                &strategy_path,
                HINT_TABLE_VALUE,
            )?
            else {
                return Err(ConfigError::at(
                    strategy_path,
                    Problem::InvalidAlgorithm("an auto table needs a standard strategy".into()),
                ));
            };
            let (auditors, audit_hint_disable) = audited(table.audit_strategy.as_ref(), &path)?;
            Ok(TableRule {
                logic_table: name.clone(),
                data_nodes: auto_nodes(name, table, &strategy, &path, data_sources, configured)?,
                configured_nodes: ConfiguredNodes::DataSources(
                    table.actual_data_sources.clone().unwrap_or_default(),
                ),
                database_strategy: None,
                table_strategy: Some(strategy),
                key_generate: ctx
                    .key_generate(
                        table.key_generate_strategy.as_ref(),
                        &format!("{path}.keyGenerateStrategy"),
                    )?
                    .or_else(|| default_key.clone()),
                auditors,
                audit_hint_disable,
                gene: None,
                remainder_nodes: RemainderNodes::default(),
            })
        };
        (name, rule(), path)
    });
    let mut tables = BTreeMap::new();
    let mut warnings = Vec::new();
    for (name, rule, path) in ordinary.chain(auto) {
        let Some(mut rule) = problems.keep(rule) else {
            continue;
        };
        match crate::gene::of(&rule) {
            Ok(gene) => rule.gene = gene,
            Err(why) => warnings.push(format!(
                "{path}: no gene keys ({why}); its keys' gene bits carry no gene, and a statement \
                 by its key alone goes to every node its other columns allow"
            )),
        }
        rule.remainder_nodes = RemainderNodes::of(&rule);
        if tables.insert(name.to_ascii_lowercase(), rule).is_some() {
            problems.keep::<()>(Err(ConfigError::at(
                path,
                Problem::DuplicateTable(name.clone()),
            )));
        }
    }

    // Tables declared but bad were reported: what names them is not reported again.
    let declared = |table: &str| {
        raw.tables
            .keys()
            .chain(raw.auto_tables.keys())
            .any(|t| t.eq_ignore_ascii_case(table))
    };

    // SS 5.5+'s `keyGenerateStrategies`: the same as a table's own `keyGenerateStrategy`.
    for (name, entry) in &raw.key_generate_strategies {
        let path = format!("{prefix}.keyGenerateStrategies.{name}");
        if !entry.key_generate_type.eq_ignore_ascii_case("column") {
            problems.push(ConfigError::at(
                format!("{path}.keyGenerateType"),
                Problem::NotYetSupported(
                    "a key generated for a sequence (keyGenerateType other than column)",
                ),
            ));
            continue;
        }
        let (Some(table), Some(column)) = (&entry.logic_table, &entry.key_generate_column) else {
            problems.push(ConfigError::at(
                path,
                Problem::MissingProperty("logicTable and keyGenerateColumn"),
            ));
            continue;
        };
        let Some(rule) = tables.get_mut(&table.to_ascii_lowercase()) else {
            if !declared(table) {
                problems.push(ConfigError::at(
                    format!("{path}.logicTable"),
                    Problem::UnknownTable(table.clone()),
                ));
            }
            continue;
        };
        let own = raw
            .tables
            .get(&rule.logic_table)
            .is_some_and(|t| t.key_generate_strategy.is_some())
            || raw
                .auto_tables
                .get(&rule.logic_table)
                .is_some_and(|t| t.key_generate_strategy.is_some());
        if own {
            problems.push(ConfigError::at(
                path,
                Problem::DuplicateKeyStrategy(table.clone()),
            ));
            continue;
        }
        let strategy = RawKeyGenerateStrategy {
            column: column.clone(),
            key_generator_name: entry.key_generator_name.clone(),
        };
        if let Some(key) = problems.keep(ctx.key_generate(Some(&strategy), &path)) {
            rule.key_generate = key;
        }
    }

    let mut binding_groups = Vec::new();
    let mut binding_names = Vec::new();
    for (i, group) in raw.binding_tables.iter().enumerate() {
        binding_names.push(
            group
                .name()
                .map_or_else(|| format!("ref_{i}"), str::to_owned),
        );
        let path = format!("{prefix}.bindingTables[{i}]");
        let mut members = Vec::new();
        for member in group.tables() {
            let key = member.to_ascii_lowercase();
            if !tables.contains_key(&key) && !declared(member) {
                problems.push(ConfigError::at(
                    &path,
                    Problem::UnknownTable(member.to_owned()),
                ));
            }
            members.push(key);
        }
        binding_groups.push(members);
    }

    if let Some(ds) = &raw.default_data_source
        && !data_sources.contains_key(ds)
    {
        problems.push(ConfigError::at(
            format!("{prefix}.defaultDataSource"),
            Problem::UnknownDataSource(ds.clone()),
        ));
    }
    problems.check()?;

    Ok(Resolved {
        rule: ShardingRule {
            tables,
            binding_groups,
            default_data_source: raw.default_data_source.clone(),
            algorithms,
            default_strategies: [
                default_database.clone().flatten(),
                default_table.clone().flatten(),
            ],
            algorithm_props: raw
                .sharding_algorithms
                .iter()
                .map(|(name, algorithm)| (name.clone(), algorithm.props()))
                .collect(),
            binding_names,
            auditors: raw
                .auditors
                .iter()
                .map(|(name, auditor)| (name.clone(), auditor.kind.to_ascii_uppercase()))
                .collect(),
            single_tables: Vec::new(),
            broadcast_tables: raw.broadcast_tables.clone(),
        },
        key_generators,
        warnings,
    })
}

/// The names of the rule's auditors, each of a type Keyshard implements.
fn auditors(raw: &RawSharding, prefix: &str) -> Result<Vec<String>, ConfigError> {
    raw.auditors
        .iter()
        .map(|(name, auditor)| {
            if auditor.kind.eq_ignore_ascii_case("DML_SHARDING_CONDITIONS") {
                Ok(name.clone())
            } else {
                Err(ConfigError::at(
                    format!("{prefix}.auditors.{name}.type"),
                    Problem::UnsupportedAuditor(auditor.kind.clone()),
                ))
            }
        })
        .collect()
}

/// An auto table's nodes, as ShardingSphere makes them: `{logic}_{i}` for each of the
/// algorithm's partitions, on the data sources of `actualDataSources` (else all) in turn.
fn auto_nodes(
    logic_table: &str,
    table: &RawAutoTable,
    strategy: &Strategy,
    path: &str,
    data_sources: &BTreeMap<String, DataSource>,
    configured: &[String],
) -> Result<Vec<DataNode>, ConfigError> {
    let count = match &*strategy.algorithm {
        Algorithm::Mod { sharding_count } | Algorithm::HashMod { sharding_count } => {
            *sharding_count
        }
        Algorithm::Range { boundaries, .. } => boundaries.count(),
        Algorithm::AutoInterval(auto) => auto.count(),
        other => {
            return Err(ConfigError::at(
                format!("{path}.shardingStrategy"),
                Problem::InvalidAlgorithm(format!(
                    "{} does not number auto tables (MOD, HASH_MOD, VOLUME_RANGE, \
                     BOUNDARY_RANGE and AUTO_INTERVAL do)",
                    other.type_name()
                )),
            ));
        }
    };
    let names = match &table.actual_data_sources {
        Some(text) => {
            let sources_path = format!("{path}.actualDataSources");
            let names = expand(text).map_err(|e| ConfigError::at(&sources_path, e))?;
            for name in &names {
                if !data_sources.contains_key(name) {
                    return Err(ConfigError::at(
                        sources_path,
                        Problem::UnknownDataSource(name.clone()),
                    ));
                }
            }
            names
        }
        // As ShardingSphere spreads them: in the order the data sources are written.
        None => configured.to_vec(),
    };
    if names.is_empty() || count > 100_000 {
        return Err(ConfigError::at(
            path,
            Problem::InvalidAlgorithm(format!(
                "{count} auto tables over {} data sources",
                names.len()
            )),
        ));
    }
    Ok((0..count)
        .map(|i| DataNode {
            data_source: names[i as usize % names.len()].clone(),
            table: format!("{logic_table}_{i}"),
        })
        .collect())
}

/// Expands `actualDataNodes`; without it the table lives, under its own name, on every data
/// source (ShardingSphere's behaviour).
fn data_nodes(
    logic_table: &str,
    table: &RawTable,
    path: &str,
    data_sources: &BTreeMap<String, DataSource>,
) -> Result<Vec<DataNode>, ConfigError> {
    let Some(text) = &table.actual_data_nodes else {
        return Ok(data_sources
            .keys()
            .map(|ds| DataNode {
                data_source: ds.to_owned(),
                table: logic_table.to_owned(),
            })
            .collect());
    };
    let path = format!("{path}.actualDataNodes");
    let names = expand(text).map_err(|e| ConfigError::at(&path, e))?;
    if names.is_empty() {
        return Err(ConfigError::at(path, Problem::NoDataNodes(text.clone())));
    }
    let mut seen = HashSet::new();
    let mut nodes = Vec::with_capacity(names.len());
    for name in names {
        let Some((ds, table)) = name
            .split_once('.')
            .filter(|(d, t)| !d.is_empty() && !t.is_empty())
        else {
            return Err(ConfigError::at(path, Problem::MalformedDataNode(name)));
        };
        if !data_sources.contains_key(ds) {
            return Err(ConfigError::at(
                path,
                Problem::UnknownDataSource(ds.to_owned()),
            ));
        }
        if !seen.insert(name.to_ascii_lowercase()) {
            return Err(ConfigError::at(path, Problem::DuplicateDataNode(name)));
        }
        nodes.push(DataNode {
            data_source: ds.to_owned(),
            table: table.to_owned(),
        });
    }
    Ok(nodes)
}
