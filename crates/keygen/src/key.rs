use std::fmt;

use keyshard_types::Value;

/// A generated key: an integer (SNOWFLAKE, segments) or text (UUID).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// A 64-bit signed integer key.
    Int(i64),
    /// A text key.
    Text(String),
}

impl Key {
    /// The integer value, when this is an integer key.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Key::Int(v) => Some(*v),
            Key::Text(_) => None,
        }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Int(v) => write!(f, "{v}"),
            Key::Text(s) => f.write_str(s),
        }
    }
}

impl From<Key> for Value {
    fn from(key: Key) -> Self {
        match key {
            Key::Int(v) => Value::Int(v),
            Key::Text(s) => Value::Text(s),
        }
    }
}

impl From<&Key> for Value {
    fn from(key: &Key) -> Self {
        key.clone().into()
    }
}
