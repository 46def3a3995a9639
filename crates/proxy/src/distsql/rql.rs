//! ShardingSphere's RQL: the rules as configured, in SS 5.4's column layout. `SHOW SHARDING
//! TABLE RULES`, `SHOW SHARDING TABLE NODES [table]`, `SHOW SHARDING ALGORITHMS`, `SHOW
//! SHARDING TABLE REFERENCE RULES` (5.3's `SHOW SHARDING BINDING TABLE RULES`), `SHOW
//! BROADCAST TABLE RULES`, `SHOW SINGLE TABLES`, `SHOW STORAGE UNITS` (5.3's `SHOW STORAGE
//! RESOURCES`), `SHOW SHARDING AUDITORS`, each with an optional `FROM <database>`.

use std::collections::BTreeMap;

use super::render_props;
use keyshard_backend::ReplicaStatus;
use keyshard_config::{Config, ConfiguredNodes, LoadBalancer, Strategy, TableRule};
use keyshard_keygen::Props;
use keyshard_types::Value;

/// An RQL statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rql {
    /// Every table's rule, one table's, or those that use an algorithm.
    TableRules(Filter),
    /// The nodes of one table, or of all.
    TableNodes(Option<String>),
    Algorithms,
    DefaultStrategy,
    ReferenceRules,
    BroadcastRules,
    SingleTables,
    StorageUnits,
    Auditors,
    ReadwriteRules,
    ReadwriteStatus,
}

/// Which table rules `SHOW SHARDING TABLE RULE[S]` lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Filter {
    All,
    /// `SHOW SHARDING TABLE RULE t`.
    Table(String),
    /// `SHOW SHARDING TABLE RULES USED ALGORITHM a`.
    Algorithm(String),
}

/// The statements' words, the table name of `TABLE NODES` aside.
const FORMS: [(&[&str], Rql); 13] = [
    (
        &["sharding", "table", "rules"],
        Rql::TableRules(Filter::All),
    ),
    (&["default", "sharding", "strategy"], Rql::DefaultStrategy),
    (&["sharding", "table", "nodes"], Rql::TableNodes(None)),
    (&["sharding", "algorithms"], Rql::Algorithms),
    (
        &["sharding", "table", "reference", "rules"],
        Rql::ReferenceRules,
    ),
    (
        &["sharding", "binding", "table", "rules"],
        Rql::ReferenceRules,
    ),
    (&["broadcast", "table", "rules"], Rql::BroadcastRules),
    (&["single", "tables"], Rql::SingleTables),
    (&["storage", "units"], Rql::StorageUnits),
    (&["storage", "resources"], Rql::StorageUnits),
    (&["sharding", "auditors"], Rql::Auditors),
    (&["readwrite_splitting", "rules"], Rql::ReadwriteRules),
    (
        &["status", "from", "readwrite_splitting", "rules"],
        Rql::ReadwriteStatus,
    ),
];

/// The statement after `SHOW`, and the database its `FROM` names, if any.
pub(crate) fn parse(words: &[&str]) -> Option<(Rql, Option<String>)> {
    let (words, database) = match words {
        [rest @ .., from, database] if from.eq_ignore_ascii_case("from") => {
            (rest, Some(unquote(database)))
        }
        _ => (words, None),
    };
    let same = |a: &[&str], b: &[&str]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.eq_ignore_ascii_case(y))
    };
    match words {
        [a, b, c, name] if same(&[a, b, c], &["sharding", "table", "rule"]) => {
            return Some((Rql::TableRules(Filter::Table(unquote(name))), database));
        }
        [a, b, c, d, e, name]
            if same(
                &[a, b, c, d, e],
                &["sharding", "table", "rules", "used", "algorithm"],
            ) =>
        {
            return Some((Rql::TableRules(Filter::Algorithm(unquote(name))), database));
        }
        _ => {}
    }
    for (form, statement) in FORMS {
        if same(words, form) {
            return Some((statement, database));
        }
        // `SHOW SHARDING TABLE NODES t_order`.
        if statement == Rql::TableNodes(None)
            && let [head @ .., table] = words
            && same(head, form)
        {
            return Some((Rql::TableNodes(Some(unquote(table))), database));
        }
    }
    None
}

fn unquote(name: &str) -> String {
    name.trim_matches(|c| c == '`' || c == '"').to_owned()
}

