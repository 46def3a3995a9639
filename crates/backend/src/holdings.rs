//! The shard connections a session holds now, each recorded with the server's own id of it
//! (MySQL's thread id, PostgreSQL's backend pid) from the moment the session takes it until
//! another session may: what a cancel goes to (see `cancel`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// A shard connection a session holds.
#[derive(Debug)]
pub(crate) struct Held {
    data_source: Arc<str>,
    server_id: u32,
    /// A cancel went to it.
    cancelled: AtomicBool,
}

/// A session's shard connections, each recorded while the session holds it.
#[derive(Debug, Default)]
pub(crate) struct Holdings {
    held: Mutex<Vec<Arc<Held>>>,
    /// The running statement was cancelled.
    interrupted: AtomicBool,
}

impl Holdings {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Held>>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the running statement was cancelled.
    pub(crate) fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }

    /// A new statement runs: an earlier cancel is not its.
    pub(crate) fn statement_started(&self) {
        self.interrupted.store(false, Ordering::Relaxed);
    }

    /// Marks the running statement and every connection held now as cancelled; answers where
    /// each connection is.
    pub(crate) fn cancel_all(&self) -> Vec<(String, u32)> {
        self.interrupted.store(true, Ordering::Relaxed);
        self.lock()
            .iter()
            .map(|held| {
                held.cancelled.store(true, Ordering::Relaxed);
                (held.data_source.to_string(), held.server_id)
            })
            .collect()
    }
}

/// A connection's record in its session's holdings; dropped, the record goes.
#[derive(Debug)]
pub(crate) struct Holding {
    held: Arc<Held>,
    holdings: Weak<Holdings>,
}

impl Holding {
    /// Records in a session's `holdings` that it holds the connection `server_id` of
    /// `data_source`.
    pub(crate) fn new(holdings: &Arc<Holdings>, data_source: &Arc<str>, server_id: u32) -> Self {
        let held = Arc::new(Held {
            data_source: Arc::clone(data_source),
            server_id,
            cancelled: AtomicBool::new(false),
        });
        holdings.lock().push(Arc::clone(&held));
        Self {
            held,
            holdings: Arc::downgrade(holdings),
        }
    }

    /// Whether a cancel went to the connection: then no other session may have it.
    pub(crate) fn cancelled(&self) -> bool {
        self.held.cancelled.load(Ordering::Relaxed)
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        if let Some(holdings) = self.holdings.upgrade() {
            holdings.lock().retain(|h| !Arc::ptr_eq(h, &self.held));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holding_is_recorded_while_it_lives_and_marked_by_a_cancel() {
        let holdings = Arc::new(Holdings::default());
        let (ds_0, ds_1): (Arc<str>, Arc<str>) = (Arc::from("ds_0"), Arc::from("ds_1"));
        let a = Holding::new(&holdings, &ds_0, 7);
        let b = Holding::new(&holdings, &ds_1, 9);
        drop(b);
        assert_eq!(holdings.cancel_all(), [("ds_0".to_owned(), 7)]);
        assert!(a.cancelled());
        let c = Holding::new(&holdings, &ds_1, 11);
        assert!(!c.cancelled());
        drop((a, c));
        assert!(holdings.interrupted());
        holdings.statement_started();
        assert!(!holdings.interrupted());
        assert!(holdings.cancel_all().is_empty());
    }
}
