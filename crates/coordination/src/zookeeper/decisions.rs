//! Two-phase commit decisions: one persistent node per transaction, whose creation decides.

use zookeeper_client as zk;

use super::ZooKeeperRepository;
use super::nodes::{check_name, zk_error};
use crate::CoordinationError;

impl ZooKeeperRepository {
    fn decision_path(&self, gtrid: &str) -> String {
        format!("{}/keyshard/xa_decision/{gtrid}", self.root)
    }

    /// The node's creation is the arbiter: whoever creates it first decides.
    pub(super) async fn decide_outcome(
        &self,
        gtrid: &str,
        commit: bool,
    ) -> Result<bool, CoordinationError> {
        check_name("transaction id", gtrid)?;
        let client = self.live_client().await?;
        let path = self.decision_path(gtrid);
        let data: &[u8] = if commit { b"commit" } else { b"abort" };
        match self
            .create(&client, &path, data, zk::CreateMode::Persistent)
            .await?
        {
            Ok(_) => return Ok(commit),
            Err(zk::Error::NodeExists) => {}
            Err(err) => return Err(zk_error(&path, err)),
        }
        match self.call(client.get_data(&path)).await? {
            Ok((data, _)) => match data.as_slice() {
                b"commit" => Ok(true),
                b"abort" => Ok(false),
                _ => Err(CoordinationError::Corrupt(format!("{path} holds {data:?}"))),
            },
            Err(err) => Err(zk_error(&path, err)),
        }
    }

    pub(super) async fn forget_decisions(
        &self,
        gtrids: &[String],
    ) -> Result<(), CoordinationError> {
        let client = self.live_client().await?;
        for gtrid in gtrids {
            check_name("transaction id", gtrid)?;
            let path = self.decision_path(gtrid);
            match self.call(client.delete(&path, None)).await? {
                Ok(()) | Err(zk::Error::NoNode) => {}
                Err(err) => return Err(zk_error(&path, err)),
            }
        }
        Ok(())
    }
}