/// The statement's column names.
pub(crate) fn columns(statement: &Rql) -> &'static [&'static str] {
    match statement {
        Rql::DefaultStrategy => &[
            "name",
            "type",
            "sharding_column",
            "sharding_algorithm_name",
            "sharding_algorithm_type",
            "sharding_algorithm_props",
        ],
        Rql::TableRules(_) => &[
            "table",
            "actual_data_nodes",
            "actual_data_sources",
            "database_strategy_type",
            "database_sharding_column",
            "database_sharding_algorithm_type",
            "database_sharding_algorithm_props",
            "table_strategy_type",
            "table_sharding_column",
            "table_sharding_algorithm_type",
            "table_sharding_algorithm_props",
            "key_generate_column",
            "key_generator_type",
            "key_generator_props",
            "auditor_types",
            "allow_hint_disable",
        ],
        Rql::TableNodes(_) => &["name", "nodes"],
        Rql::Algorithms | Rql::Auditors => &["name", "type", "props"],
        Rql::ReferenceRules => &["name", "sharding_table_reference"],
        Rql::BroadcastRules => &["broadcast_table"],
        Rql::SingleTables => &["table_name", "storage_unit_name"],
        Rql::ReadwriteRules => &[
            "name",
            "write_storage_unit_name",
            "read_storage_unit_names",
            "transactional_read_query_strategy",
            "load_balancer_type",
            "load_balancer_props",
        ],
        Rql::ReadwriteStatus => &[
            "name",
            "storage_unit",
            "status",
            "delay_milliseconds",
            "position",
            "reads",
            "reason",
        ],
        Rql::StorageUnits => &[
            "name",
            "type",
            "host",
            "port",
            "db",
            "connection_timeout_milliseconds",
            "idle_timeout_milliseconds",
            "max_lifetime_milliseconds",
            "max_pool_size",
            "min_pool_size",
        ],
    }
}

/// The statement's rows, from `config`, the single tables found at start and the replicas'
/// state now.
pub(crate) fn rows(
    statement: &Rql,
    config: &Config,
    single: &[(String, String)],
    replicas: &[ReplicaStatus],
) -> Vec<Vec<String>> {
    let rule = &config.sharding;
    let tables = || rule.tables.values();
    match statement {
        Rql::TableRules(filter) => tables()
            .filter(|t| match filter {
                Filter::All => true,
                Filter::Table(name) => t.logic_table.eq_ignore_ascii_case(name),
                Filter::Algorithm(name) => [&t.database_strategy, &t.table_strategy]
                    .into_iter()
                    .flatten()
                    .any(|s| s.algorithm_name == *name),
            })
            .map(|t| table_rule_row(t, config))
            .collect(),
        Rql::DefaultStrategy => ["DATABASE", "TABLE"]
            .iter()
            .zip(&rule.default_strategies)
            .map(|(name, strategy)| {
                let mut row = vec![(*name).to_owned()];
                match strategy {
                    Some(s) => row.extend([
                        s.kind().to_owned(),
                        s.sharding_column().to_owned(),
                        s.algorithm_name.clone(),
                        s.algorithm.type_name().to_owned(),
                        props(rule.algorithm_props.get(&s.algorithm_name)),
                    ]),
                    None => row.extend(
                        ["NONE".to_owned()]
                            .into_iter()
                            .chain(std::iter::repeat_n(String::new(), 4)),
                    ),
                }
                row
            })
            .collect(),
        Rql::TableNodes(only) => tables()
            .filter(|t| {
                only.as_ref()
                    .is_none_or(|o| o.eq_ignore_ascii_case(&t.logic_table))
            })
            .map(|t| vec![t.logic_table.clone(), nodes(t)])
            .collect(),
        Rql::Algorithms => rule
            .algorithms
            .iter()
            .map(|(name, algorithm)| {
                vec![
                    name.clone(),
                    algorithm.type_name().to_owned(),
                    props(rule.algorithm_props.get(name)),
                ]
            })
            .collect(),
        Rql::ReferenceRules => rule
            .binding_names
            .iter()
            .zip(&rule.binding_groups)
            .map(|(name, group)| vec![name.clone(), group.join(",")])
            .collect(),
        Rql::BroadcastRules => config
            .broadcast_tables
            .iter()
            .map(|t| vec![t.clone()])
            .collect(),
        Rql::SingleTables => single
            .iter()
            .map(|(table, ds)| vec![table.clone(), ds.clone()])
            .collect(),
        Rql::StorageUnits => config
            .data_sources
            .values()
            .map(|ds| {
                let (host, port, db) = address(&ds.url);
                let number = |n: Option<u64>| n.map(|n| n.to_string()).unwrap_or_default();
                vec![
                    ds.name.clone(),
                    format!("{:?}", ds.kind),
                    host,
                    port,
                    db,
                    number(ds.pool.connection_timeout_ms),
                    number(ds.pool.idle_timeout_ms),
                    number(ds.pool.max_lifetime_ms),
                    number(ds.pool.max_size.map(u64::from)),
                    number(ds.pool.min_size.map(u64::from)),
                ]
            })
            .collect(),
        Rql::ReadwriteRules => config
            .read_write
            .groups
            .values()
            .map(|group| {
                let reads: Vec<&str> = group
                    .replicas
                    .iter()
                    .map(|r| r.source.name.as_str())
                    .collect();
                let weights: Props = match group.balancer {
                    LoadBalancer::Weight => group
                        .replicas
                        .iter()
                        .map(|r| (r.source.name.clone(), r.weight.to_string()))
                        .collect(),
                    _ => Props::new(),
                };
                vec![
                    group.name.clone(),
                    group.primary.clone(),
                    reads.join(","),
                    format!("{:?}", group.transactional_reads).to_uppercase(),
                    match group.balancer {
                        LoadBalancer::RoundRobin => "ROUND_ROBIN",
                        LoadBalancer::Random => "RANDOM",
                        LoadBalancer::Weight => "WEIGHT",
                    }
                    .to_owned(),
                    render_props(&weights),
                ]
            })
            .collect(),
        Rql::ReadwriteStatus => replicas
            .iter()
            .map(|r| {
                vec![
                    r.group.clone(),
                    r.replica.clone(),
                    if r.enabled { "ENABLED" } else { "DISABLED" }.to_owned(),
                    r.lag.map(|l| l.as_millis().to_string()).unwrap_or_default(),
                    r.position.clone().unwrap_or_default(),
                    r.reads.to_string(),
                    r.reason.clone(),
                ]
            })
            .collect(),
        Rql::Auditors => rule
            .auditors
            .iter()
            .map(|(name, kind)| vec![name.clone(), kind.clone(), String::new()])
            .collect(),
    }
}

