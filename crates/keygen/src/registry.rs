use std::collections::BTreeMap;
use std::sync::Arc;

use crate::{
    KeyGenError, KeyGenerator, Props, SegmentGenerator, SnowflakeGenerator, UuidGenerator,
    WorkerLease,
};

/// The generator types [`build`] knows, as written in configuration.
pub const SUPPORTED_TYPES: &[&str] = &["SNOWFLAKE", "UUID", "LEAF_SEGMENT", "LEAF_SNOWFLAKE"];

/// A built generator, by kind: the coordination layer drives the SNOWFLAKE-style ones (worker
/// id leases) and the segment ones (segment fetches); statements see them all as
/// [`KeyGenerator`]s.
#[derive(Debug, Clone)]
pub enum Built {
    /// SNOWFLAKE or LEAF_SNOWFLAKE.
    Snowflake(Arc<SnowflakeGenerator>),
    /// UUID.
    Uuid(Arc<UuidGenerator>),
    /// LEAF_SEGMENT.
    Segment(Arc<SegmentGenerator>),
}

impl Built {
    /// The generator as statements use it.
    pub fn generator(&self) -> Arc<dyn KeyGenerator> {
        match self {
            Built::Snowflake(g) => g.clone(),
            Built::Uuid(g) => g.clone(),
            Built::Segment(g) => g.clone(),
        }
    }
}

/// Builds a generator from its configured type (case-insensitive) and properties.
///
/// With a `lease`, SNOWFLAKE takes its worker id from it (a configured `worker-id` becomes the
/// id the lease asks for); without one, SNOWFLAKE uses the configured `worker-id` as is, which is
/// only safe for keys that are never stored, and LEAF_SNOWFLAKE cannot be built.
pub fn build(
    type_name: &str,
    props: &Props,
    lease: Option<&Arc<WorkerLease>>,
) -> Result<Built, KeyGenError> {
    match type_name.to_ascii_uppercase().as_str() {
        "SNOWFLAKE" => Ok(Built::Snowflake(Arc::new(match lease {
            Some(lease) => SnowflakeGenerator::leased(props, lease.clone())?,
            None => SnowflakeGenerator::from_props(props)?,
        }))),
        "LEAF_SNOWFLAKE" => match lease {
            Some(lease) => Ok(Built::Snowflake(Arc::new(SnowflakeGenerator::leaf(
                props,
                lease.clone(),
            )?))),
            None => Err(KeyGenError::NeedsCoordination("LEAF_SNOWFLAKE")),
        },
        "UUID" => Ok(Built::Uuid(Arc::new(UuidGenerator::from_props(props)?))),
        "LEAF_SEGMENT" => Ok(Built::Segment(Arc::new(SegmentGenerator::from_props(
            props,
        )?))),
        _ => Err(KeyGenError::UnknownType {
            name: type_name.to_owned(),
            supported: SUPPORTED_TYPES.join(", "),
        }),
    }
}

/// A generator as configured: its type and properties as written, and what was built.
#[derive(Debug, Clone)]
pub struct Configured {
    /// The type, upper-cased (`SNOWFLAKE`).
    pub type_name: String,
    /// The properties as configured (after `${ENV}` substitution).
    pub props: Props,
    /// The generator.
    pub built: Built,
}

/// The process-wide generators, one instance per configured name, and the worker-id lease
/// their SNOWFLAKE-style generators share.
#[derive(Debug, Default, Clone)]
pub struct Registry {
    generators: BTreeMap<String, Configured>,
    lease: Arc<WorkerLease>,
}

impl Registry {
    /// An empty registry with a lease not yet granted.
    pub fn new() -> Self {
        Self::default()
    }

    /// The worker-id lease shared by this registry's SNOWFLAKE and LEAF_SNOWFLAKE generators.
    pub fn lease(&self) -> &Arc<WorkerLease> {
        &self.lease
    }

    /// Builds a generator on this registry's lease and registers it under `name`, replacing
    /// any earlier one of that name.
    pub fn build(
        &mut self,
        name: impl Into<String>,
        type_name: &str,
        props: Props,
    ) -> Result<&Configured, KeyGenError> {
        let built = build(type_name, &props, Some(&self.lease))?;
        let name = name.into();
        // One worker id and one sequence for all of them: their keys stay apart only if they
        // lay them out alike.
        let others = self
            .generators
            .iter()
            .filter(|(other, _)| **other != name)
            .find_map(|(_, c)| match &c.built {
                Built::Snowflake(g) => Some(g.layout()),
                _ => None,
            });
        if let (Built::Snowflake(new), Some(layout)) = (&built, others)
            && new.layout() != layout
        {
            return Err(KeyGenError::InvalidProperty {
                name: format!("{name}.props"),
                value: new.layout().to_string(),
                expected: format!(
                    "the key layout of this instance's other SNOWFLAKE generators ({layout}): \
                     they share one worker id and sequence"
                ),
            });
        }
        self.generators.insert(
            name.clone(),
            Configured {
                type_name: type_name.to_ascii_uppercase(),
                props,
                built,
            },
        );
        Ok(&self.generators[&name])
    }

