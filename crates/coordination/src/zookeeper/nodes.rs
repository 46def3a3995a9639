//! Node names and values: how numbers, worker ids and paths are written in the registry.

use std::time::Duration;

use zookeeper_client as zk;

use super::ZooKeeperRepository;
use crate::{CoordinationError, WORKER_IDS};

// The layout the module docs describe, kept in one place so that it reads as one map.
impl ZooKeeperRepository {
    pub(super) fn reservation_dir(&self) -> String {
        format!("{}/reservation/worker_id", self.root)
    }

    pub(super) fn reservation_path(&self, worker_id: u16) -> String {
        format!("{}/{worker_id}", self.reservation_dir())
    }

    pub(super) fn compute_node_path(&self, instance_id: &str) -> String {
        format!("{}/nodes/compute_nodes/worker_id/{instance_id}", self.root)
    }

    pub(super) fn high_water_path(&self, worker_id: u16) -> String {
        format!("{}/keyshard/worker_id_hwm/{worker_id}", self.root)
    }

    pub(super) fn segment_path(&self, key: &str) -> String {
        format!("{}/keyshard/segment/{key}", self.root)
    }

    pub(super) fn clock_path(&self) -> String {
        format!("{}/keyshard/clock", self.root)
    }

    pub(super) fn identity_path(&self) -> String {
        format!("{}/keyshard/repository_id", self.root)
    }

    pub(super) fn service_time_path(&self, service: &str) -> String {
        format!("{}/keyshard/service_time/{service}", self.root)
    }
}

pub(super) fn zk_error(path: &str, err: zk::Error) -> CoordinationError {
    CoordinationError::ZooKeeper(format!("{path}: {err}"))
}

pub(super) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The epoch of a reservation: its creation zxid, which only grows.
pub(super) fn epoch_of(path: &str, stat: &zk::Stat) -> Result<u64, CoordinationError> {
    u64::try_from(stat.czxid)
        .map_err(|_| CoordinationError::Corrupt(format!("{path}: creation zxid {}", stat.czxid)))
}

pub(super) fn parse_number(path: &str, data: &[u8]) -> Result<i64, CoordinationError> {
    std::str::from_utf8(data)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .ok_or_else(|| {
            CoordinationError::Corrupt(format!(
                "{path} holds '{}', not a decimal number",
                String::from_utf8_lossy(data)
            ))
        })
}

/// A reservation node's name as a worker id; `None` for anything else found there.
pub(super) fn parse_worker_id(name: &str) -> Option<u16> {
    name.parse().ok().filter(|id| *id < WORKER_IDS)
}

pub(super) fn parent_of(path: &str) -> &str {
    path.rfind('/').map_or(path, |slash| &path[..slash])
}

/// Rejects names that cannot be one path segment.
pub(super) fn check_name(what: &str, name: &str) -> Result<(), CoordinationError> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(CoordinationError::Config(format!(
            "{what} '{name}' cannot name a ZooKeeper node: it must be non-empty, without '/'"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(check_name("key", "order_id").is_ok());
        for bad in ["", "a/b", "/", ".", ".."] {
            assert!(matches!(
                check_name("key", bad),
                Err(CoordinationError::Config(_))
            ));
        }
    }

    #[test]
    fn numbers_parse_or_are_corrupt() {
        assert_eq!(parse_number("/p", b"42").ok(), Some(42));
        assert_eq!(parse_number("/p", b" -7\n").ok(), Some(-7));
        assert!(matches!(
            parse_number("/p", b"x"),
            Err(CoordinationError::Corrupt(_))
        ));
    }

    #[test]
    fn worker_ids_parse_within_range() {
        assert_eq!(parse_worker_id("0"), Some(0));
        assert_eq!(parse_worker_id("1023"), Some(1023));
        assert_eq!(parse_worker_id("1024"), None);
        assert_eq!(parse_worker_id("lock"), None);
    }

    #[test]
    fn parents() {
        assert_eq!(
            parent_of("/ns/reservation/worker_id/3"),
            "/ns/reservation/worker_id"
        );
    }
}
