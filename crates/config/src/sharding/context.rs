//! A rule's strategies and key generation, resolved by name against its algorithms and
//! generators: standard (one column), hint (the statement's hint value) and complex (several
//! columns) strategies, each checked to take an algorithm of its kind that reads only what the
//! strategy gives it.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use keyshard_keygen::Registry;

use crate::algorithm::Algorithm;
use crate::error::{ConfigError, Problem};
use crate::model::{COMPLEX_COLUMNS, KeyGenerateStrategy, Strategy};
use crate::raw::{RawKeyGenerateStrategy, RawSharding, RawStrategy};

/// Name lookups shared by every strategy of one rule.
pub(super) struct Context<'a> {
    pub(super) raw: &'a RawSharding,
    pub(super) algorithms: &'a BTreeMap<String, Arc<Algorithm>>,
    pub(super) key_generators: &'a Registry,
    /// Algorithms and generators configured but bad, reported already.
    pub(super) broken: &'a HashSet<&'a str>,
}

impl Context<'_> {
    /// `None` when not configured; `Some(None)` for an explicit `none`. A hint strategy shards
    /// by `hint_value` ([`HINT_DATABASE_VALUE`] or [`HINT_TABLE_VALUE`], by its level).
    pub(super) fn strategy(
        &self,
        raw: Option<&RawStrategy>,
        path: &str,
        hint_value: &str,
    ) -> Result<Option<Option<Strategy>>, ConfigError> {
        let Some(raw) = raw else {
            return Ok(None);
        };
        let mut columns = Vec::new();
        let (column, name, path) = match (&raw.standard, &raw.hint, raw.none) {
            _ if raw.complex.is_some()
                && (raw.standard.is_some() || raw.hint.is_some() || raw.none) =>
            {
                return Err(ConfigError::at(path, Problem::StrategyShape));
            }
            (None, None, false) if let Some(complex) = &raw.complex => {
                columns = complex
                    .sharding_columns
                    .split(',')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(str::to_owned)
                    .collect();
                let path = format!("{path}.complex");
                if columns.is_empty() {
                    return Err(ConfigError::at(&path, Problem::MissingShardingColumn));
                }
                (COMPLEX_COLUMNS, &complex.sharding_algorithm_name, path)
            }
            (Some(standard), None, false) => {
                let path = format!("{path}.standard");
                let column = standard
                    .sharding_column
                    .as_ref()
                    .or(self.raw.default_sharding_column.as_ref())
                    .ok_or_else(|| ConfigError::at(&path, Problem::MissingShardingColumn))?;
                (column.as_str(), &standard.sharding_algorithm_name, path)
            }
            (None, Some(hint), false) => (
                hint_value,
                &hint.sharding_algorithm_name,
                format!("{path}.hint"),
            ),
            (None, None, true) => return Ok(Some(None)),
            _ => return Err(ConfigError::at(path, Problem::StrategyShape)),
        };
        let algorithm = self.algorithms.get(name).ok_or_else(|| {
            if self.broken.contains(name.as_str()) {
                return ConfigError::already_reported();
            }
            ConfigError::at(
                format!("{path}.shardingAlgorithmName"),
                Problem::UnknownAlgorithm(name.clone()),
            )
        })?;
        // The variables its expression may read: the hint's value, the complex strategy's
        // columns, or the one column.
        let hint = [String::from("value")];
        let one = [column.to_owned()];
        let (expression, variables): (_, &[String]) =
            match (&**algorithm, raw.hint.is_some(), raw.complex.is_some()) {
                (Algorithm::HintInline { expression }, true, false) => (Some(expression), &hint),
                (Algorithm::ComplexInline { expression }, false, true) => {
                    (Some(expression), &columns)
                }
                (Algorithm::Inline { expression, .. }, false, false) => (Some(expression), &one),
                (algorithm, false, false)
                    if !matches!(
                        algorithm,
                        Algorithm::HintInline { .. } | Algorithm::ComplexInline { .. }
                    ) =>
                {
                    (None, &one)
                }
                _ => {
                    return Err(ConfigError::at(
                        format!("{path}.shardingAlgorithmName"),
                        Problem::InvalidAlgorithm(format!(
                            "'{name}' is {}: a hint strategy takes a HINT_INLINE algorithm and \
                             a complex one COMPLEX_INLINE, and only they do",
                            algorithm.type_name()
                        )),
                    ));
                }
            };
        // ShardingSphere would fail on the first row with a Groovy MissingPropertyException;
        // catching the mismatch at load time is the point of validating.
        if let Some(unknown) = expression.and_then(|e| {
            e.variables()
                .find(|v| !variables.iter().any(|c| v.eq_ignore_ascii_case(c)))
        }) {
            return Err(ConfigError::at(
                path,
                Problem::ColumnMismatch {
                    algorithm: name.clone(),
                    variable: unknown.to_owned(),
                    column: variables.join(","),
                },
            ));
        }
        Ok(Some(Some(Strategy {
            column: column.to_owned(),
            columns,
            algorithm_name: name.clone(),
            algorithm: Arc::clone(algorithm),
        })))
    }

    pub(super) fn key_generate(
        &self,
        raw: Option<&RawKeyGenerateStrategy>,
        path: &str,
    ) -> Result<Option<KeyGenerateStrategy>, ConfigError> {
        let Some(raw) = raw else {
            return Ok(None);
        };
        let generator = self
            .key_generators
            .get(&raw.key_generator_name)
            .ok_or_else(|| {
                if self.broken.contains(raw.key_generator_name.as_str()) {
                    return ConfigError::already_reported();
                }
                ConfigError::at(
                    format!("{path}.keyGeneratorName"),
                    Problem::UnknownKeyGenerator(raw.key_generator_name.clone()),
                )
            })?;
        Ok(Some(KeyGenerateStrategy {
            column: raw.column.clone(),
            generator_name: raw.key_generator_name.clone(),
            generator,
        }))
    }
}
