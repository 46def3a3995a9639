//! Segments and service times: numbers every instance moves forward together, by
//! compare-and-set; and the servers' clock.

use zookeeper_client as zk;

use super::ZooKeeperRepository;
use super::nodes::check_name;
use crate::CoordinationError;

impl ZooKeeperRepository {
    pub(super) async fn take_segment(
        &self,
        key: &str,
        initial: i64,
        step: i64,
    ) -> Result<(i64, i64), CoordinationError> {
        check_name("segment key", key)?;
        if step < 1 {
            return Err(CoordinationError::Config(format!(
                "segment step must be positive, not {step}"
            )));
        }
        let client = self.live_client().await?;
        let path = self.segment_path(key);
        let (previous, last) = self
            .update_number(&client, &path, |stored| {
                match stored {
                    None => initial.checked_add(step - 1),
                    Some(last) => last.checked_add(step),
                }
                .ok_or_else(|| {
                    CoordinationError::Corrupt(format!("{path}: sequence '{key}' is exhausted"))
                })
            })
            .await?;
        // `last` did not overflow, and it is at least `previous + 1`.
        let first = previous.map_or(initial, |previous| previous + 1);
        Ok((first, last))
    }

    pub(super) async fn raise_sequence(
        &self,
        key: &str,
        at_least: i64,
    ) -> Result<(), CoordinationError> {
        check_name("segment key", key)?;
        let client = self.live_client().await?;
        let path = self.segment_path(key);
        self.update_number(&client, &path, |stored| {
            Ok(stored.map_or(at_least, |last| last.max(at_least)))
        })
        .await?;
        Ok(())
    }

    /// The ZooKeeper servers' clock: the modification time of a node written now.
    pub(super) async fn server_clock(&self) -> Result<i64, CoordinationError> {
        let client = self.live_client().await?;
        let path = self.clock_path();
        let written = match self.call(client.set_data(&path, b"", None)).await? {
            Err(zk::Error::NoNode) => {
                self.create(&client, &path, b"", zk::CreateMode::Persistent)
                    .await?
            }
            other => other,
        };
        written
            .map(|stat| stat.mtime)
            .map_err(|err| super::nodes::zk_error(&path, err))
    }

    pub(super) async fn read_service_time(
        &self,
        service: &str,
    ) -> Result<Option<i64>, CoordinationError> {
        check_name("service id", service)?;
        let client = self.live_client().await?;
        let path = self.service_time_path(service);
        Ok(self
            .read_number(&client, &path)
            .await?
            .map(|(value, _)| value))
    }

    pub(super) async fn write_service_time(
        &self,
        service: &str,
        millis: i64,
    ) -> Result<(), CoordinationError> {
        check_name("service id", service)?;
        let client = self.live_client().await?;
        let path = self.service_time_path(service);
        self.update_number(&client, &path, |stored| {
            Ok(stored.map_or(millis, |stored| stored.max(millis)))
        })
        .await?;
        Ok(())
    }
}
