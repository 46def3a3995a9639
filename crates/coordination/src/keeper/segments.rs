//! LEAF_SEGMENT's segments: fetched ahead of need, each clear of the keys another repository
//! handed out into the same data sources.

use std::sync::Arc;

use keyshard_keygen::SegmentGenerator;
use tokio::sync::{Notify, watch};

use super::Shared;
use crate::{CoordinationError, FleetRecords};

/// How many segments a fetch may find taken by another repository before it gives up: each
/// moves the sequence above what the other recorded, so only a live second fleet taking
/// segments of the same sequence at the same moment gets there.
const SEGMENT_ATTEMPTS: usize = 8;

fn fleet_names(fleet: Option<&FleetRecords>) -> String {
    fleet
        .map(|f| f.data_sources().collect::<Vec<_>>().join(", "))
        .unwrap_or_default()
}

impl Shared {
    /// The next segment of `generator`'s sequence, of `size` keys, clear of every key another
    /// repository handed out into the same data sources (the sequence is moved above those
    /// first).
    pub(super) async fn fetch_segment(
        &self,
        generator: &SegmentGenerator,
        size: i64,
    ) -> Result<(i64, i64), CoordinationError> {
        let key = generator.leaf_key();
        for _ in 0..SEGMENT_ATTEMPTS {
            let (first, last) = self
                .call(
                    self.repository
                        .next_segment(key, generator.initial_value(), size),
                )
                .await?;
            let Some(fleet) = &self.settings.fleet else {
                return Ok((first, last));
            };
            let Some(above) = fleet.check_segment(self.recorder(), key, first, last).await else {
                return Ok((first, last));
            };
            tracing::warn!(
                "segment {first}..{last} of '{key}' reaches into keys another repository \
                 handed out (up to {above}) on the same data sources: moving the sequence \
                 above them"
            );
            self.call(self.repository.raise_segment(key, above)).await?;
        }
        Err(CoordinationError::Fleet {
            data_source: fleet_names(self.settings.fleet.as_deref()),
            found: format!(
                "another repository keeps taking segments of '{key}' over the same keys: use \
                 one repository for every instance (`mode.repository`)"
            ),
        })
    }

    /// Fetches the next segment whenever the generator asks (once 10 % of the current one is
    /// used), so statements never wait for the repository in steady state; and a segment
    /// sized to a statement larger than the step when one waits for it.
    pub(super) async fn keep_segments(
        self: Arc<Self>,
        generator: Arc<SegmentGenerator>,
        mut stopped: watch::Receiver<bool>,
    ) {
        let wanted = Arc::new(Notify::new());
        let notify = Arc::clone(&wanted);
        generator.set_fetcher(move || notify.notify_one());
        loop {
            let sized = generator.wants_sized();
            if sized.is_none() && !generator.wants_segment() {
                tokio::select! {
                    _ = stopped.changed() => return,
                    () = wanted.notified() => continue,
                }
            }
            let size = sized.unwrap_or(generator.step());
            match self.fetch_segment(&generator, size).await {
                Ok((first, last)) if sized.is_some() => generator.supply_sized(first, last),
                Ok((first, last)) => generator.supply(first, last),
                Err(e) => {
                    tracing::warn!(
                        "coordination: fetching a segment of '{}': {e}",
                        generator.leaf_key()
                    );
                    tokio::select! {
                        _ = stopped.changed() => return,
                        () = tokio::time::sleep(self.settings.retry_interval) => {}
                    }
                }
            }
        }
    }
}
