//! A transaction's isolation level and access mode, set on every data source it touches as
//! that data source's transaction begins.

/// An isolation level, as both MySQL and PostgreSQL name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// READ UNCOMMITTED.
    ReadUncommitted,
    /// READ COMMITTED.
    ReadCommitted,
    /// REPEATABLE READ.
    RepeatableRead,
    /// SERIALIZABLE.
    Serializable,
}

impl Isolation {
    /// The level in SQL (`REPEATABLE READ`).
    pub fn sql(self) -> &'static str {
        match self {
            Self::ReadUncommitted => "READ UNCOMMITTED",
            Self::ReadCommitted => "READ COMMITTED",
            Self::RepeatableRead => "REPEATABLE READ",
            Self::Serializable => "SERIALIZABLE",
        }
    }

    /// The level a `transaction_isolation` value names (`READ-COMMITTED`, `read committed`).
    pub fn from_name(name: &str) -> Option<Self> {
        let name = name.trim().replace(['-', '_'], " ").to_ascii_lowercase();
        Some(
            match name.split_whitespace().collect::<Vec<_>>().as_slice() {
                ["read", "uncommitted"] => Self::ReadUncommitted,
                ["read", "committed"] => Self::ReadCommitted,
                ["repeatable", "read"] => Self::RepeatableRead,
                ["serializable"] => Self::Serializable,
                _ => return None,
            },
        )
    }
}

/// What `BEGIN ISOLATION LEVEL … READ ONLY` or `SET TRANSACTION …` asked for; `None` fields
/// are the data source's own defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Characteristics {
    /// The isolation level.
    pub isolation: Option<Isolation>,
    /// READ ONLY (`true`) or READ WRITE (`false`).
    pub read_only: Option<bool>,
}

impl Characteristics {
    /// These, with `other`'s where these leave one open.
    pub fn or(self, other: Self) -> Self {
        Self {
            isolation: self.isolation.or(other.isolation),
            read_only: self.read_only.or(other.read_only),
        }
    }

    /// As SQL after `SET TRANSACTION` or `BEGIN` (`ISOLATION LEVEL SERIALIZABLE, READ ONLY`);
    /// empty when there is nothing to set.
    pub(crate) fn sql(self) -> String {
        let isolation = self
            .isolation
            .map(|level| format!("ISOLATION LEVEL {}", level.sql()));
        let access = self.read_only.map(|read_only| match read_only {
            true => "READ ONLY".to_owned(),
            false => "READ WRITE".to_owned(),
        });
        [isolation, access]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_sql() {
        assert_eq!(
            Isolation::from_name("READ-COMMITTED"),
            Some(Isolation::ReadCommitted)
        );
        assert_eq!(
            Isolation::from_name(" repeatable read"),
            Some(Isolation::RepeatableRead)
        );
        assert_eq!(Isolation::from_name("snapshot"), None);
        let both = Characteristics {
            isolation: Some(Isolation::Serializable),
            read_only: Some(true),
        };
        assert_eq!(both.sql(), "ISOLATION LEVEL SERIALIZABLE, READ ONLY");
        assert_eq!(Characteristics::default().sql(), "");
        let read_only = Characteristics {
            isolation: None,
            read_only: Some(true),
        };
        assert_eq!(read_only.or(both).isolation, Some(Isolation::Serializable));
    }
}
