//! The queues of statements of a kind on a data source, and how one is found without hashing
//! or allocating on a statement's way.

use std::sync::Arc;

use super::Waiting;
use crate::session_state::Settings;

/// Statements of a kind on one data source: the same text around their row, from sessions
/// with the same settings.
#[derive(Debug)]
pub(super) struct Queue {
    pub(super) kind: Kind,
    pub(super) waiting: Vec<Waiting>,
    pub(super) in_flight: InFlight,
}

/// Statements of one kind in flight at once while none of them is a batch.
const RUNNING: usize = 2;

/// What of a kind is in flight: statements alone and batches, each holding a slot.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct InFlight {
    pub(super) running: usize,
    /// Of which batches.
    pub(super) batches: usize,
}

impl InFlight {
    /// Whether a statement arriving now runs alone. Until a batch forms, [`RUNNING`] run side
    /// by side, so that at a light load none waits behind another; a batch in flight shows
    /// that the database is what statements wait for, and then one runs at a time, so that
    /// batches grow with the load.
    pub(super) fn admits(self) -> bool {
        self.running < RUNNING && (self.running == 0 || self.batches == 0)
    }

    /// Whether a slot given back leaves what waits to a batch in flight, which takes it when
    /// it ends, rather than sending it now beside that batch.
    pub(super) fn hands_over(self) -> bool {
        self.batches > 0
    }
}

/// What makes statements of a kind, owned.
#[derive(Debug, Clone)]
pub(super) struct Kind {
    pub(super) head: Box<str>,
    pub(super) tail: Box<str>,
    pub(super) settings: Option<Arc<Settings>>,
}

impl Kind {
    pub(super) fn is(&self, head: &str, tail: &str, settings: &Option<Arc<Settings>>) -> bool {
        let same_settings = match (&self.settings, settings) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
            (a, b) => a.is_none() && b.is_none(),
        };
        same_settings && *self.head == *head && *self.tail == *tail
    }
}

/// Where the queue of a kind is among its data source's.
pub(super) fn position(
    kinds: &[Queue],
    (head, tail): (&str, &str),
    settings: &Option<Arc<Settings>>,
) -> Option<usize> {
    kinds.iter().position(|q| q.kind.is(head, tail, settings))
}

/// Queues with nothing running or waiting a data source keeps for their kinds' next
/// statements (a client's next INSERT then finds its queue instead of making one).
pub(super) const IDLE_QUEUES: usize = 32;

/// Gives back a slot of `kinds[at]`, whose waiting statements (if any) a batch in flight takes;
/// ends the data source's idle queues when it has more than [`IDLE_QUEUES`].
pub(super) fn give_back(kinds: &mut Vec<Queue>, at: usize) {
    let Some(queue) = kinds.get_mut(at) else {
        return;
    };
    queue.in_flight.running = queue.in_flight.running.saturating_sub(1);
    if queue.in_flight.running == 0 && kinds.len() > IDLE_QUEUES {
        kinds.retain(|q| q.in_flight.running > 0 || !q.waiting.is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::InFlight;

    fn in_flight(running: usize, batches: usize) -> InFlight {
        InFlight { running, batches }
    }

    #[test]
    fn two_run_side_by_side_until_a_batch_forms() {
        assert!(in_flight(0, 0).admits());
        assert!(in_flight(1, 0).admits());
        assert!(!in_flight(2, 0).admits());
        // A slot freed beside another statement alone sends what waits at once.
        assert!(!in_flight(1, 0).hands_over());
    }

    #[test]
    fn with_a_batch_in_flight_one_runs_at_a_time() {
        assert!(!in_flight(1, 1).admits());
        assert!(!in_flight(2, 1).admits());
        // A statement alone that ends beside a batch leaves what waits to the batch.
        assert!(in_flight(2, 1).hands_over());
        // Once the batch ended and nothing else is in flight, statements run alone again.
        assert!(in_flight(0, 0).admits());
    }
}
