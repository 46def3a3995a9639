//! The entries of `rules:`, told apart by their YAML tag, and the bodies of the small rules
//! (`!SINGLE`, `!BROADCAST`, `!TRANSACTION`); the sharding and read/write splitting rules
//! have modules of their own.

use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, EnumAccess, IgnoredAny, VariantAccess, Visitor};

use super::RawAuthority;
use super::readwrite::RawReadwriteSplitting;
use super::sharding::RawSharding;

/// One entry of `rules:`, told apart by its YAML tag.
#[derive(Debug)]
pub(crate) enum RawRule {
    // Boxed: the sharding rule dwarfs the others, and a file holds a handful of rules.
    Sharding(Box<RawSharding>),
    Broadcast(RawBroadcast),
    Transaction(RawTransaction),
    Single(RawSingle),
    ReadwriteSplitting(Box<RawReadwriteSplitting>),
    /// SS 5.1–5.3's global `!AUTHORITY` rule (server.yaml), the same as `authority:`.
    Authority(RawAuthority),
    /// A global rule that tunes ShardingSphere's own engine (`!SQL_PARSER` …): accepted with
    /// a warning.
    Ignored(String),
    /// Any other tag, kept so validation can name its index (serde_yaml_ng's own
    /// unknown-variant error loses the sequence index).
    Unsupported(String),
}

/// The global rules that change no result in Keyshard.
const IGNORED_RULES: [&str; 6] = [
    "SQL_PARSER",
    "SQL_FEDERATION",
    "SQL_TRANSLATOR",
    "LOGGING",
    "GLOBAL_CLOCK",
    "TRAFFIC",
];

impl<'de> Deserialize<'de> for RawRule {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RuleVisitor;
        impl<'de> Visitor<'de> for RuleVisitor {
            type Value = RawRule;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a rule tagged !SHARDING, !BROADCAST, !SINGLE, !TRANSACTION or \
                     !READWRITE_SPLITTING",
                )
            }
            fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<RawRule, A::Error> {
                let (tag, body): (String, _) = data.variant()?;
                match tag.as_str() {
                    "SHARDING" => body.newtype_variant().map(RawRule::Sharding),
                    "BROADCAST" => body.newtype_variant().map(RawRule::Broadcast),
                    "TRANSACTION" => body.newtype_variant().map(RawRule::Transaction),
                    "SINGLE" => body.newtype_variant().map(RawRule::Single),
                    "AUTHORITY" => body.newtype_variant().map(RawRule::Authority),
                    "READWRITE_SPLITTING" => {
                        body.newtype_variant().map(RawRule::ReadwriteSplitting)
                    }
                    tag if IGNORED_RULES.contains(&tag) => body
                        .newtype_variant::<IgnoredAny>()
                        .map(|_| RawRule::Ignored(tag.to_owned())),
                    _ => body
                        .newtype_variant::<IgnoredAny>()
                        .map(|_| RawRule::Unsupported(tag)),
                }
            }
        }
        deserializer.deserialize_enum(
            "Rule",
            &[
                "SHARDING",
                "BROADCAST",
                "TRANSACTION",
                "SINGLE",
                "AUTHORITY",
                "READWRITE_SPLITTING",
            ],
            RuleVisitor,
        )
    }
}

/// `!SINGLE`: where tables without a sharding or broadcast rule live.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawSingle {
    /// `*.*`, `ds.*`, `ds.table` (and `schema`-qualified forms on PostgreSQL).
    #[serde(default)]
    pub tables: Vec<String>,
    pub default_data_source: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBroadcast {
    #[serde(default)]
    pub tables: Vec<String>,
}

/// `!TRANSACTION`, ShardingSphere 5's global transaction rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RawTransaction {
    pub default_type: Option<String>,
    /// ShardingSphere's XA library (Atomikos, Narayana): accepted so its files load; Keyshard
    /// is its own transaction manager.
    #[serde(rename = "providerType")]
    pub _provider_type: Option<IgnoredAny>,
    /// The provider's settings, ignored with it.
    #[serde(rename = "props")]
    pub _props: Option<IgnoredAny>,
}
