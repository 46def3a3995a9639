//! What the logical databases one proxy serves share: connection ids (a KILL names one
//! session whatever its database), the login throttle, the memory budget, the list of sessions
//! (`SHOW PROCESSLIST` shows them all), the metrics (one endpoint counts them all) and the
//! databases' names (`SHOW DATABASES`).

use std::sync::atomic::{AtomicU32, Ordering};

use keyshard_config::Config;

use crate::memory::MemoryBudget;
use crate::metrics::Metrics;
use crate::processlist::Sessions;
use crate::throttle::LoginThrottle;

/// The proxy instance's shared state.
#[derive(Debug)]
pub(crate) struct Instance {
    next_connection_id: AtomicU32,
    pub(crate) logins: LoginThrottle,
    pub(crate) memory: MemoryBudget,
    pub(crate) sessions: Sessions,
    pub(crate) metrics: Metrics,
    /// The logical databases, in the order they were configured.
    pub(crate) databases: Vec<String>,
}

impl Instance {
    /// The state of an instance serving `configs`' logical databases (whose proxy settings,
    /// the same file's, are the first's).
    pub(crate) fn new(configs: &[Config]) -> Self {
        let props = configs.first().map(|c| c.props.clone()).unwrap_or_default();
        let mut generators: Vec<&str> = configs
            .iter()
            .flat_map(|c| c.key_generators.names())
            .collect();
        generators.sort_unstable();
        generators.dedup();
        Self {
            next_connection_id: AtomicU32::new(1),
            logins: LoginThrottle::default(),
            memory: MemoryBudget::new(
                props.statement_memory,
                props.memory_budget,
                props.session_memory,
            ),
            sessions: Sessions::default(),
            metrics: Metrics::new(generators),
            databases: configs.iter().map(|c| c.database_name.clone()).collect(),
        }
    }

    /// A new connection id.
    pub(crate) fn connection_id(&self) -> u32 {
        self.next_connection_id.fetch_add(1, Ordering::Relaxed)
    }
}
