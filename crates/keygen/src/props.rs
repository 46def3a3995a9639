use std::collections::BTreeMap;
use std::str::FromStr;

use crate::KeyGenError;

/// Generator properties as configured, as ShardingSphere's `props:` (name → text value).
pub type Props = BTreeMap<String, String>;

/// Properties from `name, value` pairs, for tests.
#[cfg(test)]
pub(crate) fn props_of(pairs: &[(&str, &str)]) -> Props {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Rejects any property not in `allowed`, naming it and what is allowed.
pub(crate) fn check_known(
    generator: &'static str,
    props: &Props,
    allowed: &[&str],
) -> Result<(), KeyGenError> {
    match props.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(name) => Err(KeyGenError::UnknownProperty {
            generator,
            name: name.clone(),
            allowed: if allowed.is_empty() {
                "none".to_owned()
            } else {
                allowed.join(", ")
            },
        }),
        None => Ok(()),
    }
}

/// Reads an integer property within `min..=max`, or `default` when it is not set.
pub(crate) fn int_in_range<T>(
    props: &Props,
    name: &str,
    default: T,
    min: T,
    max: T,
) -> Result<T, KeyGenError>
where
    T: FromStr + PartialOrd + Copy + std::fmt::Display,
{
    let Some(raw) = props.get(name) else {
        return Ok(default);
    };
    match raw.trim().parse::<T>() {
        Ok(v) if v >= min && v <= max => Ok(v),
        _ => Err(KeyGenError::InvalidProperty {
            name: name.to_owned(),
            value: raw.clone(),
            expected: format!("an integer from {min} to {max}"),
        }),
    }
}
