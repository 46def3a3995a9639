//! The worker id an instance holds by lease, as the generators see it.
//!
//! The coordination layer claims a worker id in a shared repository, renews it, and records
//! here what the generators may rely on: the id, until when (on the monotonic clock) the claim
//! is provably still this instance's, and up to which generator time the high-water mark is
//! persisted. A generator reads the grant for every block of keys and refuses to generate when
//! there is none or it has run out, so an instance that loses its repository stops by itself.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, PoisonError, RwLock};
use std::time::Instant;

use crate::KeyGenError;

/// What the repository granted: a worker id, held until `valid_until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    /// The worker id (0..=1023).
    pub worker_id: u16,
    /// Counts the claims of this worker id; names this holder among all that ever held it.
    pub epoch: u64,
    /// The moment after which the repository may hand the id to someone else (minus a margin).
    pub valid_until: Instant,
    /// Generator time (milliseconds since the Unix epoch) must stay below this: it is the
    /// high-water mark persisted for the worker id, so whoever holds the id next starts above it.
    pub reserved_until_millis: i64,
    /// Added to the wall clock: a holder whose clock is behind the persisted high-water mark
    /// runs its generator time ahead by this much, so it starts above every key ever issued.
    pub offset_millis: i64,
}

impl Grant {
    /// A grant no repository stands behind: for tools whose keys are never stored (previews,
    /// `keyshard keygen --type`), where two holders of one id do no harm.
    pub fn unchecked(worker_id: u16) -> Self {
        let now = Instant::now();
        Self {
            worker_id,
            epoch: 0,
            valid_until: now
                .checked_add(std::time::Duration::from_secs(100 * 365 * 86_400))
                .unwrap_or(now),
            reserved_until_millis: i64::MAX,
            offset_millis: 0,
        }
    }
}

/// The instance's worker-id lease, shared by all of its lease-holding generators.
#[derive(Debug)]
pub struct WorkerLease {
    grant: RwLock<Option<Grant>>,
    /// The highest generator millisecond any generator has used under the current grant.
    issued_millis: AtomicI64,
    /// The highest under any grant: a generator's time never goes back, so a new grant
    /// (another worker id after a loss) must start above it.
    highest_millis: AtomicI64,
    /// The one millisecond and sequence of every generator on this lease.
    sequence: Mutex<State>,
}

impl Default for WorkerLease {
    fn default() -> Self {
        Self::new()
    }
}

impl WorkerLease {
    /// A lease not (yet) granted: generators using it refuse to generate.
    pub fn new() -> Self {
        Self {
            grant: RwLock::new(None),
            issued_millis: AtomicI64::new(i64::MIN),
            highest_millis: AtomicI64::new(i64::MIN),
            sequence: Mutex::new(State::new()),
        }
    }

    pub(crate) fn sequence(&self) -> &Mutex<State> {
        &self.sequence
    }

    /// The highest generator millisecond used under any grant so far, if any.
    pub fn highest_issued(&self) -> Option<i64> {
        let highest = self.highest_millis.load(Ordering::SeqCst);
        (highest != i64::MIN).then_some(highest)
    }

    /// Records a new grant (a claim), replacing any earlier one.
    pub fn grant(&self, grant: Grant) {
        self.issued_millis.store(i64::MIN, Ordering::SeqCst);
        *self.grant.write().unwrap_or_else(PoisonError::into_inner) = Some(grant);
    }

    /// Extends the current grant after a successful renewal. Ignored when the grant was revoked
    /// or replaced meanwhile (`epoch` differs).
    pub fn extend(&self, epoch: u64, valid_until: Instant, reserved_until_millis: i64) {
        let mut grant = self.grant.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(current) = grant.as_mut().filter(|g| g.epoch == epoch) {
            current.valid_until = current.valid_until.max(valid_until);
            current.reserved_until_millis =
                current.reserved_until_millis.max(reserved_until_millis);
        }
    }

    /// Stops generation under the current grant and returns it with the highest generator
    /// millisecond used under it (`None` when no key was generated).
    ///
    /// Generators take the grant under the same lock, so once this returns no key is generated
    /// with the old grant any more and the returned high-water mark is final.
    pub fn revoke(&self) -> Option<(Grant, Option<i64>)> {
        let mut grant = self.grant.write().unwrap_or_else(PoisonError::into_inner);
        let old = grant.take()?;
        let issued = self.issued_millis.swap(i64::MIN, Ordering::SeqCst);
        Some((old, (issued != i64::MIN).then_some(issued)))
    }

