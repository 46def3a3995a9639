//! Worker-id leases: a claim is an ephemeral reservation node, so it lives exactly as long as
//! the session that made it, and its creation zxid is the epoch.

use std::collections::HashSet;

use zookeeper_client as zk;

use super::ZooKeeperRepository;
use super::nodes::{check_name, epoch_of, parse_worker_id, zk_error};
use super::session::session_ended;
use super::store::{CAS_ATTEMPTS, contended};
use crate::{Claim, CoordinationError, Instance, WORKER_IDS};

/// What happened to an attempt to reserve one worker id.
enum Reservation {
    /// Ours: the reservation node's stat.
    Reserved(zk::Stat),
    /// Someone else's: their instance id.
    Held(String),
}

impl ZooKeeperRepository {
    /// Tries to reserve `worker_id` for `instance` by creating its ephemeral reservation node.
    async fn reserve(
        &self,
        client: &zk::Client,
        instance: &Instance,
        worker_id: u16,
    ) -> Result<Reservation, CoordinationError> {
        let path = self.reservation_path(worker_id);
        for _ in 0..CAS_ATTEMPTS {
            let created = self
                .create(
                    client,
                    &path,
                    instance.id.as_bytes(),
                    zk::CreateMode::Ephemeral,
                )
                .await?;
            match created {
                Ok(stat) => return Ok(Reservation::Reserved(stat)),
                Err(zk::Error::NodeExists) => {}
                Err(err) => return Err(zk_error(&path, err)),
            }
            let (holder, stat) = match self.call(client.get_data(&path)).await? {
                Ok(found) => found,
                // The holder let go in between: try again.
                Err(zk::Error::NoNode) => continue,
                Err(err) => return Err(zk_error(&path, err)),
            };
            if stat.ephemeral_owner != client.session_id().0 || holder != instance.id.as_bytes() {
                return Ok(Reservation::Held(
                    String::from_utf8_lossy(&holder).into_owned(),
                ));
            }
            // This very instance and session hold it already (an earlier claim never released,
            // or a create whose answer timed out): make a new node so the new claim gets a new
            // epoch and the earlier one is lost, as it would be with any other repository.
            match self.call(client.delete(&path, Some(stat.version))).await? {
                Ok(()) | Err(zk::Error::NoNode | zk::Error::BadVersion) => {}
                Err(err) => return Err(zk_error(&path, err)),
            }
        }
        Err(contended(&path))
    }

    /// Reserves the lowest id not listed as reserved.
    async fn reserve_lowest_free(
        &self,
        client: &zk::Client,
        instance: &Instance,
    ) -> Result<(u16, zk::Stat), CoordinationError> {
        let dir = self.reservation_dir();
        // Listing first spares a failed create per held id.
        let taken: HashSet<u16> = match self.call(client.list_children(&dir)).await? {
            Ok(children) => children.iter().filter_map(|c| parse_worker_id(c)).collect(),
            Err(zk::Error::NoNode) => HashSet::new(),
            Err(err) => return Err(zk_error(&dir, err)),
        };
        for worker_id in (0..WORKER_IDS).filter(|id| !taken.contains(id)) {
            if let Reservation::Reserved(stat) = self.reserve(client, instance, worker_id).await? {
                return Ok((worker_id, stat));
            }
        }
        Err(CoordinationError::NoFreeWorkerId)
    }

    pub(super) async fn claim_id(
        &self,
        instance: &Instance,
        preferred: Option<u16>,
    ) -> Result<Claim, CoordinationError> {
        check_name("instance id", &instance.id)?;
        let client = self.live_client().await?;
        let (worker_id, stat) = match preferred {
            Some(worker_id) if worker_id >= WORKER_IDS => {
                return Err(CoordinationError::Config(format!(
                    "worker id {worker_id} is out of range 0..{WORKER_IDS}"
                )));
            }
            Some(worker_id) => match self.reserve(&client, instance, worker_id).await? {
                Reservation::Reserved(stat) => (worker_id, stat),
                Reservation::Held(holder) => {
                    // The holder's address and its session's expiry are not recorded.
                    return Err(CoordinationError::WorkerIdHeld {
                        worker_id,
                        holder,
                        address: None,
                        expires_in: None,
                    });
                }
            },
            None => self.reserve_lowest_free(&client, instance).await?,
        };
        match self
            .complete_claim(&client, instance, worker_id, &stat)
            .await
        {
            Ok(claim) => Ok(claim),
            Err(err) => {
                // Our session outlives this failure: left alone, the reservation would keep
                // the id from everyone for as long as the process runs.
                self.abandon(&client, worker_id, &stat).await;
                Err(err)
            }
        }
    }

