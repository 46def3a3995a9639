//! LEAF_SNOWFLAKE's registry time check: a service's last recorded time against this clock,
//! with the repository's own clock deciding which of the two is wrong.

use keyshard_keygen::snowflake::PROP_SERVICE_ID;
use keyshard_keygen::{Built, Registry};

use super::{Shared, wall_millis};
use crate::CoordinationError;

impl Shared {
    pub(super) async fn check_service_times(&self) -> Result<(), CoordinationError> {
        for (service, tolerance) in &self.services {
            let now = wall_millis();
            if let Some(stored) = self.call(self.repository.service_time(service)).await?
                && stored - now > *tolerance
            {
                if !self
                    .recorded_ahead_of_the_repository(stored, *tolerance)
                    .await
                {
                    return Err(CoordinationError::ClockBehindRegistry {
                        service: service.clone(),
                        stored,
                        ahead: stored - now,
                        tolerance: *tolerance,
                    });
                }
                tracing::warn!(
                    "service '{service}': the registry's time is {} ms ahead of this clock, but \
                     ahead of the repository's clock too: an instance whose clock is ahead \
                     recorded it. This clock agrees with the repository's, so it starts",
                    stored - now
                );
            }
            let time = self.recordable_time(*tolerance).await;
            self.call(self.repository.record_service_time(service, time))
                .await?;
        }
        Ok(())
    }

    /// Whether `stored` is ahead of the repository's clock by more than `tolerance` while this
    /// clock is not behind it: then a clock ahead recorded it, and this one is not at fault.
    /// Without an answer from the repository, this clock is taken to be at fault.
    async fn recorded_ahead_of_the_repository(&self, stored: i64, tolerance: i64) -> bool {
        let Ok(repository) = self.call(self.repository.clock_millis()).await else {
            return false;
        };
        // The repository read its clock before this one is read again.
        let after = wall_millis();
        after + tolerance >= repository && stored - repository > tolerance
    }

    /// This clock's time to record for a LEAF_SNOWFLAKE service, never more than `tolerance`
    /// ahead of the repository's clock: one instance with a clock ahead must not lock every
    /// other out of the service.
    async fn recordable_time(&self, tolerance: i64) -> i64 {
        let now = wall_millis();
        match self.call(self.repository.clock_millis()).await {
            Ok(repository) => now.min(repository.saturating_add(tolerance)),
            Err(_) => now,
        }
    }

    pub(super) async fn record_service_times(&self) {
        for (service, tolerance) in &self.services {
            let time = self.recordable_time(*tolerance).await;
            let recorded = self
                .call(self.repository.record_service_time(service, time))
                .await;
            if let Err(e) = recorded {
                tracing::warn!("coordination: recording the time of service '{service}': {e}");
            }
        }
    }
}

pub(super) fn leaf_services(registry: &Registry) -> Vec<(String, i64)> {
    registry
        .iter()
        .filter_map(|(_, configured)| match &configured.built {
            Built::Snowflake(generator) if configured.type_name == "LEAF_SNOWFLAKE" => Some((
                configured.props.get(PROP_SERVICE_ID)?.trim().to_owned(),
                generator.max_tolerate_millis(),
            )),
            _ => None,
        })
        .collect()
}