fn table_rule_row(table: &TableRule, config: &Config) -> Vec<String> {
    let rule = &config.sharding;
    let strategy = |s: &Option<Strategy>| match s {
        Some(s) => [
            s.kind().to_owned(),
            s.sharding_column().to_owned(),
            s.algorithm.type_name().to_owned(),
            props(rule.algorithm_props.get(&s.algorithm_name)),
        ],
        None => Default::default(),
    };
    // As configured, as SS shows them: a table's node expression, an auto table's sources.
    let mut row = match &table.configured_nodes {
        ConfiguredNodes::DataNodes(nodes) => {
            vec![table.logic_table.clone(), nodes.clone(), String::new()]
        }
        ConfiguredNodes::DataSources(sources) => {
            vec![table.logic_table.clone(), String::new(), sources.clone()]
        }
    };
    row.extend(strategy(&table.database_strategy));
    row.extend(strategy(&table.table_strategy));
    match &table.key_generate {
        Some(key) => {
            let generator = config
                .key_generators
                .iter()
                .find(|(n, _)| *n == key.generator_name);
            row.push(key.column.clone());
            row.push(key.generator.type_name().to_owned());
            row.push(generator.map_or_else(String::new, |(_, g)| {
                props(Some(
                    &g.props
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ))
            }));
        }
        None => row.extend([String::new(), String::new(), String::new()]),
    }
    let auditors: Vec<&str> = table
        .auditors
        .iter()
        .filter_map(|a| rule.auditors.get(a).map(String::as_str))
        .collect();
    row.push(auditors.join(","));
    // Whether hints may switch the auditors off, where the table is audited at all.
    row.push(match auditors.is_empty() {
        true => String::new(),
        false => table.audit_hint_disable.to_string(),
    });
    row
}

fn nodes(table: &TableRule) -> String {
    table
        .data_nodes
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Properties as SS shows them (see [`render_props`]).
fn props(props: Option<&BTreeMap<String, String>>) -> String {
    props.map(render_props).unwrap_or_default()
}

/// The host, port and database of a data source's URL (a SQLite file's path as its database).
fn address(url: &str) -> (String, String, String) {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Default::default();
    };
    let rest = rest.split('?').next().unwrap_or_default();
    if scheme == "sqlite" {
        return (String::new(), String::new(), rest.to_owned());
    }
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    let (authority, db) = rest.split_once('/').unwrap_or((rest, ""));
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => (host, port),
        _ => (authority, ""),
    };
    (host.to_owned(), port.to_owned(), db.to_owned())
}

/// The rows as the frontends encode them.
pub(crate) fn values(rows: Vec<Vec<String>>) -> Vec<Vec<Value>> {
    rows.into_iter()
        .map(|row| row.into_iter().map(Value::Text).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_and_their_database() {
        fn words(s: &str) -> Vec<&str> {
            s.split_whitespace().collect()
        }
        assert_eq!(
            parse(&words("sharding table rules from sharding_db")),
            Some((Rql::TableRules(Filter::All), Some("sharding_db".into())))
        );
        assert_eq!(
            parse(&words("sharding table rule t_order")),
            Some((Rql::TableRules(Filter::Table("t_order".into())), None))
        );
        assert_eq!(
            parse(&words(
                "SHARDING TABLE RULES USED ALGORITHM t_inline FROM db"
            )),
            Some((
                Rql::TableRules(Filter::Algorithm("t_inline".into())),
                Some("db".into())
            ))
        );
        assert_eq!(
            parse(&words("default sharding strategy")),
            Some((Rql::DefaultStrategy, None))
        );
        assert_eq!(
            parse(&words("SHARDING TABLE NODES `t_order`")),
            Some((Rql::TableNodes(Some("t_order".into())), None))
        );
        assert_eq!(
            parse(&words("sharding binding table rules")),
            Some((Rql::ReferenceRules, None))
        );
        assert_eq!(parse(&words("sharding table rules where x")), None);
        assert_eq!(
            address("mysql://root:pw@127.0.0.1:3306/shop?ssl-mode=disabled"),
            ("127.0.0.1".into(), "3306".into(), "shop".into())
        );
    }
}