    /// Reads the high-water mark and publishes the compute node of a fresh reservation.
    async fn complete_claim(
        &self,
        client: &zk::Client,
        instance: &Instance,
        worker_id: u16,
        stat: &zk::Stat,
    ) -> Result<Claim, CoordinationError> {
        let epoch = epoch_of(&self.reservation_path(worker_id), stat)?;
        // Read after reserving: a previous holder writes its mark before it lets go, and a
        // dead one's session can no longer write, so the mark is final now.
        let high_water_millis = self
            .read_number(client, &self.high_water_path(worker_id))
            .await?
            .map_or(0, |(value, _)| value);
        self.publish_compute_node(client, instance, worker_id)
            .await?;
        Ok(Claim {
            worker_id,
            epoch,
            high_water_millis,
        })
    }

    /// Best-effort removal of a reservation this session just made.
    async fn abandon(&self, client: &zk::Client, worker_id: u16, stat: &zk::Stat) {
        let path = self.reservation_path(worker_id);
        let deleted = match self.call(client.delete(&path, Some(stat.version))).await {
            Ok(answer) => answer.map_err(|err| zk_error(&path, err)),
            Err(err) => Err(err),
        };
        if let Err(err) = deleted {
            tracing::warn!(%err, "could not give back worker id {worker_id} after a failed claim");
        }
    }

    /// The stat of `claim`'s reservation node if this session still holds it, else
    /// [`CoordinationError::LeaseLost`]. The answer also proves the session alive.
    async fn verify_holding(
        &self,
        client: &zk::Client,
        claim: &Claim,
    ) -> Result<zk::Stat, CoordinationError> {
        let path = self.reservation_path(claim.worker_id);
        match self.call(client.check_stat(&path)).await? {
            // The node is ours only if both its creation (the epoch) and its owner (our
            // session) match: a new session's node, even this instance's, is another claim.
            Ok(Some(stat))
                if epoch_of(&path, &stat).ok() == Some(claim.epoch)
                    && stat.ephemeral_owner == client.session_id().0 =>
            {
                Ok(stat)
            }
            Ok(_) | Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => Err(lost(claim)),
            Err(err) => Err(zk_error(&path, err)),
        }
    }

    pub(super) async fn renew_claim(
        &self,
        client: &zk::Client,
        claim: &Claim,
        reserve_millis: i64,
    ) -> Result<(), CoordinationError> {
        self.verify_holding(client, claim).await?;
        // Writes of this session succeed only while it lives, and while it lives its
        // reservation does too: nobody else can have claimed the id in between.
        let path = self.high_water_path(claim.worker_id);
        self.update_number(client, &path, |stored| {
            Ok(stored.map_or(reserve_millis, |stored| stored.max(reserve_millis)))
        })
        .await?;
        Ok(())
    }

    pub(super) async fn release_claim(
        &self,
        client: &zk::Client,
        instance: &Instance,
        claim: &Claim,
        high_water_millis: i64,
    ) -> Result<(), CoordinationError> {
        // A lost claim leaves the compute node alone: it went with the session that held the
        // claim, or it belongs to a newer claim of this instance.
        let stat = self.verify_holding(client, claim).await?;
        // The caller has stopped generating, so the mark may drop back from what renewals
        // reserved ahead, but never below what the id had before this claim.
        let mark = claim.high_water_millis.max(high_water_millis);
        let path = self.high_water_path(claim.worker_id);
        self.update_number(client, &path, |_| Ok(mark)).await?;
        self.delete_compute_node(client, instance).await?;
        let path = self.reservation_path(claim.worker_id);
        match self.call(client.delete(&path, Some(stat.version))).await? {
            Ok(()) => Ok(()),
            Err(zk::Error::NoNode | zk::Error::BadVersion) => Err(lost(claim)),
            Err(err) => Err(zk_error(&path, err)),
        }
    }
}

/// Turns a failure into [`CoordinationError::LeaseLost`] when the session holding `claim` has
/// ended: its ephemerals, the reservation among them, are gone with it.
pub(super) fn lost_if_session_ended(
    client: &zk::Client,
    claim: &Claim,
    result: Result<(), CoordinationError>,
) -> Result<(), CoordinationError> {
    match result {
        Err(CoordinationError::ZooKeeper(_)) if session_ended(client.state()) => Err(lost(claim)),
        other => other,
    }
}

fn lost(claim: &Claim) -> CoordinationError {
    CoordinationError::LeaseLost {
        worker_id: claim.worker_id,
        epoch: claim.epoch,
    }
}
