//! The state only a PostgreSQL session has: its run-time parameters, what its open
//! transaction and savepoints must bring back when they roll back, and its `LISTEN`
//! connection. Apart from [`Session`](super::Session), which holds what both dialects share,
//! so that a MySQL session's code cannot reach state it never has.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use keyshard_backend::session_state::Settings;

use crate::dialect::postgres::parameters::Parameters;

/// What a PostgreSQL session holds beside what every session does.
#[derive(Debug, Default)]
pub struct PostgresSession {
    /// The run-time parameters the client set.
    pub parameters: Parameters,
    /// The settings before the open transaction changed them, back when it rolls back.
    pub settings_before: Option<SettingsBefore>,
    /// The session's state at each savepoint of the open transaction, back when it rolls
    /// back to one.
    pub at_savepoints: Vec<AtSavepoint>,
    /// The connection that listens for the session's `LISTEN` channels.
    pub(crate) listener: Option<keyshard_backend::Listener>,
    /// The channels listened on before the open transaction changed them, back if it rolls
    /// back.
    pub(crate) listening_before: Option<BTreeSet<String>>,
}

/// A PostgreSQL session's state at a savepoint, which ROLLBACK TO brings back.
#[derive(Debug, Clone)]
pub struct AtSavepoint {
    /// The savepoint's key.
    pub key: String,
    pub settings: SettingsBefore,
    /// The channels it listened on (LISTEN after the savepoint is undone with it).
    pub channels: BTreeSet<String>,
}

/// A session's settings as they were: what its shard connections must have, and what the
/// database reported.
#[derive(Debug, Clone)]
pub struct SettingsBefore {
    pub wanted: Option<Arc<Settings>>,
    pub reported: BTreeMap<String, String>,
}
