//! `!SHARDING` as written: sharded and automatic tables, binding groups, strategies, key
//! generation, and the algorithms they name.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny};

use super::RawAlgorithm;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawSharding {
    #[serde(default)]
    pub tables: BTreeMap<String, RawTable>,
    #[serde(default)]
    pub binding_tables: Vec<RawBindingGroup>,
    /// SS 5.0–5.3's broadcast tables, inside the sharding rule.
    #[serde(default)]
    pub broadcast_tables: Vec<String>,
    /// SS 5.x's automatic tables: numbered and spread over data sources by the algorithm.
    #[serde(default)]
    pub auto_tables: BTreeMap<String, RawAutoTable>,
    #[serde(default)]
    pub auditors: BTreeMap<String, RawAlgorithm>,
    pub default_audit_strategy: Option<RawAuditStrategy>,
    pub default_database_strategy: Option<RawStrategy>,
    pub default_table_strategy: Option<RawStrategy>,
    pub default_key_generate_strategy: Option<RawKeyGenerateStrategy>,
    /// SS 5.5+'s key generation by name: a table's column, or a sequence.
    #[serde(default)]
    pub key_generate_strategies: BTreeMap<String, RawNamedKeyStrategy>,
    pub default_sharding_column: Option<String>,
    pub default_data_source: Option<String>,
    #[serde(default)]
    pub sharding_algorithms: BTreeMap<String, RawAlgorithm>,
    #[serde(default)]
    pub key_generators: BTreeMap<String, RawAlgorithm>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawTable {
    pub actual_data_nodes: Option<String>,
    pub database_strategy: Option<RawStrategy>,
    pub table_strategy: Option<RawStrategy>,
    pub key_generate_strategy: Option<RawKeyGenerateStrategy>,
    pub audit_strategy: Option<RawAuditStrategy>,
}

/// An automatic table: `{logic}_0` … `{logic}_{n-1}`, n the algorithm's partitions, over the
/// data sources in turn.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawAutoTable {
    pub actual_data_sources: Option<String>,
    pub sharding_strategy: Option<RawStrategy>,
    pub key_generate_strategy: Option<RawKeyGenerateStrategy>,
    pub audit_strategy: Option<RawAuditStrategy>,
}

/// A binding group: `t_order, t_order_item`, or named as SS 5.4+ writes it,
/// `ref_0:t_order,t_order_item` or `ref_0: t_order, t_order_item` (a YAML map).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum RawBindingGroup {
    Tables(String),
    Named(BTreeMap<String, String>),
}

impl RawBindingGroup {
    /// The group's name, when it has one.
    pub fn name(&self) -> Option<&str> {
        match self {
            RawBindingGroup::Tables(text) => text.split_once(':').map(|(name, _)| name.trim()),
            RawBindingGroup::Named(map) => map.keys().next().map(String::as_str),
        }
    }

    /// The group's tables, as written.
    pub fn tables(&self) -> Vec<&str> {
        let list = match self {
            // A name before a colon is the group's; the tables follow it.
            RawBindingGroup::Tables(text) => text.split_once(':').map_or(text.as_str(), |(_, t)| t),
            RawBindingGroup::Named(map) => map.values().next().map_or("", String::as_str),
        };
        list.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect()
    }
}

/// `auditStrategy`: which auditors check a table's statements.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawAuditStrategy {
    #[serde(default)]
    pub auditor_names: Vec<String>,
    /// A hint (`disableAuditNames`) may switch the auditors off; not by default.
    pub allow_hint_disable: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStrategy {
    pub standard: Option<RawStandardStrategy>,
    pub complex: Option<RawComplexStrategy>,
    pub hint: Option<RawHintStrategy>,
    /// `none: {}` and a bare `none:` both count as present.
    #[serde(default, deserialize_with = "present")]
    pub none: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawComplexStrategy {
    /// `user_id,order_id`.
    pub sharding_columns: String,
    pub sharding_algorithm_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawHintStrategy {
    pub sharding_algorithm_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawStandardStrategy {
    pub sharding_column: Option<String>,
    pub sharding_algorithm_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawKeyGenerateStrategy {
    pub column: String,
    pub key_generator_name: String,
}

/// An entry of `keyGenerateStrategies`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawNamedKeyStrategy {
    /// `column` or `sequence`.
    pub key_generate_type: String,
    pub key_generator_name: String,
    pub logic_table: Option<String>,
    pub key_generate_column: Option<String>,
    /// A sequence's name: its strategy type is refused, so it is not read.
    #[serde(rename = "keyGenerateSequence")]
    pub _key_generate_sequence: Option<IgnoredAny>,
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Empty {}
    Option::<Empty>::deserialize(deserializer).map(|_| true)
}
