//! `!READWRITE_SPLITTING` as written, in any of ShardingSphere 5's spellings (resolved in the
//! crate's `readwrite.rs`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::RawAlgorithm;
use super::values::{InOrder, Scalar};

/// `!READWRITE_SPLITTING` as written, in any of ShardingSphere 5's spellings (resolved in
/// `readwrite.rs`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawReadwriteSplitting {
    /// SS 5.4+.
    #[serde(default)]
    pub(crate) data_source_groups: InOrder<RawGroup>,
    /// SS 5.0–5.3.
    #[serde(default)]
    pub(crate) data_sources: InOrder<RawGroup>,
    #[serde(default)]
    pub(crate) load_balancers: BTreeMap<String, RawAlgorithm>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawGroup {
    pub(crate) write_data_source_name: Option<String>,
    pub(crate) read_data_source_names: Option<Names>,
    /// SS 5.2–5.3.
    pub(crate) static_strategy: Option<RawStatic>,
    /// SS 5.2–5.3's database discovery: not implemented.
    pub(crate) dynamic_strategy: Option<IgnoredAny>,
    /// SS 5.1: `type: Static` with the names in `props`.
    #[serde(rename = "type")]
    pub(crate) kind: Option<String>,
    pub(crate) props: Option<BTreeMap<String, Scalar>>,
    pub(crate) transactional_read_query_strategy: Option<String>,
    pub(crate) load_balancer_name: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawStatic {
    pub(crate) write_data_source_name: String,
    pub(crate) read_data_source_names: Names,
}

/// A list of names, or one comma-separated string (SS 5.1's props).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum Names {
    List(Vec<String>),
    Text(String),
}

impl Names {
    pub(crate) fn to_vec(&self) -> Vec<String> {
        match self {
            Names::List(names) => names.iter().map(|n| n.trim().to_owned()).collect(),
            Names::Text(text) => text
                .split(',')
                .map(|n| n.trim().to_owned())
                .filter(|n| !n.is_empty())
                .collect(),
        }
    }
}
