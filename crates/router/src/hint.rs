//! ShardingSphere 5.4+'s SQL hint: a leading `/* SHARDINGSPHERE_HINT: key=value, … */` (or
//! `/* ShardingSphere hint: … */`) that forces where a statement runs or which auditors check it.
//!
//! Read here: `dataSourceName` (`DATA_SOURCE_NAME`: the statement runs as written on that data
//! source), `disableAuditNames` (`DISABLE_AUDIT_NAMES`, names separated by spaces), and the
//! sharding values of hint strategies (`t.SHARDING_DATABASE_VALUE=1`, `t.SHARDING_TABLE_VALUE=1`,
//! or without `t.` for every table), which route as a condition on the strategy's value would
//! (see [`keyshard_config::HINT_DATABASE_VALUE`]); a table without a hint strategy ignores
//! them, as ShardingSphere does. `writeRouteOnly` and `shadow` change nothing without replicas
//! or a shadow rule. `skipSQLRewrite=true` would send logic table names to the shards, and is
//! refused.

use keyshard_config::{HINT_DATABASE_VALUE, HINT_TABLE_VALUE};
use sqlparser::ast::Statement;
use sqlparser::parser::Parser;

use crate::{Direct, Prepared, RouteError, Router, locate, tokens};
use keyshard_types::Value;

/// What a statement's hint asks for.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Hint {
    /// Run the statement as written on this data source.
    pub data_source: Option<String>,
    /// Auditors that do not check this statement.
    pub disabled_auditors: Vec<String>,
    /// Hint strategies' values: the table they are for (`None`: every table), the level
    /// ([`HINT_DATABASE_VALUE`] or [`HINT_TABLE_VALUE`]) and the value.
    pub sharding_values: Vec<(Option<String>, &'static str, Value)>,
}

impl Hint {
    /// The value this hint gives `table` at `level` ([`HINT_DATABASE_VALUE`] or
    /// [`HINT_TABLE_VALUE`]), if any.
    pub(crate) fn value(&self, table: &str, level: &str) -> Option<&Value> {
        self.sharding_values
            .iter()
            .find(|(t, l, _)| {
                *l == level && t.as_deref().is_none_or(|t| t.eq_ignore_ascii_case(table))
            })
            .map(|(_, _, value)| value)
    }
}

/// The hint `sql` starts with, if any.
pub(crate) fn read(sql: &str) -> Result<Option<Hint>, RouteError> {
    let text = sql.trim_start();
    let Some(rest) = ["/* SHARDINGSPHERE_HINT:", "/* ShardingSphere hint:"]
        .iter()
        .find_map(|start| text.strip_prefix(start))
    else {
        return Ok(None);
    };
    let Some((body, _)) = rest.split_once("*/") else {
        return Ok(None);
    };
    let mut hint = Hint::default();
    for entry in body.split(',') {
        let Some((key, value)) = entry.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        let is = |upper: &str, camel: &str| key == upper || key == camel;
        if is("DATA_SOURCE_NAME", "dataSourceName") {
            hint.data_source = Some(value.to_owned());
        } else if is("DISABLE_AUDIT_NAMES", "disableAuditNames") {
            hint.disabled_auditors = value.split_whitespace().map(str::to_owned).collect();
        } else if let Some((table, level)) = sharding_value_key(key) {
            // A number shards as one (ShardingSphere reads the hint's values so), else text.
            let value = match value.parse() {
                Ok(number) => Value::Int(number),
                Err(_) => Value::Text(value.trim_matches('\'').to_owned()),
            };
            hint.sharding_values.push((table, level, value));
        } else if is("SKIP_SQL_REWRITE", "skipSQLRewrite") && value.eq_ignore_ascii_case("true") {
            return Err(RouteError::Unsupported(
                "the skipSQLRewrite hint (logic table names would reach the shards)".into(),
            ));
        }
    }
    Ok(Some(hint))
}

/// `[table.]SHARDING_DATABASE_VALUE` or `[table.]SHARDING_TABLE_VALUE`: the table (if named)
/// and the level.
fn sharding_value_key(key: &str) -> Option<(Option<String>, &'static str)> {
    let (table, name) = match key.rsplit_once('.') {
        Some((table, name)) => (Some(table.trim().to_owned()), name),
        None => (None, key),
    };
    let level = if name.eq_ignore_ascii_case("SHARDING_DATABASE_VALUE") {
        HINT_DATABASE_VALUE
    } else if name.eq_ignore_ascii_case("SHARDING_TABLE_VALUE") {
        HINT_TABLE_VALUE
    } else {
        return None;
    };
    Some((table, level))
}

impl Router {
    /// A statement its hint sends to `data_source`: as written, whatever tables it names.
    pub(crate) fn forced(
        &self,
        sql: &str,
        parser: &Parser<'_>,
        statement: &Statement,
        data_source: String,
    ) -> Result<Prepared, RouteError> {
        if !self.data_sources.is_empty() && !self.data_sources.contains(&data_source) {
            return Err(RouteError::Unsupported(format!(
                "the dataSourceName hint names '{data_source}', which is not a data source"
            )));
        }
        let mut locator = locate::Locator::new(sql);
        let tokens = tokens::Tokens::scan(parser, &mut locator, self.dialect, &[])?;
        Ok(Prepared::Direct(Direct {
            sql: sql.into(),
            data_sources: vec![data_source],
            param_count: tokens.param_count,
            is_read: matches!(statement, Statement::Query(_)),
            replicated: false,
            replica_safe: false,
            table: String::new(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_as_shardingsphere_writes_them() {
        let hint =
            read("/* SHARDINGSPHERE_HINT: dataSourceName=ds_1, disableAuditNames=a b */ SELECT 1")
                .unwrap()
                .unwrap();
        assert_eq!(hint.data_source.as_deref(), Some("ds_1"));
        assert_eq!(hint.disabled_auditors, ["a", "b"]);
        let alias = read("/* ShardingSphere hint: DATA_SOURCE_NAME = ds_0 */ SELECT 1").unwrap();
        assert_eq!(alias.unwrap().data_source.as_deref(), Some("ds_0"));
        let values = read(
            "/* SHARDINGSPHERE_HINT: t_order.SHARDING_TABLE_VALUE=1, writeRouteOnly=true, \
             SHARDING_DATABASE_VALUE='ds_1' */ SELECT 1",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            values.value("T_ORDER", HINT_TABLE_VALUE),
            Some(&Value::Int(1))
        );
        assert_eq!(values.value("t_user", HINT_TABLE_VALUE), None);
        let every = Value::Text("ds_1".into());
        assert_eq!(values.value("t_user", HINT_DATABASE_VALUE), Some(&every));
        assert_eq!(values.data_source, None);
        assert!(read("/* SHARDINGSPHERE_HINT: skipSQLRewrite=true */ SELECT 1").is_err());
        assert_eq!(read("/* a comment */ SELECT 1").unwrap(), None);
        assert_eq!(
            read("SELECT 1 /* SHARDINGSPHERE_HINT: dataSourceName=ds_1 */").unwrap(),
            None
        );
    }
}