    /// The current grant, valid or not.
    pub fn current(&self) -> Option<Grant> {
        *self.grant.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `generate` with the current grant and records the generator millisecond it
    /// reports (`Some` only when it moved to a new one). Holding the read lock through
    /// `generate` is what makes [`WorkerLease::revoke`] final.
    pub(crate) fn with_grant<T>(
        &self,
        generate: impl FnOnce(&Grant) -> Result<(T, Option<i64>), KeyGenError>,
    ) -> Result<T, KeyGenError> {
        let grant = self.grant.read().unwrap_or_else(PoisonError::into_inner);
        let Some(grant) = grant.as_ref() else {
            return Err(KeyGenError::NoLease);
        };
        let (value, millis) = generate(grant)?;
        if let Some(millis) = millis {
            self.issued_millis.fetch_max(millis, Ordering::SeqCst);
            self.highest_millis.fetch_max(millis, Ordering::SeqCst);
        }
        Ok(value)
    }
}

impl Grant {
    /// Fails once the grant has run out.
    pub(crate) fn check_valid(&self) -> Result<(), KeyGenError> {
        if Instant::now() >= self.valid_until {
            return Err(KeyGenError::LeaseExpired {
                worker_id: self.worker_id,
            });
        }
        Ok(())
    }
}

/// The millisecond and sequence last used. Every leased generator of one instance shares one
/// (the lease's): they carry the same worker id, so only one sequence per millisecond keeps
/// their keys apart, whichever table each serves.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) last_millis: i64,
    pub(crate) sequence: i64,
    pub(crate) sequence_offset: i64,
}

impl State {
    pub(crate) fn new() -> Self {
        Self {
            last_millis: 0,
            sequence: 0,
            sequence_offset: -1,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn grant(epoch: u64, valid_for: Duration) -> Grant {
        Grant {
            worker_id: 7,
            epoch,
            valid_until: Instant::now() + valid_for,
            reserved_until_millis: 1_000,
            offset_millis: 0,
        }
    }

    #[test]
    fn nothing_is_generated_without_a_valid_grant() {
        let lease = WorkerLease::new();
        let ok = |g: &Grant| g.check_valid().map(|()| ((), Some(5)));
        assert_eq!(lease.with_grant(ok), Err(KeyGenError::NoLease));
        lease.grant(grant(1, Duration::ZERO));
        assert_eq!(
            lease.with_grant(ok),
            Err(KeyGenError::LeaseExpired { worker_id: 7 })
        );
        lease.grant(grant(2, Duration::from_secs(60)));
        assert_eq!(lease.with_grant(ok), Ok(()));
    }

    #[test]
    fn revoke_reports_the_highest_millisecond_used() {
        let lease = WorkerLease::new();
        lease.grant(grant(1, Duration::from_secs(60)));
        assert_eq!(lease.revoke().map(|(_, issued)| issued), Some(None));
        lease.grant(grant(2, Duration::from_secs(60)));
        for millis in [5, 9, 3] {
            lease.with_grant(|_| Ok(((), Some(millis)))).unwrap();
        }
        let (old, issued) = lease.revoke().unwrap();
        assert_eq!((old.epoch, issued), (2, Some(9)));
        assert_eq!(
            lease.with_grant(|_| Ok(((), Some(1)))),
            Err(KeyGenError::NoLease)
        );
        assert!(lease.revoke().is_none());
    }

    #[test]
    fn extend_applies_only_to_the_same_claim() {
        let lease = WorkerLease::new();
        lease.grant(grant(3, Duration::from_secs(1)));
        let later = Instant::now() + Duration::from_secs(90);
        lease.extend(2, later, 9_000);
        assert_eq!(lease.current().unwrap().reserved_until_millis, 1_000);
        lease.extend(3, later, 9_000);
        let current = lease.current().unwrap();
        assert_eq!(
            (current.valid_until, current.reserved_until_millis),
            (later, 9_000)
        );
    }
}
