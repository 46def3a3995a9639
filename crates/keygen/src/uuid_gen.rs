use crate::props::{check_known, int_in_range};
use crate::{Key, KeyGenError, KeyGenerator, Props};

const PROP_VERSION: &str = "version";

/// UUID keys as ShardingSphere returns them: 32 lower-case hex digits without dashes.
///
/// Version 4 (random) by default; `version: 7` gives time-ordered UUIDv7, which keeps B-tree
/// primary-key inserts at the right edge of the index.
#[derive(Debug, Clone, Copy)]
pub struct UuidGenerator {
    time_ordered: bool,
}

impl UuidGenerator {
    /// Builds a generator from its properties: `version` (4 or 7, default 4).
    pub fn from_props(props: &Props) -> Result<Self, KeyGenError> {
        check_known("UUID", props, &[PROP_VERSION])?;
        match int_in_range(props, PROP_VERSION, 4u8, 4, 7)? {
            4 => Ok(Self {
                time_ordered: false,
            }),
            7 => Ok(Self { time_ordered: true }),
            _ => Err(KeyGenError::InvalidProperty {
                name: PROP_VERSION.to_owned(),
                value: props.get(PROP_VERSION).cloned().unwrap_or_default(),
                expected: "4 or 7".to_owned(),
            }),
        }
    }

    fn next_text(&self) -> String {
        let uuid = if self.time_ordered {
            uuid::Uuid::now_v7()
        } else {
            uuid::Uuid::new_v4()
        };
        let mut buf = [0u8; uuid::fmt::Simple::LENGTH];
        uuid.simple().encode_lower(&mut buf).to_owned()
    }
}

/// A UUIDv7's generation time (its first 48 bits: milliseconds since the Unix epoch), RFC 3339
/// in UTC; any other text is [`KeyGenError::NotAKey`].
pub fn uuid_v7_timestamp(text: &str) -> Result<String, KeyGenError> {
    let uuid = uuid::Uuid::try_parse(text.trim())
        .ok()
        .filter(|u| u.get_version_num() == 7)
        .ok_or_else(|| KeyGenError::NotAKey(text.to_owned()))?;
    let millis = (uuid.as_u128() >> 80) as u64;
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_millis(millis);
    Ok(humantime::format_rfc3339_millis(time).to_string())
}

impl KeyGenerator for UuidGenerator {
    fn type_name(&self) -> &'static str {
        "UUID"
    }

    fn next_key(&self) -> Result<Key, KeyGenError> {
        Ok(Key::Text(self.next_text()))
    }

    fn next_keys(&self, count: usize, out: &mut Vec<Key>) -> Result<(), KeyGenError> {
        out.reserve(count);
        out.extend((0..count).map(|_| Key::Text(self.next_text())));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generate(version: Option<&str>, count: usize) -> Vec<String> {
        let mut props = Props::new();
        if let Some(v) = version {
            props.insert(PROP_VERSION.to_owned(), v.to_owned());
        }
        let generator = UuidGenerator::from_props(&props).unwrap();
        let mut out = Vec::new();
        generator.next_keys(count, &mut out).unwrap();
        out.into_iter()
            .map(|k| match k {
                Key::Text(s) => s,
                Key::Int(i) => panic!("integer key {i}"),
            })
            .collect()
    }

    fn is_lower_hex_32(s: &str) -> bool {
        s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    }

    #[test]
    fn version_4_by_default() {
        let keys = generate(None, 100);
        for key in &keys {
            assert!(is_lower_hex_32(key), "{key}");
            let uuid = uuid::Uuid::parse_str(key).unwrap();
            assert_eq!(uuid.get_version_num(), 4);
        }
        let distinct: std::collections::HashSet<_> = keys.iter().collect();
        assert_eq!(distinct.len(), keys.len());
    }

    #[test]
    fn version_7_is_time_ordered() {
        let keys = generate(Some("7"), 1000);
        for key in &keys {
            assert!(is_lower_hex_32(key), "{key}");
            assert_eq!(uuid::Uuid::parse_str(key).unwrap().get_version_num(), 7);
        }
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "not increasing");
    }

    #[test]
    fn other_versions_are_rejected() {
        for bad in ["5", "1", "x", "8"] {
            let mut props = Props::new();
            props.insert(PROP_VERSION.to_owned(), bad.to_owned());
            let err = UuidGenerator::from_props(&props).unwrap_err();
            assert!(err.to_string().contains("'version'"), "{err}");
        }
    }
}
