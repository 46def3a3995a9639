//! The node operations every record is built from: creating a node with its parents, and
//! reading and compare-and-setting a decimal number.

use zookeeper_client as zk;

use super::nodes::{parent_of, parse_number, zk_error};
use super::{Answer, ZooKeeperRepository};
use crate::CoordinationError;

/// How often a compare-and-set loop may lose a race before giving up: only a storm of
/// concurrent writers to one node gets there, and the caller can retry later.
pub(super) const CAS_ATTEMPTS: usize = 64;

/// A compare-and-set on `path` that kept losing races.
pub(super) fn contended(path: &str) -> CoordinationError {
    CoordinationError::ZooKeeper(format!(
        "{path}: still contended after {CAS_ATTEMPTS} attempts"
    ))
}

impl ZooKeeperRepository {
    /// Creates `path`, creating missing parents as persistent nodes first.
    pub(super) async fn create(
        &self,
        client: &zk::Client,
        path: &str,
        data: &[u8],
        mode: zk::CreateMode,
    ) -> Answer<zk::Stat> {
        let options = mode.with_acls(self.acls());
        match self.call(client.create(path, data, &options)).await? {
            Err(zk::Error::NoNode) => {}
            other => return Ok(other.map(|(stat, _)| stat)),
        }
        let parent = parent_of(path);
        let directory = zk::CreateMode::Persistent.with_acls(self.acls());
        self.call(client.mkdir(parent, &directory))
            .await?
            .map_err(|err| zk_error(parent, err))?;
        Ok(self
            .call(client.create(path, data, &options))
            .await?
            .map(|(stat, _)| stat))
    }

    /// The decimal number stored at `path` with the node's stat, `None` if there is no node.
    pub(super) async fn read_number(
        &self,
        client: &zk::Client,
        path: &str,
    ) -> Result<Option<(i64, zk::Stat)>, CoordinationError> {
        match self.call(client.get_data(path)).await? {
            Ok((data, stat)) => Ok(Some((parse_number(path, &data)?, stat))),
            Err(zk::Error::NoNode) => Ok(None),
            Err(err) => Err(zk_error(path, err)),
        }
    }

    /// Replaces the number at `path` (`None`: no node yet) with `next(stored)` atomically:
    /// a versioned set that starts over when another writer got in between. Returns the
    /// number it replaced and the one now stored.
    pub(super) async fn update_number(
        &self,
        client: &zk::Client,
        path: &str,
        mut next: impl FnMut(Option<i64>) -> Result<i64, CoordinationError>,
    ) -> Result<(Option<i64>, i64), CoordinationError> {
        for _ in 0..CAS_ATTEMPTS {
            let stored = self.read_number(client, path).await?;
            let value = next(stored.as_ref().map(|(value, _)| *value))?;
            let text = value.to_string();
            let written = match stored {
                Some((old, _)) if old == value => return Ok((Some(old), value)),
                Some((_, stat)) => self
                    .call(client.set_data(path, text.as_bytes(), Some(stat.version)))
                    .await?
                    .map(|_| ()),
                None => self
                    .create(client, path, text.as_bytes(), zk::CreateMode::Persistent)
                    .await?
                    .map(|_| ()),
            };
            match written {
                Ok(()) => return Ok((stored.map(|(old, _)| old), value)),
                // Another writer changed, created or removed the node since we read it.
                Err(zk::Error::BadVersion | zk::Error::NodeExists | zk::Error::NoNode) => {}
                Err(err) => return Err(zk_error(path, err)),
            }
        }
        Err(contended(path))
    }
}
