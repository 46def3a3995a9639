//! Where a database's replication stream stands: a PostgreSQL WAL location, or a MariaDB GTID
//! position (the last sequence number of each replication domain); and what a session knows
//! of where its last write left a primary.

use std::time::Instant;

/// A point in a primary's history of commits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Position {
    /// PostgreSQL's WAL location (`pg_current_wal_lsn()`, `pg_last_wal_replay_lsn()`).
    Lsn(u64),
    /// MariaDB's GTID position (`@@gtid_binlog_pos`, `@@gtid_slave_pos`): by domain, its
    /// last transaction's (domain, sequence number, server id), sorted by domain.
    Gtids(Vec<(u32, u64, u32)>),
}

impl Position {
    /// `X/Y`, two hexadecimal halves.
    pub(crate) fn lsn(text: &str) -> Option<Self> {
        let (high, low) = text.trim().split_once('/')?;
        let high = u64::from_str_radix(high, 16).ok()?;
        let low = u64::from_str_radix(low, 16).ok()?;
        (high <= u64::from(u32::MAX) && low <= u64::from(u32::MAX))
            .then_some(Position::Lsn(high << 32 | low))
    }

    /// `domain-server-sequence[,…]`; empty: nothing replicated yet.
    pub(crate) fn gtids(text: &str) -> Option<Self> {
        let mut domains = Vec::new();
        for gtid in text.split(',').map(str::trim).filter(|g| !g.is_empty()) {
            let mut parts = gtid.split('-');
            let (Some(domain), Some(server), Some(sequence), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return None;
            };
            let (domain, server) = (domain.parse().ok()?, server.parse().ok()?);
            domains.push((domain, sequence.parse().ok()?, server));
        }
        domains.sort_unstable();
        domains.dedup_by_key(|(domain, _, _)| *domain);
        Some(Position::Gtids(domains))
    }

    /// Whether a replica that has applied up to `self` has applied everything up to
    /// `required` (positions of different kinds never cover each other).
    pub(crate) fn covers(&self, required: &Position) -> bool {
        match (self, required) {
            (Position::Lsn(applied), Position::Lsn(required)) => applied >= required,
            (Position::Gtids(applied), Position::Gtids(required)) => {
                required.iter().all(|(domain, sequence, _)| {
                    applied.iter().any(|(d, s, _)| d == domain && s >= sequence)
                })
            }
            _ => false,
        }
    }
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Position::Lsn(lsn) => write!(f, "{:X}/{:X}", lsn >> 32, lsn & 0xFFFF_FFFF),
            Position::Gtids(domains) => {
                for (i, (domain, sequence, server)) in domains.iter().enumerate() {
                    let comma = if i == 0 { "" } else { "," };
                    write!(f, "{comma}{domain}-{server}-{sequence}")?;
                }
                Ok(())
            }
        }
    }
}

/// What a session knows of its last write to a group's primary.
#[derive(Debug, Clone)]
pub(crate) enum Written {
    /// Its statement there ended at this moment.
    Since(Instant),
    /// ... and the primary's position then was at most this.
    At(Position),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wal_locations_compare_as_numbers() {
        let a = Position::lsn("0/3016038").unwrap();
        let b = Position::lsn("1/0").unwrap();
        assert!(b.covers(&a) && !a.covers(&b) && a.covers(&a));
        assert_eq!(a.to_string(), "0/3016038");
        for bad in ["", "3016038", "0/x", "100000000/0"] {
            assert_eq!(Position::lsn(bad), None, "{bad}");
        }
    }

    #[test]
    fn gtid_positions_compare_domain_by_domain() {
        let primary = Position::gtids("0-1-12,1-2-5").unwrap();
        let behind = Position::gtids("0-1-11, 1-2-9").unwrap();
        let ahead = Position::gtids("1-3-5,0-1-12").unwrap();
        assert!(!behind.covers(&primary));
        assert!(ahead.covers(&primary));
        // Nothing replicated yet covers only nothing written yet.
        assert_eq!(ahead.to_string(), "0-1-12,1-3-5");
        let none = Position::gtids("").unwrap();
        assert!(none.covers(&none) && !none.covers(&primary) && primary.covers(&none));
        assert!(!Position::lsn("0/1").unwrap().covers(&none));
        for bad in ["0-1", "a-1-2", "0-1-2-3"] {
            assert_eq!(Position::gtids(bad), None, "{bad}");
        }
    }
}
