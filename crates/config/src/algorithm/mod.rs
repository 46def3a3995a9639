//! Sharding algorithms built from their YAML properties, with ShardingSphere's semantics.

mod datetime;
mod interval;
mod range;

use std::collections::BTreeMap;
use std::str::FromStr;

pub use interval::{AutoInterval, Interval, Unit};
pub use range::Boundaries;

use crate::error::{ConfigError, Problem};
use crate::inline::InlineExpr;
use crate::raw::RawAlgorithm;

/// A sharding algorithm.
#[derive(Debug, Clone, PartialEq)]
pub enum Algorithm {
    /// `INLINE`: the target's name is the expression's value.
    Inline {
        /// `algorithm-expression`, with the sharding column as its only variable.
        expression: InlineExpr,
        /// `allow-range-query-with-inline-sharding`: route range conditions to every target
        /// instead of refusing them.
        allow_range_query: bool,
    },
    /// `MOD`: the target is the one whose name ends with `value % sharding_count`.
    Mod {
        /// `sharding-count`, at least 1.
        sharding_count: u64,
    },
    /// `HASH_MOD`: as `MOD`, over the absolute value of the sharding value's hash code.
    HashMod {
        /// `sharding-count`, at least 1.
        sharding_count: u64,
    },
    /// `VOLUME_RANGE` and `BOUNDARY_RANGE`: the target whose name ends with the partition an
    /// integer falls in.
    Range {
        /// Which of the two, for messages.
        kind: &'static str,
        /// Where the partitions begin.
        boundaries: Boundaries,
    },
    /// `AUTO_INTERVAL`: the target whose name ends with the number of spans of seconds a
    /// date-time is after the lower end.
    AutoInterval(AutoInterval),
    /// `INTERVAL`: the targets whose names end with the start of the interval a date-time
    /// falls in, written in the suffix pattern.
    Interval(Box<Interval>),
    /// `COMPLEX_INLINE`: as INLINE, of several columns' values at once; only a complex
    /// strategy takes it.
    ComplexInline {
        /// `algorithm-expression`, over the strategy's columns.
        expression: InlineExpr,
    },
    /// `HINT_INLINE`: as INLINE, of the statement's hint value (the variable `value`); only a
    /// hint strategy takes it.
    HintInline {
        /// `algorithm-expression`, default `${value}`.
        expression: InlineExpr,
    },
}

impl Algorithm {
    /// The configuration type name.
    pub fn type_name(&self) -> &'static str {
        match self {
            Algorithm::Inline { .. } => "INLINE",
            Algorithm::Mod { .. } => "MOD",
            Algorithm::HashMod { .. } => "HASH_MOD",
            Algorithm::Range { kind, .. } => kind,
            Algorithm::AutoInterval(_) => "AUTO_INTERVAL",
            Algorithm::Interval(_) => "INTERVAL",
            Algorithm::HintInline { .. } => "HINT_INLINE",
            Algorithm::ComplexInline { .. } => "COMPLEX_INLINE",
        }
    }
}

/// An algorithm's properties, read with errors at their YAML path.
struct Props {
    values: BTreeMap<String, String>,
    path: String,
}

impl Props {
    /// The properties of `raw` at `path`, refusing any `algorithm` does not take.
    fn of(
        raw: &RawAlgorithm,
        path: &str,
        algorithm: &'static str,
        allowed: &'static str,
    ) -> Result<Self, ConfigError> {
        let values = raw.props();
        let path = format!("{path}.props");
        if let Some(name) = values
            .keys()
            .find(|k| !allowed.split(", ").any(|a| a == k.as_str()))
        {
            return Err(ConfigError::at(
                path,
                Problem::UnknownProperty {
                    name: name.clone(),
                    algorithm,
                    allowed,
                },
            ));
        }
        Ok(Self { values, path })
    }

