use std::collections::BTreeMap;
use std::sync::Arc;

use crate::{KeyGenError, KeyGenerator, Props, SnowflakeGenerator, UuidGenerator};

/// The generator types [`build`] knows, as written in configuration.
pub const SUPPORTED_TYPES: &[&str] = &["SNOWFLAKE", "UUID"];

/// Builds a generator from its configured type (case-insensitive) and properties.
pub fn build(type_name: &str, props: &Props) -> Result<Arc<dyn KeyGenerator>, KeyGenError> {
    match type_name.to_ascii_uppercase().as_str() {
        "SNOWFLAKE" => Ok(Arc::new(SnowflakeGenerator::from_props(props)?)),
        "UUID" => Ok(Arc::new(UuidGenerator::from_props(props)?)),
        _ => Err(KeyGenError::UnknownType {
            name: type_name.to_owned(),
            supported: SUPPORTED_TYPES.join(", "),
        }),
    }
}

/// The process-wide generators, one instance per configured name.
#[derive(Debug, Default, Clone)]
pub struct Registry {
    generators: BTreeMap<String, Arc<dyn KeyGenerator>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `generator` under `name`, replacing any earlier one of that name.
    pub fn insert(&mut self, name: impl Into<String>, generator: Arc<dyn KeyGenerator>) {
        self.generators.insert(name.into(), generator);
    }

    /// The generator configured as `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn KeyGenerator>> {
        self.generators.get(name)
    }

    /// The configured names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.generators.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Props {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn builds_known_types_case_insensitively() {
        assert_eq!(
            build("snowflake", &Props::new()).unwrap().type_name(),
            "SNOWFLAKE"
        );
        assert_eq!(build("UUID", &Props::new()).unwrap().type_name(), "UUID");
    }

    #[test]
    fn unknown_type_names_what_is_supported() {
        let err = build("SNOWFLAK", &Props::new()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown key generator type 'SNOWFLAK' (supported: SNOWFLAKE, UUID)"
        );
    }

    #[test]
    fn unknown_property_names_what_is_allowed() {
        let err = build("SNOWFLAKE", &props(&[("worker_id", "1")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown property 'worker_id' for SNOWFLAKE (allowed: worker-id, max-vibration-offset, \
             max-tolerate-time-difference-milliseconds)"
        );
        let err = build("UUID", &props(&[("versoin", "7")])).unwrap_err();
        assert!(err.to_string().contains("'versoin'"), "{err}");
    }

    #[test]
    fn registry_shares_one_instance_per_name() {
        let mut registry = Registry::new();
        registry.insert("snowflake", build("SNOWFLAKE", &Props::new()).unwrap());
        let a = registry.get("snowflake").unwrap();
        let b = registry.get("snowflake").unwrap();
        assert!(Arc::ptr_eq(a, b));
        assert!(registry.get("other").is_none());
        assert_eq!(registry.names().collect::<Vec<_>>(), ["snowflake"]);
    }
}
