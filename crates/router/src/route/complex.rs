//! A complex strategy's target: its expression over several columns' values at once.

use keyshard_config::{Algorithm, Strategy};

use super::{RouteProblem, inline_value, list};
use keyshard_types::Value;

/// The one name among `targets` that a complex strategy's expression gives for the values
/// `value_of` finds for its columns.
pub(crate) fn complex_target<'t>(
    strategy: &Strategy,
    value_of: &dyn Fn(&str) -> Option<Value>,
    targets: impl Iterator<Item = &'t str> + Clone,
    scratch: &mut String,
) -> Result<&'t str, RouteProblem> {
    let Algorithm::ComplexInline { expression } = &*strategy.algorithm else {
        return Err("not a complex strategy".to_owned());
    };
    let values: Vec<(&str, Value)> = strategy
        .columns
        .iter()
        .map(|c| value_of(c).map(|v| (c.as_str(), v)))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            format!(
                "it needs a value for each of {}",
                strategy.columns.join(", ")
            )
        })?;
    let mut read = Vec::with_capacity(values.len());
    for (column, value) in &values {
        read.push((*column, inline_value(value)?));
    }
    scratch.clear();
    expression
        .evaluate_into(
            &|name| {
                read.iter()
                    .find(|(c, _)| c.eq_ignore_ascii_case(name))
                    .map(|(_, v)| *v)
            },
            scratch,
        )
        .map_err(|e| format!("{}: {e}", expression.source()))?;
    let name = scratch.as_str();
    targets
        .clone()
        .find(|t| t.eq_ignore_ascii_case(name))
        .ok_or_else(|| format!("{name} is not one of {}", list(targets)))
}
