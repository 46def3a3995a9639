//! ShardingSphere's compute nodes: each instance's worker id, published beside its
//! reservation so that ShardingSphere proxies sharing the namespace see Keyshard's instances.

use zookeeper_client as zk;

use super::ZooKeeperRepository;
use super::nodes::{epoch_of, parse_worker_id, zk_error};
use crate::{ComputeNode, CoordinationError, Instance};

impl ZooKeeperRepository {
    /// Writes ShardingSphere's compute node: the instance's worker id, ephemeral.
    pub(super) async fn publish_compute_node(
        &self,
        client: &zk::Client,
        instance: &Instance,
        worker_id: u16,
    ) -> Result<(), CoordinationError> {
        let path = self.compute_node_path(&instance.id);
        let data = worker_id.to_string();
        let mode = zk::CreateMode::Ephemeral;
        match self.create(client, &path, data.as_bytes(), mode).await? {
            Ok(_) => return Ok(()),
            Err(zk::Error::NodeExists) => {}
            Err(err) => return Err(zk_error(&path, err)),
        }
        // Left by an earlier claim of this instance: replace it rather than set it, so that it
        // belongs to the session holding the reservation.
        match self.call(client.delete(&path, None)).await? {
            Ok(()) | Err(zk::Error::NoNode) => {}
            Err(err) => return Err(zk_error(&path, err)),
        }
        self.create(client, &path, data.as_bytes(), mode)
            .await?
            .map(|_| ())
            .map_err(|err| zk_error(&path, err))
    }

    pub(super) async fn delete_compute_node(
        &self,
        client: &zk::Client,
        instance: &Instance,
    ) -> Result<(), CoordinationError> {
        let path = self.compute_node_path(&instance.id);
        match self.call(client.delete(&path, None)).await? {
            Ok(()) | Err(zk::Error::NoNode) => Ok(()),
            Err(err) => Err(zk_error(&path, err)),
        }
    }

    pub(super) async fn list_compute_nodes(&self) -> Result<Vec<ComputeNode>, CoordinationError> {
        let client = self.live_client().await?;
        let dir = self.reservation_dir();
        let children = match self.call(client.list_children(&dir)).await? {
            Ok(children) => children,
            Err(zk::Error::NoNode) => return Ok(Vec::new()),
            Err(err) => return Err(zk_error(&dir, err)),
        };
        let ids: Vec<u16> = children.iter().filter_map(|c| parse_worker_id(c)).collect();
        // One round trip for all holders rather than one per id.
        let mut reader = client.new_multi_reader();
        for &worker_id in &ids {
            let path = self.reservation_path(worker_id);
            reader
                .add_get_data(&path)
                .map_err(|err| zk_error(&path, err))?;
        }
        let results = self
            .call(reader.commit())
            .await?
            .map_err(|err| zk_error(&dir, err))?;
        let mut nodes = Vec::with_capacity(ids.len());
        for (worker_id, result) in ids.into_iter().zip(results) {
            let path = self.reservation_path(worker_id);
            match result {
                zk::MultiReadResult::Data { data, stat } => nodes.push(ComputeNode {
                    instance_id: String::from_utf8_lossy(&data).into_owned(),
                    worker_id,
                    epoch: epoch_of(&path, &stat)?,
                    expires_at_millis: None,
                }),
                // Released since the listing.
                zk::MultiReadResult::Error {
                    err: zk::Error::NoNode,
                } => {}
                zk::MultiReadResult::Error { err } => return Err(zk_error(&path, err)),
                other => {
                    return Err(CoordinationError::ZooKeeper(format!(
                        "{path}: unexpected answer {other:?}"
                    )));
                }
            }
        }
        nodes.sort_by_key(|node| node.worker_id);
        Ok(nodes)
    }
}
