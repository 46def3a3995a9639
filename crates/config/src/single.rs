//! `!SINGLE`: where tables without a sharding or broadcast rule live.

use std::collections::BTreeMap;

use crate::datasource::DataSource;
use crate::error::{ConfigError, Problem};
use crate::model::{ShardingRule, SingleTable};
use crate::raw::RawSingle;

/// Adds `raw` (the rule at `rules[index]`) to `rule`: its tables (none of them sharded or one
/// of `broadcast`), and its default data source.
pub(crate) fn resolve(
    raw: &RawSingle,
    index: usize,
    data_sources: &BTreeMap<String, DataSource>,
    broadcast: &[String],
    rule: &mut ShardingRule,
) -> Result<(), ConfigError> {
    let prefix = format!("rules[{index}]");
    if let Some(ds) = &raw.default_data_source {
        let path = format!("{prefix}.defaultDataSource");
        if !data_sources.contains_key(ds) {
            return Err(ConfigError::at(
                path,
                Problem::UnknownDataSource(ds.clone()),
            ));
        }
        match &rule.default_data_source {
            Some(other) if other != ds => {
                return Err(ConfigError::at(
                    path,
                    Problem::ConflictingDefault(ds.clone(), other.clone()),
                ));
            }
            _ => rule.default_data_source = Some(ds.clone()),
        }
    }
    for (i, entry) in raw.tables.iter().enumerate() {
        let path = format!("{prefix}.tables[{i}]");
        let malformed = || ConfigError::at(&path, Problem::MalformedSingleTable(entry.clone()));
        // PostgreSQL's `ds.schema.table`: the schema is the connection's search path here.
        let parts: Vec<&str> = entry.split('.').map(str::trim).collect();
        let (ds, table) = match parts.as_slice() {
            [ds, table] | [ds, _, table] if !ds.is_empty() && !table.is_empty() => (*ds, *table),
            _ => return Err(malformed()),
        };
        let data_source = match ds {
            "*" if table == "*" => None,
            "*" => return Err(malformed()),
            ds if data_sources.contains_key(ds) => Some(ds.to_owned()),
            ds => {
                return Err(ConfigError::at(
                    path,
                    Problem::UnknownDataSource(ds.to_owned()),
                ));
            }
        };
        let table = (table != "*").then(|| table.to_owned());
        if let Some(name) = &table
            && (rule.table(name).is_some()
                || broadcast.iter().any(|b| b.eq_ignore_ascii_case(name)))
        {
            return Err(ConfigError::at(path, Problem::DuplicateTable(name.clone())));
        }
        rule.single_tables.push(SingleTable { data_source, table });
    }
    Ok(())
}