    fn optional(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    fn required(&self, key: &'static str) -> Result<&str, ConfigError> {
        self.optional(key)
            .ok_or_else(|| ConfigError::at(&self.path, Problem::MissingProperty(key)))
    }

    /// A number property; `None` when absent.
    fn number<T: FromStr>(
        &self,
        key: &'static str,
        expected: &'static str,
    ) -> Result<Option<T>, ConfigError> {
        self.optional(key)
            .map(|text| {
                text.trim().parse().map_err(|_| {
                    ConfigError::at(
                        format!("{}.{key}", self.path),
                        Problem::InvalidValue {
                            value: text.to_owned(),
                            expected,
                        },
                    )
                })
            })
            .transpose()
    }

    fn required_number<T: FromStr>(
        &self,
        key: &'static str,
        expected: &'static str,
    ) -> Result<T, ConfigError> {
        self.number(key, expected)?
            .ok_or_else(|| ConfigError::at(&self.path, Problem::MissingProperty(key)))
    }

    /// The algorithm's own complaint about its properties, at their path.
    fn invalid(&self, message: String) -> ConfigError {
        ConfigError::at(&self.path, Problem::InvalidAlgorithm(message))
    }
}

const INTEGER: &str = "an integer";

/// Builds the algorithm `raw` at `path` (`rules[0].shardingAlgorithms.name`).
pub(crate) fn algorithm_from(raw: &RawAlgorithm, path: &str) -> Result<Algorithm, ConfigError> {
    let kind = raw.kind.to_ascii_uppercase();
    match kind.as_str() {
        "INLINE" => {
            let props = Props::of(
                raw,
                path,
                "INLINE",
                "algorithm-expression, allow-range-query-with-inline-sharding",
            )?;
            let text = props.required("algorithm-expression")?;
            let expression = InlineExpr::parse(text)
                .map_err(|e| ConfigError::at(format!("{}.algorithm-expression", props.path), e))?;
            let allow_range_query = props
                .number("allow-range-query-with-inline-sharding", "true or false")?
                .unwrap_or(false);
            Ok(Algorithm::Inline {
                expression,
                allow_range_query,
            })
        }
        "COMPLEX_INLINE" => {
            let props = Props::of(
                raw,
                path,
                "COMPLEX_INLINE",
                "algorithm-expression, sharding-columns, allow-range-query-with-inline-sharding",
            )?;
            let text = props.required("algorithm-expression")?;
            let expression = InlineExpr::parse(text)
                .map_err(|e| ConfigError::at(format!("{}.algorithm-expression", props.path), e))?;
            Ok(Algorithm::ComplexInline { expression })
        }
        "HINT_INLINE" => {
            let props = Props::of(raw, path, "HINT_INLINE", "algorithm-expression")?;
            let text = props.optional("algorithm-expression").unwrap_or("${value}");
            let expression = InlineExpr::parse(text)
                .map_err(|e| ConfigError::at(format!("{}.algorithm-expression", props.path), e))?;
            Ok(Algorithm::HintInline { expression })
        }
        "MOD" | "HASH_MOD" => {
            let name = if kind == "MOD" { "MOD" } else { "HASH_MOD" };
            let props = Props::of(raw, path, name, "sharding-count")?;
            let sharding_count =
                props.required_number::<u64>("sharding-count", "a positive integer")?;
            if sharding_count == 0 {
                return Err(ConfigError::at(
                    format!("{}.sharding-count", props.path),
                    Problem::InvalidValue {
                        value: "0".into(),
                        expected: "a positive integer",
                    },
                ));
            }
            Ok(if name == "MOD" {
                Algorithm::Mod { sharding_count }
            } else {
                Algorithm::HashMod { sharding_count }
            })
        }
        "VOLUME_RANGE" => {
            let props = Props::of(
                raw,
                path,
                "VOLUME_RANGE",
                "range-lower, range-upper, sharding-volume",
            )?;
            let boundaries = Boundaries::volume(
                props.required_number("range-lower", INTEGER)?,
                props.required_number("range-upper", INTEGER)?,
                props.required_number("sharding-volume", INTEGER)?,
            )
            .map_err(|e| props.invalid(e))?;
            Ok(Algorithm::Range {
                kind: "VOLUME_RANGE",
                boundaries,
            })
        }
        "BOUNDARY_RANGE" => {
            let props = Props::of(raw, path, "BOUNDARY_RANGE", "sharding-ranges")?;
            let boundaries = Boundaries::boundary(props.required("sharding-ranges")?)
                .map_err(|e| props.invalid(e))?;
            Ok(Algorithm::Range {
                kind: "BOUNDARY_RANGE",
                boundaries,
            })
        }
        "AUTO_INTERVAL" => {
            let props = Props::of(
                raw,
                path,
                "AUTO_INTERVAL",
                "datetime-lower, datetime-upper, sharding-seconds",
            )?;
            AutoInterval::new(
                props.required("datetime-lower")?,
                props.required("datetime-upper")?,
                props.required_number("sharding-seconds", INTEGER)?,
            )
            .map(Algorithm::AutoInterval)
            .map_err(|e| props.invalid(e))
        }
        "INTERVAL" => {
            let props = Props::of(
                raw,
                path,
                "INTERVAL",
                "datetime-pattern, datetime-lower, datetime-upper, sharding-suffix-pattern, \
                 datetime-interval-amount, datetime-interval-unit",
            )?;
            let unit = match props.optional("datetime-interval-unit") {
                None => Unit::Days,
                Some(name) => Unit::named(name).ok_or_else(|| {
                    ConfigError::at(
                        format!("{}.datetime-interval-unit", props.path),
                        Problem::InvalidValue {
                            value: name.to_owned(),
                            expected: "a Java ChronoUnit (SECONDS, MINUTES, HOURS, DAYS, \
                                       WEEKS, MONTHS, YEARS …)",
                        },
                    )
                })?,
            };
            Interval::new(
                props.required("datetime-pattern")?,
                props.required("datetime-lower")?,
                props.optional("datetime-upper"),
                props.required("sharding-suffix-pattern")?,
                props
                    .number("datetime-interval-amount", INTEGER)?
                    .unwrap_or(1),
                unit,
            )
            .map(|interval| Algorithm::Interval(Box::new(interval)))
            .map_err(|e| props.invalid(e))
        }
        _ => Err(ConfigError::at(
            format!("{path}.type"),
            Problem::UnsupportedAlgorithm(raw.kind.clone()),
        )),
    }
}