    /// The key layout of the SNOWFLAKE-style generators, when there are any (they all share
    /// one).
    pub fn layout(&self) -> Option<crate::snowflake::Layout> {
        self.generators.values().find_map(|c| match &c.built {
            Built::Snowflake(g) => Some(g.layout()),
            _ => None,
        })
    }

    /// The generator configured as `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn KeyGenerator>> {
        self.generators.get(name).map(|c| c.built.generator())
    }

    /// The configured generators by name, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Configured)> {
        self.generators.iter().map(|(n, c)| (n.as_str(), c))
    }

    /// The configured names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.generators.keys().map(String::as_str)
    }

    /// Whether any generator needs a coordination repository: all but UUID do (a worker id,
    /// or segments).
    pub fn needs_repository(&self) -> bool {
        self.generators
            .values()
            .any(|c| !matches!(c.built, Built::Uuid(_)))
    }

    /// Whether any generator takes its worker id from the lease.
    pub fn needs_worker_id(&self) -> bool {
        self.generators
            .values()
            .any(|c| matches!(c.built, Built::Snowflake(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::props::props_of as props;

    fn type_of(type_name: &str, lease: Option<&Arc<WorkerLease>>) -> &'static str {
        build(type_name, &Props::new(), lease)
            .unwrap()
            .generator()
            .type_name()
    }

    #[test]
    fn builds_known_types_case_insensitively() {
        assert_eq!(type_of("snowflake", None), "SNOWFLAKE");
        assert_eq!(type_of("UUID", None), "UUID");
    }

    #[test]
    fn unknown_type_names_what_is_supported() {
        let err = build("SNOWFLAK", &Props::new(), None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown key generator type 'SNOWFLAK' (supported: SNOWFLAKE, UUID, LEAF_SEGMENT, \
             LEAF_SNOWFLAKE)"
        );
    }

    #[test]
    fn unknown_property_names_what_is_allowed() {
        let err = build("SNOWFLAKE", &props(&[("worker_id", "1")]), None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown property 'worker_id' for SNOWFLAKE (allowed: worker-id, worker-id-fallback, \
             max-vibration-offset, max-tolerate-time-difference-milliseconds, epoch, \
             worker-id-bits, sequence-bits, gene-bits)"
        );
        let err = build("UUID", &props(&[("versoin", "7")]), None).unwrap_err();
        assert!(err.to_string().contains("'versoin'"), "{err}");
    }

    #[test]
    fn leaf_snowflake_needs_a_service_id_and_a_lease() {
        let lease = Arc::new(WorkerLease::new());
        let err = build("LEAF_SNOWFLAKE", &Props::new(), Some(&lease)).unwrap_err();
        assert!(err.to_string().contains("'service.id'"), "{err}");
        let ok = props(&[("service.id", "orders")]);
        assert_eq!(
            build("LEAF_SNOWFLAKE", &ok, Some(&lease))
                .unwrap()
                .generator()
                .type_name(),
            "LEAF_SNOWFLAKE"
        );
        assert!(matches!(
            build("LEAF_SNOWFLAKE", &ok, None),
            Err(KeyGenError::NeedsCoordination("LEAF_SNOWFLAKE"))
        ));
    }

    #[test]
    fn leaf_segment_needs_a_leaf_key_and_no_lease() {
        let err = build("LEAF_SEGMENT", &Props::new(), None).unwrap_err();
        assert!(err.to_string().contains("'leaf.key'"), "{err}");
        let built = build("leaf_segment", &props(&[("leaf.key", "orders")]), None).unwrap();
        assert!(matches!(&built, Built::Segment(g) if g.leaf_key() == "orders"));
        assert_eq!(built.generator().type_name(), "LEAF_SEGMENT");
        // No segment is buffered until the coordination layer supplies one.
        assert!(matches!(
            built.generator().next_key(),
            Err(KeyGenError::SegmentExhausted { .. })
        ));
    }

    #[test]
    fn registry_shares_one_instance_per_name_and_one_lease() {
        let mut registry = Registry::new();
        registry
            .build("snowflake", "SNOWFLAKE", Props::new())
            .unwrap();
        let a = registry.get("snowflake").unwrap();
        let b = registry.get("snowflake").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!(registry.get("other").is_none());
        assert_eq!(registry.names().collect::<Vec<_>>(), ["snowflake"]);
        assert!(registry.needs_worker_id());
        assert!(registry.needs_repository());
        // Leased: no keys until the lease is granted.
        assert_eq!(a.next_key(), Err(KeyGenError::NoLease));
    }
}
