//! YAML values read as ShardingSphere reads them, wherever they appear: a scalar of any type
//! as its text, and a mapping in the order it is written.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// A YAML scalar of any type read as its text: `worker-id: 1` and `password: 123456` are
/// numbers to YAML but strings to ShardingSphere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scalar(pub String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ScalarVisitor;
        impl Visitor<'_> for ScalarVisitor {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, number or boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar(v.to_owned()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
        }
        deserializer.deserialize_any(ScalarVisitor)
    }
}
/// A YAML mapping kept in the order it is written: ShardingSphere spreads an auto table with no
/// `actualDataSources` over the data sources in the order they are configured.
#[derive(Debug)]
pub(crate) struct InOrder<V>(pub Vec<(String, V)>);

impl<V> Default for InOrder<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for InOrder<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Entries<V> {
            type Value = InOrder<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping of names")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<InOrder<V>, A::Error> {
                let mut entries: Vec<(String, V)> = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, V>()? {
                    if entries.iter().any(|(n, _)| *n == name) {
                        return Err(serde::de::Error::custom(format!("'{name}' is given twice")));
                    }
                    entries.push((name, value));
                }
                Ok(InOrder(entries))
            }
        }
        deserializer.deserialize_map(Entries(std::marker::PhantomData))
    }
}
