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
    /// Statements and batches in flight.
    pub(super) running: usize,
    /// Of which batches.
    pub(super) batches: usize,
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

/// Gives back a slot of `kinds[at]`, which has nothing waiting; ends the data source's idle
/// queues when it has more than [`IDLE_QUEUES`].
pub(super) fn give_back(kinds: &mut Vec<Queue>, at: usize) {
    let Some(queue) = kinds.get_mut(at) else {
        return;
    };
    queue.running = queue.running.saturating_sub(1);
    if queue.running == 0 && kinds.len() > IDLE_QUEUES {
        kinds.retain(|q| q.running > 0 || !q.waiting.is_empty());
    }
}
