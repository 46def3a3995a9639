//! Stopping a session from another (`KILL`, `pg_cancel_backend`, `pg_terminate_backend`) or
//! from its own client's cancel request: the statement it runs is cancelled on every shard
//! (see `keyshard_backend`'s `cancel`).

use super::Engine;

impl Engine {
    /// Cancels what session `id` runs on the shards (`KILL QUERY`, `pg_cancel_backend`) and,
    /// with `end`, ends the session (`KILL CONNECTION`, `pg_terminate_backend`). False when
    /// there is no such session.
    pub(crate) async fn kill(&self, id: u32, end: bool) -> bool {
        let Some(control) = self.instance.sessions.control(id) else {
            return false;
        };
        if end {
            control.kill();
        }
        self.backend.cancel(&control.shard).await;
        true
    }

    /// A PostgreSQL cancel request for the session whose cancel key is `id` and `secret`;
    /// one with a wrong secret is ignored, as PostgreSQL ignores it.
    pub(crate) async fn cancel_request(&self, id: u32, secret: i32) {
        if let Some(control) = self.instance.sessions.control_by_key(id, secret) {
            self.backend.cancel(&control.shard).await;
        }
    }
}
